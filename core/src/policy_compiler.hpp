// The policy compiler: SandboxSpec + launch kind + host facts -> EffectivePolicy.
// Compiled once, in the core; every backend receives the same result.
//
// Precedence is fixed and has no exceptions: a deny always wins over an allow
// it lies inside, and a deny only ever covers its own path and what is beneath
// it, so no rule turns an unrelated allowed path read-only.
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/launch_request.hpp"
#include "ccsandbox/runtime.hpp"
#include "egress_lists.hpp"

#include <string>
#include <vector>

namespace ccsandbox {

// What the compiler needs to know about the host; injectable for tests.
struct HostFacts {
  std::string home;      // `~`
  std::string platform;  // "linux", "macos"
  std::string tempDir;   // the session's private temp dir
  // Where the compiler looks at the file system (symlinks, repositories, the
  // system set): "" is the real root; a test passes a fake tree, read like a chroot.
  std::string fsRoot;
  // The egress lists; nullptr: the lists shipped with the core.
  const EgressLists *egress = nullptr;
  // trustedFiles(): write-denied where a write root holds them.
  std::vector<std::string> trustedFiles;
};

// This process's facts (HOME, platform); tempDir is left to the caller.
HostFacts hostFacts();

// Whether a launch of this kind gets an open network (no proxies): decided by
// the kind alone (the seed's terminal profile), so a launch can bind its proxy
// pair before the policy is compiled. compilePolicy's network.open says the same.
bool networkOpenFor(LaunchKind kind);

// Throws UsageError naming the spec field for input it refuses: a relative
// host path, a write root inside a read-denied path, two binds on one guest path.
EffectivePolicy compilePolicy(const SandboxSpec &spec, LaunchKind kind, const HostFacts &host,
                              const PolicyOptions &options = {});

}  // namespace ccsandbox
