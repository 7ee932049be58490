// The probe: bubblewrap found, and a trial sandbox built with the namespaces
// a launch will ask for really starts our helper. Run once, at host start-up.
#pragma once

#include "ccsandbox/probe_result.hpp"
#include "spawner_thread.hpp"

#include <string>

namespace ccsandbox::bwrap {

inline constexpr const char *kAvailableNote =
    "bubblewrap — namespace isolation, no kernel boundary";

// Where things are and what this host's bubblewrap can do, for launches.
struct BwrapHost {
  std::string bwrapPath;
  std::string helperPath;
  bool callerIsRoot = false;
  bool disableNestedUserns = false;  // bubblewrap >= 0.8
  // The helper confines every command (Landlock where the kernel has it, the
  // seccomp supervisor): the trial showed the supervisor works in a sandbox.
  bool confine = false;
};

struct ProbeOutcome {
  ProbeResult result;
  BwrapHost host;  // meaningful when result.available
};

// `bwrapSetting`/`helperSetting`: the plugin's settings, empty when unset.
// `defaultHelper`: the helper next to the plugin's own file.
ProbeOutcome probeBwrap(const std::string &bwrapSetting, const std::string &helperSetting,
                        const std::string &defaultHelper, SpawnerThread &spawner);

// PATH lookup of an executable; "" when not found.
std::string findExecutable(const std::string &name);

}  // namespace ccsandbox::bwrap
