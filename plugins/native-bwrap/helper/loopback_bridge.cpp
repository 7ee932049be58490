#include "loopback_bridge.hpp"

#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <stdexcept>

namespace ccsandbox::bwrap {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {

// One relayed connection: two half-duplex pumps; each end's EOF is passed on
// as a shutdown of the other's write side, so request/response protocols work.
class Relay : public std::enable_shared_from_this<Relay> {
 public:
  Relay(asio::ip::tcp::socket tcp, asio::local::stream_protocol::socket unix)
      : tcp_(std::move(tcp)), unix_(std::move(unix)) {}

  void start() {
    pump(tcp_, unix_, up_);
    pump(unix_, tcp_, down_);
  }

 private:
  using Buffer = std::array<char, 64 * 1024>;

  template <class From, class To>
  void pump(From &from, To &to, Buffer &buffer) {
    auto self = shared_from_this();
    from.async_read_some(
        asio::buffer(buffer), [this, self, &from, &to, &buffer](error_code ec, std::size_t n) {
          if (ec) {
            error_code ignored;
            if (ec == asio::error::eof) {
              to.shutdown(asio::socket_base::shutdown_send, ignored);
            } else {
              from.close(ignored);
              to.close(ignored);
            }
            return;
          }
          asio::async_write(to, asio::buffer(buffer, n),
                            [this, self, &from, &to, &buffer](error_code wec, std::size_t) {
                              if (wec) {
                                error_code ignored;
                                from.close(ignored);
                                to.close(ignored);
                                return;
                              }
                              pump(from, to, buffer);
                            });
        });
  }

  asio::ip::tcp::socket tcp_;
  asio::local::stream_protocol::socket unix_;
  Buffer up_{}, down_{};
};

}  // namespace

LoopbackBridge::LoopbackBridge(asio::io_context &io, const std::string &host, int port,
                               std::string unixSocket)
    : io_(io),
      acceptor_(io, asio::ip::tcp::endpoint(asio::ip::make_address(host),
                                            static_cast<unsigned short>(port))),
      retry_(io),
      unixSocket_(std::move(unixSocket)) {}

void LoopbackBridge::start() {
  acceptNext();
}

void LoopbackBridge::acceptNext() {
  acceptor_.async_accept([this](error_code ec, asio::ip::tcp::socket tcp) {
    if (ec == asio::error::operation_aborted) return;
    if (!ec) {
      relay(std::move(tcp));
      return acceptNext();
    }
    // A client that gave up before we took it: the next one.
    if (ec == asio::error::connection_aborted || ec == asio::error::interrupted ||
        ec == asio::error::try_again)
      return acceptNext();
    // Out of descriptors (the sandbox holds many connections open) or memory:
    // the connection stays queued and the listener stays readable, so trying
    // again at once would spin pid 1 at full speed. Likewise for any error
    // this loop does not expect.
    acceptLater();
  });
}

void LoopbackBridge::acceptLater() {
  retry_.expires_after(std::chrono::milliseconds(50));
  retry_.async_wait([this](error_code ec) {
    if (!ec) acceptNext();
  });
}

void LoopbackBridge::relay(asio::ip::tcp::socket tcp) {
  // Asynchronous: a proxy with a full backlog must not stall pid 1's loop,
  // which also serves the control channel.
  auto unix = std::make_shared<asio::local::stream_protocol::socket>(io_);
  auto client = std::make_shared<asio::ip::tcp::socket>(std::move(tcp));
  unix->async_connect(asio::local::stream_protocol::endpoint(unixSocket_),
                      [unix, client](error_code ec) {
                        // A proxy that is gone: the client sees its connection closed.
                        if (!ec)
                          std::make_shared<Relay>(std::move(*client), std::move(*unix))->start();
                      });
}

BridgeSpec parseBridgeSpec(const std::string &text) {
  auto eq = text.find('=');
  auto colon = text.rfind(':', eq);
  if (eq == std::string::npos || colon == std::string::npos || colon == 0)
    throw std::invalid_argument("bad bridge \"" + text + "\" (want HOST:PORT=SOCKET)");
  BridgeSpec spec;
  spec.host = text.substr(0, colon);
  spec.port = std::stoi(text.substr(colon + 1, eq - colon - 1));
  spec.unixSocket = text.substr(eq + 1);
  if (spec.port <= 0 || spec.port > 65535 || spec.unixSocket.empty())
    throw std::invalid_argument("bad bridge \"" + text + "\" (want HOST:PORT=SOCKET)");
  return spec;
}

}  // namespace ccsandbox::bwrap
