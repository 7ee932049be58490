// Routing: which plugin a launch goes to, and the one start-up line. Pure
// functions of the probe results, so the whole table is unit-tested.
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/runtime.hpp"

#include <string>
#include <vector>

namespace ccsandbox {

struct RouterInput {
  SandboxSwitch sandbox = SandboxSwitch::on;
  SandboxBackend terminalDefault = SandboxBackend::none;
  const std::vector<PluginInfo> *plugins = nullptr;  // in discovery order
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
