// The RuntimeOptions every CLI command starts from. A CLI process lives for one
// command, so it keeps probe results between runs (CCSANDBOX_PROBE_CACHE).
#pragma once

#include "ccsandbox/runtime.hpp"

namespace ccsandbox::cli {

enum class ProbeFreshness {
  kept,   // run, policy, plugins: reuse a kept probe result when the host facts match
  fresh,  // probe: always probe afresh, and keep the new result
};

// CCSANDBOX_PROBE_CACHE: unset or "on": the default directory; "off": keep
// nothing; an absolute path: that directory. Anything else is a UsageError.
RuntimeOptions cliRuntimeOptions(ProbeFreshness freshness);

}  // namespace ccsandbox::cli
