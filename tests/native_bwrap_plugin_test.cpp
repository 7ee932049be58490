// The native-bwrap plugin driven directly through the ABI with hand-written
// policies: the loopback bridge to a proxy socket, signals, destroy, the
// probe's answers, launch errors, fd hygiene. Runs as root and unprivileged.
#define BOOST_TEST_MODULE native_bwrap_plugin
#include <boost/test/unit_test.hpp>

#include "plugin_loader.hpp"
#include "support/log_capture.hpp"
#include "support/proc_file.hpp"
#include "support/temp_tree.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

using namespace ccsandbox;
using namespace ccsandbox::test;

namespace {

struct Sink final : PluginEventSink {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<SandboxEvent> events;
  void onPluginEvent(const std::string &, std::string_view json) override {
    auto e = decodeSandboxEvent(json::parse(json, "event"));
    std::lock_guard lock(mutex);
    events.push_back(std::move(e));
    cv.notify_all();
  }
  std::optional<SandboxEvent> exitOf(const std::string &execId, std::chrono::seconds limit) {
    std::unique_lock lock(mutex);
    std::optional<SandboxEvent> found;
    cv.wait_for(lock, limit, [&] {
      for (auto &e : events)
        if (e.type == SandboxEventType::exit && e.execId == execId) found = e;
      return found.has_value();
    });
    return found;
  }
};

struct Pipe {
  int fds[2];
  Pipe() { BOOST_REQUIRE(::pipe2(fds, O_CLOEXEC) == 0); }
  ~Pipe() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
  void closeWrite() {
    ::close(fds[1]);
    fds[1] = -1;
  }
  std::string readAll() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
  }
};

struct Loaded {
  Sink sink;
  Discovery discovery;
  LoadedPlugin *plugin = nullptr;
  ProbeResult probe;

  explicit Loaded(boost::json::object settings = {}, bool probeNow = true) {
    discovery = discoverPlugins({CCSANDBOX_PLUGIN_DIR},
                                boost::json::object{{"native-bwrap", std::move(settings)}}, sink);
    for (auto &p : discovery.plugins)
      if (p.info.name == "native-bwrap") plugin = p.loaded.get();
    BOOST_REQUIRE(plugin);
    if (probeNow) probe = plugin->probe();
  }
};

EffectivePolicy minimalPolicy(const std::string &work) {
  EffectivePolicy p;
  p.launchKind = "agent-bash";
  p.mode = "chat";
  p.home = work;
  p.visible.systemReadOnly = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc"};
  p.visible.binds = {{work, work, false}};
  p.writeRoots = {work};
  return p;
}

struct Result {
  SandboxEvent exit;
  std::string out, err;
};

// Runs argv in the session and waits for its exit event and its output.
// Starts `argv` in the session and returns at once; its output goes to `out`
// and `err` (their write ends closed here, so EOF means it ended).
void startIn(Loaded &l, const std::string &session, const std::string &execId,
             std::vector<std::string> argv, Pipe &out, Pipe &err,
             std::map<std::string, std::string> env = {}, const std::string &cwd = "/") {
  int in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  ExecRequest r;
  r.sessionId = session;
  r.execId = execId;
  r.argv = std::move(argv);
  r.env = env.empty() ? std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"}} : env;
  r.cwd = cwd;
  r.stdio = {in, out.fds[1], err.fds[1]};
  l.plugin->exec(r);
  ::close(in);
  out.closeWrite();
  err.closeWrite();
}

Result runIn(Loaded &l, const std::string &session, const std::string &execId,
             std::vector<std::string> argv, std::map<std::string, std::string> env = {},
             const std::string &cwd = "/") {
  Pipe out, err;
  startIn(l, session, execId, std::move(argv), out, err, std::move(env), cwd);
  Result res;
  res.out = out.readAll();
  res.err = err.readAll();
  auto exit = l.sink.exitOf(execId, std::chrono::seconds(30));
  BOOST_REQUIRE(exit);
  res.exit = *exit;
  return res;
}

LaunchRequest request(const std::string &id, const EffectivePolicy &policy, const TempTree &tree) {
  LaunchRequest r;
  r.sessionId = id;
  r.policy = policy;
  r.runtimeDir = tree.dir("runtime-" + id);
  return r;
}

