// One bubblewrap process on the host, owned: destroying the object kills and
// reaps it, so no sandbox outlives its owner by accident.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace ccsandbox::bwrap {

class BwrapProcess {
 public:
  // Starts `argv` (argv[0] is the path) with stdin from /dev/null, stdout and
  // stderr on `outputFd`, `passFd` (if >= 0) as fd 3 and `argsFd` (if >= 0)
  // as fd 4 in the child; every other fd of ours is close-on-exec. Default
  // signal state. Throws std::system_error when the program cannot be started.
  BwrapProcess(const std::vector<std::string> &argv, int outputFd, int passFd, int argsFd = -1);
  ~BwrapProcess();
  BwrapProcess(BwrapProcess &&other) noexcept;
  BwrapProcess(const BwrapProcess &) = delete;
  BwrapProcess &operator=(const BwrapProcess &) = delete;
  BwrapProcess &operator=(BwrapProcess &&) = delete;

  pid_t pid() const { return pid_; }
  // Waits up to `limit` for it to end; returns its wait status, or nullopt.
  std::optional<int> waitFor(std::chrono::milliseconds limit);
  // SIGKILL and reap; returns the wait status. Idempotent.
  int kill();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
};

// The fd number the helper finds its control channel at.
inline constexpr int kPassedFd = 3;
// The fd number bwrap reads the rest of its arguments from (`--args 4`).
inline constexpr int kArgsFd = 4;

}  // namespace ccsandbox::bwrap
