// The supervisor: serves a command's seccomp listener from the helper.
//
// For each notification it reads every path argument once from the calling
// thread's memory, re-validates the notification id, resolves the path in that
// thread's view (its own cwd, its root, or its dirfd fetched with
// pidfd_getfd; /proc/self inside the path means the caller), judges the final
// name against writeDenyGlobs and the resolved absolute path against writeDeny
// and the write roots (both names for rename and link), and then performs the
// allowed call itself on the directory it resolved, with the copy it checked.
// An open's fd goes back with SECCOMP_IOCTL_NOTIF_ADDFD|SECCOMP_ADDFD_FLAG_SEND
// (O_CLOEXEC kept, the caller's umask applied by the kernel); other calls
// return the supervisor's result or errno. It never answers CONTINUE for a
// call it judged (only for the umask, credential and exec reports that keep
// its per-thread cache exact; see TaskCache).
//
// Calls are made with the caller's filesystem credentials: when the caller's
// fsuid, fsgid, groups or effective capabilities differ from the supervisor's,
// the serving thread takes them for the call (setfsuid/setfsgid/setgroups/
// capset on that thread only), so created files belong to the caller and
// permission checks are the caller's. The serving thread also gets its own fs
// attributes (unshare(CLONE_FS)) to carry the caller's umask.
//
// A refused call fails with EACCES and is reported through the violation
// callback with an exact action and the absolute target.
#pragma once

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/write_judge.hpp"
#include "ccsandbox/unique_fd.hpp"

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ccsandbox::confine {

struct Violation {
  std::string action;  // file-write-create, -data, -truncate, -unlink, -rename, -link,
                       // -symlink, -mkdir, -mknod
  std::string target;  // absolute path, in the sandbox's view
  std::string reason;  // which rule: "writeDenyGlobs *.pem", "writeDeny /w/.git/hooks", …
  pid_t pid = 0;       // the calling thread
};

struct SupervisorStats {
  std::uint64_t notifications = 0;  // calls with a path to judge
  std::uint64_t performed = 0;      // …made by the supervisor, and successful
  std::uint64_t denied = 0;         // …refused with a violation
  std::uint64_t bookkept = 0;       // umask/set*id/exec reports answered CONTINUE
};

struct SupervisorSupport {
  bool available = false;
  std::string note;  // why not, when it is not
};

// Whether this kernel and host can run the supervisor: seccomp user
// notification, ADDFD with SEND (5.14), and ptrace access to the command
// (Yama ptrace_scope 2 and 3 forbid it without CAP_SYS_PTRACE).
SupervisorSupport probeSupervisor();

class Supervisor {
 public:
  using ViolationSink = std::function<void(const Violation &)>;

  // Marks the calling process non-dumpable (PR_SET_DUMPABLE 0) so that a
  // command of the same uid cannot read or write the supervisor's memory or
  // take its fds through /proc or ptrace.
  Supervisor(const ConfineRules &rules, UniqueFd listener, ViolationSink onViolation);
  // With a judge shared by the supervisors of one session: its rule paths are
  // resolved once, not for every command.
  Supervisor(std::shared_ptr<const WriteJudge> judge, UniqueFd listener, ViolationSink onViolation);
  ~Supervisor();
  Supervisor(const Supervisor &) = delete;
  Supervisor &operator=(const Supervisor &) = delete;

  // Serves notifications on the calling thread until every process under the
  // filter is gone (the listener hangs up) or stop() is called. Throws
  // std::system_error only for a failure of the listener itself. Call it from
  // one thread only (a dedicated one in the helper).
  void run();

  // Thread-safe, async-signal-safe: makes run() return soon.
  void stop() noexcept;

  int listenerFd() const;
  SupervisorStats stats() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace ccsandbox::confine
