#include "command_confinement.hpp"

#include "ccsandbox/confine/child_confinement.hpp"
#include "ccsandbox/confine/landlock_ruleset.hpp"

#include <boost/asio/post.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <iostream>

namespace ccsandbox::bwrap {

CommandConfinement::CommandConfinement(boost::asio::io_context &io, confine::ConfineRules rules,
                                       ViolationReport onViolation, Problem onProblem)
    : io_(io),
      rules_(std::move(rules)),
      onViolation_(std::move(onViolation)),
      onProblem_(std::move(onProblem)) {}

CommandConfinement::~CommandConfinement() {
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
  if (confinement_) return;
  auto judge = std::make_shared<const confine::WriteJudge>(rules_);
  confinement_ =
      std::make_shared<const confine::ChildConfinement>(confine::ChildConfinement::prepare(rules_));
  judge_ = std::move(judge);
}

ConfinementHooks CommandConfinement::prepareLaunch(const std::string &execId) {
  return hooksFor(std::make_shared<ExecIdSlot>(execId));
}

CommandConfinement::SpareHooks CommandConfinement::prepareSpare() {
  auto slot = std::make_shared<ExecIdSlot>();
  SpareHooks spare;
  spare.hooks = hooksFor(slot);
  spare.name = [slot](const std::string &execId) { slot->set(execId); };
  return spare;
}

ConfinementHooks CommandConfinement::hooksFor(std::shared_ptr<ExecIdSlot> execId) {
  prepare();
  auto launch = std::make_shared<Launch>(Launch{confinement_, UniqueFd(), UniqueFd()});
  std::tie(launch->parentEnd, launch->childEnd) = confine::ChildConfinement::channel();
  ConfinementHooks hooks;
  // In the child: the parent's end is close-on-exec, so holding it is harmless.
  hooks.beforeExec = [l = launch.get()]() noexcept {
    return l->confinement->apply(l->childEnd.get());
  };
  hooks.afterFork = [this, launch, execId](pid_t) {
    launch->childEnd.reset();  // so a child that dies before confining reads as EOF
    UniqueFd listener;
    try {
      listener = confine::ChildConfinement::receiveListener(launch->parentEnd.get());
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
    serve(execId, std::move(listener));
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

void CommandConfinement::serve(std::shared_ptr<ExecIdSlot> execId, UniqueFd listener) {
  auto &s = served_.emplace_back();
  s.supervisor = std::make_unique<confine::Supervisor>(
      judge_, std::move(listener),
      [this, execId](const confine::Violation &v) { onViolation_(execId->get(), v); });
  auto it = std::prev(served_.end());
  s.thread = std::thread([this, it] {
    try {
      it->supervisor->run();
    } catch (const std::exception &e) {
      // The listener failed: the command's supervised calls now fail (ENOSYS).
      std::cerr << "ccsandbox-bwrap-helper: supervisor: " << e.what() << "\n";
    }
    // Every process under this filter is gone: join from the helper's thread.
    boost::asio::post(io_, [this, it] {
      if (it->thread.joinable()) it->thread.join();
      served_.erase(it);
    });
  });
}

int checkConfinement() {
  const auto landlock = confine::probeLandlock();
  const std::string landlockLine = landlock.usable ? "ok" : landlock.note;
  const auto support = confine::probeSupervisor();
  if (!support.available) {
    std::cout << "supervisor: " << support.note << "\nlandlock: " << landlockLine << "\n";
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
  std::cout << "supervisor: " << (failure.empty() ? "ok" : failure)
            << "\nlandlock: " << landlockLine << "\n";
  return 0;
}

}  // namespace ccsandbox::bwrap
