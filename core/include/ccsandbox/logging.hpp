// The core logs through Boost.Log (channel "ccsandbox"). A host such as
// cc_server adds its own sinks; the CLI calls enableConsole().
#pragma once

#include "ccsandbox/export.hpp"

#include <string_view>

namespace ccsandbox::logging {

enum class Level { debug, info, warning, error };

// Writes one record with attributes Severity and Source (e.g. "core", a plugin's name).
CCSANDBOX_API void write(Level level, std::string_view source, std::string_view message);

// A console sink on stderr: "ccsandbox: <message>" for records at or above `minimum`.
CCSANDBOX_API void enableConsole(Level minimum);

// Records below `minimum` are dropped before they reach Boost.Log (default:
// debug, so every record reaches every sink). A host whose sinks all filter
// below some level sets it to that level: a record Boost.Log opens only to
// have every sink refuse costs ~10 us, and a launch writes several.
CCSANDBOX_API void setThreshold(Level minimum);

}  // namespace ccsandbox::logging
