// `ccsandbox conformance`: the contract every backend must keep (see
// docs/writing-a-backend.md), checked against one plugin file through the
// same Runtime that cc_server uses. Ours and third parties' alike.
#include "arguments.hpp"
#include "commands.hpp"

#include <signal.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <functional>
#include <iostream>
#include <mutex>

namespace ccsandbox::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char *kConformanceHelp =
    R"(usage: ccsandbox conformance PLUGIN_FILE [--no-filename-rules] [--json] [-v]

Loads PLUGIN_FILE alone, probes it, and checks the backend contract through a
real session: a kept probe result (ABI 1.1) restored to the same result and
used for the session, lifecycle and badge, exit codes (including signals, 126/127),
stdout and stderr kept apart and whole, stdin, environment and working
directory, signals and kill ending the process group, concurrent commands,
destroy ending running commands. A plugin that probes unavailable on this host
is reported as such and its session checks are skipped.

  --no-filename-rules  launch with the standard filename rules dropped (for a
                       backend that cannot enforce them: the launch is refused
                       otherwise, which is itself reported)
  --json               one JSON document instead of lines
  -v, --verbose        log on stderr

exit status: 0 when every check passed, 1 when one failed, 2 when the plugin
probed unavailable (nothing could be checked), 125 for bad usage or a file
that does not load.
)";

// Collects one session's events; waits for output with a bound.
class EventLog {
 public:
  EventCallback callback() {
    return [this](const SandboxEvent &e) {
      std::lock_guard lock(mutex_);
      events_.push_back(e);
      changed_.notify_all();
    };
  }
  std::string stream(const std::string &execId, SandboxEventType type) {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto &e : events_)
      if (e.type == type && e.execId == execId) out += e.data;
    return out;
  }
  bool waitForStdout(const std::string &execId, const std::string &text) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(20), [&] {
      std::string out;
      for (const auto &e : events_)
        if (e.type == SandboxEventType::stdoutData && e.execId == execId) out += e.data;
      return out.find(text) != std::string::npos;
    });
  }
  std::vector<SandboxEvent> all() {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<SandboxEvent> events_;
};

struct Check {
  std::string name;
  bool passed = false;
  std::string detail;
};

class Conformance {
 public:
  Conformance(Runtime &runtime, const PluginInfo &plugin, const std::string &workdir,
              bool filenameRules)
      : runtime_(runtime), plugin_(plugin), workdir_(workdir), filenameRules_(filenameRules) {}

