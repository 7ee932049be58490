// Bad input to the proxies: each gets a proper error or close, the proxy keeps
// serving the others, and nothing leaks (fds are counted in /proc/self/fd).
#define BOOST_TEST_MODULE egress_bad_input
#include <boost/test/unit_test.hpp>

#include "egress_fixture.hpp"
#include "http_proxy.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>

using namespace egress_test;
namespace asio = boost::asio;

namespace {

std::string port(std::uint16_t p) {
  return std::to_string(p);
}

ccsandbox::EgressTimeouts shortHandshake() {
  ccsandbox::EgressTimeouts t;
  t.handshake = std::chrono::milliseconds(300);
  return t;
}

// The proxy still works: a CONNECT to the echo server round-trips.
bool stillServes(ProxyPair &pair, std::uint16_t echoPort) {
  auto fd = connectTcp(pair.proxies->httpPort());
  sendAll(fd.get(), "CONNECT 127.0.0.1:" + port(echoPort) + " HTTP/1.1\r\n\r\nping");
  ::shutdown(fd.get(), SHUT_WR);
  return readAll(fd.get()) == "HTTP/1.1 200 Connection Established\r\n\r\nping";
}

// Waits (bounded) until the pair has no live connection and the fd count is back.
bool settles(ProxyPair &pair, std::size_t fds) {
  for (int i = 0; i < 600; ++i) {
    if (pair.proxies->liveConnections() == 0 && openFdCount() <= fds) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

BOOST_AUTO_TEST_CASE(garbage_gets_400_or_a_close) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"127.0.0.1:" + port(echo.port())}, {}, {}, {}, shortHandshake());
  for (std::string garbage :
       {std::string("hello\r\n\r\n"), std::string("GET / HTTP/1.1\r\n\r\n"),
        std::string("GET http://x HTTP/9\r\n\r\n"),
        std::string("CONNECT nohostport HTTP/1.1\r\n\r\n"),
        std::string("CONNECT a b c HTTP/1.1\r\n\r\n"), std::string("\x00\x01\x02\xff\r\n\r\n", 8),
        std::string("GET https://x/ HTTP/1.1\r\n\r\n"),
        std::string("GET http://user:pw@x/ HTTP/1.1\r\n\r\n")}) {
    BOOST_TEST_CONTEXT("input " << garbage) {
      auto fd = connectTcp(pair.proxies->httpPort());
      sendAll(fd.get(), garbage);
      auto reply = readAll(fd.get());
      BOOST_TEST(reply.rfind("HTTP/1.1 400 ", 0) == 0, reply);
    }
  }
  // SOCKS: a wrong version or zero methods is closed without a reply.
  for (std::string garbage : {std::string("\x04\x01\x00\x50", 4), std::string("\x05\x00", 2),
                              std::string("GET / HTTP/1.1\r\n\r\n")}) {
    auto fd = connectTcp(pair.proxies->socksPort());
    sendAll(fd.get(), garbage);
    BOOST_TEST(readAll(fd.get()).empty());
  }
  BOOST_TEST(stillServes(pair, echo.port()));
}

BOOST_AUTO_TEST_CASE(a_head_over_64_kib_gets_431) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"127.0.0.1:" + port(echo.port())});
  auto fd = connectTcp(pair.proxies->httpPort());
  std::string head = "GET http://127.0.0.1:" + port(echo.port()) + "/ HTTP/1.1\r\n";
  while (head.size() <= ccsandbox::kMaxRequestHead)
    head += "X-Filler: " + std::string(100, 'f') + "\r\n";
  head += "\r\n";
  sendAll(fd.get(), head);
  ::shutdown(fd.get(), SHUT_WR);
  auto reply = readAll(fd.get());
  BOOST_TEST(reply.rfind("HTTP/1.1 431 ", 0) == 0, reply.substr(0, 80));
  // A request line alone over the limit too.
  auto fd2 = connectTcp(pair.proxies->httpPort());
  sendAll(fd2.get(), "GET http://x/" + std::string(70000, 'a'));
  BOOST_TEST(readAll(fd2.get()).rfind("HTTP/1.1 431 ", 0) == 0);
  BOOST_TEST(stillServes(pair, echo.port()));
}

BOOST_AUTO_TEST_CASE(a_silent_client_is_timed_out) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"127.0.0.1:" + port(echo.port())}, {}, {}, {}, shortHandshake());
  auto before = openFdCount();
  auto http = connectTcp(pair.proxies->httpPort());
  auto socks = connectTcp(pair.proxies->socksPort());
  auto partial = connectTcp(pair.proxies->httpPort());
  sendAll(partial.get(), "CONNECT 127.0.0.1:1 HTTP/1.1\r\n");  // never finished
  BOOST_TEST(readAll(http.get()).rfind("HTTP/1.1 408 ", 0) == 0);
  BOOST_TEST(readAll(partial.get()).rfind("HTTP/1.1 408 ", 0) == 0);
  BOOST_TEST(readAll(socks.get()).empty());  // closed
  http.reset();
  socks.reset();
  partial.reset();
  BOOST_TEST(settles(pair, before));
  BOOST_TEST(stillServes(pair, echo.port()));
}

