// A seccomp notification decoded into the call it stands for (x86_64 numbers).
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <cstdint>

namespace ccsandbox::confine {

enum class CallKind { open, mkdir, mknod, unlink, truncate, rename, link, symlink };

struct SupervisedCall {
  CallKind kind = CallKind::open;
  int dirfd = -100;              // AT_FDCWD; the (old) path's directory
  std::uint64_t path = 0;        // address of the (old) path
  int newDirfd = -100;           // rename, link, symlink: the new name's directory
  std::uint64_t newPath = 0;     // rename, link, symlink: address of the new name
  std::uint64_t linkTarget = 0;  // symlink: address of the link's content
  int flags = 0;                 // open flags, unlinkat/linkat/renameat2 flags
  mode_t mode = 0;
  dev_t device = 0;
  off_t length = 0;
};

// False for a number the filter never sends to the supervisor.
bool decodeSupervisedCall(const seccomp_data &data, SupervisedCall &out);

// The violation action for each kind ("file-write-create", …); open picks its
// own (create, data or truncate).
const char *actionOf(CallKind kind);

}  // namespace ccsandbox::confine