  std::vector<Check> run() {
    std::shared_ptr<Session> session;
    check("launch: warm, with starting and ready carrying the backend", [&] {
      LaunchOptions launch;
      launch.spec.bindMounts.push_back({workdir_, workdir_, false});
      launch.spec.guestWorkdir = workdir_;
      launch.plugin = plugin_.name;
      launch.policy.standardFilenameRules = filenameRules_;
      launch.onEvent = log_.callback();
      session = runtime_.launch(std::move(launch));
      auto h = session->handle();
      expect(h.state == SandboxState::warm, "state is " + std::string(toString(h.state)));
      expect(h.backend == plugin_.backend, "handle backend differs from the plugin's");
      auto events = log_.all();
      expect(events.size() >= 2 && events[0].type == SandboxEventType::starting &&
                 events[1].type == SandboxEventType::ready,
             "starting and ready are not the first events");
      for (auto &e : events)
        expect(!e.backend || *e.backend == plugin_.backend, "an event carries another backend");
    });
    if (!session) return checks_;

    check("exit code and streams kept apart", [&] {
      auto p = session->exec({.argv = {"sh", "-c", "echo out; echo err >&2; exit 3"}});
      expect(p->wait() == 3, "exit code " + std::to_string(p->wait()));
      expect(log_.stream(p->execId(), SandboxEventType::stdoutData) == "out\n", "stdout differs");
      expect(log_.stream(p->execId(), SandboxEventType::stderrData) == "err\n", "stderr differs");
    });
    check("a signal that ends the command is reported as 128+N", [&] {
      auto p = session->exec({.argv = {"sh", "-c", "kill -TERM $$"}});
      expect(p->wait() == 128 + SIGTERM, "exit code " + std::to_string(p->wait()));
    });
    check("command not found is 127, not executable is 126", [&] {
      auto p = session->exec({.argv = {"ccsandbox-conformance-no-such-command"}});
      expect(p->wait() == 127, "not found gave " + std::to_string(p->wait()));
      auto q = session->exec({.argv = {workdir_}});
      expect(q->wait() == 126, "a directory as the command gave " + std::to_string(q->wait()));
    });
    check("stdin, environment and working directory reach the command", [&] {
      int in[2];
      expect(::pipe(in) == 0, "pipe");
      auto p =
          session->exec({.argv = {"sh", "-c", "read line; echo \"$line $CONFORMANCE_VAR $(pwd)\""},
                         .env = {{"CONFORMANCE_VAR", "v42"}},
                         .cwd = workdir_,
                         .stdinFd = in[0]});
      ::close(in[0]);
      [[maybe_unused]] auto n = ::write(in[1], "hello\n", 6);
      ::close(in[1]);
      expect(p->wait() == 0, "exit code " + std::to_string(p->wait()));
      std::string out = log_.stream(p->execId(), SandboxEventType::stdoutData);
      expect(out == "hello v42 " + workdir_ + "\n", "got \"" + out + "\"");
    });
    check("8 MiB of output arrive whole and in order", [&] {
      auto p = session->exec(
          {.argv = {"sh", "-c",
                    "i=0; while [ $i -lt 131072 ]; do printf '%063d\\n' $i; i=$((i+1)); done"}});
      expect(p->wait() == 0, "exit code " + std::to_string(p->wait()));
      std::string out = log_.stream(p->execId(), SandboxEventType::stdoutData);
      expect(out.size() == 131072u * 64u, "got " + std::to_string(out.size()) + " bytes");
      bool ordered = true;
      for (std::size_t i = 0; ordered && i < 131072; i += 4099)
        ordered = std::stoul(out.substr(i * 64, 63)) == i;
      expect(ordered, "lines out of order");
    });
    check("kill ends a process group that ignores SIGTERM", [&] {
      auto p = session->exec(
          {.argv = {"sh", "-c", "trap '' TERM; sleep 60 & echo armed; sleep 60; wait"}});
      expect(log_.waitForStdout(p->execId(), "armed"), "the command never started");
      p->kill();
      expect(p->wait() == 128 + SIGKILL, "exit code " + std::to_string(p->wait()));
    });
    check("signal reaches the command's process group", [&] {
      auto p = session->exec({.argv = {"sh", "-c",
                                       "trap 'echo got-int; exit 9' INT; echo armed; "
                                       "while :; do sleep 0.05; done"}});
      expect(log_.waitForStdout(p->execId(), "armed"), "the command never started");
      p->signal(SIGINT);
      expect(p->wait() == 9, "exit code " + std::to_string(p->wait()));
    });
    check("two commands run at once in one session", [&] {
      auto a = session->exec({.argv = {"sh", "-c", "sleep 0.3; echo a"}});
      auto b = session->exec({.argv = {"sh", "-c", "echo b"}});
      expect(b->wait() == 0 && a->wait() == 0, "a command failed");
      expect(log_.stream(a->execId(), SandboxEventType::stdoutData) == "a\n" &&
                 log_.stream(b->execId(), SandboxEventType::stdoutData) == "b\n",
             "outputs mixed up");
    });
    check("destroy ends a running command, which still gets its exit", [&] {
      auto p = session->exec({.argv = {"sleep", "60"}});
      session->destroy();
      expect(p->wait() >= 128, "exit code " + std::to_string(p->wait()));
      expect(session->handle().state == SandboxState::destroyed, "state is not destroyed");
      session->destroy();  // idempotent
    });
    return checks_;
  }

 private:
  struct Failed {
    std::string why;
  };
  static void expect(bool ok, const std::string &why) {
    if (!ok) throw Failed{why};
  }
  void check(const std::string &name, const std::function<void()> &body) {
    Check c{name, false, ""};
    try {
      body();
      c.passed = true;
    } catch (const Failed &f) {
      c.detail = f.why;
    } catch (const std::exception &e) {
      c.detail = e.what();
    }
    checks_.push_back(c);
  }

  Runtime &runtime_;
  const PluginInfo &plugin_;
  std::string workdir_;
  bool filenameRules_;
  EventLog log_;
  std::vector<Check> checks_;
};

