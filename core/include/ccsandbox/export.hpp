#pragma once

// Marks the core's public API; everything else in libccsandbox stays hidden.
#define CCSANDBOX_API __attribute__((visibility("default")))
