// Egress allowlist / denylist entries: parsing and matching.
//
// Shapes (the reference page's rules, nothing more):
//   example.com            exactly that host
//   *.example.com          any depth of subdomain (a.b.example.com), never the apex
//   bedrock.*.amazonaws.com  exactly one label in place of the `*`
//   10.1.2.3  [fd00::1]    an IP literal (IPv6 bracketed)
// each optionally followed by `:port`, which restricts the entry to that port.
// Matching is case-insensitive and ignores one trailing dot. Any other shape
// (two `*`, `*` inside a label, empty labels, a bare IPv6 literal) is refused
// with a message naming the entry, so a typo never silently allows nothing —
// or everything.
#pragma once

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox {

class DomainPatternError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// A connection target with its host normalised: lower case, no trailing dot,
// no IPv6 brackets, IP literals in canonical text form.
struct EgressTarget {
  std::string host;
  std::uint16_t port = 0;
  bool isIp = false;
};

namespace domain_pattern_detail {

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// Canonical text of an IPv4 / IPv6 literal, or nullopt when `s` is not one.
inline std::optional<std::string> canonicalIp(const std::string &s) {
  unsigned char buf[16];
  char text[INET6_ADDRSTRLEN];
  if (inet_pton(AF_INET, s.c_str(), buf) == 1 && inet_ntop(AF_INET, buf, text, sizeof text))
    return std::string(text);
  if (inet_pton(AF_INET6, s.c_str(), buf) == 1 && inet_ntop(AF_INET6, buf, text, sizeof text))
    return std::string(text);
  return std::nullopt;
}

inline std::vector<std::string_view> splitLabels(std::string_view host) {
  std::vector<std::string_view> labels;
  std::size_t start = 0;
  for (;;) {
    auto dot = host.find('.', start);
    labels.push_back(host.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return labels;
}

inline bool validLabelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

}  // namespace domain_pattern_detail

class DomainPattern {
 public:
  enum class Kind { exact, anySubdomain, oneLabel, ip };

  // Throws DomainPatternError naming the entry.
  static DomainPattern parse(std::string_view entry) {
    using namespace domain_pattern_detail;
    const std::string quoted = "egress entry \"" + std::string(entry) + "\": ";
    auto fail = [&](const std::string &why) -> DomainPattern {
      throw DomainPatternError(quoted + why);
    };
    DomainPattern p;
    p.text_ = std::string(entry);
    std::string_view host = entry;
    std::string_view portText;
    bool bracketed = false;
    if (!host.empty() && host.front() == '[') {
      auto close = host.find(']');
      if (close == std::string_view::npos) return fail("'[' without a closing ']'");
      std::string_view rest = host.substr(close + 1);
      host = host.substr(1, close - 1);
      bracketed = true;
      if (!rest.empty()) {
        if (rest.front() != ':') return fail("unexpected text after ']'");
        portText = rest.substr(1);
        if (portText.empty()) return fail("':' without a port");
      }
    } else {
      auto colon = host.find(':');
      if (colon != std::string_view::npos) {
        if (host.find(':', colon + 1) != std::string_view::npos)
          return fail("an IPv6 literal must be bracketed, e.g. [fd00::1]:443");
        portText = host.substr(colon + 1);
        host = host.substr(0, colon);
        if (portText.empty()) return fail("':' without a port");
      }
    }
    if (!portText.empty()) {
      unsigned long port = 0;
      for (char c : portText) {
        if (c < '0' || c > '9' || portText.size() > 5)
          return fail("port must be a number from 1 to 65535");
        port = port * 10 + static_cast<unsigned long>(c - '0');
      }
      if (port == 0 || port > 65535) return fail("port must be a number from 1 to 65535");
      p.port_ = static_cast<std::uint16_t>(port);
    }
    std::string h = lower(host);
    if (bracketed) {
      unsigned char buf[16];
      if (inet_pton(AF_INET6, h.c_str(), buf) != 1)
        return fail("brackets must hold an IPv6 address");
      p.kind_ = Kind::ip;
      p.host_ = *canonicalIp(h);
      return p;
    }
    if (!h.empty() && h.back() == '.') h.pop_back();
    if (h.empty()) return fail("empty host");
    if (auto ip = canonicalIp(h)) {
      p.kind_ = Kind::ip;
      p.host_ = *ip;
      return p;
    }
    if (h.size() > 253) return fail("host longer than 253 characters");
    auto labels = splitLabels(h);
    std::optional<std::size_t> star;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      auto label = labels[i];
      if (label.empty()) return fail("empty label");
      if (label.size() > 63) return fail("label longer than 63 characters");
      auto stars = std::count(label.begin(), label.end(), '*');
      if (stars == 0) {
        for (char c : label)
          if (!validLabelChar(c))
            return fail(std::string("character '") + c + "' is not allowed in a host name");
        continue;
      }
      if (label != "*") return fail("'*' must be a whole label (*.example.com), not inside one");
      if (star) return fail("more than one '*'; exactly one is allowed");
      star = i;
    }
    p.host_ = h;
    if (!star) {
      p.kind_ = Kind::exact;
    } else if (labels.size() == 1) {
      return fail("a lone '*' would allow every host; list the domains instead");
    } else if (*star == 0) {
      p.kind_ = Kind::anySubdomain;
      p.host_ = h.substr(2);  // the suffix after "*."
    } else if (*star == labels.size() - 1) {
      return fail("'*' may not be the last label");
    } else {
      p.kind_ = Kind::oneLabel;
      p.starIndex_ = *star;
      p.labels_.assign(labels.begin(), labels.end());
    }
    return p;
  }

  // Normalises a connection target's host; nullopt when it is not a valid host name or
  // IP literal (such a target never matches anything and is refused).
  static std::optional<EgressTarget> target(std::string_view host, std::uint16_t port) {
    using namespace domain_pattern_detail;
    EgressTarget t;
    t.port = port;
    std::string h = lower(host);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (auto ip = canonicalIp(h)) {
      t.host = *ip;
      t.isIp = true;
      return t;
    }
    if (!h.empty() && h.back() == '.') h.pop_back();
    if (h.empty() || h.size() > 253) return std::nullopt;
    for (auto label : splitLabels(h)) {
      if (label.empty() || label.size() > 63) return std::nullopt;
      for (char c : label)
        if (!validLabelChar(c)) return std::nullopt;
    }
    t.host = std::move(h);
    return t;
  }

  bool matches(const EgressTarget &t) const {
    if (port_ && *port_ != t.port) return false;
    switch (kind_) {
      case Kind::ip: return t.isIp && t.host == host_;
      case Kind::exact: return !t.isIp && t.host == host_;
      case Kind::anySubdomain:
        return !t.isIp && t.host.size() > host_.size() + 1 &&
               t.host.compare(t.host.size() - host_.size(), host_.size(), host_) == 0 &&
               t.host[t.host.size() - host_.size() - 1] == '.';
      case Kind::oneLabel: {
        if (t.isIp) return false;
        auto labels = domain_pattern_detail::splitLabels(t.host);
        if (labels.size() != labels_.size()) return false;
        for (std::size_t i = 0; i < labels.size(); ++i)
          if (i != starIndex_ && labels[i] != labels_[i]) return false;
        return true;
      }
    }
    return false;
  }

  Kind kind() const { return kind_; }
  const std::string &text() const { return text_; }  // the entry as written
  std::optional<std::uint16_t> port() const { return port_; }

 private:
  Kind kind_ = Kind::exact;
  std::string text_;
  std::string host_;  // exact host, IP, or the suffix of *.suffix
  std::vector<std::string> labels_;
  std::size_t starIndex_ = 0;
  std::optional<std::uint16_t> port_;
};

}  // namespace ccsandbox
