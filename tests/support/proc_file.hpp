// Reading /proc files of processes that may exit meanwhile.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <string>

namespace ccsandbox::test {

// What could be read of `path`, or nothing. A process that exits while its
// file is read makes read() fail with ESRCH, which std::ifstream read through
// istreambuf_iterator turns into an exception: a test scanning /proc must not
// fail because some other process ended.
inline std::string readProcFile(const std::string &path) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return out;
}

}  // namespace ccsandbox::test
