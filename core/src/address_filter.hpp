// The resolved-address check: an allowed *name* may still resolve to the host's
// own services (a DNS record pointing at 127.0.0.1, the metadata endpoint, an
// address of this machine). Every resolved address is checked here before it is
// dialled; the caller dials only addresses that passed, with no second lookup.
#pragma once

#include "domain_matcher.hpp"

#include <boost/asio/ip/address.hpp>

#include <optional>
#include <string>
#include <vector>

namespace ccsandbox {

// Addresses of this host's interfaces (getifaddrs), taken when constructed.
std::vector<boost::asio::ip::address> hostInterfaceAddresses();

// Why `address` must not be dialled for a hostname target, or nullopt when it may.
// Refused: loopback, unspecified, link-local, multicast, broadcast, cloud metadata
// endpoints, this host's interface addresses, anything the deny list matches.
// IPv4-mapped IPv6 addresses are judged as the IPv4 address they carry.
std::optional<std::string> forbiddenAddressReason(
    const boost::asio::ip::address &address, unsigned port, const DomainMatcher &rules,
    const std::vector<boost::asio::ip::address> &interfaceAddresses);

}  // namespace ccsandbox
