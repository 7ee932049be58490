#include "command_confinement.hpp"

#include "plain_output.hpp"

#include "ccsandbox/confine/child_confinement.hpp"
#include "ccsandbox/confine/landlock_ruleset.hpp"

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <system_error>
#include <utility>

namespace ccsandbox::bwrap {

CommandConfinement::CommandConfinement(boost::asio::io_context &io, confine::ConfineRules rules,
                                       ViolationReport onViolation, Problem onProblem)
    : io_(io),
      rules_(std::move(rules)),
      onViolation_(std::move(onViolation)),
      onProblem_(std::move(onProblem)) {}

CommandConfinement::~CommandConfinement() {
  if (preparing_.joinable()) preparing_.join();
  for (auto &s : served_) {
    s.supervisor->stop();
    if (s.thread.joinable()) s.thread.join();
  }
}

namespace {

// What one launch needs on both sides of fork, built before it.
struct Launch {
  std::shared_ptr<const confine::ChildConfinement> confinement;
  UniqueFd parentEnd, childEnd;
};

}  // namespace

void CommandConfinement::prepare() {
  if (preparing_.joinable()) {
    preparing_.join();
    if (prepareError_) {
      // Said once by the caller that waits; the next launch tries again.
      std::exception_ptr error = std::exchange(prepareError_, nullptr);
      std::rethrow_exception(error);
    }
  }
  if (confinement_) return;
  auto judge = std::make_shared<const confine::WriteJudge>(rules_);
  confinement_ =
      std::make_shared<const confine::ChildConfinement>(confine::ChildConfinement::prepare(rules_));
  judge_ = std::move(judge);
}

void CommandConfinement::prepareInBackground(std::function<void()> done) {
  if (confinement_ || preparing_.joinable()) return boost::asio::post(io_, std::move(done));
  try {
    preparing_ = std::thread([this, done]() mutable {
      try {
        auto judge = std::make_shared<const confine::WriteJudge>(rules_);
        confinement_ = std::make_shared<const confine::ChildConfinement>(
            confine::ChildConfinement::prepare(rules_));
        judge_ = std::move(judge);
      } catch (...) {
        prepareError_ = std::current_exception();
      }
      boost::asio::post(io_, std::move(done));
    });
  } catch (const std::system_error &) {
    boost::asio::post(io_, std::move(done));  // no thread: prepare() builds it when called
  }
}

ConfinementHooks CommandConfinement::prepareLaunch(const std::string &execId) {
  return hooksFor(std::make_shared<ExecIdSlot>(execId), nullptr);
}

CommandConfinement::SpareHooks CommandConfinement::prepareSpare() {
  auto slot = std::make_shared<ExecIdSlot>();
  SpareHooks spare;
  auto pending = std::make_shared<PendingListener>();
  spare.hooks = hooksFor(slot, pending);
  spare.name = [slot](const std::string &execId) { slot->set(execId); };
  spare.settle = [pending] { pending->settle(); };
  return spare;
}

ConfinementHooks CommandConfinement::hooksFor(std::shared_ptr<ExecIdSlot> execId,
                                              std::shared_ptr<PendingListener> pending) {
  prepare();
  auto launch = std::make_shared<Launch>(Launch{confinement_, UniqueFd(), UniqueFd()});
  std::tie(launch->parentEnd, launch->childEnd) = confine::ChildConfinement::channel();
  ConfinementHooks hooks;
  // In the child: the parent's end is close-on-exec, so holding it is harmless.
  hooks.beforeExec = [l = launch.get()]() noexcept {
    return l->confinement->apply(l->childEnd.get());
  };
  hooks.afterFork = [this, launch, execId, pending](pid_t) {
    launch->childEnd.reset();  // so a child that dies before confining reads as EOF
    if (!pending) return takeListener(launch->parentEnd.get(), execId);
    // A spare: its listener is taken when it arrives, while the helper goes
    // on (the first command is on its way); settle() takes it at the latest.
    pending->take = [this, launch, execId] { takeListener(launch->parentEnd.get(), execId); };
    const int watched = ::fcntl(launch->parentEnd.get(), F_DUPFD_CLOEXEC, 3);
    if (watched < 0) return pending->settle();
    pending->readable.emplace(io_, watched);
    pending->readable->async_wait(
        boost::asio::posix::stream_descriptor::wait_read,
        [weak = std::weak_ptr<PendingListener>(pending)](const boost::system::error_code &ec) {
          if (auto p = weak.lock(); p && !ec) p->settle();
        });
  };
  if (rules_.execBlockWritableRoots && confinement_->landlock().active())
    hooks.whyExecDenied = [this](const std::string &program) { return execRefusal(program); };
  // The hooks are copied by the launcher's caller only while `launch` lives.
  return hooks;
}

std::string CommandConfinement::execRefusal(const std::string &program) const {
  auto beneath = [&](const std::string &root) {
    return program.size() > root.size() && program.compare(0, root.size(), root) == 0 &&
           (root == "/" || program[root.size()] == '/');
  };
  if (program.empty() ||
      std::any_of(rules_.execGrantRoots.begin(), rules_.execGrantRoots.end(), beneath))
    return {};
  // The innermost write root holding it: the narrowest grant that would do.
  std::string root;
  for (const auto &r : rules_.writeRoots)
    if (beneath(r) && r.size() > root.size()) root = r;
  if (root.empty()) return {};
  return "programs in the writable " + root +
         " do not run in this sandbox unless an execGrantRoots entry covers them: "
         "ccsandbox run --exec-grant " +
         root;
}

void CommandConfinement::takeListener(int parentEnd, std::shared_ptr<ExecIdSlot> execId) {
  // Watching it on the loop made the channel non-blocking: wait for the report here.
  pollfd ready{parentEnd, POLLIN, 0};
  while (::poll(&ready, 1, -1) < 0 && errno == EINTR) {
  }
  UniqueFd listener;
  try {
    listener = confine::ChildConfinement::receiveListener(parentEnd);
  } catch (const confine::ChildEnded &) {
    // It failed before (its working directory, its streams) and reports
    // that to the launcher itself: nothing to serve, nothing to add.
    return;
  } catch (const std::exception &e) {
    // Its confinement failed: the launcher reports the errno, this the step.
    const std::string id = execId->get();
    onProblem_((id.empty() ? std::string("a command's child prepared ahead") : id) + ": " +
               e.what());
    return;
  }
  serve(std::move(execId), std::move(listener));
}

void CommandConfinement::serve(std::shared_ptr<ExecIdSlot> execId, UniqueFd listener) {
  auto &s = served_.emplace_back();
  auto it = std::prev(served_.end());
  try {
    s.supervisor = std::make_unique<confine::Supervisor>(
        judge_, std::move(listener),
        [this, execId](const confine::Violation &v) { onViolation_(execId->get(), v); });
    s.thread = std::thread([this, it] { runServed(it); });
  } catch (const std::exception &e) {
    // No supervisor: its listener closes with it, and the child's supervised
    // calls fail (ENOSYS) instead of waiting for an answer: fail closed.
    served_.erase(it);
    const std::string id = execId->get();
    onProblem_((id.empty() ? std::string("a command's child prepared ahead") : id) +
               ": cannot start its supervisor: " + e.what());
  }
}

void CommandConfinement::runServed(std::list<Served>::iterator it) {
  try {
    it->supervisor->run();
  } catch (const std::exception &e) {
    // The listener failed: the command's supervised calls now fail (ENOSYS).
    writePlain(STDERR_FILENO, {"ccsandbox-bwrap-helper: supervisor: ", e.what(), "\n"});
  }
  // Every process under this filter is gone: join from the helper's thread.
  boost::asio::post(io_, [this, it] {
    if (it->thread.joinable()) it->thread.join();
    served_.erase(it);
  });
}

int checkConfinement() {
  const auto landlock = confine::probeLandlock();
  const std::string landlockLine = landlock.usable ? "ok" : landlock.note;
  const auto support = confine::probeSupervisor();
  if (!support.available) {
    writePlain(STDOUT_FILENO, {"supervisor: ", support.note, "\nlandlock: ", landlockLine, "\n"});
    return 0;
  }
  // One forbidden create: a name outside the only write root.
  confine::ConfineRules rules;
  rules.writeRoots = {"/tmp"};
  constexpr const char *kForbidden = "/ccsandbox-probe-denied";
  std::string failure;
  try {
    auto confinement = confine::ChildConfinement::prepare(rules);
    auto [parentEnd, childEnd] = confine::ChildConfinement::channel();
    const pid_t pid = ::fork();
    if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork");
    if (pid == 0) {
      parentEnd.reset();
      if (confinement.apply(childEnd.get()) != 0) ::_exit(3);
      childEnd.reset();
      const int rc = ::mkdir(kForbidden, 0700);
      ::_exit(rc != 0 && errno == EACCES ? 0 : 4);
    }
    childEnd.reset();
    std::atomic<int> violations{0};
    std::unique_ptr<confine::Supervisor> supervisor;
    std::thread serving;
    try {
      supervisor = std::make_unique<confine::Supervisor>(
          rules, confine::ChildConfinement::receiveListener(parentEnd.get()),
          [&](const confine::Violation &v) {
            if (v.target == kForbidden) ++violations;
          });
      serving = std::thread([&] { supervisor->run(); });
    } catch (const std::exception &e) {
      failure = e.what();
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (supervisor) {
      supervisor->stop();
      serving.join();
    }
    if (failure.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0 && violations == 1))
      failure = "a confined trial command was not refused as expected (exit status " +
                std::to_string(status) + ")";
  } catch (const std::exception &e) {
    failure = e.what();
  }
  writePlain(STDOUT_FILENO, {"supervisor: ", failure.empty() ? std::string_view("ok") : failure,
                             "\nlandlock: ", landlockLine, "\n"});
  return 0;
}

}  // namespace ccsandbox::bwrap
