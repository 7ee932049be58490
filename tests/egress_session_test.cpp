// Egress wired into sessions: a restricted launch gets its own proxy pair, the
// policy names it and sets the proxy variables, curl run in the session goes
// through it, refusals arrive as `network-outbound` violations, the allowlist is
// replaced live, and git's SSH transport reaches a server through ccsandbox-connect.
// A `none` session gets none of this, as the seed says.
#define BOOST_TEST_MODULE egress_session
#include <boost/test/unit_test.hpp>

#include "ccsandbox/runtime.hpp"
#include "egress_fixture.hpp"
#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <sys/stat.h>

#include <fstream>

using namespace ccsandbox;
using namespace egress_test;

namespace {

std::string port(std::uint16_t p) {
  return std::to_string(p);
}

struct Recorder {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<SandboxEvent> events;
  std::string out;

  EventCallback callback() {
    return [this](const SandboxEvent &e) {
      std::lock_guard lock(mutex);
      if (e.type == SandboxEventType::stdoutData) out += e.data;
      events.push_back(e);
      cv.notify_all();
    };
  }
  std::vector<SandboxViolation> violations() {
    std::lock_guard lock(mutex);
    std::vector<SandboxViolation> v;
    for (const auto &e : events)
      if (e.type == SandboxEventType::violation && e.violation) {
        BOOST_TEST(!e.execId.has_value());
        v.push_back(*e.violation);
      }
    return v;
  }
  std::string takeOut() {
    std::lock_guard lock(mutex);
    return std::exchange(out, {});
  }
};

RuntimeOptions options(const std::string &pluginDir) {
  RuntimeOptions o;
  o.pluginPath = std::vector<std::string>{pluginDir};
  o.searchInstallDir = false;
  o.hostEnv = std::map<std::string, std::string>{
      {"PATH", "/usr/bin:/bin"}, {"HOME", "/root"}, {"NO_PROXY", "127.0.0.1,localhost"}};
  return o;
}

SandboxSpec spec(std::vector<std::string> allow, bool network = true) {
  SandboxSpec s;
  s.sessionId = "";
  s.workspaceId = "ws";
  s.networkEnabled = network;
  s.egressAllowlist = std::move(allow);
  return s;
}

std::string run(Recorder &rec, Session &session, std::vector<std::string> argv,
                std::map<std::string, std::string> env = {}) {
  auto p = session.exec({.argv = std::move(argv),
                         .env = std::move(env),
                         .timeout = std::chrono::milliseconds(60000)});
  p->wait();
  return rec.takeOut();
}

LaunchOptions launchOptions(SandboxSpec s, RequestedBackend backend, EventCallback onEvent) {
  LaunchOptions o;
  o.spec = std::move(s);
  o.backend = backend;
  o.onEvent = std::move(onEvent);
  return o;
}

boost::json::object policyOf(Session &s) {
  return s.handle().details.at("policy").as_object();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_restricted_session_gets_its_own_pair_and_the_variables) {
  Runtime rt(options(CCSANDBOX_BINARY_DIR "/tests/fixtures/egress"));
  Recorder a, b;
  auto s1 = rt.launch(launchOptions(spec({}), RequestedBackend::native, a.callback()));
  auto s2 = rt.launch(launchOptions(spec({}), RequestedBackend::native, b.callback()));
  auto p1 = policyOf(*s1), p2 = policyOf(*s2);
  auto http1 = p1.at("network").at("httpProxy").as_object();
  auto socks1 = p1.at("network").at("socksProxy").as_object();
  BOOST_TEST(http1.at("host").as_string() == "127.0.0.1");
  BOOST_TEST(http1.at("port").as_int64() > 0);
  BOOST_TEST(http1.at("port") != p2.at("network").at("httpProxy").at("port"));  // never shared
  BOOST_TEST(socks1.at("port") != p2.at("network").at("socksProxy").at("port"));
  struct stat st {};
  BOOST_TEST(::stat(std::string(http1.at("unixSocket").as_string()).c_str(), &st) == 0);
  BOOST_TEST(S_ISSOCK(st.st_mode));
  auto env = p1.at("env").as_object();
  std::string http = "http://127.0.0.1:" + std::to_string(http1.at("port").as_int64());
  std::string socks = "socks5h://127.0.0.1:" + std::to_string(socks1.at("port").as_int64());
  for (const char *k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
    BOOST_TEST(env.at(k).as_string() == http, k);
  for (const char *k : {"ALL_PROXY", "all_proxy"}) BOOST_TEST(env.at(k).as_string() == socks, k);
  BOOST_TEST(env.at("NO_PROXY").as_string() == "");
  BOOST_TEST(std::string(env.at("GIT_SSH_COMMAND").as_string()).find("ccsandbox-connect") !=
             std::string::npos);
  // The compiled allowlist is the shipped baseline + GitHub.
  auto allow = s1->egressAllowlist();
  BOOST_TEST(std::count(allow.begin(), allow.end(), "github.com") == 1);
  BOOST_TEST(std::count(allow.begin(), allow.end(), "api.anthropic.com") == 1);
  s1->destroy();
  BOOST_TEST(::stat(std::string(http1.at("unixSocket").as_string()).c_str(), &st) != 0);
}

BOOST_AUTO_TEST_CASE(curl_in_the_session_goes_through_the_proxy_and_refusals_are_violations) {
  LoopbackServer server(LoopbackServer::Kind::http);
  LoopbackServer other(LoopbackServer::Kind::http);
  Runtime rt(options(CCSANDBOX_BINARY_DIR "/tests/fixtures/egress"));
  Recorder rec;
  auto s = rt.launch(launchOptions(spec({"127.0.0.1:" + port(server.port())}),
                                   RequestedBackend::native, rec.callback()));
  // The inherited NO_PROXY=127.0.0.1 was emptied: curl must use the proxy.
  auto ok = run(rec, *s, {"curl", "-sS", "http://127.0.0.1:" + port(server.port()) + "/in"});
  BOOST_TEST(ok == "hello GET /in HTTP/1.1 host=127.0.0.1:" + port(server.port()) + "\n");
  auto refused = run(rec, *s, {"curl", "-sS", "http://127.0.0.1:" + port(other.port()) + "/no"});
  BOOST_TEST(refused.find("refused") != std::string::npos, refused);
  BOOST_TEST(other.served() == 0);
  auto v = rec.violations();
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].action == "network-outbound");
  BOOST_TEST(v[0].target == "127.0.0.1:" + port(other.port()));
  BOOST_TEST(v[0].raw.value_or("").find("allowlist") != std::string::npos);
  // Live replacement: now the other server is allowed, the first one is not.
  s->setEgressAllowlist({"127.0.0.1:" + port(other.port())});
  BOOST_TEST(run(rec, *s, {"curl", "-sS", "http://127.0.0.1:" + port(other.port()) + "/now"})
                 .find("hello GET /now") != std::string::npos);
  BOOST_TEST(run(rec, *s, {"curl", "-sS", "http://127.0.0.1:" + port(server.port()) + "/"})
                 .find("refused") != std::string::npos);
  BOOST_CHECK_THROW(s->setEgressAllowlist({"a.*.*.b"}), UsageError);
  // SOCKS through ALL_PROXY (curl reads it for any scheme).
  auto viaSocks =
      run(rec, *s,
          {"sh", "-c", "unset http_proxy; curl -sS http://127.0.0.1:" + port(other.port()) + "/s"});
  BOOST_TEST(viaSocks.find("hello GET /s") != std::string::npos, viaSocks);
}

