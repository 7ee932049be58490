// Opens the upstream connection for a proxy request: the session's rules, then
// one resolution, the resolved-address check, and a dial of an address that
// passed (never a second lookup, so a name cannot change its answer between
// the check and the connect). Refusals are reported to the session.
#pragma once

#include "egress_context.hpp"

#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ccsandbox {

struct DialResult {
  enum class Status { connected, refused, unresolved, unreachable };
  Status status = Status::unreachable;
  std::string message;  // for refusals: the rule that refused
  boost::asio::ip::tcp::socket socket;
};

using DialHandler = std::function<void(DialResult)>;

// `done` runs once on `executor`.
void dialEgress(std::shared_ptr<EgressContext> context, std::string host, std::uint16_t port,
                boost::asio::any_io_executor executor, DialHandler done);

}  // namespace ccsandbox