// A stand-in for the core's HTTP proxy on a Unix socket: answers every request
// with what it was asked, so the test sees the request crossed the bridge.
class UnixHttpStub {
 public:
  explicit UnixHttpStub(std::string path) : path_(std::move(path)) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", path_.c_str());
    BOOST_REQUIRE(::bind(fd_, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
    ::chmod(path_.c_str(), 0777);  // the unprivileged run connects too
    BOOST_REQUIRE(::listen(fd_, 8) == 0);
    thread_ = std::thread([this] {
      for (;;) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) return;
        std::string req;
        char buf[1024];
        while (req.find("\r\n\r\n") == std::string::npos) {
          ssize_t n = ::read(c, buf, sizeof buf);
          if (n <= 0) break;
          req.append(buf, static_cast<std::size_t>(n));
        }
        std::string line = req.substr(0, req.find("\r\n"));
        std::string body = "proxied: " + line + "\n";
        std::string resp = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                           "\r\nConnection: close\r\n\r\n" + body;
        [[maybe_unused]] auto w = ::write(c, resp.data(), resp.size());
        ::close(c);
      }
    });
  }
  ~UnixHttpStub() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }

 private:
  std::string path_;
  int fd_ = -1;
  std::thread thread_;
};

int freePort() {
  int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(s, reinterpret_cast<sockaddr *>(&a), &len);
  ::close(s);
  return ntohs(a.sin_port);
}

// The parent of a host process (0 when it is gone), from /proc/PID/stat.
pid_t parentOf(pid_t pid) {
  const std::string stat = test::readProcFile("/proc/" + std::to_string(pid) + "/stat");
  const std::string line = stat.substr(0, stat.find('\n'));
  const auto close = line.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(line.substr(close + 2));
  std::string state;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return ppid;
}

// Host processes whose parent is `parent`, with their argv (NUL-separated).
std::vector<std::pair<pid_t, std::string>> childrenOf(pid_t parent) {
  std::vector<std::pair<pid_t, std::string>> found;
  for (const auto &e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (parentOf(pid) != parent) continue;
    found.emplace_back(pid, test::readProcFile(e.path() / "cmdline"));
  }
  return found;
}

// Our children that are a bubblewrap waiting for its arguments (started ahead).
std::vector<pid_t> standbyBwraps() {
  std::vector<pid_t> found;
  for (const auto &[pid, argv] : childrenOf(::getpid()))
    if (argv.find(std::string("--args\0", 7)) != std::string::npos) found.push_back(pid);
  return found;
}

