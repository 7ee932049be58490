// The proxy pair driven by real curl (plain HTTP, CONNECT, SOCKS5 with remote
// name resolution) and by raw sockets, against servers on loopback. Test names
// resolve through an injected resolver; the allowlist names the loopback
// literal where a test means "this address was explicitly allowed".
#define BOOST_TEST_MODULE egress_proxy
#include <boost/test/unit_test.hpp>

#include "egress_context.hpp"
#include "egress_fixture.hpp"
#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/io_context.hpp>

#include <algorithm>
#include <optional>

using namespace egress_test;
using ccsandbox::test::runChild;

namespace {

std::string port(std::uint16_t p) {
  return std::to_string(p);
}

ccsandbox::test::ChildResult curl(std::vector<std::string> args) {
  std::vector<std::string> argv{"curl", "-sS", "--max-time", "30", "--noproxy", ""};
  argv.insert(argv.end(), args.begin(), args.end());
  ccsandbox::test::ChildOptions o;
  o.unsetEnv = {"http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
                "ALL_PROXY",  "all_proxy",   "NO_PROXY",   "no_proxy"};
  return runChild(argv, o);
}

}  // namespace

BOOST_AUTO_TEST_CASE(curl_plain_http_through_the_http_proxy) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"allowed.test", "127.0.0.1:" + port(server.port())}, {},
                 {{"allowed.test", {"127.0.0.1"}}});
  auto r = curl({"-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://allowed.test:" + port(server.port()) + "/plain?q=1"});
  BOOST_TEST(r.status == 0, r.err);
  // Forwarded in origin form, the Host header kept.
  BOOST_TEST(r.out ==
             "hello GET /plain?q=1 HTTP/1.1 host=allowed.test:" + port(server.port()) + "\n");
  BOOST_TEST(pair.refusalsSnapshot().empty());
  // A Host header naming another site is replaced by the URL's authority.
  auto fd = connectTcp(pair.proxies->httpPort());
  sendAll(fd.get(), "GET http://allowed.test:" + port(server.port()) +
                        "/h HTTP/1.1\r\nHost: evil.test\r\nX-Keep: 1\r\n\r\n");
  BOOST_TEST(readAll(fd.get()).find("host=allowed.test:" + port(server.port())) !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(curl_connect_tunnel_through_the_http_proxy) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"allowed.test", "127.0.0.1:" + port(server.port())}, {},
                 {{"allowed.test", {"127.0.0.1"}}});
  auto r = curl({"--proxytunnel", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://allowed.test:" + port(server.port()) + "/tunnelled"});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out ==
             "hello GET /tunnelled HTTP/1.1 host=allowed.test:" + port(server.port()) + "\n");
}

BOOST_AUTO_TEST_CASE(curl_through_socks5_with_remote_resolution) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"allowed.test", "127.0.0.1:" + port(server.port())}, {},
                 {{"allowed.test", {"127.0.0.1"}}});
  auto r = curl({"--socks5-hostname", "127.0.0.1:" + port(pair.proxies->socksPort()),
                 "http://allowed.test:" + port(server.port()) + "/socks"});
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out == "hello GET /socks HTTP/1.1 host=allowed.test:" + port(server.port()) + "\n");
  BOOST_TEST(pair.resolver->lookups == 1);  // resolved once, by the proxy
  // socks5h:// is what ALL_PROXY carries.
  auto r2 = curl({"-x", "socks5h://127.0.0.1:" + port(pair.proxies->socksPort()),
                  "http://allowed.test:" + port(server.port()) + "/h"});
  BOOST_TEST(r2.status == 0, r2.err);
}

