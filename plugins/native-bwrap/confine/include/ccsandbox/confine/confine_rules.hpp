// ConfineRules: the part of a compiled EffectivePolicy that the kernel layers
// enforce on a command (Landlock on the child, the seccomp supervisor in the
// helper). It is copied from the policy, never re-derived: the core's policy
// compiler stays the single source of truth.
//
// Paths are absolute and in the sandbox's view (inside bubblewrap's mount
// namespace, where the helper and the command live).
#pragma once

#include <string>
#include <vector>

namespace ccsandbox {
struct EffectivePolicy;
}

namespace ccsandbox::confine {

struct ConfineRules {
  std::vector<std::string> writeRoots;      // creates, writes, removes only beneath these
  std::vector<std::string> writeDeny;       // never written, removed or renamed, even in a root
  std::vector<std::string> writeDenyGlobs;  // final names never created or written (.env, *.pem)
  bool execBlockWritableRoots = true;       // no exec from a write root…
  std::vector<std::string> execGrantRoots;  // …unless beneath one of these
};

ConfineRules confineRulesFrom(const EffectivePolicy &policy);

}  // namespace ccsandbox::confine
