#include "child_memory.hpp"

#include <linux/limits.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace ccsandbox::confine {

int readChildString(pid_t tid, std::uint64_t address, std::string &out) {
  static const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  out.clear();
  char buf[PATH_MAX];
  std::size_t have = 0;
  // Chunks end at page boundaries, so a string that ends just before an
  // unmapped page is still read in full; the copy is the only read.
  while (have < sizeof buf) {
    const std::uint64_t at = address + have;
    std::size_t want = static_cast<std::size_t>(page - (at % page));
    if (want > sizeof buf - have) want = sizeof buf - have;
    iovec local{buf + have, want};
    iovec remote{reinterpret_cast<void *>(at), want};
    const ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n <= 0) return n == 0 || errno == EFAULT ? EFAULT : errno;
    if (const void *nul = std::memchr(buf + have, '\0', static_cast<std::size_t>(n))) {
      out.assign(buf, static_cast<std::size_t>(static_cast<const char *>(nul) - buf));
      return 0;
    }
    have += static_cast<std::size_t>(n);
  }
  return ENAMETOOLONG;
}

}  // namespace ccsandbox::confine
