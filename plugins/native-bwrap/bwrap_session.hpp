// One warm session: a bubblewrap sandbox with our helper as pid 1, and the
// control channel to it. Commands start inside without a new bubblewrap.
#pragma once

#include "bwrap_probe.hpp"
#include "bwrap_process.hpp"
#include "bwrap_standby.hpp"
#include "ccsandbox/unique_fd.hpp"
#include "control_channel.hpp"
#include "mount_plan.hpp"
#include "spawner_thread.hpp"
#include "unique_pipe.hpp"

#include "ccsandbox/backend.hpp"

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace ccsandbox::bwrap {

// The mount plan's input for this host; `emptyDir` masks read-denied directories.
MountPlanInput planInput(const BwrapHost &host, const std::string &emptyDir);

class BwrapSession {
 public:
  // A bubblewrap for the next launch on this host, started ahead (on the
  // spawner thread) while the core compiles the policy.
  static StandbyBwrap standby(const BwrapHost &host);

  // Starts the sandbox — in `started` when it fits the plan, else in a
  // bubblewrap of its own — and returns once the helper said it is ready;
  // throws std::runtime_error carrying bubblewrap's own message when it is not.
  BwrapSession(const LaunchRequest &request, const BwrapHost &host, SpawnerThread &spawner,
               const sdk::Host &events, std::optional<StandbyBwrap> started = std::nullopt);
  ~BwrapSession();
  BwrapSession(const BwrapSession &) = delete;
  BwrapSession &operator=(const BwrapSession &) = delete;

  boost::json::object details() const;
  void exec(const ExecRequest &request);
  void signal(const SignalRequest &request);
  // Ends every process of the sandbox and returns once the helper has reaped
  // them all and said so (or, past a grace period, once bubblewrap is killed).
  // Idempotent. Bubblewrap and the helper exit right after: reap() waits for that.
  void destroy();
  // Waits for bubblewrap to exit (killing it past a grace period) and reaps it.
  // Idempotent; the destructor runs it too.
  void reap();

 private:
  void waitReady(int output);
  // The write rules for the helper, sent before any exec on the same stream.
  static Message confineMessage(const GuestWriteRules &rules);
  void readLoop();
  void onMessage(const Message &m);
  void emitExit(const std::string &execId, int code, int signal, const std::string &error);

  const std::string sessionId_;
  const sdk::Host &events_;
  UniqueFd control_;
  UniqueFd output_;  // bwrap's and the helper's stderr
  std::optional<BwrapProcess> bwrap_;
  std::thread reader_;
  std::mutex mutex_;  // sends, pending_, destroyed_, readerDone_
  std::condition_variable readerEnded_;
  std::set<std::string> pending_;  // commands sent and not yet reported
  bool destroyed_ = false;
  bool readerDone_ = false;  // the helper said `gone`, or its channel closed
  std::string bwrapPath_;
  std::vector<std::string> args_;  // the plan as one command line, for details()
  bool confined_ = false;          // every command runs under Landlock and the supervisor
};

}  // namespace ccsandbox::bwrap
