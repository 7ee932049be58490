// Relays bytes both ways between a proxy client and its upstream once the
// handshake is done. Data moves socket -> pipe -> socket with splice(2), so it
// is never copied through user space; where splice is unsupported for a socket
// pair the relay falls back to read/write. A direction that carries bulk data
// gets a larger pipe, and the client's leg (always local) runs Reno instead of
// a pacing congestion control: both only cut CPU per byte. Half-close is
// respected: EOF from one side becomes shutdown(SHUT_WR) on the other, and the
// tunnel closes once both directions have ended (or at once on an error).
#pragma once

#include "egress_context.hpp"

#include <boost/asio/generic/stream_protocol.hpp>

#include <memory>
#include <string>

namespace ccsandbox {

using StreamSocket = boost::asio::generic::stream_protocol::socket;

// Both sockets must use the same (strand) executor. `toUpstream` is sent to the
// upstream before anything else (bytes the client sent past its handshake, or
// a rewritten request head). The relay registers itself with `context` so the
// session can close it, and keeps itself alive until both sides are closed.
void startTunnelRelay(std::shared_ptr<EgressContext> context, StreamSocket client,
                      StreamSocket upstream, std::string toUpstream);

}  // namespace ccsandbox
