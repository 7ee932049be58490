// Landlock on the command: a second kernel layer under the mounts.
//
//  - creates, writes, removes, truncates and cross-directory renames/links
//    (REFER) only beneath the write roots, plus writes to the few device files
//    a shell needs (/dev/null, zero, full, tty, random, urandom, ptmx, /dev/pts);
//  - when exec.blockWritableRoots is set, execution everywhere except from a
//    write root, unless an execGrantRoots entry reopens it;
//  - signals and abstract Unix sockets scoped to the command's own processes
//    where the kernel's Landlock ABI has it (ABI 6).
//
// Reads are not handled here: what is visible is the mounts' job.
//
// The ruleset is built in the parent, before fork (it opens paths and
// allocates); the forked child only calls restrictSelf(), which is a single
// system call and safe between fork and exec.
#pragma once

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/unique_fd.hpp"

#include <string>
#include <vector>

namespace ccsandbox::confine {

struct LandlockSupport {
  int abi = 0;          // 0: no Landlock (not built in, or disabled at boot)
  bool usable = false;  // ABI >= 2 (ABI 1 refuses every cross-directory rename)
  bool scopes = false;  // ABI >= 6: signal and abstract-socket scoping
  std::string note;     // one line for the plugin's probe note
};

// Asks the kernel once (landlock_create_ruleset with the VERSION flag).
LandlockSupport probeLandlock();

class LandlockRuleset {
 public:
  // Builds the ruleset for `rules`. On a kernel without (usable) Landlock this
  // returns an inactive ruleset whose skipReason() says why; it throws
  // std::system_error only when the kernel has Landlock but refuses a rule.
  static LandlockRuleset prepare(const ConfineRules &rules);

  bool active() const { return static_cast<bool>(fd_); }
  const LandlockSupport &support() const { return support_; }
  const std::string &skipReason() const { return skipReason_; }
  // Paths named by the rules that did not exist (they get no rule, so nothing
  // beneath them is writable); for diagnostics.
  const std::vector<std::string> &missingPaths() const { return missing_; }

  // In the forked child: enforce on the calling thread and what it execs.
  // Requires no_new_privs. Returns 0, or the errno of landlock_restrict_self.
  // A no-op returning 0 when inactive. Async-signal-safe.
  int restrictSelf() const noexcept;

 private:
  LandlockSupport support_;
  UniqueFd fd_;
  std::string skipReason_;
  std::vector<std::string> missing_;
};

}  // namespace ccsandbox::confine