BOOST_AUTO_TEST_CASE(disabled_network_still_starts_the_pair_with_an_empty_allowlist) {
  LoopbackServer server(LoopbackServer::Kind::http);
  Runtime rt(options(CCSANDBOX_BINARY_DIR "/tests/fixtures/egress"));
  Recorder rec;
  auto s = rt.launch(launchOptions(spec({"127.0.0.1:" + port(server.port())}, false),
                                   RequestedBackend::native, rec.callback()));
  BOOST_TEST(s->egressAllowlist().empty());
  BOOST_TEST(policyOf(*s).at("network").at("httpProxy").is_object());
  auto out = run(rec, *s, {"curl", "-sS", "http://127.0.0.1:" + port(server.port()) + "/"});
  BOOST_TEST(out.find("network disabled") != std::string::npos, out);
  BOOST_TEST(server.served() == 0);
  BOOST_TEST(rec.violations().size() == 1u);
}

BOOST_AUTO_TEST_CASE(git_ssh_command_reaches_the_server_through_socks) {
  LoopbackServer echo(LoopbackServer::Kind::echo);
  test::TempTree tmp;
  // A stand-in for ssh: runs the ProxyCommand of `-o ProxyCommand=…` with %h/%p
  // substituted, and pipes stdin through it (what ssh does with its transport).
  auto fakeSsh = tmp.file("bin/ssh", R"(#!/bin/sh
pc=""; port=22
while [ $# -gt 0 ]; do
  case "$1" in
    -o) pc="${2#ProxyCommand=}"; shift 2 ;;
    -p) port="$2"; shift 2 ;;
    *) host="$1"; shift; break ;;
  esac
