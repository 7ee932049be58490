// The Runtime end to end over real plugins: the start-up line, routing, the
// session state machine and its events, the environment per launch kind.
#define BOOST_TEST_MODULE runtime
#include <boost/test/unit_test.hpp>

#include "ccsandbox/logging.hpp"
#include "ccsandbox/policy_preview.hpp"
#include "ccsandbox/runtime.hpp"
#include "support/log_capture.hpp"
#include "support/temp_tree.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <system_error>

using namespace ccsandbox;

namespace {

const std::string kFixtures = CCSANDBOX_FIXTURE_DIR;
const std::string kNoneOnly = kFixtures + "/none-only";

RuntimeOptions options(std::vector<std::string> dirs, SandboxSwitch sw = SandboxSwitch::on) {
  RuntimeOptions o;
  o.pluginPath = std::move(dirs);
  o.searchInstallDir = false;
  o.sandbox = sw;
  o.killGrace = std::chrono::milliseconds(300);
  return o;
}

struct Recorder {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<SandboxEvent> events;
  EventCallback callback() {
    return [this](const SandboxEvent &e) {
      std::lock_guard lock(mutex);
      events.push_back(e);
      changed.notify_all();
    };
  }
  // Blocks until the command has written `text` to stdout (it is then past its set-up).
  bool waitForStdout(const std::string &text) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, std::chrono::seconds(30), [&] {
      std::string out;
      for (auto &e : events)
        if (e.type == SandboxEventType::stdoutData) out += e.data;
      return out.find(text) != std::string::npos;
    });
  }
  std::vector<std::string> types() {
    std::lock_guard lock(mutex);
    std::vector<std::string> out;
    for (auto &e : events) out.emplace_back(toString(e.type));
    return out;
  }
  std::string stream(SandboxEventType type) {
    std::lock_guard lock(mutex);
    std::string out;
    for (auto &e : events)
      if (e.type == type) out += e.data;
    return out;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(exactly_one_startup_line_per_case) {
  struct Case {
    std::vector<std::string> dirs;
    SandboxSwitch sw;
    std::string line;
  };
  for (const auto &c : std::vector<Case>{
           {{kFixtures + "/native-ok", kNoneOnly},
            SandboxSwitch::on,
            "agent sandbox ON fixture — namespace isolation, no kernel boundary"},
           {{kFixtures + "/native-off", kNoneOnly},
            SandboxSwitch::on,
            "no OS-native agent sandbox on this host install fixture-tools: sudo apt-get install "
            "fixture-tools"},
           {{kFixtures + "/native-ok", kNoneOnly},
            SandboxSwitch::off,
            "agent sandbox DISABLED by --sandbox off"}}) {
    test::LogCapture log;
    Runtime rt(options(c.dirs, c.sw));
    BOOST_CHECK_EQUAL(rt.startupLine(), c.line);
    BOOST_CHECK_EQUAL(log.count({c.line}), 1u);
    std::size_t startupLines = log.count({"agent sandbox"});
    BOOST_CHECK_EQUAL(startupLines, 1u);
  }
}

BOOST_AUTO_TEST_CASE(sandbox_switch_from_environment) {
  ::setenv("CC_SERVER_SANDBOX", "off", 1);
  {
    RuntimeOptions o = options({kNoneOnly});
    o.sandbox.reset();
    Runtime rt(o);
    BOOST_CHECK(rt.sandboxSwitch() == SandboxSwitch::off);
  }
  ::setenv("CC_SERVER_SANDBOX", "maybe", 1);
  try {
    RuntimeOptions o = options({kNoneOnly});
    o.sandbox.reset();
    Runtime rt(o);
    BOOST_FAIL("accepted CC_SERVER_SANDBOX=maybe");
  } catch (const UsageError &e) {
    BOOST_CHECK_EQUAL(std::string(e.what()),
                      "CC_SERVER_SANDBOX: invalid value \"maybe\" (accepted: on, off)");
  }
  ::unsetenv("CC_SERVER_SANDBOX");
  BOOST_CHECK_THROW(parseSandboxSwitch("ON", "--sandbox"), UsageError);
  BOOST_CHECK_THROW(parseRequestedBackend("docker"), UsageError);
}

BOOST_AUTO_TEST_CASE(auto_routes_to_native_when_available_and_reports_the_badge) {
  Runtime rt(options({kFixtures + "/native-ok", kNoneOnly}));
  Recorder rec;
  LaunchOptions launch;
  launch.onEvent = rec.callback();
  auto session = rt.launch(std::move(launch));
  SandboxHandle h = session->handle();
  BOOST_CHECK(h.backend == SandboxBackend::native);
  BOOST_CHECK(h.state == SandboxState::warm);
  BOOST_CHECK_EQUAL(h.details.at("plugin").as_string(), "fixture-native");
  BOOST_CHECK_EQUAL(h.details.at("fixture").as_string(), "fixture-native");  // the plugin's details
  session->destroy();
  BOOST_CHECK(session->handle().state == SandboxState::destroyed);
  BOOST_CHECK((rec.types() == std::vector<std::string>{"starting", "ready"}));
  for (auto &e : rec.events) BOOST_CHECK(e.backend == SandboxBackend::native);

  Runtime off(options({kFixtures + "/native-ok", kNoneOnly}, SandboxSwitch::off));
  auto plain = off.launch({});
  BOOST_CHECK(plain->handle().backend == SandboxBackend::none);
  plain->destroy();
}

BOOST_AUTO_TEST_CASE(terminal_default_microvm_falls_back_to_native_with_a_log_line) {
  test::LogCapture log;
  RuntimeOptions o = options({kFixtures + "/native-ok", kNoneOnly});
  o.terminalDefaultBackend = SandboxBackend::microvm;
  Runtime rt(o);
  LaunchOptions launch;
  launch.kind = LaunchKind::terminal;
  auto session = rt.launch(std::move(launch));
  BOOST_CHECK(session->handle().backend == SandboxBackend::native);
  BOOST_CHECK_EQUAL(
      log.count({"terminal: default backend microvm unavailable", "falling back to native"}), 1u);
  session->destroy();
  LaunchOptions vm;
  vm.kind = LaunchKind::terminal;
  vm.backend = RequestedBackend::microvm;
  BOOST_CHECK_THROW(rt.launch(std::move(vm)), LaunchRefused);
}

BOOST_AUTO_TEST_CASE(states_follow_the_command) {
  Runtime rt(options({kNoneOnly}));
  Recorder rec;
  LaunchOptions launch;
  launch.onEvent = rec.callback();
  auto session = rt.launch(std::move(launch));
  BOOST_CHECK(session->handle().state == SandboxState::warm);
  // The command waits on a pipe we hold, so "active" is observed for certain.
  int in[2];
  BOOST_REQUIRE_EQUAL(::pipe(in), 0);
  auto p = session->exec({.argv = {"sh", "-c", "read line; echo \"$line\""}, .stdinFd = in[0]});
  ::close(in[0]);
  BOOST_CHECK(session->handle().state == SandboxState::active);
  BOOST_REQUIRE_EQUAL(::write(in[1], "first\n", 6), 6);
  ::close(in[1]);
  BOOST_CHECK_EQUAL(p->wait(), 0);
  BOOST_CHECK(session->handle().state == SandboxState::warm);
  auto q = session->exec({.argv = {"sh", "-c", "echo two; echo err >&2; exit 7"}});
  BOOST_CHECK_EQUAL(q->wait(), 7);
  BOOST_CHECK_EQUAL(*q->exitCode(), 7);
  session->destroy();
  BOOST_CHECK(session->handle().state == SandboxState::destroyed);
  BOOST_CHECK_THROW(session->exec({.argv = {"true"}}), UsageError);
  BOOST_CHECK_EQUAL(rec.stream(SandboxEventType::stdoutData), "first\ntwo\n");
  BOOST_CHECK_EQUAL(rec.stream(SandboxEventType::stderrData), "err\n");
  // exit is the last event of its command.
  auto types = rec.types();
  BOOST_CHECK_EQUAL(types.back(), "exit");
}

BOOST_AUTO_TEST_CASE(a_throwing_event_callback_is_logged_and_the_session_goes_on) {
  // Whatever the caller's callback throws (even no std::exception) stays on
  // our side: it must not unwind through the pump or a plugin's C frames.
  test::LogCapture log;
  Runtime rt(options({kNoneOnly}));
  std::atomic<int> calls{0};
  LaunchOptions launch;
  launch.onEvent = [&](const SandboxEvent &) {
    ++calls;
    throw 42;
  };
  auto session = rt.launch(std::move(launch));
  auto p = session->exec({.argv = {"sh", "-c", "echo out; exit 3"}});
  BOOST_CHECK_EQUAL(p->wait(), 3);
  session->destroy();
  BOOST_CHECK_GE(calls.load(), 3);  // starting, ready, stdout, exit ...
  BOOST_CHECK_GE(log.count({"event callback threw"}), 3u);
}

namespace {

// Holds every descriptor this process may still open, under a soft limit
// lowered to just above the highest one open; gives all back when it goes.
class DescriptorsExhausted {
 public:
  DescriptorsExhausted() {
    // A sanitizer build checks the dynamic type of an object on its first
    // member call, with a pipe of its own: shown a std::system_error now, it
    // knows the type when the core inspects one with no descriptor left.
    try {
      throw std::system_error(EMFILE, std::generic_category());
    } catch (const std::system_error &e) {
      BOOST_TEST(e.code().value() == EMFILE);
    }
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    int highest = 0;
    for (const auto &e : std::filesystem::directory_iterator("/proc/self/fd"))
      highest = std::max(highest, std::stoi(e.path().filename().string()));
    rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(highest) + 1;
    BOOST_TEST_REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    for (int fd; (fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) held_.push_back(fd);
  }
  ~DescriptorsExhausted() {
    for (int fd : held_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

// What `call` throws, kept to be read later: a sanitizer build checks a
// member call on an exception with a pipe of its own, which it cannot make
// while the descriptors are held.
std::exception_ptr errorOf(const std::function<void()> &call) {
  try {
    call();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

std::string whatOf(const std::exception_ptr &error) {
  try {
    if (error) std::rethrow_exception(error);
  } catch (const std::exception &e) {
    return e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(out_of_descriptors_the_error_says_the_limit_and_what_to_change) {
  Runtime rt(options({kNoneOnly}));
  auto session = rt.launch({});
  std::exception_ptr launchError, execError;
  {
    DescriptorsExhausted exhausted;
    launchError = errorOf([&] { rt.launch({}); });
    execError = errorOf([&] { session->exec({.argv = {"true"}}); });
  }
  for (const auto &[what, doing] : {std::pair{whatOf(launchError), "cannot launch the session: "},
                                    std::pair{whatOf(execError), "cannot start the command: "}}) {
    BOOST_TEST(what.rfind(doing, 0) == 0, what);
    BOOST_TEST(what.find("out of file descriptors (limit ") != std::string::npos, what);
    BOOST_TEST(what.find("ulimit -n") != std::string::npos, what);
  }
  // Nothing was lost on the way: with descriptors back, both work.
  BOOST_CHECK_EQUAL(session->exec({.argv = {"true"}})->wait(), 0);
  rt.launch({})->destroy();
  session->destroy();
}

BOOST_AUTO_TEST_CASE(kill_ends_the_process_group_and_says_why) {
  Runtime rt(options({kNoneOnly}));
  Recorder rec;
  LaunchOptions launch;
  launch.onEvent = rec.callback();
  auto session = rt.launch(std::move(launch));
  auto p =
      session->exec({.argv = {"sh", "-c", "trap '' TERM; sleep 30 & echo armed; sleep 30; wait"}});
  BOOST_REQUIRE(rec.waitForStdout("armed"));
  p->kill();
  BOOST_CHECK_EQUAL(p->wait(), 128 + SIGKILL);
  bool killedManual = false;
  for (auto &e : rec.events)
    if (e.type == SandboxEventType::killed) killedManual = e.reason == KillReason::manual;
  BOOST_CHECK(killedManual);
  auto t = session->exec({.argv = {"sleep", "30"}, .timeout = std::chrono::milliseconds(200)});
  BOOST_CHECK_EQUAL(t->wait(), 128 + SIGTERM);
  session->destroy();
}

BOOST_AUTO_TEST_CASE(destroy_ends_running_commands_with_an_exit) {
  Runtime rt(options({kNoneOnly}));
  auto session = rt.launch({});
  auto p = session->exec({.argv = {"sleep", "30"}});
  session->destroy();
  BOOST_CHECK_EQUAL(p->wait(), 128 + SIGKILL);
}

BOOST_AUTO_TEST_CASE(environment_per_launch_kind) {
  RuntimeOptions o = options({kNoneOnly});
  o.hostEnv = std::map<std::string, std::string>{{"PATH", "/usr/bin:/bin"},
                                                 {"NODE_OPTIONS", "--inspect"},
                                                 {"LD_PRELOAD", "/nonexistent.so"},
                                                 {"KEEP", "1"}};
  Runtime rt(o);
  auto envOf = [&](LaunchKind kind) {
    Recorder rec;
    LaunchOptions launch;
    launch.kind = kind;
    launch.backend = RequestedBackend::none;
    launch.onEvent = rec.callback();
    auto s = rt.launch(std::move(launch));
    // The command sees exactly the environment: print the names it has.
    s->exec({.argv = {"/usr/bin/env"}, .env = {{"BASH_ENV", "/tmp/x"}}})->wait();
    s->destroy();
    return rec.stream(SandboxEventType::stdoutData);
  };
  for (auto kind : {LaunchKind::agentBash, LaunchKind::acp}) {
    std::string env = envOf(kind);
    BOOST_CHECK(env.find("KEEP=1") != std::string::npos);
    BOOST_CHECK(env.find("NODE_OPTIONS") == std::string::npos);
    BOOST_CHECK(env.find("LD_PRELOAD") == std::string::npos);
    BOOST_CHECK(env.find("BASH_ENV") ==
                std::string::npos);  // the caller's overlay is sanitised too
  }
  // Claude Code through the no-sandbox path inherits the host environment.
  std::string cc = envOf(LaunchKind::claudeCode);
  BOOST_CHECK(cc.find("NODE_OPTIONS=--inspect") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_plugin_directories_are_trusted_files_a_launch_write_denies) {
  // Plugins searched in a directory of the working copy: the policy `run`
  // would compile (previewLaunch) write-denies that directory.
  ccsandbox::test::TempTree tree;
  const std::string work = std::filesystem::canonical(tree.dir("work")).string();
  const std::string plugins = tree.dir("work/build/plugins");
  Runtime rt(options({kNoneOnly, plugins}));
  const auto &trusted = rt.trustedFiles();
  BOOST_TEST((std::find(trusted.begin(), trusted.end(), plugins) != trusted.end()));
  LaunchOptions launch;
  launch.spec.bindMounts.push_back({work, work, false});
  launch.spec.guestWorkdir = work;
  auto preview = previewLaunch(rt, launch);
  const auto &deny = preview.policy.writeDeny;
  BOOST_TEST((std::find(deny.begin(), deny.end(), work + "/build/plugins") != deny.end()));
  // The compiler alone, for the same options, says the same.
  auto alone = compileLaunchPolicy(launch, options({kNoneOnly, plugins}));
  BOOST_TEST((alone.writeDeny == deny));
}

BOOST_AUTO_TEST_CASE(a_sessions_directories_are_gone_once_the_runtime_is) {
  // They are removed on a thread of their own after destroy (DeferredRemoval),
  // and the Runtime waits for that before it is gone: nothing is left behind,
  // not even what the command left in its /tmp.
  std::string runtimeDir, tempDir;
  {
    Runtime rt(options({kNoneOnly}));
    Recorder rec;
    LaunchOptions launch;
    launch.onEvent = rec.callback();
    auto session = rt.launch(std::move(launch));
    runtimeDir = session->handle().details.at("runtimeDir").as_string().c_str();
    auto p = session->exec({.argv = {"sh", "-c",
                                     "mkdir -p \"$TMPDIR/a/b\" && echo x > \"$TMPDIR/a/b/c\" && "
                                     "printf %s \"$TMPDIR\""}});
    BOOST_REQUIRE_EQUAL(p->wait(), 0);
    tempDir = rec.stream(SandboxEventType::stdoutData);
    BOOST_REQUIRE(!tempDir.empty());
    BOOST_REQUIRE(std::filesystem::exists(tempDir + "/a/b/c"));
    BOOST_REQUIRE(std::filesystem::exists(runtimeDir));
    session->destroy();
  }
  BOOST_CHECK_MESSAGE(!std::filesystem::exists(runtimeDir), runtimeDir << " was left behind");
  BOOST_CHECK_MESSAGE(!std::filesystem::exists(tempDir), tempDir << " was left behind");
}

BOOST_AUTO_TEST_CASE(records_below_the_threshold_reach_no_sink) {
  // The CLI, whose console is its only sink, drops what the console would
  // refuse before Boost.Log builds it; every other sink sees all by default.
  test::LogCapture log;
  logging::write(logging::Level::debug, "core", "threshold-probe one");
  logging::setThreshold(logging::Level::warning);
  logging::write(logging::Level::info, "core", "threshold-probe two");
  logging::write(logging::Level::warning, "core", "threshold-probe three");
  logging::setThreshold(logging::Level::debug);
  logging::write(logging::Level::debug, "core", "threshold-probe four");
  BOOST_CHECK_EQUAL(log.count({"threshold-probe one"}), 1u);
  BOOST_CHECK_EQUAL(log.count({"threshold-probe two"}), 0u);
  BOOST_CHECK_EQUAL(log.count({"threshold-probe three"}), 1u);
  BOOST_CHECK_EQUAL(log.count({"threshold-probe four"}), 1u);
}
