// Reading a path argument out of the calling thread's memory, once.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace ccsandbox::confine {

// Copies the NUL-terminated string at `address` in `tid`'s memory. Returns 0,
// EFAULT (unreadable), ENAMETOOLONG (no NUL within PATH_MAX), or the errno of
// process_vm_readv (ESRCH when the thread is gone, EPERM without ptrace access).
int readChildString(pid_t tid, std::uint64_t address, std::string &out);

}  // namespace ccsandbox::confine