BOOST_AUTO_TEST_CASE(refused_http_gets_403_naming_the_rule_and_a_violation) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"allowed.test"}, {}, {{"other.test", {"127.0.0.1"}}});
  auto r = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://other.test:" + port(server.port()) + "/"});
  BOOST_TEST(r.out.find("ccsandbox egress: other.test:" + port(server.port()) + " refused") !=
             std::string::npos);
  BOOST_TEST(r.out.find("not in the session's egress allowlist") != std::string::npos, r.out);
  BOOST_TEST(r.out.substr(r.out.size() - 3) == "403");
  auto v = pair.waitRefusals(1);
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].target == "other.test:" + port(server.port()));
  BOOST_TEST(v[0].reason.find("allowlist") != std::string::npos);
  BOOST_TEST(server.served() == 0);
  // CONNECT refused the same way.
  auto c = curl({"--proxytunnel", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://other.test:" + port(server.port()) + "/"});
  BOOST_TEST(c.status != 0);
  BOOST_TEST(c.err.find("403") != std::string::npos, c.err);
  BOOST_TEST(pair.waitRefusals(2).size() == 2u);
}

BOOST_AUTO_TEST_CASE(refused_socks_gets_reply_0x02_and_a_violation) {
  ProxyPair pair({"allowed.test"});
  auto fd = connectTcp(pair.proxies->socksPort());
  sendAll(fd.get(), std::string("\x05\x01\x00", 3));
  BOOST_TEST(recvExactly(fd.get(), 2) == std::string("\x05\x00", 2));
  std::string req("\x05\x01\x00\x03", 4);
  std::string host = "evil.test";
  req += static_cast<char>(host.size());
  req += host;
  req += std::string("\x01\xbb", 2);
  sendAll(fd.get(), req);
  auto reply = readAll(fd.get());
  BOOST_REQUIRE_GE(reply.size(), 2u);
  BOOST_TEST(reply[1] == '\x02');
  auto v = pair.waitRefusals(1);
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].target == "evil.test:443");
}

BOOST_AUTO_TEST_CASE(the_deny_list_beats_an_allow) {
  ProxyPair pair({"metadata.google.internal", "*.internal", "169.254.169.254"},
                 {"metadata.google.internal", "169.254.169.254"},
                 {{"metadata.google.internal", {"127.0.0.1"}}});
  auto r = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://METADATA.google.internal./computeMetadata/v1/"});
  BOOST_TEST(r.out.find("deny list") != std::string::npos, r.out);
  BOOST_TEST(r.out.substr(r.out.size() - 3) == "403");
  auto r2 = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                  "http://169.254.169.254/latest/meta-data/"});
  BOOST_TEST(r2.out.substr(r2.out.size() - 3) == "403");
  BOOST_TEST(pair.resolver->lookups == 0);  // refused before any lookup
  auto v = pair.waitRefusals(2);
  BOOST_TEST(v.size() == 2u);
}

