#include "socks5_proxy.hpp"

#include "egress_dialer.hpp"

#include <boost/asio/read.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include <array>

namespace ccsandbox {

namespace asio = boost::asio;

namespace {

enum Reply : std::uint8_t {
  kSucceeded = 0x00,
  kGeneralFailure = 0x01,
  kNotAllowed = 0x02,
  kNetworkUnreachable = 0x03,
  kHostUnreachable = 0x04,
  kConnectionRefused = 0x05,
  kTtlExpired = 0x06,
  kCommandNotSupported = 0x07,
  kAddressTypeNotSupported = 0x08,
};

class Socks5Connection final : public EgressConnection,
                               public std::enable_shared_from_this<Socks5Connection> {
 public:
  Socks5Connection(std::shared_ptr<EgressContext> ctx, StreamSocket client)
      : ctx_(std::move(ctx)), client_(std::move(client)), timer_(client_.get_executor()) {}

  ~Socks5Connection() override { ctx_->remove(this); }

  void start() {
    if (!ctx_->add(shared_from_this())) return;
    timer_.expires_after(ctx_->timeouts().handshake);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
      if (!ec) self->closeNow();  // silent or too slow: just close
    });
    read(2, [](Socks5Connection &c) { c.onGreeting(); });
  }

  void close() override {
    asio::post(client_.get_executor(), [self = shared_from_this()] { self->closeNow(); });
  }

 private:
  using Next = void (*)(Socks5Connection &);

  // Appends exactly `n` bytes to in_, then calls `next`; closes on EOF or error.
  void read(std::size_t n, Next next) {
    auto have = in_.size();
    in_.resize(have + n);
    asio::async_read(
        client_, asio::buffer(in_.data() + have, n),
        [self = shared_from_this(), next](const boost::system::error_code &ec, std::size_t) {
          if (ec || self->closed_) return self->closeNow();
          next(*self);
        });
  }

  void onGreeting() {
    if (in_[0] != 0x05 || in_[1] == 0) return closeNow();
    read(in_[1], [](Socks5Connection &c) { c.onMethods(); });
  }

  void onMethods() {
    bool noAuth = false;
    for (std::size_t i = 2; i < in_.size(); ++i) noAuth = noAuth || in_[i] == 0x00;
    in_.clear();
    if (!noAuth) return send({0x05, 0xFF}, true);  // no acceptable method
    send({0x05, 0x00}, false);
    read(4, [](Socks5Connection &c) { c.onRequestHead(); });
  }

  void onRequestHead() {
    if (in_[0] != 0x05) return closeNow();
    if (in_[1] != 0x01) return replyAndClose(kCommandNotSupported);
    switch (in_[3]) {
      case 0x01: return read(4 + 2, [](Socks5Connection &c) { c.onAddress(); });
      case 0x04: return read(16 + 2, [](Socks5Connection &c) { c.onAddress(); });
      case 0x03:
        return read(1, [](Socks5Connection &c) {
          if (c.in_[4] == 0) return c.replyAndClose(kGeneralFailure);
          c.read(c.in_[4] + 2u, [](Socks5Connection &d) { d.onAddress(); });
        });
      default: return replyAndClose(kAddressTypeNotSupported);
    }
  }

  void onAddress() {
    std::string host;
    std::size_t portAt = 0;
    if (in_[3] == 0x01) {
      asio::ip::address_v4::bytes_type b;
      std::copy_n(in_.begin() + 4, 4, b.begin());
      host = asio::ip::address_v4(b).to_string();
      portAt = 8;
    } else if (in_[3] == 0x04) {
      asio::ip::address_v6::bytes_type b;
      std::copy_n(in_.begin() + 4, 16, b.begin());
      host = asio::ip::address_v6(b).to_string();
      portAt = 20;
    } else {
      host.assign(in_.begin() + 5, in_.begin() + 5 + in_[4]);
      portAt = 5 + in_[4];
    }
    auto port = static_cast<std::uint16_t>((in_[portAt] << 8) | in_[portAt + 1]);
    in_.clear();
    if (port == 0) return replyAndClose(kGeneralFailure);
    dialEgress(ctx_, host, port, client_.get_executor(),
               [self = shared_from_this()](DialResult r) { self->onDial(std::move(r)); });
  }

  void onDial(DialResult r) {
    if (closed_) return;
    switch (r.status) {
      case DialResult::Status::refused: return replyAndClose(kNotAllowed);
      case DialResult::Status::unresolved: return replyAndClose(kHostUnreachable);
      case DialResult::Status::unreachable: return replyAndClose(kConnectionRefused);
      case DialResult::Status::connected: break;
    }
    timer_.cancel();
    boost::system::error_code ec;
    auto local = r.socket.local_endpoint(ec);
    std::vector<std::uint8_t> reply{0x05, kSucceeded, 0x00};
    if (!ec && local.address().is_v6()) {
      reply.push_back(0x04);
      auto b = local.address().to_v6().to_bytes();
      reply.insert(reply.end(), b.begin(), b.end());
    } else {
      reply.push_back(0x01);
      auto b = ec ? asio::ip::address_v4::bytes_type{} : local.address().to_v4().to_bytes();
      reply.insert(reply.end(), b.begin(), b.end());
    }
    auto port = ec ? 0 : local.port();
    reply.push_back(static_cast<std::uint8_t>(port >> 8));
    reply.push_back(static_cast<std::uint8_t>(port & 0xFF));
    auto family = ec ? AF_INET : local.protocol().family();
    auto up = std::make_shared<StreamSocket>(client_.get_executor(),
                                             asio::generic::stream_protocol(family, IPPROTO_TCP),
                                             r.socket.release());
    auto msg = std::make_shared<std::vector<std::uint8_t>>(std::move(reply));
    asio::async_write(
        client_, asio::buffer(*msg),
        [self = shared_from_this(), msg, up](const boost::system::error_code &ec, std::size_t) {
          if (ec || self->closed_) return self->closeNow();
          self->closed_ = true;
          startTunnelRelay(self->ctx_, std::move(self->client_), std::move(*up), {});
        });
  }

  void replyAndClose(std::uint8_t code) { send({0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0}, true); }

  void send(std::vector<std::uint8_t> bytes, bool thenClose) {
    auto msg = std::make_shared<std::vector<std::uint8_t>>(std::move(bytes));
    asio::async_write(client_, asio::buffer(*msg),
                      [self = shared_from_this(), msg, thenClose](
                          const boost::system::error_code &ec, std::size_t) {
                        if (ec || thenClose) self->closeNow();
                      });
  }

  void closeNow() {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    boost::system::error_code ignored;
    client_.close(ignored);
  }

  std::shared_ptr<EgressContext> ctx_;
  StreamSocket client_;
  asio::steady_timer timer_;
  std::vector<std::uint8_t> in_;
  bool closed_ = false;
};

}  // namespace

void serveSocks5Client(std::shared_ptr<EgressContext> context, StreamSocket client) {
  std::make_shared<Socks5Connection>(std::move(context), std::move(client))->start();
}

}  // namespace ccsandbox