// A private directory: holds a link to the plugin (discovery reads whole
// directories) and serves as the session's writable working directory.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "ccsandbox-conformance-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw UsageError("cannot create a temporary directory");
    path_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path &path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

int conformanceCommand(const std::vector<std::string> &argv) {
  Arguments args(argv);
  bool asJson = false, filenameRules = true;
  std::optional<std::string> file;
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << kConformanceHelp;
      return 0;
    }
    if (args.flag("--json"))
      asJson = true;
    else if (args.flag("--no-filename-rules"))
      filenameRules = false;
    else if (args.flag("-v") || args.flag("--verbose"))
      configureLogging(true);
    else if (!file && !args.peek().empty() && args.peek()[0] != '-')
      file = args.next();
    else
      args.unknown();
  }
  if (!file) throw UsageError("conformance: no plugin file given (see --help)");
  std::error_code ec;
  fs::path plugin = fs::canonical(*file, ec);
  if (ec || !fs::is_regular_file(plugin))
    throw UsageError("conformance: " + *file + ": not an existing file");

  Scratch scratch;
  fs::create_directory(scratch.path() / "plugin");
  fs::create_directory(scratch.path() / "work");
  fs::create_symlink(plugin, scratch.path() / "plugin" / plugin.filename());
  RuntimeOptions options;
  options.pluginPath = std::vector<std::string>{(scratch.path() / "plugin").string()};
  options.searchInstallDir = false;
  options.sandbox = SandboxSwitch::on;
  options.killGrace = std::chrono::milliseconds(500);
  // Probed afresh and kept in a cache of our own, then loaded again: a plugin
  // of ABI 1.1 that keeps its probe is checked on the result it restored.
  const fs::path cache = scratch.path() / "probe-cache";
  options.probeCacheDir = cache.string();
  options.refreshProbeCache = true;
  std::optional<ProbeResult> fresh;
  {
    Runtime first(options);
    if (first.plugins().empty())
      throw UsageError("conformance: " + plugin.string() +
                       " did not load as a backend plugin (run with -v for the reason)");
    fresh = first.plugins().front().probe;
  }
  bool kept = !fs::is_empty(cache);
  options.refreshProbeCache = false;
  Runtime runtime(options);
  if (runtime.plugins().empty())
    throw UsageError("conformance: " + plugin.string() + " did not load a second time");
  const PluginInfo &info = runtime.plugins().front();

  std::vector<Check> checks;
  if (kept) {
    Check c{"a kept probe result restores to the same result (ABI 1.1)", false, ""};
    const ProbeResult &again = info.probe;
    c.passed = again.available == fresh->available && again.note == fresh->note &&
               again.capabilities == fresh->capabilities;
    if (!c.passed)
      c.detail = "fresh " + boost::json::serialize(toJson(*fresh)) + ", restored " +
                 boost::json::serialize(toJson(again));
    checks.push_back(c);
  }
  if (info.probe.available) {
    std::string work = fs::canonical(scratch.path() / "work").string();
    auto session = Conformance(runtime, info, work, filenameRules).run();
    checks.insert(checks.end(), session.begin(), session.end());
  }
  int failed = 0;
  for (auto &c : checks) failed += c.passed ? 0 : 1;
  if (asJson) {
    boost::json::array rows;
    for (auto &c : checks)
      rows.push_back({{"check", c.name}, {"passed", c.passed}, {"detail", c.detail}});
    std::cout << boost::json::serialize(boost::json::object{{"plugin", info.name},
                                                            {"backend", toString(info.backend)},
                                                            {"available", info.probe.available},
                                                            {"checks", std::move(rows)},
                                                            {"failed", failed}})
              << "\n";
  } else {
    std::cout << info.name << " (" << toString(info.backend) << ", " << plugin.string() << ")\n";
    if (!info.probe.available) std::cout << "unavailable on this host: " << info.probe.hint << "\n";
    for (auto &c : checks)
      std::cout << (c.passed ? "PASS  " : "FAIL  ") << c.name
                << (c.detail.empty() ? "" : ": " + c.detail) << "\n";
    if (info.probe.available)
      std::cout << checks.size() - failed << " passed, " << failed << " failed\n";
  }
  if (!info.probe.available) return 2;
  return failed ? 1 : 0;
}

}  // namespace ccsandbox::cli
