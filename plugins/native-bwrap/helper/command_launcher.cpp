#include "command_launcher.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

extern char **environ;

namespace ccsandbox::bwrap {

namespace {

// What the child reports when it could not exec.
enum class Stage : int { chdir = 1, confine = 2, exec = 3, stdio = 4 };

struct ChildReport {
  Stage stage;
  int error;
};

[[noreturn]] void childFail(int channel, Stage stage, int error) {
  ChildReport r{stage, error};
  [[maybe_unused]] auto n = ::write(channel, &r, sizeof r);
  ::_exit(127);
}

// Where a bare command name may live, in the order execvp tries them: each
// directory of the command's own PATH (glibc's default when it has none).
std::vector<std::string> pathCandidates(const LaunchSpec &spec) {
  std::vector<std::string> out;
  const std::string &name = spec.argv.front();
  if (name.empty() || name.find('/') != std::string::npos) return out;
  auto it = spec.env.find("PATH");
  std::string path = it != spec.env.end() ? it->second : "/bin:/usr/bin";
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    out.push_back((dir.empty() ? "." : dir) + "/" + name);  // empty: the working directory
    start = end + 1;
  }
  return out;
}

// The absolute path of the program the child tried first: the command's path,
// or the first executable regular file among the candidates (the helper sees
// what the child saw, without the child's Landlock). Empty when none is found.
std::string programTried(const LaunchSpec &spec) {
  const std::filesystem::path cwd = spec.cwd.empty() ? "/" : spec.cwd;
  auto absolute = [&](const std::string &p) { return (cwd / p).lexically_normal().string(); };
  const std::string &name = spec.argv.front();
  if (name.find('/') != std::string::npos) return absolute(name);
  for (const auto &c : pathCandidates(spec)) {
    const std::string path = absolute(c);
    struct stat st {};
    if (::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) == 0 &&
        ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
      return path;
  }
  return {};
}

// Runs in the forked child of a multi-threaded helper (supervisor threads):
// only async-signal-safe calls plus the allocations prepared before fork.
[[noreturn]] void runChild(const LaunchSpec &spec, const ConfinementHooks &hooks, int channel,
                           char **argv, char **envp, char *const *candidates) {
  sigset_t none;
  sigemptyset(&none);
  for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
  // Move the caller's fds out of 0..2 first so the dup2s cannot clobber them.
  int moved[3];
  for (int i = 0; i < 3; ++i) {
    moved[i] = ::fcntl(spec.stdio[i], F_DUPFD_CLOEXEC, 10);
    if (moved[i] < 0) childFail(channel, Stage::stdio, errno);
  }
  for (int i = 0; i < 3; ++i)
    if (::dup2(moved[i], i) < 0) childFail(channel, Stage::stdio, errno);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) childFail(channel, Stage::chdir, errno);
  if (hooks.beforeExec)
    if (int e = hooks.beforeExec()) childFail(channel, Stage::confine, e);
  // Nothing of the helper's (bridge listeners, relays) reaches the command:
  // every fd past stdio is close-on-exec, the report channel included.
  ::syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
  // execvp searches the command's own PATH: environ is the command's now.
  environ = envp;
  // Under the supervisor every execve is a round trip to the helper, and
  // execvp tries one per PATH entry. Look first (access and stat stay in the
  // kernel) and exec the first executable file found; if that exec fails, the
  // full execvp search below keeps its exact semantics and errors.
  for (char *const *c = candidates; *c; ++c) {
    struct stat st {};
    if (::faccessat(AT_FDCWD, *c, X_OK, AT_EACCESS) != 0 || ::stat(*c, &st) != 0 ||
        !S_ISREG(st.st_mode))
      continue;
    ::execvp(*c, argv);  // a path: no search; a script without #! still runs under sh
    break;
  }
  ::execvp(argv[0], argv);
  childFail(channel, Stage::exec, errno);
}

}  // namespace

LaunchResult launchCommand(const LaunchSpec &spec, const ConfinementHooks &hooks) {
  LaunchResult result;
  if (spec.argv.empty()) {
    result.exitCode = 127;
    result.error = "no command given";
    return result;
  }
  std::vector<std::string> envStrings;
  for (const auto &[k, v] : spec.env) envStrings.push_back(k + "=" + v);
  std::vector<char *> argv, envp;
  for (const auto &a : spec.argv) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  for (auto &e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> candidateStrings = pathCandidates(spec);
  std::vector<char *> candidates;
  for (auto &c : candidateStrings) candidates.push_back(c.data());
  candidates.push_back(nullptr);

  int channel[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) {
    result.exitCode = 126;
    result.error = std::string("cannot start the command: socketpair: ") + std::strerror(errno);
    return result;
  }
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(channel[0]);
    runChild(spec, hooks, channel[1], argv.data(), envp.data(), candidates.data());
  }
  ::close(channel[1]);
  if (pid < 0) {
    ::close(channel[0]);
    result.exitCode = 126;
    result.error = std::string("cannot start the command: fork: ") + std::strerror(errno);
    return result;
  }
  // Also set from here: a signal sent right after we report the start must
  // reach the group even if the child has not run setpgid yet.
  ::setpgid(pid, pid);
  if (hooks.afterFork) hooks.afterFork(pid);

  // Read until exec closes the channel: either nothing (exec happened) or a
  // failure report.
  ChildReport report{};
  std::size_t got = 0;
  while (got < sizeof report) {
    ssize_t n = ::read(channel[0], reinterpret_cast<char *>(&report) + got, sizeof report - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(channel[0]);
  if (got < sizeof report) {
    result.pid = pid;
    return result;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  const std::string name = spec.argv[0];
  switch (report.stage) {
    case Stage::exec:
      result.exitCode = report.error == ENOENT ? 127 : 126;
      result.error =
          name + (report.error == ENOENT ? std::string(": command not found")
                                         : ": " + std::string(std::strerror(report.error)));
      if (report.error == EACCES && hooks.whyExecDenied)
        if (auto why = hooks.whyExecDenied(programTried(spec)); !why.empty())
          result.error += " (" + why + ")";
      break;
    case Stage::chdir:
      result.exitCode = 126;
      result.error = "cannot change to the working directory " + spec.cwd +
                     " inside the sandbox: " + std::strerror(report.error);
      break;
    case Stage::confine:
      result.exitCode = 126;
      result.error = name + ": cannot confine the command: " + std::strerror(report.error);
      break;
    case Stage::stdio:
      result.exitCode = 126;
      result.error = name + ": cannot set up its standard streams: " + std::strerror(report.error);
      break;
  }
  return result;
}

}  // namespace ccsandbox::bwrap
