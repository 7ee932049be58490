// The seccomp filter installed on each command (x86_64 only).
//
//  - Calls that create, replace, remove or write a name go to the supervisor
//    (SECCOMP_RET_USER_NOTIF): open/openat only when the flags ask for write,
//    create, truncate or O_TMPFILE (tested in the BPF program, so read-only
//    opens never leave the kernel), creat, mkdir(at), mknod(at), unlink(at),
//    rmdir, truncate, rename/renameat/renameat2, link(at), symlink(at).
//  - umask, the set*id family, setgroups, capset, execve(at) and a clone that
//    shares fs attributes between processes also stop there, only so that the
//    supervisor can keep each thread's umask and credentials across calls; it
//    answers them with CONTINUE (they carry no path to judge).
//  - openat2 and clone3 fail with ENOSYS (their arguments are behind a pointer
//    the filter cannot read; libc falls back to openat and clone).
//  - Side doors fail with EPERM: io_uring_*, ptrace, process_vm_writev,
//    open_by_handle_at, kexec_*, bpf, userfaultfd, the mount family, setns,
//    unshare/clone with CLONE_NEWUSER, and a nested seccomp listener (whose
//    CONTINUE would otherwise win over ours).
//  - Any other architecture (i386 via int 0x80) and the x32 ABI kill the
//    process: their syscall numbers would slip past this table.
//
// Raw classic BPF rather than libseccomp: the program has to be built before
// fork (the child may only make async-signal-safe system calls), libseccomp
// 2.5 cannot export a program to memory, and the order of the checks (arch,
// x32, then the table) is part of the security argument, so it is written out.
#pragma once

#include <linux/filter.h>

#include <vector>

namespace ccsandbox::confine {

class SupervisedFilter {
 public:
  SupervisedFilter();

  // In the forked child (after no_new_privs): installs the filter and returns
  // the listener fd, or -errno. Uses SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
  // where the kernel has it (5.19), so that once the supervisor has a call,
  // a signal cannot make the child restart it behind the supervisor's back.
  // Async-signal-safe.
  int install() const noexcept;

  const std::vector<sock_filter> &program() const { return program_; }

  // What the program does with each syscall number it names (the list above);
  // every number not in it is allowed. The program is built from this table
  // alone, as a binary search over it.
  enum class Rule {
    notify,       // the supervisor decides (or keeps its cache and answers CONTINUE)
    enosys,       // fails with ENOSYS
    eperm,        // fails with EPERM
    openFlags2,   // openat: notify when argument 2 may write or create, else allow
    openFlags1,   // open: the same with argument 1
    newUser0,     // unshare: EPERM with CLONE_NEWUSER in argument 0, else allow
    clone,        // EPERM with CLONE_NEWUSER; allow a thread; notify a shared fs
    seccompMode,  // EPERM for a filter with a listener of its own, else allow
  };
  static const std::vector<std::pair<int, Rule>> &table();

 private:
  std::vector<sock_filter> program_;
};

}  // namespace ccsandbox::confine
