// Resolving a path the way the kernel would for the calling thread, so that
// the supervisor can judge the real final name and then act on it.
//
// The walk is done by the supervisor, component by component, from the
// thread's root (absolute paths), its cwd or its dirfd. Symlinks are followed
// where the call would follow them (an O_CREAT open through a dangling
// `ok.txt -> .env` creates `.env`, so `.env` is what gets judged). In procfs,
// `self` and `thread-self` mean the calling thread, never the supervisor, and
// only the caller's own /proc/<pid> may be traversed; magic links there
// (/proc/<pid>/fd/N, cwd, root) are followed by the kernel on the
// supervisor's open, which lands on the caller's object.
//
// The result is the directory that holds the final name, pinned as an O_PATH
// fd: the call is then performed relative to it with O_NOFOLLOW (or its *at
// equivalent), so a rename or symlink swap after the check changes nothing.
#pragma once

#include "ccsandbox/unique_fd.hpp"

#include <sys/stat.h>
#include <sys/types.h>

#include <string>

namespace ccsandbox::confine {

class ChildView {
 public:
  // `taskDir`: the thread's /proc/<tid> directory, `pidfd` a pidfd for the
  // thread (both borrowed), or -1.
  ChildView(pid_t tid, pid_t tgid, int taskDir = -1, int pidfd = -1)
      : tid_(tid), tgid_(tgid), taskDir_(taskDir), pidfd_(pidfd) {}
  pid_t tid() const { return tid_; }
  pid_t tgid() const { return tgid_; }
  // O_PATH fds for the thread's root and cwd, opened on first use; -1 + errno.
  int root();
  int cwd();
  // The thread's fd `fd` (pidfd_getfd), taken on first use and kept for the
  // view's lifetime; -1 + errno.
  int fd(int fd);

  // The resolving thread has fs attributes of its own (unshare(CLONE_FS)), so
  // it may move its cwd to learn a directory's path (fchdir + getcwd, cheaper
  // than reading /proc/self/fd/N).
  void allowChdir() { mayChdir_ = true; }
  bool mayChdir() const { return mayChdir_; }

 private:
  pid_t tid_;
  pid_t tgid_;
  int taskDir_;
  int pidfd_;
  bool mayChdir_ = false;
  UniqueFd root_;
  UniqueFd cwd_;
  static constexpr int kTakenSlots = 2;
  int takenNumber_[kTakenSlots] = {-1, -1};
  UniqueFd taken_[kTakenSlots];
};

struct ResolvedName {
  int dir = -1;       // the directory holding `name`: ownedDir, or an fd the view owns
  UniqueFd ownedDir;  //   (the thread's cwd, root or dirfd)
  std::string name;   // the final component ("." when the path names a directory itself)
  bool trailingSlash = false;
  bool magic = false;    // `name` is a procfs magic link the call follows to an existing object
  bool looked = true;    // false: the final name was not looked at (`exists`, `type` unknown)
  bool exists = false;   // something is at `name` now (lstat)
  mode_t type = 0;       // its S_IFMT when it exists (of the target, for a magic link)
  std::string absolute;  // the absolute path judged: the pinned directory's path + name,
                         // or a magic link's target ("pipe:[…]" for anonymous objects)

  // The name to hand to a *at call, trailing slash kept so the kernel's checks stay exact.
  std::string callName() const { return trailingSlash ? name + "/" : name; }
  // A duplicate of `dir` that outlives the view (for another thread).
  UniqueFd duplicateDir() const;
};

enum class FinalName {
  look,   // lstat the final name (and follow it when asked)
  leave,  // do not look at it when it is an ordinary name: the caller acts on it with
          // O_NOFOLLOW (or a call that never follows), so the kernel reports what is there
};

// `startFd` is the thread's cwd or dirfd for a relative path (ignored for an
// absolute one); it must stay open while `out` is used. Returns 0 or the
// errno the kernel would have returned for the lookup (ENOENT, ENOTDIR, ELOOP,
// ENAMETOOLONG, EACCES), with EACCES also for another process's /proc entries.
int resolveInChild(ChildView &view, int startFd, const std::string &path, bool followFinal,
                   ResolvedName &out, FinalName final = FinalName::look);

// The path the kernel gives for an fd (readlink of /proc/self/fd/N).
std::string pathOfFd(int fd);

}  // namespace ccsandbox::confine
