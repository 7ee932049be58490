// Confining one command, in two halves around fork():
//
//   auto confinement = ChildConfinement::prepare(rules);   // parent, may throw
//   auto [parentEnd, childEnd] = ChildConfinement::channel();
//   pid_t pid = fork();
//   if (pid == 0) {
//     parentEnd.reset();
//     if (confinement.apply(childEnd.get()) != 0) _exit(127);  // fail closed
//     childEnd.reset();
//     execve(...);
//   }
//   childEnd.reset();
//   UniqueFd listener = ChildConfinement::receiveListener(parentEnd.get());  // may throw
//   Supervisor supervisor(rules, std::move(listener), onViolation);
//
// apply() sets no_new_privs, restricts the child with Landlock (skipped with a
// reason on a kernel without it), installs the seccomp filter and sends the
// listener fd over the channel (SCM_RIGHTS). It only makes system calls, so it
// is safe in the child of a multi-threaded parent.
#pragma once

#include <stdexcept>

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/landlock_ruleset.hpp"
#include "ccsandbox/confine/seccomp_filter.hpp"
#include "ccsandbox/unique_fd.hpp"

#include <utility>

namespace ccsandbox::confine {

// The child ended before it confined itself (see receiveListener).
struct ChildEnded : std::runtime_error {
  ChildEnded() : std::runtime_error("the command exited before it could be confined") {}
};

class ChildConfinement {
 public:
  static ChildConfinement prepare(const ConfineRules &rules);

  // A connected AF_UNIX socket pair (both ends close-on-exec): first for the
  // parent, second for the child.
  static std::pair<UniqueFd, UniqueFd> channel();

  // In the child. Returns 0, or a nonzero errno after writing a one-line
  // reason to stderr and reporting the failing step over the channel; the
  // caller must then _exit without exec'ing.
  int apply(int channelFd) const noexcept;

  // In the parent: the child's listener fd. Throws std::runtime_error with
  // the child's reason when it could not confine itself, ChildEnded when it
  // ended before trying (it failed earlier, and says so on its own).
  static UniqueFd receiveListener(int channelFd);

  const LandlockRuleset &landlock() const { return landlock_; }

 private:
  LandlockRuleset landlock_;
  SupervisedFilter filter_;
};

}  // namespace ccsandbox::confine
