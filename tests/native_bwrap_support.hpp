// Shared by the native-bwrap suites: a Runtime over the build tree's plugins,
// sessions forced onto the native backend (never a silent fallback to none),
// and commands run to completion with their events collected.
#pragma once

#include "ccsandbox/runtime.hpp"

#include <unistd.h>

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

}  // namespace ccsandbox::test
