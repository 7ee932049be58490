#include "command_launcher.hpp"

#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
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

// The child's own state, first thing after fork: default signal handling,
// nothing blocked, a process group of its own.
void childState() {
  sigset_t none;
  sigemptyset(&none);
  for (int s = 1; s < NSIG; ++s) ::signal(s, SIG_DFL);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::setpgid(0, 0);
}

// The caller's stdio as 0..2: moved out of 0..2 first so the dup2s cannot
// clobber them.
void childStdio(int channel, const int stdio[3]) {
  int moved[3];
  for (int i = 0; i < 3; ++i) {
    moved[i] = ::fcntl(stdio[i], F_DUPFD_CLOEXEC, 10);
    if (moved[i] < 0) childFail(channel, Stage::stdio, errno);
  }
  for (int i = 0; i < 3; ++i)
    if (::dup2(moved[i], i) < 0) childFail(channel, Stage::stdio, errno);
}

[[noreturn]] void childExec(int channel, char **argv, char **envp, char *const *candidates) {
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

// Runs in the forked child of a multi-threaded helper (supervisor threads):
// only async-signal-safe calls plus the allocations prepared before fork.
[[noreturn]] void runChild(const LaunchSpec &spec, const ConfinementHooks &hooks, int channel,
                           char **argv, char **envp, char *const *candidates) {
  childState();
  childStdio(channel, spec.stdio);
  if (!spec.cwd.empty() && ::chdir(spec.cwd.c_str()) != 0) childFail(channel, Stage::chdir, errno);
  if (hooks.beforeExec)
    if (int e = hooks.beforeExec()) childFail(channel, Stage::confine, e);
  childExec(channel, argv, envp, candidates);
}

// What the helper sends a spare child: this header (the caller's stdio
// attached to it), then the strings, each NUL-terminated: the working
// directory (empty: stay), argv, the environment, the PATH candidates.
struct SpareCommandHeader {
  std::uint64_t bytes;
  std::uint32_t argc, envc, candidates;
};

// Closes every fd past stdio but `a` and `b`.
void closeAllBut(int a, int b) {
  const unsigned lo = static_cast<unsigned>(std::min(a, b)),
                 hi = static_cast<unsigned>(std::max(a, b));
  if (lo > 3) ::syscall(SYS_close_range, 3U, lo - 1, 0U);
  if (hi > lo + 1) ::syscall(SYS_close_range, lo + 1, hi - 1, 0U);
  ::syscall(SYS_close_range, hi + 1, ~0U, 0U);
}

bool readFull(int fd, void *to, std::size_t size) {
  auto *p = static_cast<char *>(to);
  while (size > 0) {
    const ssize_t n = ::read(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// In the spare child, confined already: waits for its command, builds its
// argv and environment in memory of its own (mmap: no allocator after fork),
// and runs it. Ends the child if the helper closes the channel instead.
[[noreturn]] void runSpare(int command, int channel) {
  SpareCommandHeader h{};
  int stdio[3] = {-1, -1, -1};
  iovec iov{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof stdio)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(command, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof h)) ::_exit(0);  // not needed after all
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof stdio))
    childFail(channel, Stage::stdio, EBADMSG);
  std::memcpy(stdio, CMSG_DATA(c), sizeof stdio);
  const std::size_t pointers = std::size_t{h.argc} + h.envc + h.candidates + 3;
  const std::size_t text = (h.bytes + alignof(char *) - 1) / alignof(char *) * alignof(char *);
  void *memory = ::mmap(nullptr, text + pointers * sizeof(char *), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) childFail(channel, Stage::exec, errno);
  char *strings = static_cast<char *>(memory);
  if (h.bytes == 0 || !readFull(command, strings, h.bytes) || strings[h.bytes - 1] != '\0')
    childFail(channel, Stage::exec, EBADMSG);
  auto **table = reinterpret_cast<char **>(strings + text);
  char **argv = table, **envp = argv + h.argc + 1, **candidates = envp + h.envc + 1;
  char *at = strings, *end = strings + h.bytes;
  auto next = [&]() -> char * {
    if (at >= end) childFail(channel, Stage::exec, EBADMSG);
    char *s = at;
    at += std::strlen(at) + 1;
    return s;
  };
  const char *cwd = next();
  for (std::uint32_t i = 0; i < h.argc; ++i) argv[i] = next();
  argv[h.argc] = nullptr;
  for (std::uint32_t i = 0; i < h.envc; ++i) envp[i] = next();
  envp[h.envc] = nullptr;
  for (std::uint32_t i = 0; i < h.candidates; ++i) candidates[i] = next();
  candidates[h.candidates] = nullptr;
  if (h.argc == 0) childFail(channel, Stage::exec, EBADMSG);
  childStdio(channel, stdio);
  if (*cwd && ::chdir(cwd) != 0) childFail(channel, Stage::chdir, errno);
  childExec(channel, argv, envp, candidates);
}

// Reads the child's report: nothing before the channel closes on exec, or the
// stage that failed and its errno. Reaps a child that failed.
LaunchResult awaitExec(pid_t pid, int channel, const LaunchSpec &spec,
                       const ConfinementHooks &hooks) {
  LaunchResult result;
  ChildReport report{};
  if (!readFull(channel, &report, sizeof report)) {
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
  UniqueFd report(channel[0]);
  return awaitExec(pid, report.get(), spec, hooks);
}

std::optional<SpareChild> startSpare(const ConfinementHooks &hooks) {
  int command[2], channel[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, command) != 0) return std::nullopt;
  UniqueFd commandOurs(command[0]), commandTheirs(command[1]);
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, channel) != 0) return std::nullopt;
  UniqueFd reportOurs(channel[0]), reportTheirs(channel[1]);
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Our ends stay ours: the child must see the helper close its own.
    commandOurs.reset();
    reportOurs.reset();
    // It may wait long: nothing of the helper's stays in reach meanwhile. No
    // command of the same uid may read its memory or take its fds (the exec
    // makes the command dumpable again, as any program), and it keeps none of
    // the helper's fds (other commands' seccomp listeners among them) beyond
    // its stdio and the two it needs.
    ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    childState();
    if (hooks.beforeExec)
      if (int e = hooks.beforeExec()) childFail(reportTheirs.get(), Stage::confine, e);
    closeAllBut(commandTheirs.get(), reportTheirs.get());
    runSpare(commandTheirs.get(), reportTheirs.get());
  }
  if (pid < 0) return std::nullopt;
  commandTheirs.reset();
  reportTheirs.reset();
  ::setpgid(pid, pid);
  if (hooks.afterFork) hooks.afterFork(pid);
  SpareChild spare;
  spare.pid = pid;
  spare.command = std::move(commandOurs);
  spare.report = std::move(reportOurs);
  return spare;
}