BOOST_AUTO_TEST_CASE(a_client_that_disappears_mid_handshake) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"127.0.0.1:" + port(echo.port())});
  auto before = openFdCount();
  for (int i = 0; i < 50; ++i) {
    {
      auto fd = connectTcp(pair.proxies->httpPort());
      sendAll(fd.get(), "CONNECT 127.0.0.1:" + port(echo.port()) + " HT");
    }
    {
      auto fd = connectTcp(pair.proxies->socksPort());
      sendAll(fd.get(), std::string("\x05\x01\x00\x05\x01\x00\x03\x20", 8));
    }
    {
      // Reset (SO_LINGER 0) right after asking for a tunnel.
      auto fd = connectTcp(pair.proxies->httpPort());
      linger l{1, 0};
      ::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l);
      sendAll(fd.get(), "CONNECT 127.0.0.1:" + port(echo.port()) + " HTTP/1.1\r\n\r\n");
    }
  }
  BOOST_TEST(settles(pair, before));
  BOOST_TEST(stillServes(pair, echo.port()));
}

BOOST_AUTO_TEST_CASE(ten_thousand_connections_at_once_and_no_fd_growth) {
  // Client and proxy share this process: make room for both ends (root may raise it).
  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_max < 45000) {
    rlimit want{45000, 45000};
    if (setrlimit(RLIMIT_NOFILE, &want) == 0) lim = want;
  }
  lim.rlim_cur = lim.rlim_max;
  setrlimit(RLIMIT_NOFILE, &lim);
  BOOST_TEST_MESSAGE("fd limit " << lim.rlim_cur);

  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"allowed.test", "127.0.0.1:" + port(echo.port())});
  auto before = openFdCount();
  constexpr int kClients = 10000;
  // The clients run in a forked child: their 10 000 fds then do not share this
  // process's fd table with the proxy's 10 000 accepted ones. The child reports
  // "<refused> <other> <first error>" through a pipe.
  int report[2];
  BOOST_REQUIRE(::pipe2(report, O_CLOEXEC) == 0);
  pid_t child = ::fork();
  BOOST_REQUIRE(child >= 0);
  if (child == 0) {
    ::close(report[0]);
    int refused = 0, other = 0;
    std::string firstError;
    auto note = [&](const std::string &what) {
      if (other++ == 0) firstError = what;
    };
    {
      asio::io_context io;
      std::vector<std::shared_ptr<asio::ip::tcp::socket>> sockets;
      asio::ip::tcp::endpoint proxy(asio::ip::address_v4::loopback(), pair.proxies->httpPort());
      const std::string request = "CONNECT denied.test:443 HTTP/1.1\r\n\r\n";
      for (int i = 0; i < kClients; ++i) {
        auto s = std::make_shared<asio::ip::tcp::socket>(io);
        sockets.push_back(s);
        s->async_connect(proxy, [&, s](const boost::system::error_code &ec) {
          if (ec) return note("connect: " + ec.message());
          asio::async_write(
              *s, asio::buffer(request), [&, s](const boost::system::error_code &ec, std::size_t) {
                if (ec) return note("write: " + ec.message());
                auto buf = std::make_shared<std::string>();
                asio::async_read(*s, asio::dynamic_buffer(*buf),
                                 [&, s, buf](const boost::system::error_code &ec, std::size_t) {
                                   if (buf->rfind("HTTP/1.1 403 ", 0) == 0)
                                     ++refused;
                                   else
                                     note("read: " + ec.message() + " after '" + *buf + "'");
                                   s->close();
                                 });
              });
        });
      }
      io.run();
    }
    std::string line = std::to_string(refused) + " " + std::to_string(other) + " " + firstError;
    [[maybe_unused]] auto n = ::write(report[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(report[1]);
  std::string line;
  char chunk[256];
  for (ssize_t n; (n = ::read(report[0], chunk, sizeof chunk)) > 0;)
    line.append(chunk, static_cast<std::size_t>(n));
  ::close(report[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  BOOST_TEST_MESSAGE("clients: " << line);
  int refused = -1, other = -1;
  std::sscanf(line.c_str(), "%d %d", &refused, &other);
  BOOST_TEST(refused == kClients, line);
  BOOST_TEST(other == 0, line);
  BOOST_TEST(pair.waitRefusals(kClients).size() == std::size_t(kClients));
  BOOST_TEST(settles(pair, before));
  BOOST_TEST(openFdCount() <= before);
  BOOST_TEST(stillServes(pair, echo.port()));
}
