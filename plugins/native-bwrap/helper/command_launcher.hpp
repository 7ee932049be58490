// Starting one command inside the sandbox, in the helper (pid 1).
//
// fork, then in the child: its own process group, default signal state, the
// caller's stdio, its working directory and environment, then exec. Whether
// exec happened is reported back over a close-on-exec socketpair, so "command
// not found" is an answer, not a guess.
//
// The confinement layer (Landlock, the seccomp filter) plugs in here:
// `beforeExec` runs in the child last, just before exec; `afterFork` runs in
// the helper as soon as the child exists, before waiting for its exec — the
// child's own execve is a supervised call, so the supervisor must already be
// serving the listener the child sends (over a channel of the hook's own).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace ccsandbox::bwrap {

struct LaunchSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;
  std::string cwd;
  int stdio[3] = {-1, -1, -1};
};

struct ConfinementHooks {
  // In the child, after everything else and before exec. Async-signal-safe.
  // Returns 0, or an errno value that stops the launch (reported as exit 126).
  std::function<int()> beforeExec;
  // In the helper, with the child's pid, right after fork.
  std::function<void(pid_t child)> afterFork;
  // In the helper, when the exec was refused (EACCES): given the absolute
  // path of the program the child tried, why the confinement refuses it, or
  // empty when it does not.
  std::function<std::string(const std::string &program)> whyExecDenied;
};

struct LaunchResult {
  pid_t pid = -1;     // > 0: the command runs as leader of process group `pid`
  int exitCode = 0;   // when pid <= 0: 127 (not found) or 126
  std::string error;  // when pid <= 0: why, for the user
};

LaunchResult launchCommand(const LaunchSpec &spec, const ConfinementHooks &hooks);

}  // namespace ccsandbox::bwrap
