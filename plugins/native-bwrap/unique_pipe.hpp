// A pipe whose ends close with the object; the read end collects a child's
// messages (bwrap reports its errors on stderr).
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <system_error>

namespace ccsandbox::bwrap {

class UniquePipe {
 public:
  UniquePipe() {
    if (::pipe2(fds_, O_CLOEXEC) != 0)
      throw std::system_error(errno, std::generic_category(), "pipe2");
  }
  ~UniquePipe() {
    closeRead();
    closeWrite();
  }
  UniquePipe(const UniquePipe &) = delete;
  UniquePipe &operator=(const UniquePipe &) = delete;

  int read() const { return fds_[0]; }
  int write() const { return fds_[1]; }
  void closeRead() { closeEnd(0); }
  void closeWrite() { closeEnd(1); }
  // Hands the read end over (the caller closes it).
  int releaseRead() {
    int fd = fds_[0];
    fds_[0] = -1;
    return fd;
  }

  // Reads until every writer closed or `limit` passed.
  std::string readAll(std::chrono::milliseconds limit) { return readAllFrom(fds_[0], limit); }

  // The same for any read end.
  static std::string readAllFrom(int fd, std::chrono::milliseconds limit) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + limit;
    char buf[4096];
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) break;
      pollfd p{fd, POLLIN, 0};
      int rc = ::poll(&p, 1, static_cast<int>(left.count()));
      if (rc < 0 && errno == EINTR) continue;
      if (rc <= 0) break;
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

 private:
  void closeEnd(int i) {
    if (fds_[i] >= 0) ::close(fds_[i]);
    fds_[i] = -1;
  }
  int fds_[2] = {-1, -1};
};

}  // namespace ccsandbox::bwrap
