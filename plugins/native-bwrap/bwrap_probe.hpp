// The probe: bubblewrap found, and a trial sandbox built with the namespaces
// a launch will ask for really starts our helper. Run once, at host start-up.
#pragma once

#include "ccsandbox/probe_result.hpp"
#include "spawner_thread.hpp"

#include <optional>
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

// The probe's state member: what restoreBwrapProbe needs that the capabilities do not say.
inline constexpr const char *kStateDisableNestedUserns = "disableNestedUserns";

// What a kept probe result depends on (backend ABI 1.1), read without starting
// anything; nullopt when bwrap or the helper is missing.
std::optional<std::string> bwrapProbeFingerprint(const std::string &bwrapSetting,
                                                 const std::string &helperSetting,
                                                 const std::string &defaultHelper);
// Adopts a kept result of probeBwrap; throws when bwrap or the helper is gone or
// the result is not one of ours.
ProbeOutcome restoreBwrapProbe(const ProbeResult &earlier, const std::string &bwrapSetting,
                               const std::string &helperSetting, const std::string &defaultHelper);

// PATH lookup of an executable; "" when not found.
std::string findExecutable(const std::string &name);

}  // namespace ccsandbox::bwrap
