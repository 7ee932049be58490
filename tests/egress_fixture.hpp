// Shared pieces of the egress suites: loopback test servers, a resolver that
// maps test names, a proxy pair with its refusals recorded, raw socket helpers.
#pragma once

#include "ccsandbox/unique_fd.hpp"
#include "egress_proxies.hpp"

#include <boost/asio/post.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace egress_test {

using ccsandbox::UniqueFd;

inline UniqueFd listenLoopback(std::uint16_t &port, int family = AF_INET) {
  UniqueFd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage ss{};
  socklen_t len;
  if (family == AF_INET) {
    auto *a = reinterpret_cast<sockaddr_in *>(&ss);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    len = sizeof(sockaddr_in);
  } else {
    auto *a = reinterpret_cast<sockaddr_in6 *>(&ss);
    a->sin6_family = AF_INET6;
    a->sin6_addr = in6addr_loopback;
    len = sizeof(sockaddr_in6);
  }
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&ss), len) != 0 || ::listen(fd.get(), 1024))
    throw std::runtime_error("test server cannot listen");
  ::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&ss), &len);
  port = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in *>(&ss)->sin_port
                                 : reinterpret_cast<sockaddr_in6 *>(&ss)->sin6_port);
  return fd;
}

inline std::string readAll(int fd) {
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
  }
}

inline bool sendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// A loopback server: one thread, one connection at a time.
//   http: reads a request head, answers "hello <request line> host=<Host>" and closes.
//   echo: reads until EOF, then sends everything back and closes (needs half-close).
class LoopbackServer {
 public:
  enum class Kind { http, echo };
  explicit LoopbackServer(Kind kind, int family = AF_INET) : kind_(kind) {
    listen_ = listenLoopback(port_, family);
    thread_ = std::thread([this] { run(); });
  }
  ~LoopbackServer() {
    stop_ = true;
    ::shutdown(listen_.get(), SHUT_RDWR);
    thread_.join();
  }
  std::uint16_t port() const { return port_; }
  int served() const { return served_; }

 private:
  void run() {
    while (!stop_) {
      UniqueFd c(::accept4(listen_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) {
        if (stop_) return;
        continue;
      }
      if (kind_ == Kind::echo) {
        auto data = readAll(c.get());
        sendAll(c.get(), data);
      } else {
        std::string head;
        char ch;
        while (head.find("\r\n\r\n") == std::string::npos && ::recv(c.get(), &ch, 1, 0) == 1)
          head += ch;
        auto line = head.substr(0, head.find("\r\n"));
        std::string host;
        auto h = head.find("\r\nHost: ");
        if (h != std::string::npos) host = head.substr(h + 8, head.find("\r\n", h + 2) - h - 8);
        std::string body = "hello " + line + " host=" + host + "\n";
        sendAll(c.get(), "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                             "\r\nConnection: close\r\n\r\n" + body);
      }
      ++served_;
    }
  }

  Kind kind_;
  std::uint16_t port_ = 0;
  UniqueFd listen_;
  std::atomic<bool> stop_{false};
  std::atomic<int> served_{0};
  std::thread thread_;
};

// Test names -> addresses; anything else does not resolve.
class MapResolver : public ccsandbox::EgressResolver {
 public:
  explicit MapResolver(std::map<std::string, std::vector<std::string>> names)
      : names_(std::move(names)) {}
  void resolve(const std::string &host, boost::asio::any_io_executor ex, Handler done) override {
    ++lookups;
    std::vector<boost::asio::ip::address> out;
    auto it = names_.find(host);
    if (it != names_.end())
      for (const auto &a : it->second) out.push_back(boost::asio::ip::make_address(a));
    std::error_code ec = out.empty() ? std::make_error_code(std::errc::no_such_device_or_address)
                                     : std::error_code();
    boost::asio::post(ex, [done = std::move(done), ec, out] { done(ec, out); });
  }
  std::atomic<int> lookups{0};

 private:
  std::map<std::string, std::vector<std::string>> names_;
};

// A proxy pair on its own EgressService, recording refusals.
struct ProxyPair {
  explicit ProxyPair(std::vector<std::string> allow, std::vector<std::string> deny = {},
                     std::map<std::string, std::vector<std::string>> names = {},
                     std::string socketDir = {}, ccsandbox::EgressTimeouts timeouts = {})
      : resolver(std::make_shared<MapResolver>(std::move(names))) {
    ccsandbox::EgressProxyOptions o;
    o.allowlist = std::move(allow);
    o.denylist = std::move(deny);
    o.resolver = resolver;
    o.socketDir = std::move(socketDir);
    o.timeouts = timeouts;
    proxies = std::make_unique<ccsandbox::EgressProxies>(service.context(), o);
    proxies->onRefusal([this](const ccsandbox::EgressRefusal &r) {
      std::lock_guard lock(mutex);
      refusals.push_back(r);
      cv.notify_all();
    });
  }
  ~ProxyPair() { proxies->stop(); }

  std::vector<ccsandbox::EgressRefusal> refusalsSnapshot() {
    std::lock_guard lock(mutex);
    return refusals;
  }
  // Waits (bounded) until `n` refusals arrived; returns what is there.
  std::vector<ccsandbox::EgressRefusal> waitRefusals(std::size_t n) {
    std::unique_lock lock(mutex);
    cv.wait_for(lock, std::chrono::seconds(30), [&] { return refusals.size() >= n; });
    return refusals;
  }

  ccsandbox::EgressService service{2};
  std::shared_ptr<MapResolver> resolver;
  std::unique_ptr<ccsandbox::EgressProxies> proxies;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<ccsandbox::EgressRefusal> refusals;
};

inline UniqueFd connectTcp(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
    throw std::runtime_error("cannot connect to the proxy");
  timeval tv{30, 0};  // a broken proxy fails the test instead of hanging it
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline UniqueFd connectUnix(const std::string &path) {
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
    throw std::runtime_error("cannot connect to " + path);
  timeval tv{30, 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

inline std::string recvExactly(int fd, std::size_t n) {
  std::string out(n, '\0');
  std::size_t got = 0;
  while (got < n) {
    ssize_t r = ::recv(fd, out.data() + got, n - got, 0);
    if (r <= 0) break;
    got += static_cast<std::size_t>(r);
  }
  out.resize(got);
  return out;
}

inline std::size_t openFdCount() {
  std::size_t n = 0;
  for ([[maybe_unused]] auto &e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

}  // namespace egress_test
