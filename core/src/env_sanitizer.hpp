// Which environment a launch starts from: agent launches lose the variables
// that inject code into a process (dynamic linker, interpreters, shells, git).
#pragma once

#include "ccsandbox/launch_request.hpp"

#include <map>
#include <string>
#include <string_view>

namespace ccsandbox {

// True when `name` is one of the injection vectors removed from agent launches.
bool isInjectionVariable(std::string_view name);

// Whether a launch of `kind` on `backend` gets the sanitised environment. A
// Claude Code (or terminal) launch through the no-sandbox path inherits the
// host environment, as the seed says; every other agent launch is sanitised.
bool sanitisesEnvironment(LaunchKind kind, SandboxBackend backend);

std::map<std::string, std::string> sanitiseEnvironment(std::map<std::string, std::string> env);

}  // namespace ccsandbox
