#include "ccsandbox/confine/seccomp_filter.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

namespace ccsandbox::confine {
namespace {

#ifndef __x86_64__
#error "the supervised seccomp filter is written for x86_64"
#endif

constexpr std::uint32_t kX32Bit = 0x40000000U;
// Write access, create, truncate, or an anonymous file (O_TMPFILE without its
// O_DIRECTORY bit): the open flags that may write or create a name.
constexpr std::uint32_t kWritingOpenFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | (020000000U);
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

constexpr std::uint32_t argLow(int i) {
  return static_cast<std::uint32_t>(offsetof(seccomp_data, args) + 8 * i);
}

// A classic-BPF assembler with forward labels, enough for one linear table.
class Program {
 public:
  void load(std::uint32_t offset) { code_.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offset)); }
  void ret(std::uint32_t value) { code_.push_back(BPF_STMT(BPF_RET | BPF_K, value)); }
  // if (A == k) goto label;  (falls through otherwise)
  void jumpIfEqual(std::uint32_t k, const std::string &label) { jump(BPF_JEQ, k, label); }
  // if (A & k) goto label;
  void jumpIfAnyBit(std::uint32_t k, const std::string &label) { jump(BPF_JSET, k, label); }
  // if (A >= k) goto label;
  void jumpIfAtLeast(std::uint32_t k, const std::string &label) { jump(BPF_JGE, k, label); }

  // Jumps to the label `table` gives the value in A, else returns `otherwise`:
  // a binary search, not a chain. The kernel runs the program once per
  // syscall number when the filter is installed (to learn which calls it may
  // allow without running it), so a chain of N tests costs every command
  // N times the table at its start; the search costs log N.
  void dispatch(std::vector<std::pair<std::uint32_t, std::string>> table, std::uint32_t otherwise) {
    std::sort(table.begin(), table.end());
    for (std::size_t i = 1; i < table.size(); ++i)
      if (table[i].first == table[i - 1].first) throw std::logic_error("bpf: a value twice");
    search(table, 0, table.size(), otherwise);
  }
  void label(const std::string &name) { labels_[name] = code_.size(); }

  std::vector<sock_filter> finish() {
    for (const auto &[at, name] : fixups_) {
      const auto it = labels_.find(name);
      if (it == labels_.end() || it->second <= at) throw std::logic_error("bpf: bad label " + name);
      const std::size_t distance = it->second - at - 1;
      if (distance > 255) throw std::logic_error("bpf: jump too far to " + name);
      code_[at].jt = static_cast<std::uint8_t>(distance);
    }
    return std::move(code_);
  }

 private:
  void jump(std::uint16_t op, std::uint32_t k, const std::string &label) {
    fixups_.emplace_back(code_.size(), label);
    code_.push_back(BPF_JUMP(BPF_JMP | op | BPF_K, k, 0, 0));
  }
  void search(const std::vector<std::pair<std::uint32_t, std::string>> &table, std::size_t from,
              std::size_t to, std::uint32_t otherwise) {
    if (to - from <= 4) {
      for (std::size_t i = from; i < to; ++i) jumpIfEqual(table[i].first, table[i].second);
      ret(otherwise);
      return;
    }
    const std::size_t mid = from + (to - from) / 2;
    const std::string upper = "search-" + std::to_string(++searches_);
    jumpIfAtLeast(table[mid].first, upper);
    search(table, from, mid, otherwise);
    label(upper);
    search(table, mid, to, otherwise);
  }

  std::vector<sock_filter> code_;
  std::size_t searches_ = 0;
  std::map<std::string, std::size_t> labels_;
  std::vector<std::pair<std::size_t, std::string>> fixups_;
};

}  // namespace

