#include "domain_matcher.hpp"

namespace ccsandbox {

DomainMatcher::DomainMatcher(const std::vector<std::string> &allow,
                             const std::vector<std::string> &deny)
    : allowText_(allow), denyText_(deny) {
  allow_.reserve(allow.size());
  for (const auto &e : allow) allow_.push_back(DomainPattern::parse(e));
  deny_.reserve(deny.size());
  for (const auto &e : deny) deny_.push_back(DomainPattern::parse(e));
}

bool DomainMatcher::denied(const EgressTarget &target, std::string *entry) const {
  for (const auto &p : deny_)
    if (p.matches(target)) {
      if (entry) *entry = p.text();
      return true;
    }
  return false;
}

EgressDecision DomainMatcher::decide(const EgressTarget &target) const {
  EgressDecision d;
  std::string entry;
  if (denied(target, &entry)) {
    d.reason = "denied by the fixed deny list entry \"" + entry + "\"";
    return d;
  }
  for (const auto &p : allow_)
    if (p.matches(target)) {
      d.allowed = true;
      d.explicitLiteral = p.kind() == DomainPattern::Kind::ip;
      d.reason = "allowed by \"" + p.text() + "\"";
      return d;
    }
  d.reason = allow_.empty() ? "network disabled for this session (empty egress allowlist)"
                            : "host not in the session's egress allowlist";
  return d;
}

std::string formatTarget(const std::string &host, unsigned port) {
  bool v6 = host.find(':') != std::string::npos && (host.empty() || host.front() != '[');
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

}  // namespace ccsandbox
