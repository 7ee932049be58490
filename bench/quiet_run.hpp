// What the benches share: running a program with its stdio on /dev/null, and
// a scratch directory to run in (header-only; each bench is one program).
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

extern char **environ;

namespace ccsandbox::bench {

struct QuietRun {
  int status = -1;     // the exit status, 128+N for signal N; -1: not started
  long maxRssKiB = 0;  // wait4's peak RSS of the child and what it waited for
};

// Runs argv (looked up in PATH) with stdin, stdout and stderr on /dev/null.
inline QuietRun runQuiet(const std::vector<std::string> &argv) {
  std::vector<char *> cargv;
  for (auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  for (int fd = 0; fd < 3; ++fd) posix_spawn_file_actions_addopen(&fa, fd, "/dev/null", O_RDWR, 0);
  pid_t pid;
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  QuietRun out;
  if (rc != 0) return out;
  int status = 0;
  rusage ru{};
  if (::wait4(pid, &status, 0, &ru) != pid) return out;
  out.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.maxRssKiB = ru.ru_maxrss;
  return out;
}

// Makes a fresh directory in the temp dir and moves into it; "" on failure.
// A bench runs there so that the working directory it binds is empty.
inline std::string enterScratchDirectory() {
  std::string work = std::filesystem::temp_directory_path() / "ccsandbox-bench-XXXXXX";
  std::vector<char> buf(work.begin(), work.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()) || ::chdir(buf.data()) != 0) return "";
  return buf.data();
}

}  // namespace ccsandbox::bench
