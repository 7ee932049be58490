// The session's SOCKS5 proxy (RFC 1928), one client connection at a time:
// no-authentication only; CONNECT to a domain name, IPv4 or IPv6 address.
// BIND and UDP ASSOCIATE get reply 0x07 (command not supported), an address
// type we do not know 0x08, a refused target 0x02 (not allowed by ruleset).
#pragma once

#include "egress_context.hpp"
#include "tunnel_relay.hpp"

#include <memory>

namespace ccsandbox {

// `client` must have a strand executor; the connection keeps itself alive.
void serveSocks5Client(std::shared_ptr<EgressContext> context, StreamSocket client);

}  // namespace ccsandbox