SupervisedFilter::SupervisedFilter() {
  Program p;
  p.load(offsetof(seccomp_data, arch));
  p.jumpIfEqual(AUDIT_ARCH_X86_64, "native");
  p.ret(SECCOMP_RET_KILL_PROCESS);
  p.label("native");
  p.load(offsetof(seccomp_data, nr));
  p.jumpIfAnyBit(kX32Bit, "kill");

  std::vector<std::pair<std::uint32_t, std::string>> labelled;
  for (const auto &[nr, rule] : table()) {
    const char *label = "notify";
    switch (rule) {
      case Rule::notify: label = "notify"; break;
      case Rule::enosys: label = "enosys"; break;
      case Rule::eperm: label = "eperm"; break;
      case Rule::openFlags2: label = "openat"; break;
      case Rule::openFlags1: label = "open"; break;
      case Rule::newUser0: label = "newuser-arg0"; break;
      case Rule::clone: label = "clone"; break;
      case Rule::seccompMode: label = "seccomp"; break;
    }
    labelled.emplace_back(static_cast<std::uint32_t>(nr), label);
  }
  p.dispatch(std::move(labelled), SECCOMP_RET_ALLOW);

  p.label("openat");
  p.load(argLow(2));
  p.jumpIfAnyBit(kWritingOpenFlags, "notify");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("open");
  p.load(argLow(1));
  p.jumpIfAnyBit(kWritingOpenFlags, "notify");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("newuser-arg0");
  p.load(argLow(0));
  p.jumpIfAnyBit(CLONE_NEWUSER, "eperm");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("clone");
  p.load(argLow(0));
  p.jumpIfAnyBit(CLONE_NEWUSER, "eperm");
  p.jumpIfAnyBit(CLONE_THREAD, "allow");
  p.jumpIfAnyBit(CLONE_FS, "notify");  // two processes sharing one umask
  p.ret(SECCOMP_RET_ALLOW);
  p.label("seccomp");
  p.load(argLow(0));
  p.jumpIfEqual(SECCOMP_SET_MODE_FILTER, "seccomp-filter");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("seccomp-filter");
  p.load(argLow(1));
  p.jumpIfAnyBit(SECCOMP_FILTER_FLAG_NEW_LISTENER, "eperm");
  p.ret(SECCOMP_RET_ALLOW);

  p.label("allow");
  p.ret(SECCOMP_RET_ALLOW);
  p.label("notify");
  p.ret(SECCOMP_RET_USER_NOTIF);
  p.label("enosys");
  p.ret(SECCOMP_RET_ERRNO | ENOSYS);
  p.label("eperm");
  p.ret(SECCOMP_RET_ERRNO | EPERM);
  p.label("kill");
  p.ret(SECCOMP_RET_KILL_PROCESS);
  program_ = p.finish();
}

const std::vector<std::pair<int, SupervisedFilter::Rule>> &SupervisedFilter::table() {
  static const std::vector<std::pair<int, Rule>> rules = [] {
    std::vector<std::pair<int, Rule>> t;
    auto add = [&](std::initializer_list<int> nrs, Rule rule) {
      for (int nr : nrs) t.emplace_back(nr, rule);
    };
    add({__NR_openat}, Rule::openFlags2);
    add({__NR_open}, Rule::openFlags1);
    add({__NR_creat, __NR_mkdir, __NR_mkdirat, __NR_mknod, __NR_mknodat, __NR_unlink, __NR_unlinkat,
         __NR_rmdir, __NR_truncate, __NR_rename, __NR_renameat, __NR_renameat2, __NR_link,
         __NR_linkat, __NR_symlink, __NR_symlinkat},
        Rule::notify);
    add({__NR_openat2, __NR_clone3}, Rule::enosys);
    add({__NR_io_uring_setup,
         __NR_io_uring_enter,
         __NR_io_uring_register,
         __NR_ptrace,
         __NR_process_vm_writev,
         __NR_open_by_handle_at,
         __NR_kexec_load,
         __NR_kexec_file_load,
         __NR_bpf,
         __NR_userfaultfd,
         __NR_mount,
         __NR_umount2,
         __NR_pivot_root,
         __NR_chroot,
         __NR_move_mount,
         __NR_open_tree,
         __NR_fsopen,
         __NR_fsconfig,
         __NR_fsmount,
         __NR_fspick,
         __NR_mount_setattr,
         __NR_setns},
        Rule::eperm);
    // Calls that change what the supervisor caches about a thread (umask,
    // credentials, a new program): they carry no path and are answered CONTINUE.
    add({__NR_umask, __NR_setuid, __NR_setgid, __NR_setreuid, __NR_setregid, __NR_setgroups,
         __NR_setresuid, __NR_setresgid, __NR_setfsuid, __NR_setfsgid, __NR_capset, __NR_execve,
         __NR_execveat},
        Rule::notify);
    add({__NR_unshare}, Rule::newUser0);
    add({__NR_clone}, Rule::clone);
    add({__NR_seccomp}, Rule::seccompMode);
    return t;
  }();
  return rules;
}

int SupervisedFilter::install() const noexcept {
  sock_fprog prog{static_cast<unsigned short>(program_.size()),
                  const_cast<sock_filter *>(program_.data())};
  long fd =
      ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER,
                SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
  if (fd < 0 && errno == EINVAL)  // before 5.19: no killable wait, still correct for the rest
    fd = ::syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
  return fd < 0 ? -errno : static_cast<int>(fd);
}

}  // namespace ccsandbox::confine
