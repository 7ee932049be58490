// The policy compiler: SandboxSpec + launch kind + host facts -> EffectivePolicy.
// Compiled once, in the core; every backend receives the same result.
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/launch_request.hpp"

#include <string>

namespace ccsandbox {

// What the compiler needs to know about the host; injectable for tests.
struct HostFacts {
  std::string home;      // `~`
  std::string platform;  // "linux", "macos"
  std::string tempDir;   // the session's private temp dir
};

EffectivePolicy compilePolicy(const SandboxSpec &spec, LaunchKind kind, const HostFacts &host);

}  // namespace ccsandbox