BOOST_AUTO_TEST_CASE(disabled_network_refuses_everything) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({}, {}, {{"allowed.test", {"127.0.0.1"}}});
  auto r = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                 "http://127.0.0.1:" + port(server.port()) + "/"});
  BOOST_TEST(r.out.find("network disabled") != std::string::npos, r.out);
  BOOST_TEST(server.served() == 0);
  auto s = curl({"--socks5-hostname", "127.0.0.1:" + port(pair.proxies->socksPort()),
                 "http://allowed.test:" + port(server.port()) + "/"});
  BOOST_TEST(s.status != 0);
  BOOST_TEST(pair.waitRefusals(2).size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_name_resolving_to_loopback_is_refused_unless_the_literal_is_allowed) {
  LoopbackServer server(LoopbackServer::Kind::http);
  std::map<std::string, std::vector<std::string>> names{
      {"rebind.test", {"127.0.0.1"}},
      {"meta.test", {"169.254.169.254"}},
      {"mixed.test", {"169.254.169.254", "127.0.0.1"}}};
  {
    ProxyPair pair({"rebind.test", "meta.test"}, {}, names);
    auto r = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                   "http://rebind.test:" + port(server.port()) + "/"});
    BOOST_TEST(r.out.find("127.0.0.1 is loopback") != std::string::npos, r.out);
    auto m = curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                   "http://meta.test/"});
    BOOST_TEST(m.out.find("169.254.169.254 is link-local") != std::string::npos, m.out);
    auto v = pair.waitRefusals(2);
    BOOST_REQUIRE_EQUAL(v.size(), 2u);
    BOOST_TEST(v[0].reason.find("loopback") != std::string::npos);
    BOOST_TEST(server.served() == 0);
  }
  {
    // The literal is allowed: the same name now reaches the server; a forbidden
    // address next to it is skipped, not dialled.
    ProxyPair pair({"rebind.test", "mixed.test", "127.0.0.1:" + port(server.port())}, {}, names);
    auto r = curl({"-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                   "http://rebind.test:" + port(server.port()) + "/ok"});
    BOOST_TEST(r.out.find("hello GET /ok") != std::string::npos, r.out + r.err);
    auto m = curl({"-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
                   "http://mixed.test:" + port(server.port()) + "/mixed"});
    BOOST_TEST(m.out.find("hello GET /mixed") != std::string::npos, m.out + m.err);
    // The literal on another port is not allowed.
    auto other =
        curl({"-w", "%{http_code}", "-x", "http://127.0.0.1:" + port(pair.proxies->httpPort()),
              "http://rebind.test:1/"});
    BOOST_TEST(other.out.find("loopback") != std::string::npos, other.out);
  }
}

BOOST_AUTO_TEST_CASE(the_allowlist_can_be_replaced_while_running) {
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"nothing.test"});
  auto url = "http://127.0.0.1:" + port(server.port()) + "/live";
  auto proxy = "http://127.0.0.1:" + port(pair.proxies->httpPort());
  BOOST_TEST(curl({"-w", "%{http_code}", "-x", proxy, url}).out.find("403") != std::string::npos);
  pair.proxies->setAllowlist({"127.0.0.1:" + port(server.port())});
  BOOST_TEST(pair.proxies->allowlist() ==
             std::vector<std::string>{"127.0.0.1:" + port(server.port())});
  BOOST_TEST(curl({"-x", proxy, url}).out.find("hello GET /live") != std::string::npos);
  BOOST_CHECK_THROW(pair.proxies->setAllowlist({"*.*.bad"}), ccsandbox::DomainPatternError);
  BOOST_TEST(curl({"-x", proxy, url}).out.find("hello GET /live") != std::string::npos);
  pair.proxies->setAllowlist({});
  BOOST_TEST(curl({"-w", "%{http_code}", "-x", proxy, url}).out.find("403") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(half_close_through_connect_and_socks_tunnels) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  ProxyPair pair({"127.0.0.1:" + port(echo.port())});
  std::string payload(300000, 'x');
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<char>('a' + i % 26);
  {
    auto fd = connectTcp(pair.proxies->httpPort());
    // The request and the first tunnel bytes in one write: nothing may be lost.
    sendAll(fd.get(),
            "CONNECT 127.0.0.1:" + port(echo.port()) + " HTTP/1.1\r\nHost: x\r\n\r\n" + payload);
    ::shutdown(fd.get(), SHUT_WR);  // the echo server answers only after our EOF
    auto got = readAll(fd.get());
    std::string ok = "HTTP/1.1 200 Connection Established\r\n\r\n";
    BOOST_REQUIRE_GE(got.size(), ok.size());
    BOOST_TEST(got.substr(0, ok.size()) == ok);
    BOOST_TEST((got.substr(ok.size()) == payload));
  }
  {
    auto fd = connectTcp(pair.proxies->socksPort());
    std::string req("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01", 11);
    req += static_cast<char>(echo.port() >> 8);
    req += static_cast<char>(echo.port() & 0xff);
    sendAll(fd.get(), req);
    BOOST_TEST(recvExactly(fd.get(), 2) == std::string("\x05\x00", 2));
    auto head = recvExactly(fd.get(), 10);
    BOOST_REQUIRE_EQUAL(head.size(), 10u);
    BOOST_TEST(head[1] == '\x00');
    sendAll(fd.get(), payload);
    ::shutdown(fd.get(), SHUT_WR);
    BOOST_TEST((readAll(fd.get()) == payload));
  }
}

BOOST_AUTO_TEST_CASE(socks_commands_address_types_and_methods) {
  LoopbackServer echo(LoopbackServer::Kind::echo, AF_INET6);
  ProxyPair pair({"[::1]:" + port(echo.port())});
  auto request = [&](std::string greeting, std::string req) {
    auto fd = connectTcp(pair.proxies->socksPort());
    sendAll(fd.get(), greeting);
    auto method = recvExactly(fd.get(), 2);
    if (method != std::string("\x05\x00", 2)) return method;
    sendAll(fd.get(), req);
    return recvExactly(fd.get(), 2);
  };
  std::string noAuth("\x05\x01\x00", 3);
  std::string v4("\x00\x01\x7f\x00\x00\x01\x00\x50", 8);
  BOOST_TEST(request(noAuth, std::string("\x05\x02", 2) + v4)[1] == '\x07');  // BIND
  BOOST_TEST(request(noAuth, std::string("\x05\x03", 2) + v4)[1] == '\x07');  // UDP ASSOCIATE
  BOOST_TEST(request(noAuth, std::string("\x05\x01\x00\x09\x00\x00", 6))[1] == '\x08');
  // Only username/password offered: no acceptable method.
  BOOST_TEST(request(std::string("\x05\x01\x02", 3), {}) == std::string("\x05\xff", 2));
  // IPv6 address type to an explicitly allowed [::1]:port.
  std::string v6("\x05\x01\x00\x04", 4);
  v6 += std::string(15, '\0') + '\x01';
  v6 += static_cast<char>(echo.port() >> 8);
  v6 += static_cast<char>(echo.port() & 0xff);
  auto fd = connectTcp(pair.proxies->socksPort());
  sendAll(fd.get(), noAuth + v6);
  BOOST_TEST(recvExactly(fd.get(), 2) == std::string("\x05\x00", 2));
  auto head = recvExactly(fd.get(), 4);
  BOOST_REQUIRE_EQUAL(head.size(), 4u);
  BOOST_TEST(head[1] == '\x00');
  recvExactly(fd.get(), head[3] == '\x04' ? 18 : 6);
  sendAll(fd.get(), "six six");
  ::shutdown(fd.get(), SHUT_WR);
  BOOST_TEST(readAll(fd.get()) == "six six");
}

