// Routing: which plugin a launch goes to, and the one start-up line. Pure
// functions of the probe results, so the whole table is unit-tested.
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/runtime.hpp"

#include <functional>
#include <string>
#include <vector>

namespace ccsandbox {

struct RouterInput {
  SandboxSwitch sandbox = SandboxSwitch::on;
  SandboxBackend terminalDefault = SandboxBackend::none;
  const std::vector<PluginInfo> *plugins = nullptr;  // in discovery order
  // When set, called before the router reads a plugin's probe: a runtime that
  // probes on demand fills it in then (so only the plugins a route reaches are
  // loaded and probed). Unset: every probe is already there.
  std::function<void(const PluginInfo &)> probe{};
};

// Throws LaunchRefused with the reason when no honest route exists.
Route routeLaunch(const RouterInput &in, LaunchKind kind, RequestedBackend requested,
                  const std::optional<std::string> &plugin);

// Fail closed: throws LaunchRefused naming what `plugin` cannot enforce of
// `policy`. The none backend enforces nothing by definition and is only ever
// reached by routing or an explicit choice, so it is not checked.
void checkEnforceable(const PluginInfo &plugin, const EffectivePolicy &policy);

// `agent sandbox ON <note>`, `no OS-native agent sandbox on this host <hint>`
// or `agent sandbox DISABLED by --sandbox off`.
std::string startupLine(const RouterInput &in, const std::vector<std::string> &searchedDirs);

}  // namespace ccsandbox
