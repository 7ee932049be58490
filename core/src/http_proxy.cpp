#include "http_proxy.hpp"

#include "egress_dialer.hpp"

#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

#include <array>
#include <optional>

namespace ccsandbox {

namespace asio = boost::asio;

namespace {

std::string lowerAscii(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

struct Authority {
  std::string host;
  std::uint16_t port = 0;
};

// host:port or [v6]:port; `defaultPort` 0 means the port is required.
std::optional<Authority> parseAuthority(std::string_view text, std::uint16_t defaultPort) {
  Authority a;
  std::string_view portText;
  if (!text.empty() && text.front() == '[') {
    auto close = text.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    a.host = std::string(text.substr(1, close - 1));
    auto rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return std::nullopt;
      portText = rest.substr(1);
    }
  } else {
    auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      portText = text.substr(colon + 1);
      text = text.substr(0, colon);
    }
    a.host = std::string(text);
  }
  if (a.host.empty()) return std::nullopt;
  if (portText.empty()) {
    if (defaultPort == 0) return std::nullopt;
    a.port = defaultPort;
    return a;
  }
  unsigned long port = 0;
  if (portText.size() > 5) return std::nullopt;
  for (char c : portText) {
    if (c < '0' || c > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned long>(c - '0');
  }
  if (port == 0 || port > 65535) return std::nullopt;
  a.port = static_cast<std::uint16_t>(port);
  return a;
}

class HttpProxyConnection final : public EgressConnection,
                                  public std::enable_shared_from_this<HttpProxyConnection> {
 public:
  HttpProxyConnection(std::shared_ptr<EgressContext> ctx, StreamSocket client)
      : ctx_(std::move(ctx)),
        client_(std::move(client)),
        timer_(client_.get_executor()),
        buffer_(kMaxRequestHead) {}

  ~HttpProxyConnection() override { ctx_->remove(this); }

  void start() {
    if (!ctx_->add(shared_from_this())) return;
    timer_.expires_after(ctx_->timeouts().handshake);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
      if (ec) return;
      self->timedOut_ = true;
      boost::system::error_code ignored;
      self->client_.cancel(ignored);
    });
    asio::async_read_until(client_, buffer_, "\r\n\r\n",
                           [self = shared_from_this()](const boost::system::error_code &ec,
                                                       std::size_t n) { self->onHead(ec, n); });
  }

  void close() override {
    asio::post(client_.get_executor(), [self = shared_from_this()] { self->closeNow(); });
  }