BOOST_AUTO_TEST_CASE(unix_socket_endpoints_serve_the_same_proxies) {
  ccsandbox::test::TempTree dir;
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"127.0.0.1:" + port(server.port())}, {}, {}, dir.path());
  BOOST_TEST(pair.proxies->httpSocket() == dir.path() + "/http-proxy.sock");
  auto fd = connectUnix(pair.proxies->httpSocket());
  sendAll(fd.get(), "GET http://127.0.0.1:" + port(server.port()) +
                        "/unix HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  BOOST_TEST(readAll(fd.get()).find("hello GET /unix") != std::string::npos);
  auto s = connectUnix(pair.proxies->socksSocket());
  std::string req("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01", 11);
  req += static_cast<char>(server.port() >> 8);
  req += static_cast<char>(server.port() & 0xff);
  sendAll(s.get(), req);
  BOOST_TEST(recvExactly(s.get(), 2) == std::string("\x05\x00", 2));
  BOOST_TEST(recvExactly(s.get(), 10)[1] == '\x00');
  sendAll(s.get(), "GET /u HTTP/1.1\r\nHost: x\r\n\r\n");
  BOOST_TEST(readAll(s.get()).find("hello GET /u") != std::string::npos);
  pair.proxies->stop();
  BOOST_TEST(!std::filesystem::exists(dir.path() + "/http-proxy.sock"));
}

BOOST_AUTO_TEST_CASE(a_socket_directory_longer_than_a_socket_address_allows_still_works) {
  // A long runtime directory puts the session's sockets beyond the 108 bytes of a
  // sockaddr_un: they are bound (and reached here) through the directory.
  ccsandbox::test::TempTree tree;
  const std::string dir = tree.dir(std::string(120, 'd'));
  LoopbackServer server(LoopbackServer::Kind::http);
  ProxyPair pair({"127.0.0.1:" + port(server.port())}, {}, {}, dir);
  BOOST_TEST(pair.proxies->httpSocket() == dir + "/http-proxy.sock");
  BOOST_TEST(std::filesystem::is_socket(pair.proxies->httpSocket()));
  BOOST_TEST(std::filesystem::is_socket(pair.proxies->socksSocket()));
  ccsandbox::UniqueFd parent(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  BOOST_REQUIRE(parent);
  auto fd = connectUnix("/proc/self/fd/" + std::to_string(parent.get()) + "/http-proxy.sock");
  sendAll(fd.get(), "GET http://127.0.0.1:" + port(server.port()) +
                        "/long HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  BOOST_TEST(readAll(fd.get()).find("hello GET /long") != std::string::npos);
  pair.proxies->stop();
  BOOST_TEST(!std::filesystem::exists(dir + "/http-proxy.sock"));
}

BOOST_AUTO_TEST_CASE(the_system_resolver_keeps_the_meaning_of_its_errors) {
  // ".invalid" never resolves (RFC 6761). Its error is the resolver's, not an
  // errno: read as one, "host not found" (1) said "Operation not permitted".
  namespace asio = boost::asio;
  asio::io_context io;
  std::optional<std::error_code> got;
  ccsandbox::systemResolver()->resolve(
      "ccsandbox-test.invalid", io.get_executor(),
      [&](std::error_code ec, std::vector<asio::ip::address>) { got = ec; });
  io.run();
  BOOST_REQUIRE(got.has_value());
  BOOST_REQUIRE(*got);
  const std::error_code resolverErrors[] = {
      static_cast<std::error_code>(boost::system::error_code(asio::error::host_not_found)),
      static_cast<std::error_code>(
          boost::system::error_code(asio::error::host_not_found_try_again)),
      static_cast<std::error_code>(boost::system::error_code(asio::error::no_data))};
  BOOST_TEST(std::find(std::begin(resolverErrors), std::end(resolverErrors), *got) !=
                 std::end(resolverErrors),
             got->category().name() << " " << got->value() << ": " << got->message());
}
