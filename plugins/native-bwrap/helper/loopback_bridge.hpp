// The sandbox's only way out: a listener on loopback inside the new network
// namespace (same port as the proxy on the host) whose every connection is
// relayed to the proxy's Unix socket, bound into the sandbox. Replaces the
// seed's socat bridges.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>

#include <memory>
#include <string>

namespace ccsandbox::bwrap {

class LoopbackBridge {
 public:
  // Listens at once; throws boost::system::system_error when it cannot.
  LoopbackBridge(boost::asio::io_context &io, const std::string &host, int port,
                 std::string unixSocket);
  void start();

 private:
  void acceptNext();
  void acceptLater();
  void relay(boost::asio::ip::tcp::socket tcp);

  boost::asio::io_context &io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  std::string unixSocket_;
};

// Parses "127.0.0.1:3128=/run/ccsandbox/proxy/http-proxy.sock" (one field of the
// plugin's `bridges` message); throws std::invalid_argument.
struct BridgeSpec {
  std::string host;
  int port = 0;
  std::string unixSocket;
};
BridgeSpec parseBridgeSpec(const std::string &text);

}  // namespace ccsandbox::bwrap
