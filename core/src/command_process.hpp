// One command in a session: reads its stdout and stderr pipes, enforces its
// timeout (SIGTERM, then SIGKILL after a grace period) and delivers its events
// from one thread, in order, with `exit` last and after every byte of output.
#pragma once

#include "ccsandbox/runtime.hpp"
#include "ccsandbox/unique_fd.hpp"
#include "stderr_violation_scanner.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace ccsandbox {

class CommandProcess final : public Process {
 public:
  struct Hooks {
    std::function<void(const SandboxEvent &)> deliver;  // to the session's callback
    std::function<void(int)> signal;                    // to the command's process group
    std::function<void()> finished;                     // before `exit` is delivered
    // Also report denials seen on stderr as `violation` events, for what the
    // backend does not observe itself (see stderr_violation_scanner.hpp).
    std::optional<StderrScan> scanStderr;
  };

  CommandProcess(std::string sessionId, std::string execId, UniqueFd stdoutRead,
                 UniqueFd stderrRead, Hooks hooks, std::optional<std::chrono::milliseconds> timeout,
                 std::chrono::milliseconds killGrace);
  ~CommandProcess() override;

  void start();
  // An event the backend emitted for this command (exit, violation, killed).
  void post(SandboxEvent event);
  // The session was destroyed: if no `exit` comes, one is made up (SIGKILL).
  void sessionEnded();
  void join();

  const std::string &execId() const override { return execId_; }
  void signal(int signal) override;
  void kill() override;
  int wait() override;
  std::optional<int> exitCode() const override;

 private:
  using Clock = std::chrono::steady_clock;
  void run();
  void wake();
  SandboxEvent event(SandboxEventType type) const;

  const std::string sessionId_;
  const std::string execId_;
  UniqueFd out_, err_;
  UniqueFd wakeRead_, wakeWrite_;
  Hooks hooks_;
  std::optional<std::chrono::milliseconds> timeout_;
  std::chrono::milliseconds killGrace_;

  mutable std::mutex mutex_;
  std::condition_variable doneCv_;
  std::deque<SandboxEvent> inbox_;  // from the backend, consumed by the pump
  bool killRequested_ = false;
  bool sessionEnded_ = false;
  bool done_ = false;
  std::optional<int> exitCode_;
  std::thread pump_;
};

}  // namespace ccsandbox
