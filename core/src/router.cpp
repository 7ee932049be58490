#include "router.hpp"

namespace ccsandbox {

namespace {

// Every read of a probe goes through here: a runtime that probes on demand
// probes `p` now (RouterInput::probe).
const ProbeResult &probeOf(const RouterInput &in, const PluginInfo &p) {
  if (in.probe) in.probe(p);
  return p.probe;
}

const PluginInfo *firstAvailable(const RouterInput &in, SandboxBackend backend) {
  for (const auto &p : *in.plugins)
    if (p.backend == backend && probeOf(in, p).available) return &p;
  return nullptr;
}

const PluginInfo *firstInstalled(const RouterInput &in, SandboxBackend backend) {
  for (const auto &p : *in.plugins)
    if (p.backend == backend) return &p;
  return nullptr;
}

std::string whyUnavailable(const RouterInput &in, SandboxBackend backend) {
  const PluginInfo *p = firstInstalled(in, backend);
  if (!p) return "no " + std::string(toString(backend)) + " backend plugin is installed";
  const std::string &hint = probeOf(in, *p).hint;
  return p->name + " is not available: " + (hint.empty() ? "probe said no" : hint);
}

Route to(SandboxBackend backend, const RouterInput &in, const std::string &why) {
  const PluginInfo *p = firstAvailable(in, backend);
  if (!p) throw LaunchRefused(why + " (" + whyUnavailable(in, backend) + ")");
  return Route{p->name, backend, std::nullopt};
}

bool isAgent(LaunchKind kind) {
  return kind != LaunchKind::terminal;
}

Route routeAgent(const RouterInput &in, RequestedBackend requested) {
  bool off = in.sandbox == SandboxSwitch::off;
  switch (requested) {
    case RequestedBackend::automatic:
      if (!off && firstAvailable(in, SandboxBackend::native))
        return to(SandboxBackend::native, in, "");
      return to(SandboxBackend::none, in, "cannot run without a sandbox");
    case RequestedBackend::none:
      return to(SandboxBackend::none, in, "cannot run without a sandbox");
    case RequestedBackend::native:
    case RequestedBackend::microvm: {
      auto backend =
          requested == RequestedBackend::native ? SandboxBackend::native : SandboxBackend::microvm;
      if (off)
        throw LaunchRefused("the " + std::string(toString(backend)) +
                            " backend was requested but the sandbox is turned off (--sandbox off)");
      return to(backend, in,
                "the " + std::string(toString(backend)) +
                    " backend was requested but cannot be used on this host");
    }
  }
  throw LaunchRefused("unknown backend request");
}

// The terminal follows its own rules, not the dispatch probe (the seed's
// server-hosted terminal): default none; an explicit backend or nothing.
Route routeTerminal(const RouterInput &in, RequestedBackend requested) {
  if (requested == RequestedBackend::automatic) {
    if (in.terminalDefault == SandboxBackend::microvm) {
      if (firstAvailable(in, SandboxBackend::microvm)) return to(SandboxBackend::microvm, in, "");
      Route r = to(SandboxBackend::native, in,
                   "the terminal's default backend microvm is unavailable and native cannot "
                   "replace it");
      r.logLine = "terminal: default backend microvm unavailable (" +
                  whyUnavailable(in, SandboxBackend::microvm) + "); falling back to native";
      return r;
    }
    return to(in.terminalDefault, in,
              "the terminal's default backend " + std::string(toString(in.terminalDefault)) +
                  " cannot be used");
  }
  if (requested == RequestedBackend::none)
    return to(SandboxBackend::none, in, "cannot open an unsandboxed terminal");
  auto backend =
      requested == RequestedBackend::native ? SandboxBackend::native : SandboxBackend::microvm;
  return to(backend, in,
            "the terminal asked for " + std::string(toString(backend)) +
                " and will not run on the host instead");
}

}  // namespace

Route routeLaunch(const RouterInput &in, LaunchKind kind, RequestedBackend requested,
                  const std::optional<std::string> &plugin) {
  if (plugin) {
    for (const auto &p : *in.plugins) {
      if (p.name != *plugin) continue;
      if (const ProbeResult &probe = probeOf(in, p); !probe.available)
        throw LaunchRefused("plugin " + p.name + " is not available: " + probe.hint);
      bool wanted = requested == RequestedBackend::automatic ||
                    toString(p.backend) == enumName(kRequestedBackendNames, requested);
      if (!wanted)
        throw LaunchRefused("plugin " + p.name + " is a " + std::string(toString(p.backend)) +
                            " backend, not " +
                            std::string(enumName(kRequestedBackendNames, requested)));
      if (isAgent(kind) && in.sandbox == SandboxSwitch::off && p.backend != SandboxBackend::none)
        throw LaunchRefused("plugin " + p.name +
                            " sandboxes, but the sandbox is turned off (--sandbox off)");
      return Route{p.name, p.backend, std::nullopt};
    }
    throw LaunchRefused("no plugin named " + *plugin + " is installed");
  }
  return isAgent(kind) ? routeAgent(in, requested) : routeTerminal(in, requested);
}

void checkEnforceable(const PluginInfo &plugin, const EffectivePolicy &policy) {
  if (plugin.backend == SandboxBackend::none) return;
  const ProbeResult &caps = plugin.probe;
  std::vector<std::string> missing;
  if (!caps.has(capability::kWriteRoots))
    missing.push_back("it cannot confine writes to the write roots");
  if (!policy.readDeny.empty() && !caps.has(capability::kReadDeny))
    missing.push_back("it cannot hide the read-denied paths");
  if (!policy.writeDeny.empty() && !caps.has(capability::kWriteDeny))
    missing.push_back("it cannot keep the protected paths read-only");
  if (!policy.writeDenyGlobs.empty() && !caps.has(capability::kFilenameRules)) {
    std::string globs;
    for (const auto &g : policy.writeDenyGlobs) globs += (globs.empty() ? "" : ", ") + g;
    missing.push_back("it can hide existing paths but cannot forbid new files matching " + globs +
                      " inside a writable bind (a backend with creation-time filename rules "
                      "is needed)");
  }
  // A read-only mount moves with its renamed parent: without this, `mv .git x;
  // mkdir -p .git/hooks` would get round every protected path.
  if (!policy.unlinkDeny.empty() && !caps.has(capability::kUnlinkRules))
    missing.push_back(
        "it cannot stop a protected path or one of its parent directories from "
        "being renamed or unlinked away");
  if (!caps.has(capability::kNetworkProxy))
    missing.push_back("it cannot restrict the network to the session's proxies");
  if (missing.empty()) return;
  std::string reason;
  for (const auto &m : missing) reason += (reason.empty() ? "" : "; ") + m;
  throw LaunchRefused(std::string(toString(plugin.backend)) + " launch refused: " + plugin.name +
                      " cannot fully enforce the policy: " + reason +
                      ". It will not run under a silently weaker policy; --sandbox off is the "
                      "explicit, unconfined opt-out");
}

std::string startupLine(const RouterInput &in, const std::vector<std::string> &searchedDirs) {
  if (in.sandbox == SandboxSwitch::off) return "agent sandbox DISABLED by --sandbox off";
  if (const PluginInfo *p = firstAvailable(in, SandboxBackend::native))
    return "agent sandbox ON " + p->probe.note;
  if (const PluginInfo *p = firstInstalled(in, SandboxBackend::native))
    return "no OS-native agent sandbox on this host " + probeOf(in, *p).hint;
  std::string dirs;
  for (const auto &d : searchedDirs) dirs += (dirs.empty() ? "" : ":") + d;
  return "no OS-native agent sandbox on this host (no native backend plugin installed; searched " +
         (dirs.empty() ? std::string("no directory") : dirs) + ")";
}

}  // namespace ccsandbox
