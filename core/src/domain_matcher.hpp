// A session's egress decision for one target (host, port): the fixed deny list
// first (it wins over every allow), then the allowlist. Patterns are parsed once
// (ccsandbox/domain_pattern.hpp, the same parser the spec decoder validates with).
#pragma once

#include "ccsandbox/domain_pattern.hpp"

#include <string>
#include <vector>

namespace ccsandbox {

struct EgressDecision {
  bool allowed = false;
  // The target was an IP literal matched by an explicit IP entry: the user chose
  // that address, so the resolved-address check does not apply to it.
  bool explicitLiteral = false;
  std::string reason;  // why refused, or which entry allowed it
};

class DomainMatcher {
 public:
  // Throws DomainPatternError naming the first bad entry.
  DomainMatcher(const std::vector<std::string> &allow, const std::vector<std::string> &deny);

  EgressDecision decide(const EgressTarget &target) const;
  // True when a deny entry matches; `entry` names it.
  bool denied(const EgressTarget &target, std::string *entry = nullptr) const;

  const std::vector<std::string> &allowEntries() const { return allowText_; }
  const std::vector<std::string> &denyEntries() const { return denyText_; }

 private:
  std::vector<DomainPattern> allow_;
  std::vector<DomainPattern> deny_;
  std::vector<std::string> allowText_;
  std::vector<std::string> denyText_;
};

// "host:port" with IPv6 hosts bracketed: the `target` of a violation.
std::string formatTarget(const std::string &host, unsigned port);

}  // namespace ccsandbox
