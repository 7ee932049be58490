// Starting one command inside the sandbox, in the helper (pid 1).
//
// fork, then in the child: its own process group, default signal state, the
// caller's stdio, its working directory and environment, then exec. Whether
// exec happened is reported back over a close-on-exec socketpair, so "command
// not found" is an answer, not a guess.
//
// The confinement layer of the next issue plugs in here: `beforeExec` runs in
// the child last, just before exec (seccomp filter, Landlock); a listener fd
// the child sends back with SCM_RIGHTS over the same socketpair is handed to
// `superviseListener` in the helper.
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
  // In the child, after everything else and before exec. Returns 0, or an
  // errno value that stops the launch (reported as exit 126). May set
  // *listenerFd to a seccomp listener the helper should supervise.
  std::function<int(int *listenerFd)> beforeExec;
  // In the helper, with the listener the child created (ownership passes).
  std::function<void(pid_t child, int listenerFd)> superviseListener;
};

struct LaunchResult {
  pid_t pid = -1;     // > 0: the command runs as leader of process group `pid`
  int exitCode = 0;   // when pid <= 0: 127 (not found) or 126
  std::string error;  // when pid <= 0: why, for the user
};

LaunchResult launchCommand(const LaunchSpec &spec, const ConfinementHooks &hooks);

}  // namespace ccsandbox::bwrap