LaunchResult launchInSpare(SpareChild spare, const LaunchSpec &spec,
                           const ConfinementHooks &hooks) {
  if (spec.argv.empty()) {
    spare.command.reset();  // the spare ends
    return LaunchResult{-1, 127, "no command given"};
  }
  // Each as the C string launchCommand() would pass (up to a NUL inside).
  std::string strings;
  auto add = [&](const std::string &text) {
    strings += text.c_str();
    strings += '\0';
  };
  add(spec.cwd);
  for (const auto &a : spec.argv) add(a);
  for (const auto &[k, v] : spec.env) add(k + "=" + v);
  const auto candidates = pathCandidates(spec);
  for (const auto &c : candidates) add(c);
  SpareCommandHeader h{strings.size(), static_cast<std::uint32_t>(spec.argv.size()),
                       static_cast<std::uint32_t>(spec.env.size()),
                       static_cast<std::uint32_t>(candidates.size())};
  iovec iov{&h, sizeof h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof spec.stdio)] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof spec.stdio);
  std::memcpy(CMSG_DATA(c), spec.stdio, sizeof spec.stdio);
  // A spare that dies between the caller's check (it had not ended) and this
  // send reads as a command that ended at once: its exit is reported like any
  // command's (the caller registers the pid first).
  ssize_t n;
  do n = ::sendmsg(spare.command.get(), &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  for (std::size_t at = 0; n == static_cast<ssize_t>(sizeof h) && at < strings.size();) {
    const ssize_t w =
        ::send(spare.command.get(), strings.data() + at, strings.size() - at, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    at += static_cast<std::size_t>(w);
  }
  spare.command.reset();
  return awaitExec(spare.pid, spare.report.get(), spec, hooks);
}

}  // namespace ccsandbox::bwrap
