#include "policy_compiler.hpp"

namespace ccsandbox {

// First cut: binds and write roots by mode. The full compiler (secret set,
// protected paths, symlink-resolved forms, filename rules) replaces this.
EffectivePolicy compilePolicy(const SandboxSpec &spec, LaunchKind kind, const HostFacts &host) {
  EffectivePolicy p;
  p.launchKind = std::string(toString(kind));
  p.mode = std::string(toString(spec.mode));
  p.home = host.home;
  p.tempDir = host.tempDir;
  bool writableMode = spec.mode == SandboxMode::chat;
  for (const auto &b : spec.bindMounts) {
    bool ro = b.readOnly || !writableMode;
    p.visible.binds.push_back({b.hostPath, b.guestPath, ro});
    if (!ro) p.writeRoots.push_back(b.hostPath);
  }
  p.network.enabled = spec.networkEnabled;
  p.exec.grantRoots = spec.execGrantRoots;
  return p;
}

}  // namespace ccsandbox
