#include "bwrap_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace ccsandbox::bwrap {

BwrapProcess::BwrapProcess(const std::vector<std::string> &argv, int outputFd, int passFd,
                           int argsFd) {
  std::vector<char *> cargv;
  for (const auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  // bwrap gets an empty environment: --clearenv/--setenv decide the inside one.
  char *envp[] = {nullptr};

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, outputFd, 1);
  posix_spawn_file_actions_adddup2(&actions, outputFd, 2);
  if (passFd >= 0) {
    // dup2 onto another number clears close-on-exec; onto itself it would not.
    if (passFd == kPassedFd) throw std::logic_error("pass fd must not already be fd 3");
    posix_spawn_file_actions_adddup2(&actions, passFd, kPassedFd);
  }
  if (argsFd >= 0) {
    if (argsFd == kArgsFd || argsFd == kPassedFd)
      throw std::logic_error("args fd must not already be fd 3 or 4");
    posix_spawn_file_actions_adddup2(&actions, argsFd, kArgsFd);
  }
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setsigmask(&attr, &none);
  // A process group of its own: Ctrl-C at a terminal signals the caller's
  // foreground group, and bubblewrap in it would die of SIGINT and take the
  // whole sandbox along; the caller forwards the signal to the command instead.
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  int rc = posix_spawn(&pid_, cargv[0], &actions, &attr, cargv.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    pid_ = -1;
    throw std::system_error(rc, std::generic_category(), "cannot start " + argv[0]);
  }
}

BwrapProcess::BwrapProcess(BwrapProcess &&other) noexcept
    : pid_(other.pid_), status_(other.status_) {
  other.pid_ = -1;
}

BwrapProcess::~BwrapProcess() {
  if (pid_ > 0) kill();
}

std::optional<int> BwrapProcess::waitFor(std::chrono::milliseconds limit) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  auto deadline = std::chrono::steady_clock::now() + limit;
  // A pidfd wakes us the moment it ends; polling is the fallback for old kernels.
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0));
  if (pidfd >= 0) {
    pollfd p{pidfd, POLLIN, 0};
    int rc;
    do {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      rc = ::poll(&p, 1, static_cast<int>(std::max<long long>(0, left.count())));
    } while (rc < 0 && errno == EINTR);
    ::close(pidfd);
  }
  auto pause = std::chrono::microseconds(200);
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      status_ = status;
      return status_;
    }
    if (r < 0 && errno != EINTR) {
      status_ = -1;
      return status_;
    }
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(20));
  }
}

int BwrapProcess::kill() {
  if (status_) return *status_;
  if (pid_ <= 0) return -1;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  return status;
}

}  // namespace ccsandbox::bwrap
