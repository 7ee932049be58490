// Starting one command inside the sandbox, in the helper (pid 1).
//
// fork, then in the child: its own process group, default signal state, the
// caller's stdio, its working directory and environment, then exec. Whether
// exec happened is reported back over a close-on-exec socketpair, so "command
// not found" is an answer, not a guess.
//
// A spare child (startSpare) is the same child forked and confined before
// its command is known: the command then only crosses a socket.
//
// The confinement layer (Landlock, the seccomp filter) plugs in here:
// `beforeExec` runs in the child last, just before exec; `afterFork` runs in
// the helper as soon as the child exists, before waiting for its exec — the
// child's own execve is a supervised call, so the supervisor must already be
// serving the listener the child sends (over a channel of the hook's own).
#pragma once

#include "ccsandbox/unique_fd.hpp"

#include <sys/types.h>

#include <functional>
#include <map>
#include <optional>
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

// A child forked and confined ahead of its command: `beforeExec` applied and
// `afterFork` run (its supervisor serving) before any command is known, so
// that starting one costs no fork, no confinement and no supervisor's start.
// It waits, in a process group of its own, for the command; if `command` is
// closed instead, it exits.
struct SpareChild {
  pid_t pid = -1;
  UniqueFd command;  // the command goes here
  UniqueFd report;   // closes on exec, or carries why the command could not start
};

// nullopt when the spare cannot be made (no fd or process left): the caller
// launches the next command the ordinary way.
std::optional<SpareChild> startSpare(const ConfinementHooks &hooks);

// Runs `spec` in `spare`: the same result as launchCommand(), with `hooks`
// those the spare was started with (for whyExecDenied).
LaunchResult launchInSpare(SpareChild spare, const LaunchSpec &spec, const ConfinementHooks &hooks);

}  // namespace ccsandbox::bwrap
