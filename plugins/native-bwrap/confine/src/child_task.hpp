// What the supervisor needs to know about the thread that made a call: its
// process, umask and filesystem credentials (from /proc/<tid>/status), and
// access to its directories and fds.
#pragma once

#include "ccsandbox/unique_fd.hpp"

#include <sys/types.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ccsandbox::confine {

struct TaskCredentials {
  uid_t fsuid = 0;
  gid_t fsgid = 0;
  std::vector<gid_t> groups;  // sorted
  std::uint64_t capEffective = 0;

  bool operator==(const TaskCredentials &) const = default;
};

struct TaskStatus {
  pid_t tgid = 0;
  mode_t umask = 022;
  TaskCredentials credentials;
  // An execve leaves the credentials above as they are: no capabilities to
  // gain, and fsuid/fsgid already equal to the effective ids it resets them to.
  bool execKeepsCredentials = false;
};

// The calling thread's own status. Returns 0 or an errno.
int readOwnStatus(TaskStatus &out);

// An O_PATH fd for /proc/<tid>/<link> ("cwd", "root"): the thread's own view.
// `taskDir` is the thread's /proc/<tid> directory when one is at hand (-1: look it up).
UniqueFd openTaskLink(pid_t tid, const char *link, int taskDir = -1);

// What the supervisor knows about each thread, kept across calls so that a
// notification usually costs one poll() instead of a /proc/<tid>/status read.
//
// A thread's umask and credentials change only through calls the filter
// reports (umask, set*id, setgroups, capset, execve), and the thread is
// blocked in that call while it is reported, so updating or forgetting it then
// is exact — except where another thread could read the old value in between:
// a umask in a multi-threaded process, or an exec by a thread that is not the
// leader (it takes over the leader's number), turns caching off for that
// process, and a clone that shares fs attributes between processes turns the
// cache off altogether. Entries hold a pidfd: a thread that is gone (or whose
// number was reused) is read afresh.
class TaskCache {
 public:
  // What the cache knows about one thread; everything here is owned by the
  // cache and stays valid until its next call.
  struct Task {
    const TaskStatus *status = nullptr;
    int taskDir = -1;  // the thread's /proc/<tid> directory
    int pidfd = -1;    // a pidfd for the thread itself (PIDFD_THREAD), or -1
  };
  // The thread's status. 0 or errno.
  int status(pid_t tid, Task &out);

  // The thread is blocked in umask(mask).
  void umaskChanging(pid_t tid, mode_t mask);
  // The thread is blocked in a call that changes its credentials.
  void credentialsChanging(pid_t tid);
  // The thread is blocked in execve(2) (which may still fail).
  void execing(pid_t tid);
  // Some process is cloning a child that shares its fs attributes.
  void fsSharedBetweenProcesses() {
    umaskShared_ = true;
    entries_.clear();  // the cloning process's entry too: its umask is no longer its own
  }

 private:
  struct Entry {
    pid_t tgid = 0;
    int threads = 1;
    UniqueFd pidfd;
    UniqueFd dir;
    TaskStatus status;
  };
  int readFresh(pid_t tid, Entry &out);
  void forgetProcess(pid_t tgid);
  bool processUncached(pid_t tgid);
  // Stops caching process `tgid` until its leader ends; false when no pidfd could be had.
  bool uncacheProcess(pid_t tgid);
  void makeRoom();

  std::unordered_map<pid_t, Entry> entries_;
  std::unordered_map<pid_t, UniqueFd> uncached_;  // tgid -> pidfd of its leader
  Entry scratch_;                                 // a fresh read that is not kept
  bool umaskShared_ = false;
};

// A duplicate of the thread's fd `fd` (pidfd_getfd on a thread pidfd, which
// follows the thread's own fd table; /proc/<tid>/fd/<fd> on older kernels).
// `pidfd` is the thread's pidfd when one is at hand (-1: open one).
// Returns an invalid fd with errno set (EBADF when the thread has no such fd).
UniqueFd takeTaskFd(pid_t tid, int fd, int pidfd = -1);

}  // namespace ccsandbox::confine
