// The session's HTTP/HTTPS proxy, one client connection at a time:
// `CONNECT host:port` opens a tunnel; `GET http://host/…` (any method with an
// absolute http URL) is forwarded with the request rewritten to origin form and
// `Connection: close`. A refused target gets 403 naming the rule that refused
// it; a request head over 64 KiB gets 431, garbage 400, silence 408.
#pragma once

#include "egress_context.hpp"
#include "tunnel_relay.hpp"

#include <memory>

namespace ccsandbox {

inline constexpr std::size_t kMaxRequestHead = 64 * 1024;

// `client` must have a strand executor; the connection keeps itself alive.
void serveHttpProxyClient(std::shared_ptr<EgressContext> context, StreamSocket client);

}  // namespace ccsandbox