std::vector<pid_t> waitForStandby() {
  for (int i = 0; i < 500; ++i) {
    auto found = standbyBwraps();
    if (!found.empty()) return found;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return {};
}

bool gone(pid_t pid) {
  return ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

BOOST_AUTO_TEST_CASE(probe_reports_available_with_the_seed_s_note_and_capabilities) {
  Loaded l;
  BOOST_TEST(l.probe.available, l.probe.hint);
  BOOST_TEST(l.probe.note == "bubblewrap — namespace isolation, no kernel boundary");
  for (const char *cap : {"readDeny", "writeRoots", "writeDeny", "networkProxy"})
    BOOST_TEST(l.probe.has(cap), cap);
  // The helper's supervisor worked in the trial sandbox (this machine has
  // Linux >= 5.14 and Landlock): filename and unlink rules, exact violations,
  // exec control; the seed's note unchanged because Landlock is there.
  for (const char *cap : {"filenameRules", "unlinkRules", "supervisedViolations", "execControl"})
    BOOST_TEST(l.probe.has(cap), cap);
}

BOOST_AUTO_TEST_CASE(a_kept_probe_is_restored_and_confines_like_a_fresh_one) {
  Loaded fresh;
  BOOST_REQUIRE(fresh.probe.available);
  auto facts = fresh.plugin->probeFingerprint();
  BOOST_REQUIRE(facts);

  // Another instance on the same host: the same facts, and it adopts the
  // result without a trial sandbox of its own.
  Loaded later({}, false);
  BOOST_TEST(later.plugin->probeFingerprint().value_or("") == *facts);
  later.probe = later.plugin->restoreProbe(fresh.probe);
  BOOST_TEST(later.probe.capabilities == fresh.probe.capabilities);
  BOOST_TEST(later.probe.note == fresh.probe.note);

  // It really confines: the supervisor refuses a new .env in the write root.
  TempTree tree;
  std::string work = tree.dir("work");
  EffectivePolicy policy = minimalPolicy(work);
  policy.writeDenyGlobs = {".env"};
  later.plugin->launch(request("kept", policy, tree));
  auto r = runIn(later, "kept", "e1", {"sh", "-c", "echo x > " + work + "/.env"});
  BOOST_TEST(r.exit.exitCode.value_or(0) != 0);
  BOOST_TEST(!std::filesystem::exists(work + "/.env"));
  later.plugin->destroy("kept");

  // Not ours (no state), or another bwrap: refused, or other facts.
  ProbeResult stateless = fresh.probe;
  stateless.state = {};
  Loaded picky({}, false);
  BOOST_CHECK_THROW(picky.plugin->restoreProbe(stateless), BackendError);
  TempTree bin;
  std::string copy = bin.path() + "/bwrap";
  std::filesystem::copy_file("/usr/bin/bwrap", copy);
  ::chmod(copy.c_str(), 0755);
  ::chmod(bin.path().c_str(), 0755);
  Loaded other(boost::json::object{{"bwrapPath", copy}}, false);
  auto otherFacts = other.plugin->probeFingerprint();
  BOOST_REQUIRE(otherFacts);
  BOOST_TEST(*otherFacts != *facts);
  // Nothing to keep when bwrap is missing: the refusal is re-checked each time.
  Loaded missing(boost::json::object{{"bwrapPath", "/nonexistent/bwrap"}}, false);
  BOOST_TEST(!missing.plugin->probeFingerprint());
}

BOOST_AUTO_TEST_CASE(missing_bwrap_requires_install_and_names_the_package) {
  Loaded l(boost::json::object{{"bwrapPath", "/nonexistent/bwrap"}});
  BOOST_TEST(!l.probe.available);
  BOOST_TEST(l.probe.requiresInstall);
  BOOST_TEST(l.probe.hint.find("bubblewrap") != std::string::npos);

  std::string path = std::getenv("PATH");
  ::setenv("PATH", "/nonexistent", 1);
  Loaded noPath;
  ::setenv("PATH", path.c_str(), 1);
  BOOST_TEST(!noPath.probe.available);
  BOOST_TEST(noPath.probe.requiresInstall);
  BOOST_TEST(noPath.probe.hint.find("install the bubblewrap package") != std::string::npos);
  BOOST_TEST(noPath.probe.hint.find("socat") == std::string::npos);  // not needed by us
}

BOOST_AUTO_TEST_CASE(a_kernel_without_user_namespaces_is_said_so) {
  // A stand-in bwrap that fails the way bubblewrap does where the kernel
  // refuses unprivileged user namespaces.
  TempTree tree;
  std::string fake = tree.file("bwrap",
                               "#!/bin/sh\n"
                               "echo 'bwrap: setting up uid map: Permission denied' >&2\n"
                               "exit 1\n");
  ::chmod(fake.c_str(), 0755);
  ::chmod(tree.path().c_str(), 0755);
  Loaded l(boost::json::object{{"bwrapPath", fake}});
  BOOST_TEST(!l.probe.available);
  BOOST_TEST(!l.probe.requiresInstall);  // installed; the kernel is the problem
  BOOST_TEST(l.probe.hint.find("setting up uid map: Permission denied") != std::string::npos,
             l.probe.hint);
  if (::geteuid() != 0)
    BOOST_TEST(
        l.probe.hint.find("the kernel forbids unprivileged user namespaces") != std::string::npos,
        l.probe.hint);
  else  // root needs no user namespace: the failure is reported as what it is
    BOOST_TEST(l.probe.hint.find("a trial sandbox did not start") != std::string::npos,
               l.probe.hint);
}

BOOST_AUTO_TEST_CASE(missing_helper_is_unavailable_with_a_hint) {
  Loaded l(boost::json::object{{"helperPath", "/nonexistent/helper"}});
  BOOST_TEST(!l.probe.available);
  BOOST_TEST(l.probe.hint.find("helper") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bridge_relays_loopback_to_the_proxy_socket) {
  TempTree tree;
  std::string work = tree.dir("work");
  std::string socket = tree.path() + "/http.sock";
  UnixHttpStub stub(socket);
  int port = freePort();
  auto policy = minimalPolicy(work);
  policy.network.httpProxy = ProxyEndpoint{"127.0.0.1", port, socket};
  policy.env["HTTP_PROXY"] = "http://127.0.0.1:" + std::to_string(port);
  policy.env["http_proxy"] = policy.env["HTTP_PROXY"];
  Loaded l;
  l.plugin->launch(request("bridge", policy, tree));
  // The caller's own proxy variable loses to the policy's.
  auto r = runIn(l, "bridge", "e1", {"curl", "-sS", "--max-time", "10", "http://allowed.test/x"},
                 {{"PATH", "/usr/bin:/bin"}, {"http_proxy", "http://10.0.0.1:1"}});
  BOOST_TEST(r.exit.exitCode.value_or(-1) == 0, r.err);
  BOOST_TEST(r.out == "proxied: GET http://allowed.test/x HTTP/1.1\n");
  // The bridge's sockets stay the helper's: the command has only its stdio.
  auto fds = runIn(l, "bridge", "e3", {"/bin/sh", "-c", "ls /proc/self/fd | tr '\\n' ' '"});
  BOOST_TEST(fds.out == "0 1 2 3 ");
  // Nothing else leaves: the same request without the proxy has nowhere to go.
  auto direct = runIn(l, "bridge", "e2",
                      {"curl", "-sS", "--noproxy", "*", "--max-time", "5", "http://127.0.0.1:9/"});
  BOOST_TEST(direct.exit.exitCode.value_or(0) != 0);
  l.plugin->destroy("bridge");
}

BOOST_AUTO_TEST_CASE(signal_reaches_the_command_s_process_group) {
  TempTree tree;
  Loaded l;
  l.plugin->launch(request("sig", minimalPolicy(tree.dir("work")), tree));
  Pipe out, err;
  startIn(l, "sig", "e1", {"/bin/sh", "-c", "sleep 60 & echo started; wait"}, out, err);
  char buf[16];
  BOOST_REQUIRE(::read(out.fds[0], buf, 8) == 8);  // "started\n": the group is up
  l.plugin->signal({"sig", "e1", SIGTERM});
  auto exit = l.sink.exitOf("e1", std::chrono::seconds(30));
  BOOST_REQUIRE(exit);
  BOOST_TEST(exit->signal.value_or(0) == int(SIGTERM));
  // The background sleep held stdout too: EOF means it is gone as well.
  BOOST_TEST(out.readAll().empty());
  l.plugin->destroy("sig");
}

BOOST_AUTO_TEST_CASE(destroy_ends_every_process_and_reports_running_commands) {
  TempTree tree;
  Loaded l;
  auto details = l.plugin->launch(request("gone", minimalPolicy(tree.dir("work")), tree));
  pid_t bwrap = static_cast<pid_t>(details.at("bwrapPid").as_int64());
  BOOST_TEST(::kill(bwrap, 0) == 0);
  Pipe out, err;
  startIn(l, "gone", "e1", {"sleep", "60"}, out, err);
  l.plugin->destroy("gone");
  auto exit = l.sink.exitOf("e1", std::chrono::seconds(10));
  BOOST_REQUIRE(exit);
  BOOST_TEST(exit->signal.value_or(0) == SIGKILL);
  BOOST_TEST(out.readAll().empty());  // EOF: sleep is gone
  // Bubblewrap exits after the helper said every process inside was reaped,
  // and the plugin reaps it off the caller's time: gone soon, not a zombie.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (::kill(bwrap, 0) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  BOOST_TEST((::kill(bwrap, 0) != 0 && errno == ESRCH));
  l.plugin->destroy("gone");  // idempotent
}

BOOST_AUTO_TEST_CASE(commands_start_in_children_confined_ahead_and_do_without_them) {
  // The helper forks and confines the next command's process before the
  // command comes (a spare: for the first command when the rules arrive, for
  // later ones a little after each start). Whichever way a command starts,
  // it is confined, and its violations carry its own execId; a spare that
  // ends before its command comes is simply not used.
  TempTree tree;
  Loaded l;
  const std::string work = tree.dir("work");
  EffectivePolicy policy = minimalPolicy(work);
  policy.writeDenyGlobs = {"*.pem"};
  auto details = l.plugin->launch(request("spare", policy, tree));
  const pid_t bwrap = static_cast<pid_t>(details.at("bwrapPid").as_int64());
  // The helper's children on the host that are not running a command: spares.
  auto spares = [&] {
    std::vector<pid_t> out;
    for (const auto &[helper, helperArgv] : childrenOf(bwrap))
      for (const auto &[pid, argv] : childrenOf(helper))
        if (argv.find("ccsandbox-bwrap-helper") != std::string::npos) out.push_back(pid);
    return out;
  };
  auto waitForSpares = [&](std::size_t n) {
    for (int i = 0; i < 500 && spares().size() != n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return spares().size();
  };
  for (int round = 1; round <= 3; ++round) {
    // Made for the first command when the rules arrived, then after each start.
    BOOST_REQUIRE_EQUAL(waitForSpares(1), 1u);
    // While it waits it holds nothing of the helper's (other commands'
    // seccomp listeners, the control channel): its stdio and its two channels.
    // And it is not dumpable: a process of the same uid (this test, run
    // unprivileged, like a command) may not even list its fds.
    for (pid_t spare : spares()) {
      std::error_code ec;
      std::filesystem::directory_iterator fds("/proc/" + std::to_string(spare) + "/fd", ec);
      if (::geteuid() != 0) {
        BOOST_TEST((ec == std::errc::permission_denied), "spare " << spare << ": " << ec.message());
        continue;
      }
      BOOST_REQUIRE(!ec);
      const auto n = std::distance(fds, std::filesystem::directory_iterator());
      BOOST_TEST(n == 5, "spare " << spare << " holds " << n << " fds");
    }
    const std::string id = "e" + std::to_string(round);
    auto r = runIn(l, "spare", id,
                   {"sh", "-c",
                    "echo x > " + work + "/" + id + ".pem; echo ok > " + work + "/" + id + ".txt"});
    BOOST_TEST(r.exit.exitCode.value_or(-1) == 0, r.err);
    BOOST_TEST(!std::filesystem::exists(work + "/" + id + ".pem"));
    BOOST_TEST(test::readFile(work + "/" + id + ".txt") == "ok\n");
    std::lock_guard lock(l.sink.mutex);
    int mine = 0;
    for (const auto &e : l.sink.events)
      if (e.type == SandboxEventType::violation && e.violation &&
          e.violation->target == work + "/" + id + ".pem")
        mine += e.execId == id ? 1 : 100;
    BOOST_TEST(mine == 1, "violations of " << id << " under its execId: " << mine);
  }

  // The next spare is killed before its command comes: the command starts
  // the ordinary way, still confined. "Before" is when the kernel has ended
  // it (a zombie; its cmdline is empty as soon as it starts exiting, so
  // spares() no longer lists it a moment earlier): the helper may not have
  // handled its SIGCHLD yet, and must not take the dead spare for a live one.
  BOOST_REQUIRE_EQUAL(waitForSpares(1), 1u);
  const auto killed = spares();
  for (pid_t spare : killed) BOOST_REQUIRE_EQUAL(::kill(spare, SIGKILL), 0);
  auto ended = [](pid_t pid) {
    const std::string stat = test::readProcFile("/proc/" + std::to_string(pid) + "/stat");
    const auto close = stat.rfind(')');
    return stat.empty() || (close != std::string::npos && stat.size() > close + 2 &&
                            (stat[close + 2] == 'Z' || stat[close + 2] == 'X'));
  };
  for (pid_t spare : killed)
    for (int i = 0; i < 500 && !ended(spare); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(waitForSpares(0) == 0u);
  auto r = runIn(l, "spare", "e4", {"sh", "-c", "echo x > " + work + "/e4.pem; echo done"});
  BOOST_TEST(r.out == "done\n", r.err);
  BOOST_TEST(!std::filesystem::exists(work + "/e4.pem"));
  l.plugin->destroy("spare");
}

BOOST_AUTO_TEST_CASE(destroy_returns_once_nothing_of_the_sandbox_runs) {
  // A command that left a daemon behind in a session of its own, outside its
  // process group: when destroy returns, that is gone too (the helper reaped
  // everything before it answered), though bubblewrap may still be exiting.
  TempTree tree;
  Loaded l;
  l.plugin->launch(request("daemon", minimalPolicy(tree.dir("work")), tree));
  // The shell waits until its child leads a session of its own (field 6 of
  // /proc/PID/stat), so ending the shell's process group does not take it.
  auto r = runIn(l, "daemon", "e1",
                 {"/bin/sh", "-c",
                  "setsid sleep 987 </dev/null >/dev/null 2>&1 & p=$!; "
                  "until [ \"$(cut -d' ' -f6 /proc/$p/stat)\" = \"$p\" ]; do :; done"});
  BOOST_REQUIRE_EQUAL(r.exit.exitCode.value_or(-1), 0);
  // Its pid inside is of no use here: find it on the host by its command line
  // (a duration no other test uses).
  auto sleepers = [] {
    int n = 0;
    for (const auto &e : std::filesystem::directory_iterator("/proc")) {
      std::ifstream cmd(e.path() / "cmdline");
      std::string line;
      std::getline(cmd, line, '\0');
      std::string arg;
      std::getline(cmd, arg, '\0');
      if (line == "sleep" && arg == "987") ++n;
    }
    return n;
  };
  // setsid may not have exec'd sleep yet when the shell ends.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  int before = 0;
  while ((before = sleepers()) < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  BOOST_REQUIRE_GE(before, 1);
  l.plugin->destroy("daemon");
  BOOST_TEST(sleepers() == before - 1);
}

BOOST_AUTO_TEST_CASE(a_command_line_larger_than_a_socket_buffer_reaches_the_helper_whole) {
  // 1.5 MB of arguments: the exec message reaches the helper's non-blocking
  // end in pieces (the helper used to take the first EAGAIN for an error and
  // end the sandbox), and the command sees every byte.
  TempTree tree;
  Loaded l;
  l.plugin->launch(request("big", minimalPolicy(tree.dir("work")), tree));
  std::vector<std::string> argv{"/bin/sh", "-c", "printf '%s' \"$*\" | wc -c", "sh"};
  for (int i = 0; i < 12; ++i) argv.push_back(std::string(125000, static_cast<char>('a' + i)));
  auto r = runIn(l, "big", "e1", argv);
  BOOST_TEST(r.exit.exitCode.value_or(-1) == 0, r.err);
  BOOST_TEST(std::stol(r.out) == 12L * 125000 + 11, r.out);  // joined with spaces
  // The session is still there for the next command.
  BOOST_TEST(runIn(l, "big", "e2", {"/bin/true"}).exit.exitCode.value_or(-1) == 0);
  l.plugin->destroy("big");
}

BOOST_AUTO_TEST_CASE(a_sandbox_killed_from_outside_is_reported_once) {
  // bubblewrap killed under a running command: the command's exit says so
  // (and the log does not say it again); under an idle session, the log does.
  const std::string what = "the sandbox ended unexpectedly (its helper exited)";
  TempTree tree;
  LogCapture log;
  Loaded l;
  auto details = l.plugin->launch(request("busy", minimalPolicy(tree.dir("work")), tree));
  Pipe out, err;
  startIn(l, "busy", "e1", {"sleep", "60"}, out, err);
  BOOST_REQUIRE_EQUAL(::kill(static_cast<pid_t>(details.at("bwrapPid").as_int64()), SIGKILL), 0);
  auto exit = l.sink.exitOf("e1", std::chrono::seconds(10));
  BOOST_REQUIRE(exit);
  BOOST_TEST(exit->error.value_or("") == what);
  BOOST_TEST(exit->signal.value_or(0) == SIGKILL);
  BOOST_TEST(log.count({"busy", what}) == 0u);
  l.plugin->destroy("busy");

  auto idle = l.plugin->launch(request("idle", minimalPolicy(tree.dir("work2")), tree));
  BOOST_REQUIRE_EQUAL(::kill(static_cast<pid_t>(idle.at("bwrapPid").as_int64()), SIGKILL), 0);
  for (int i = 0; i < 500 && log.count({"idle", what}) == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  BOOST_TEST(log.count({"session idle", what}) == 1u);
  l.plugin->destroy("idle");
}

BOOST_AUTO_TEST_CASE(a_bubblewrap_started_ahead_is_used_let_go_or_released) {
  TempTree tree;
  std::string work = tree.dir("work");
  {
    Loaded l;
    // prepare_launch (ABI 1.2) starts one; the launch that follows runs in it.
    l.plugin->prepareLaunch();
    auto ahead = waitForStandby();
    BOOST_REQUIRE_EQUAL(ahead.size(), 1u);
    l.plugin->prepareLaunch();  // one at a time
    BOOST_TEST(standbyBwraps().size() == 1u);
    auto details = l.plugin->launch(request("used", minimalPolicy(work), tree));
    BOOST_TEST(details.at("bwrapPid").as_int64() == ahead[0]);
    BOOST_TEST(details.at("bwrapArgs").as_array().size() > 10u);
    auto r = runIn(l, "used", "e1", {"/bin/sh", "-c", "echo in"});
    BOOST_TEST(r.out == "in\n");
    l.plugin->destroy("used");

    // One started for a restricted network does not fit an open one: let go.
    l.plugin->prepareLaunch();
    ahead = waitForStandby();
    BOOST_REQUIRE_EQUAL(ahead.size(), 1u);
    auto open = minimalPolicy(work);
    open.network.open = true;
    details = l.plugin->launch(request("open", open, tree));
    BOOST_TEST(details.at("bwrapPid").as_int64() != ahead[0]);
    BOOST_TEST(gone(ahead[0]));  // killed and reaped
    BOOST_TEST(runIn(l, "open", "e2", {"/bin/true"}).exit.exitCode.value_or(-1) == 0);
    l.plugin->destroy("open");

    // Announced, never launched: the plugin's end releases it.
    l.plugin->prepareLaunch();
    ahead = waitForStandby();
    BOOST_REQUIRE_EQUAL(ahead.size(), 1u);
  }
  BOOST_TEST(standbyBwraps().empty());
}

BOOST_AUTO_TEST_CASE(a_bubblewrap_started_ahead_runs_nothing_if_its_owner_dies) {
  // The owner (a process with the plugin loaded) is killed before it hands
  // bubblewrap the mounts: bubblewrap dies with it, or reads end-of-file, finds
  // no helper in an empty sandbox and exits. We adopt the orphan to see how it ended.
  BOOST_REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  int ready[2];
  BOOST_REQUIRE(::pipe(ready) == 0);
  pid_t owner = ::fork();
  BOOST_REQUIRE(owner >= 0);
  if (owner == 0) {
    ::close(ready[0]);
    Loaded l;
    l.plugin->prepareLaunch();
    auto ahead = waitForStandby();
    pid_t pid = ahead.empty() ? -1 : ahead[0];
    [[maybe_unused]] auto w = ::write(ready[1], &pid, sizeof pid);
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  pid_t standby = -1;
  BOOST_REQUIRE(::read(ready[0], &standby, sizeof standby) == sizeof standby);
  ::close(ready[0]);
  BOOST_REQUIRE(standby > 0);
  ::kill(owner, SIGKILL);
  int status = 0;
  BOOST_REQUIRE(::waitpid(owner, &status, 0) == owner);
  // The orphan is ours now; it ends by itself, without running our helper.
  pid_t got = -1;
  for (int i = 0; i < 1000 && got != standby; ++i) {
    got = ::waitpid(standby, &status, WNOHANG);
    if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  BOOST_REQUIRE(got == standby);
  // Either its --die-with-parent took it with its owner (where bubblewrap set it before
  // reading its arguments and kept it: as an unprivileged user), or it read end-of-file
  // and failed to find the helper in its empty sandbox. Never a clean run.
  const bool killedWithOwner = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  const bool foundNothing = WIFEXITED(status) && WEXITSTATUS(status) != 0;
  BOOST_TEST((killedWithOwner || foundNothing), "status " << status);
}

BOOST_AUTO_TEST_CASE(the_empty_mask_directory_is_made_only_when_a_directory_is_masked) {
  // An inode on the runtime directory's file system at every launch otherwise.
  TempTree tree;
  std::string work = tree.dir("work");
  Loaded l;
  l.plugin->launch(request("plain", minimalPolicy(work), tree));
  BOOST_TEST(!std::filesystem::exists(tree.path() + "/runtime-plain/bwrap-empty"));
  l.plugin->destroy("plain");
  auto masked = minimalPolicy(work);
  masked.readDeny = {tree.dir("work/secrets")};
  l.plugin->launch(request("masked", masked, tree));
  BOOST_TEST(std::filesystem::is_directory(tree.path() + "/runtime-masked/bwrap-empty"));
  auto r = runIn(l, "masked", "e1", {"/bin/sh", "-c", "ls -A " + work + "/secrets | wc -l"});
  BOOST_TEST(r.out == "0\n");
  l.plugin->destroy("masked");
}

BOOST_AUTO_TEST_CASE(launch_failure_carries_bubblewrap_s_message) {
  // A mount point bubblewrap cannot make: inside a read-only bind, where the
  // directory does not exist.
  TempTree tree;
  auto policy = minimalPolicy(tree.dir("work"));
  policy.visible.binds.push_back({tree.dir("ro"), "/ro", true});
  policy.visible.binds.push_back({tree.dir("other"), "/ro/not-there", false});
  Loaded l;
  try {
    l.plugin->launch(request("bad", policy, tree));
    BOOST_FAIL("launch should have failed");
  } catch (const BackendError &e) {
    std::string m = e.what();
    BOOST_TEST(m.find("bubblewrap could not start the sandbox") != std::string::npos, m);
    BOOST_TEST(m.find("/ro/not-there") != std::string::npos, m);
  }
}

BOOST_AUTO_TEST_CASE(a_bind_of_a_missing_source_is_refused_before_bubblewrap_runs) {
  TempTree tree;
  auto policy = minimalPolicy(tree.dir("work"));
  policy.visible.binds.push_back({tree.path() + "/does-not-exist", "/x", false});
  Loaded l;
  try {
    l.plugin->launch(request("missing", policy, tree));
    BOOST_FAIL("launch should have been refused");
  } catch (const LaunchRefused &e) {  // the request's problem, not the host's
    BOOST_TEST(std::string(e.what()) == "native-bwrap: cannot mount " + tree.path() +
                                            "/does-not-exist at /x in the sandbox: " + tree.path() +
                                            "/does-not-exist does not exist");
  }
}

BOOST_AUTO_TEST_CASE(no_host_fd_crosses_into_the_sandbox) {
  TempTree tree;
  std::string secret = tree.file("secret", "s3cret\n");
  int leaked = ::open(secret.c_str(), O_RDONLY);  // no O_CLOEXEC, on purpose
  BOOST_REQUIRE(leaked >= 0);
  Loaded l;
  l.plugin->launch(request("fds", minimalPolicy(tree.dir("work")), tree));
  auto r = runIn(l, "fds", "e1", {"/bin/sh", "-c", "ls /proc/self/fd | tr '\\n' ' '"});
  ::close(leaked);
  // 0, 1, 2 and the one ls opened to list the directory.
  BOOST_TEST(r.out == "0 1 2 3 ");
  l.plugin->destroy("fds");
}

BOOST_AUTO_TEST_CASE(environment_is_the_caller_s_plus_the_policy_s_and_nothing_of_bwrap_s) {
  TempTree tree;
  auto policy = minimalPolicy(tree.dir("work"));
  policy.env["FROM_POLICY"] = "p";
  Loaded l;
  l.plugin->launch(request("env", policy, tree));
  auto r =
      runIn(l, "env", "e1", {"/usr/bin/env"}, {{"PATH", "/usr/bin:/bin"}, {"FROM_CALLER", "c"}});
  BOOST_TEST(r.out.find("FROM_POLICY=p\n") != std::string::npos);
  BOOST_TEST(r.out.find("FROM_CALLER=c\n") != std::string::npos);
  std::size_t lines = static_cast<std::size_t>(std::count(r.out.begin(), r.out.end(), '\n'));
  BOOST_TEST(lines == 3u, r.out);  // PATH, FROM_CALLER, FROM_POLICY
  l.plugin->destroy("env");
}

// The helper looks a bare command name up in the command's PATH before it
// execs (each failed exec would be a supervised round trip): the result must
// be execvp's. Skipped: missing directories, a file that is not executable, a
// directory of that name. An empty entry is the working directory.
BOOST_AUTO_TEST_CASE(a_bare_command_name_is_found_as_execvp_finds_it) {
  TempTree tree;
  std::string work = tree.dir("work");
  tree.file("work/a/tool", "#!/bin/sh\necho from-a\n");  // not executable
  tree.dir("work/b/tool");
  std::string c = tree.file("work/c/tool", "#!/bin/sh\necho from-c\n");
  std::string d = tree.file("work/d/tool", "echo from-d-without-shebang\n");
  ::chmod(c.c_str(), 0755);
  ::chmod(d.c_str(), 0755);
  EffectivePolicy policy = minimalPolicy(work);
  policy.exec.grantRoots = {work};  // programs in a write root run only where granted
  Loaded l;
  l.plugin->launch(request("path", policy, tree));
  std::string path = "/nonexistent:" + work + "/a:" + work + "/b:" + work + "/c:/usr/bin:/bin";
  auto r = runIn(l, "path", "e1", {"tool"}, {{"PATH", path}});
  BOOST_TEST(r.out == "from-c\n", r.out + r.err);
  // A script without #! runs under /bin/sh, as execvp runs it.
  r = runIn(l, "path", "e2", {"tool"}, {{"PATH", work + "/d:/usr/bin:/bin"}});
  BOOST_TEST(r.out == "from-d-without-shebang\n", r.out + r.err);
  r = runIn(l, "path", "e3", {"tool"}, {{"PATH", ":/usr/bin:/bin"}}, work + "/c");
  BOOST_TEST(r.out == "from-c\n", r.out + r.err);
  // Only a non-executable match: execvp's answer, permission denied (126).
  r = runIn(l, "path", "e4", {"tool"}, {{"PATH", work + "/a"}});
  BOOST_TEST(r.exit.exitCode.value_or(0) == 126, r.err);
  r = runIn(l, "path", "e5", {"no-such-tool"}, {{"PATH", path}});
  BOOST_TEST(r.exit.exitCode.value_or(0) == 127, r.err);
  l.plugin->destroy("path");
}
