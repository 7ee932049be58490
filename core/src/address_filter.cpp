#include "address_filter.hpp"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <memory>

namespace ccsandbox {

namespace ip = boost::asio::ip;

std::vector<ip::address> hostInterfaceAddresses() {
  std::vector<ip::address> out;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> guard(list, &freeifaddrs);
  for (auto *i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      auto *sin = reinterpret_cast<const sockaddr_in *>(i->ifa_addr);
      out.push_back(ip::address_v4(ntohl(sin->sin_addr.s_addr)));
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      auto *sin6 = reinterpret_cast<const sockaddr_in6 *>(i->ifa_addr);
      ip::address_v6::bytes_type bytes;
      std::copy_n(sin6->sin6_addr.s6_addr, 16, bytes.begin());
      out.push_back(ip::address_v6(bytes));
    }
  }
  return out;
}

namespace {

std::optional<std::string> v4Reason(const ip::address_v4 &a) {
  auto b = a.to_bytes();
  if (a.is_loopback()) return "loopback";
  if (a.is_unspecified() || b[0] == 0) return "unspecified (0.0.0.0/8)";
  if (b[0] == 169 && b[1] == 254) return "link-local (169.254.0.0/16, cloud metadata)";
  if (a.is_multicast()) return "multicast";
  if (a == ip::address_v4::broadcast()) return "broadcast";
  if (a == ip::make_address_v4("100.100.100.200")) return "a cloud metadata endpoint";
  return std::nullopt;
}

std::optional<std::string> v6Reason(const ip::address_v6 &a) {
  if (a.is_loopback()) return "loopback";
  if (a.is_unspecified()) return "unspecified";
  if (a.is_link_local()) return "link-local (fe80::/10)";
  if (a.is_multicast()) return "multicast";
  if (a == ip::make_address_v6("fd00:ec2::254")) return "a cloud metadata endpoint";
  return std::nullopt;
}

}  // namespace

std::optional<std::string> forbiddenAddressReason(const ip::address &input, unsigned port,
                                                  const DomainMatcher &rules,
                                                  const std::vector<ip::address> &interfaces) {
  ip::address address = input;
  if (address.is_v6() && address.to_v6().is_v4_mapped())
    address = ip::make_address_v4(ip::v4_mapped, address.to_v6());
  auto kind = address.is_v4() ? v4Reason(address.to_v4()) : v6Reason(address.to_v6());
  if (kind) return "resolved address " + address.to_string() + " is " + *kind;
  for (const auto &own : interfaces) {
    ip::address o = own;
    if (o.is_v6() && o.to_v6().is_v4_mapped()) o = ip::make_address_v4(ip::v4_mapped, o.to_v6());
    if (o == address) return "resolved address " + address.to_string() + " belongs to this host";
  }
  // The deny list names addresses too (169.254.169.254, 100.100.100.200, …).
  std::string entry;
  if (auto t = DomainPattern::target(address.to_string(), static_cast<std::uint16_t>(port));
      t && rules.denied(*t, &entry))
    return "resolved address " + address.to_string() + " is denied by \"" + entry + "\"";
  return std::nullopt;
}

}  // namespace ccsandbox