 private:
  void onHead(const boost::system::error_code &ec, std::size_t headSize) {
    if (closed_) return;
    if (timedOut_) return respond(408, "Request Timeout", "no complete request head in time\n");
    if (ec == asio::error::not_found)
      return respond(431, "Request Header Fields Too Large",
                     "request line and headers exceed 64 KiB\n");
    if (ec) return closeNow();  // the client went away mid-request
    std::string head(asio::buffers_begin(buffer_.data()),
                     asio::buffers_begin(buffer_.data()) + static_cast<std::ptrdiff_t>(headSize));
    buffer_.consume(headSize);
    auto lineEnd = head.find("\r\n");
    std::string_view line(head.data(), lineEnd);
    auto sp1 = line.find(' ');
    auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos ||
        line.substr(sp2 + 1).substr(0, 7) != "HTTP/1.")
      return respond(400, "Bad Request", "malformed request line\n");
    std::string method(line.substr(0, sp1));
    std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    if (method == "CONNECT") {
      auto a = parseAuthority(target, 0);
      if (!a) return respond(400, "Bad Request", "CONNECT needs host:port\n");
      tunnel_ = true;
      return dial(*a);
    }
    if (lowerAscii(target.substr(0, 7)) != "http://")
      return respond(400, "Bad Request",
                     "this is a proxy: send an absolute http:// URL, or CONNECT for https\n");
    auto rest = target.substr(7);
    auto pathStart = rest.find_first_of("/?#");
    auto authority = rest.substr(0, pathStart);
    if (authority.find('@') != std::string_view::npos)
      return respond(400, "Bad Request", "credentials in the URL are not forwarded\n");
    auto a = parseAuthority(authority, 80);
    if (!a) return respond(400, "Bad Request", "bad host in URL\n");
    std::string path =
        pathStart == std::string_view::npos ? "/" : std::string(rest.substr(pathStart));
    if (path.front() != '/') path.insert(0, "/");
    // Origin form upstream; one request per connection (Connection: close), so a
    // second request on this connection cannot reach another host.
    std::string out = method + " " + path + " " + std::string(line.substr(sp2 + 1)) + "\r\n";
    // Host is the URL's authority, whatever the client wrote: the upstream was
    // chosen (and allowed) by that name, so the request may not name another.
    out += "Host: " + std::string(authority) + "\r\n";
    std::size_t pos = lineEnd + 2;
    while (pos < head.size()) {
      auto end = head.find("\r\n", pos);
      if (end == pos) break;
      std::string_view h(head.data() + pos, end - pos);
      pos = end + 2;
      auto name = lowerAscii(h.substr(0, h.find(':')));
      if (name == "proxy-connection" || name == "proxy-authorization" || name == "connection" ||
          name == "keep-alive" || name == "host")
        continue;
      out.append(h).append("\r\n");
    }
    out += "Connection: close\r\n\r\n";
    forward_ = std::move(out);
    dial(*a);
  }

  void dial(const Authority &a) {
    target_ = formatTarget(a.host, a.port);
    dialEgress(ctx_, a.host, a.port, client_.get_executor(),
               [self = shared_from_this()](DialResult r) { self->onDial(std::move(r)); });
  }

  void onDial(DialResult r) {
    if (closed_) return;
    timer_.cancel();
    switch (r.status) {
      case DialResult::Status::refused:
        return respond(403, "Forbidden",
                       "ccsandbox egress: " + target_ + " refused: " + r.message + "\n", true);
      case DialResult::Status::unresolved: return respond(502, "Bad Gateway", r.message + "\n");
      case DialResult::Status::unreachable: return respond(502, "Bad Gateway", r.message + "\n");
      case DialResult::Status::connected: break;
    }
    auto family = r.socket.local_endpoint().protocol().family();
    StreamSocket upstream(client_.get_executor(),
                          asio::generic::stream_protocol(family, IPPROTO_TCP), r.socket.release());
    std::string leftover(asio::buffers_begin(buffer_.data()), asio::buffers_end(buffer_.data()));
    if (!tunnel_) {
      closed_ = true;
      return startTunnelRelay(ctx_, std::move(client_), std::move(upstream), forward_ + leftover);
    }
    auto reply = std::make_shared<std::string>("HTTP/1.1 200 Connection Established\r\n\r\n");
    auto up = std::make_shared<StreamSocket>(std::move(upstream));
    asio::async_write(client_, asio::buffer(*reply),
                      [self = shared_from_this(), reply, up, leftover = std::move(leftover)](
                          const boost::system::error_code &ec, std::size_t) mutable {
                        if (ec || self->closed_) return self->closeNow();
                        self->closed_ = true;
                        startTunnelRelay(self->ctx_, std::move(self->client_), std::move(*up),
                                         std::move(leftover));
                      });
  }

  void respond(int code, const std::string &text, const std::string &body, bool refused = false) {
    timer_.cancel();
    auto msg = std::make_shared<std::string>(
        "HTTP/1.1 " + std::to_string(code) + " " + text +
        "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " +
        std::to_string(body.size()) + "\r\nConnection: close\r\n" +
        (refused ? "X-Ccsandbox-Egress: refused\r\n" : "") + "\r\n" + body);
    asio::async_write(
        client_, asio::buffer(*msg),
        [self = shared_from_this(), msg](const boost::system::error_code &ec, std::size_t) {
          if (ec || self->closed_) return self->closeNow();
          boost::system::error_code ignored;
          self->client_.shutdown(StreamSocket::shutdown_send, ignored);
          self->lingeringClose();
        });
  }

  // Closing with unread input would reset the connection and could destroy the
  // reply before the client reads it: read and discard (bounded) until EOF.
  void lingeringClose() {
    timer_.expires_after(std::chrono::seconds(2));
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
      if (!ec) self->closeNow();
    });
    drain();
  }

  void drain() {
    client_.async_read_some(
        asio::buffer(drainBuffer_),
        [self = shared_from_this()](const boost::system::error_code &ec, std::size_t n) {
          self->drained_ += n;
          if (ec || self->closed_ || self->drained_ > (1u << 20)) return self->closeNow();
          self->drain();
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
  asio::streambuf buffer_;
  std::string forward_;
  std::string target_;
  std::array<char, 4096> drainBuffer_;
  std::size_t drained_ = 0;
  bool tunnel_ = false;
  bool timedOut_ = false;
  bool closed_ = false;
};

}  // namespace

void serveHttpProxyClient(std::shared_ptr<EgressContext> context, StreamSocket client) {
  std::make_shared<HttpProxyConnection>(std::move(context), std::move(client))->start();
}

}  // namespace ccsandbox
