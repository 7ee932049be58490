// The kernel layers on each command the helper starts (ccsandbox_confine):
// Landlock and the seccomp filter go on in the child just before exec, and a
// Supervisor serves the child's listener on a thread of its own, so a
// command's supervised calls never wait on the helper's control loop.
//
// The Landlock ruleset, the filter and the supervisors' judge (rule paths
// resolved) are built once per session, when the rules arrive: they depend on
// the rules and on the mounts, and both are fixed when the session starts.
// Per command: prepareLaunch() returns hooks that apply them in the child and,
// in the helper right after fork, take the listener and start the supervisor
// (the child's execve is itself supervised, so it must be served before the
// launcher waits for the exec). The supervisor thread ends when every process
// under the filter is gone; the helper's io_context joins it.
#pragma once

#include "command_launcher.hpp"

#include "ccsandbox/confine/child_confinement.hpp"
#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/supervisor.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace ccsandbox::bwrap {

class CommandConfinement {
 public:
  // Called on a supervisor thread: report it to the plugin.
  using ViolationReport =
      std::function<void(const std::string &execId, const confine::Violation &)>;
  // Called on the helper's thread: a command's confinement could not start.
  using Problem = std::function<void(const std::string &message)>;

  CommandConfinement(boost::asio::io_context &io, confine::ConfineRules rules,
                     ViolationReport onViolation, Problem onProblem);
  ~CommandConfinement();
  CommandConfinement(const CommandConfinement &) = delete;
  CommandConfinement &operator=(const CommandConfinement &) = delete;

  // Builds what every command of the session shares, if not yet built (after
  // waiting for prepareInBackground(), whose failure it reports). Throws like
  // prepareLaunch().
  void prepare();
  // The same on a thread of its own, started when the rules arrive: the
  // helper opens its bridges and says `ready` meanwhile (the Landlock ruleset
  // and the judge take ~0.3 ms on the development VM, on the path of every
  // launch). `done` is posted to the helper's loop when it has finished.
  void prepareInBackground(std::function<void()> done);

  // Before fork. Throws std::exception with a message for the user when the
  // rules cannot be turned into kernel objects (the command is then not run).
  ConfinementHooks prepareLaunch(const std::string &execId);

  // The same for a spare child (startSpare), whose command is not known yet:
  // `name` gives its supervisor the command's execId, for its violation
  // reports, before the command is sent to it. The spare's listener is taken
  // on the helper's loop when it arrives, so that the helper does not wait
  // while the child confines itself; `settle` takes it at once if it has not
  // been yet, and must run before the spare gets its command (its execve is
  // supervised, and the launcher waits for that exec on the helper's thread).
  struct SpareHooks {
    ConfinementHooks hooks;
    std::function<void(const std::string &execId)> name;
    std::function<void()> settle;
  };
  SpareHooks prepareSpare();

 private:
  struct Served {
    std::unique_ptr<confine::Supervisor> supervisor;
    std::thread thread;
  };
  // The execId a supervisor reports violations under: set later for a spare.
  class ExecIdSlot {
   public:
    explicit ExecIdSlot(std::string id = {}) : id_(std::move(id)) {}
    void set(const std::string &id) {
      std::lock_guard lock(mutex_);
      id_ = id;
    }
    std::string get() const {
      std::lock_guard lock(mutex_);
      return id_;
    }

   private:
    mutable std::mutex mutex_;
    std::string id_;
  };
  // A spare's listener on its way: `take` is set at fork and runs once, when
  // `readable` (a copy of the channel's fd, watched on the loop) fires or at
  // settle(), whichever comes first.
  struct PendingListener {
    std::function<void()> take;
    std::optional<boost::asio::posix::stream_descriptor> readable;
    void settle() {
      if (!take) return;
      auto once = std::move(take);
      take = nullptr;
      readable.reset();  // also from its own handler: asio allows that
      once();
    }
  };
  // `pending`: null for a command's own child, whose listener is taken at fork.
  ConfinementHooks hooksFor(std::shared_ptr<ExecIdSlot> execId,
                            std::shared_ptr<PendingListener> pending);
  // Receives the child's listener on `parentEnd` and starts its supervisor.
  void takeListener(int parentEnd, std::shared_ptr<ExecIdSlot> execId);
  // Starts a Supervisor for `listener` on a thread of its own; if it cannot,
  // the listener closes (the child's supervised calls fail) and onProblem_ says why.
  void serve(std::shared_ptr<ExecIdSlot> execId, UniqueFd listener);
  void runServed(std::list<Served>::iterator it);  // the supervisor thread
  // Why exec of `program` is refused by the rules (a write root without a
  // grant), for the user; empty when the rules do not refuse it.
  std::string execRefusal(const std::string &program) const;

  boost::asio::io_context &io_;
  const confine::ConfineRules rules_;
  // Built by prepare(), on the helper's thread, or by preparing_, which
  // prepare() joins before it reads them.
  std::shared_ptr<const confine::ChildConfinement> confinement_;
  std::shared_ptr<const confine::WriteJudge> judge_;
  std::thread preparing_;
  std::exception_ptr prepareError_;  // what preparing_ could not build
  ViolationReport onViolation_;
  Problem onProblem_;
  std::list<Served> served_;  // touched on the helper's thread only
};

// `ccsandbox-bwrap-helper --check-confinement`: inside the probe's trial
// sandbox, confine a child, let it attempt one forbidden create and check the
// supervisor refused and reported it. Prints two lines — "supervisor: ok" or
// "supervisor: <why not>", and "landlock: ok" or "landlock: <note>" — and
// returns 0 when it could tell.
int checkConfinement();

}  // namespace ccsandbox::bwrap
