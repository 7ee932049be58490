#include "supervised_call.hpp"

#include <fcntl.h>
#include <sys/syscall.h>

namespace ccsandbox::confine {

bool decodeSupervisedCall(const seccomp_data &d, SupervisedCall &c) {
  const auto *a = d.args;
  auto fd = [](std::uint64_t v) { return static_cast<int>(static_cast<std::uint32_t>(v)); };
  auto i32 = [](std::uint64_t v) { return static_cast<int>(static_cast<std::uint32_t>(v)); };
  c = SupervisedCall{};
  switch (d.nr) {
    case __NR_open: c.path = a[0], c.flags = i32(a[1]), c.mode = static_cast<mode_t>(a[2]); break;
    case __NR_openat:
      c.dirfd = fd(a[0]), c.path = a[1], c.flags = i32(a[2]), c.mode = static_cast<mode_t>(a[3]);
      break;
    case __NR_creat:
      c.path = a[0], c.flags = O_CREAT | O_WRONLY | O_TRUNC, c.mode = static_cast<mode_t>(a[1]);
      break;
    case __NR_mkdir:
      c.kind = CallKind::mkdir, c.path = a[0], c.mode = static_cast<mode_t>(a[1]);
      break;
    case __NR_mkdirat:
      c.kind = CallKind::mkdir, c.dirfd = fd(a[0]), c.path = a[1],
      c.mode = static_cast<mode_t>(a[2]);
      break;
    case __NR_mknod:
      c.kind = CallKind::mknod, c.path = a[0], c.mode = static_cast<mode_t>(a[1]),
      c.device = static_cast<dev_t>(static_cast<std::uint32_t>(a[2]));
      break;
    case __NR_mknodat:
      c.kind = CallKind::mknod, c.dirfd = fd(a[0]), c.path = a[1],
      c.mode = static_cast<mode_t>(a[2]),
      c.device = static_cast<dev_t>(static_cast<std::uint32_t>(a[3]));
      break;
    case __NR_unlink: c.kind = CallKind::unlink, c.path = a[0]; break;
    case __NR_rmdir: c.kind = CallKind::unlink, c.path = a[0], c.flags = AT_REMOVEDIR; break;
    case __NR_unlinkat:
      c.kind = CallKind::unlink, c.dirfd = fd(a[0]), c.path = a[1], c.flags = i32(a[2]);
      break;
    case __NR_truncate:
      c.kind = CallKind::truncate, c.path = a[0], c.length = static_cast<off_t>(a[1]);
      break;
    case __NR_rename: c.kind = CallKind::rename, c.path = a[0], c.newPath = a[1]; break;
    case __NR_renameat:
    case __NR_renameat2:
      c.kind = CallKind::rename, c.dirfd = fd(a[0]), c.path = a[1], c.newDirfd = fd(a[2]),
      c.newPath = a[3], c.flags = d.nr == __NR_renameat2 ? i32(a[4]) : 0;
      break;
    case __NR_link: c.kind = CallKind::link, c.path = a[0], c.newPath = a[1]; break;
    case __NR_linkat:
      c.kind = CallKind::link, c.dirfd = fd(a[0]), c.path = a[1], c.newDirfd = fd(a[2]),
      c.newPath = a[3], c.flags = i32(a[4]);
      break;
    case __NR_symlink: c.kind = CallKind::symlink, c.linkTarget = a[0], c.newPath = a[1]; break;
    case __NR_symlinkat:
      c.kind = CallKind::symlink, c.linkTarget = a[0], c.newDirfd = fd(a[1]), c.newPath = a[2];
      break;
    default: return false;
  }
  return true;
}

const char *actionOf(CallKind kind) {
  switch (kind) {
    case CallKind::open: return "file-write-create";
    case CallKind::mkdir: return "file-write-mkdir";
    case CallKind::mknod: return "file-write-mknod";
    case CallKind::unlink: return "file-write-unlink";
    case CallKind::truncate: return "file-write-truncate";
    case CallKind::rename: return "file-write-rename";
    case CallKind::link: return "file-write-link";
    case CallKind::symlink: return "file-write-symlink";
  }
  return "file-write";
}

}  // namespace ccsandbox::confine