done
cmd=$(printf '%s' "$pc" | sed "s/%h/$host/g; s/%p/$port/g")
exec sh -c "$cmd"
)");
  ::chmod(fakeSsh.c_str(), 0755);
  Runtime rt(options(CCSANDBOX_BINARY_DIR "/tests/fixtures/egress"));
  Recorder rec;
  auto s = rt.launch(launchOptions(spec({"127.0.0.1:" + port(echo.port())}),
                                   RequestedBackend::native, rec.callback()));
  // git runs: sh -c "$GIT_SSH_COMMAND \"$@\"" ssh [-p port] host command
  std::map<std::string, std::string> env{
      {"PATH", tmp.path() + "/bin:/usr/bin:/bin"},
  };
  auto out = run(rec, *s,
                 {"sh", "-c",
                  "printf 'git-upload-pack' | sh -c \"$GIT_SSH_COMMAND \\\"\\$@\\\"\" ssh -p " +
                      port(echo.port()) + " 127.0.0.1 git-upload-pack"},
                 env);
  BOOST_TEST(out == "git-upload-pack");
  // A host outside the allowlist: the helper names the refusal, a violation is raised.
  auto refused = run(rec, *s,
                     {"sh", "-c",
                      "sh -c \"$GIT_SSH_COMMAND \\\"\\$@\\\"\" ssh -p 22 evil.test x </dev/null "
                      "2>&1"},
                     env);
  BOOST_TEST(refused.find("refused by the session's egress allowlist") != std::string::npos,
             refused);
  auto v = rec.violations();
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].target == "evil.test:22");
}

BOOST_AUTO_TEST_CASE(a_none_session_gets_no_proxies) {
  Runtime rt(options(CCSANDBOX_PLUGIN_DIR));
  Recorder rec;
  auto s = rt.launch(launchOptions(spec({}), RequestedBackend::none, rec.callback()));
  BOOST_CHECK_THROW(s->egressAllowlist(), UsageError);
  BOOST_CHECK_THROW(s->setEgressAllowlist({"example.com"}), UsageError);
  auto env = run(rec, *s, {"env"});
  BOOST_TEST(env.find("HTTP_PROXY=") == std::string::npos, env);
  BOOST_TEST(env.find("ALL_PROXY=") == std::string::npos, env);
}

BOOST_AUTO_TEST_CASE(destroying_a_session_from_its_own_violation_callback) {
  Runtime rt(options(CCSANDBOX_BINARY_DIR "/tests/fixtures/egress"));
  std::shared_ptr<Session> s;
  std::mutex m;
  std::condition_variable cv;
  bool destroyed = false;
  s = rt.launch(
      launchOptions(spec({}, false), RequestedBackend::native, [&](const SandboxEvent &e) {
        if (e.type != SandboxEventType::violation) return;
        std::shared_ptr<Session> mine;
        {
          std::lock_guard lock(m);
          mine = s;
        }
        if (mine) mine->destroy();  // on a network thread: must not deadlock
        std::lock_guard lock(m);
        destroyed = true;
        cv.notify_all();
      }));
  auto socksPort = policyOf(*s).at("network").at("socksProxy").at("port").as_int64();
  auto fd = connectTcp(static_cast<std::uint16_t>(socksPort));
  sendAll(fd.get(), std::string("\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50", 13));
  readAll(fd.get());
  std::unique_lock lock(m);
  BOOST_TEST(cv.wait_for(lock, std::chrono::seconds(30), [&] { return destroyed; }));
  BOOST_TEST((s->handle().state == SandboxState::destroyed));
}
