// Shared by the native-bwrap suites: a Runtime over the build tree's plugins,
// sessions forced onto the native backend (never a silent fallback to none),
// and commands run to completion with their events collected.
#pragma once

#include "ccsandbox/runtime.hpp"
#include "support/temp_tree.hpp"

#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace ccsandbox::test {

struct Outcome {
  int status = -1;
  std::string out, err;
  std::vector<SandboxEvent> events;  // this command's, in order
  std::vector<SandboxViolation> violations() const {
    std::vector<SandboxViolation> v;
    for (const auto &e : events)
      if (e.type == SandboxEventType::violation && e.violation) v.push_back(*e.violation);
    return v;
  }
  bool has(SandboxEventType t) const {
    for (const auto &e : events)
      if (e.type == t) return true;
    return false;
  }
};

inline RuntimeOptions nativeRuntimeOptions() {
  RuntimeOptions o;
  o.pluginPath = std::vector<std::string>{CCSANDBOX_PLUGIN_DIR};
  o.searchInstallDir = false;
  o.sandbox = SandboxSwitch::on;
  o.killGrace = std::chrono::milliseconds(300);
  return o;
}

class NativeSession {
 public:
  // Launches on the native backend, filename rules off unless `globs`.
  NativeSession(Runtime &runtime, SandboxSpec spec, bool standardGlobs = false) {
    LaunchOptions launch;
    launch.spec = std::move(spec);
    launch.backend = RequestedBackend::native;
    launch.policy.standardFilenameRules = standardGlobs;
    launch.onEvent = [this](const SandboxEvent &e) {
      std::lock_guard lock(mutex_);
      events_.push_back(e);
    };
    session_ = runtime.launch(std::move(launch));
  }
  ~NativeSession() { session_->destroy(); }

  Session &session() { return *session_; }

  Outcome run(std::vector<std::string> argv, ExecOptions options = {}) {
    options.argv = std::move(argv);
    auto process = session_->exec(std::move(options));
    Outcome o;
    o.status = process->wait();
    std::lock_guard lock(mutex_);
    for (const auto &e : events_) {
      if (!e.execId || *e.execId != process->execId()) continue;
      o.events.push_back(e);
      if (e.type == SandboxEventType::stdoutData) o.out += e.data;
      if (e.type == SandboxEventType::stderrData) o.err += e.data;
    }
    return o;
  }
  Outcome sh(const std::string &script, ExecOptions options = {}) {
    return run({"/bin/sh", "-c", script}, std::move(options));
  }
  std::vector<SandboxEvent> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }

 private:
  std::shared_ptr<Session> session_;
  std::mutex mutex_;
  std::vector<SandboxEvent> events_;
};

inline bool runningAsRoot() {
  return ::geteuid() == 0;
}

// A fake home in a temp tree (with secrets to hide) and HOME pointing at it
// for the policy compiler, set before the Runtime takes the host environment.
struct FakeHomeFixture {
  TempTree tree;
  std::string home = tree.dir("home");
  std::string work = tree.dir("home/work");
  std::string savedHome = std::getenv("HOME") ? std::getenv("HOME") : "";
  bool homeSet = ::setenv("HOME", home.c_str(), 1) == 0;
  Runtime runtime{nativeRuntimeOptions()};

  FakeHomeFixture() {
    tree.file("home/.ssh/id_ed25519", "PRIVATE-KEY-MATERIAL\n");
    tree.file("home/.netrc", "machine example.com password hunter2\n");
    tree.file("home/work/README", "readme\n");
  }
  ~FakeHomeFixture() { ::setenv("HOME", savedHome.c_str(), 1); }

  SandboxSpec spec(SandboxMode mode = SandboxMode::chat) const {
    SandboxSpec s;
    s.bindMounts.push_back({home, home, false});
    s.guestWorkdir = work;
    s.mode = mode;
    return s;
  }
};

}  // namespace ccsandbox::test
