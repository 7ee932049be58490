/* Tries each call the confinement must refuse and prints "name ERRNO" (or
 * "name OK" when the call went through). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static void report(const char *name, long r) {
  printf("%s %s\n", name, r < 0 ? strerrorname_np(errno) : "OK");
}

int main(void) {
  char buf[8];
  struct io_uring_params_stub {
    char pad[120];
  } params;
  memset(&params, 0, sizeof params);
  report("io_uring_setup", syscall(__NR_io_uring_setup, 1, &params));
  report("ptrace", syscall(__NR_ptrace, PTRACE_ATTACH, getppid(), 0, 0));
  struct iovec l = {buf, 1}, r = {buf, 1};
  report("process_vm_writev", syscall(__NR_process_vm_writev, getpid(), &l, 1, &r, 1, 0));
  report("open_by_handle_at", syscall(__NR_open_by_handle_at, AT_FDCWD, buf, O_RDONLY));
  report("kexec_load", syscall(__NR_kexec_load, 0, 0, 0, 0));
  report("bpf", syscall(__NR_bpf, 0, 0, 0));
  report("mount", syscall(__NR_mount, "none", "/tmp", "tmpfs", 0, 0));
  report("fsopen", syscall(__NR_fsopen, "tmpfs", 0));
  report("unshare_user", syscall(__NR_unshare, CLONE_NEWUSER));
  report("clone_newuser", syscall(__NR_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
  report("clone3", syscall(__NR_clone3, 0, 0));
  struct open_how how = {.flags = O_RDONLY};
  report("openat2", syscall(__NR_openat2, AT_FDCWD, ".", &how, sizeof how));
  struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = {1, &allow};
  report("seccomp_listener",
         syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog));
  report("seccomp_plain", syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog));
  report("read_only_open", open("/etc/hostname", O_RDONLY | O_CLOEXEC));
  return 0;
}
