#include "ccsandbox/confine/confine_rules.hpp"

#include "ccsandbox/effective_policy.hpp"

namespace ccsandbox::confine {

ConfineRules confineRulesFrom(const EffectivePolicy &policy) {
  ConfineRules rules;
  rules.writeRoots = policy.writeRoots;
  rules.writeDeny = policy.writeDeny;
  rules.writeDenyGlobs = policy.writeDenyGlobs;
  rules.execBlockWritableRoots = policy.exec.blockWritableRoots;
  rules.execGrantRoots = policy.exec.grantRoots;
  return rules;
}

}  // namespace ccsandbox::confine
