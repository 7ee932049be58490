#include "ccsandbox/confine/supervisor.hpp"

#include "caller_credentials.hpp"
#include "child_memory.hpp"
#include "child_path_resolver.hpp"
#include "child_task.hpp"
#include "supervised_call.hpp"
#include "write_judge.hpp"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <system_error>
#include <thread>

namespace ccsandbox::confine {
namespace {

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
constexpr int kTmpFileBit = 020000000;  // __O_TMPFILE, without O_DIRECTORY
constexpr int kMaxRetries = 8;          // a name swapped for a symlink after the check

// What one call comes to: the kernel's value, or an errno, or a refusal.
struct Outcome {
  long value = 0;
  int error = 0;
  bool respondWithFd = false;  // `value` is our fd, to be installed in the caller
  bool deferred = false;       // someone else answers (a blocking FIFO open)
  bool closeOnExec = false;
  std::optional<Violation> violation;
};

Outcome fromErrno(int e) {
  Outcome o;
  o.error = e;
  return o;
}
Outcome fromResult(long r) {
  if (r < 0) return fromErrno(errno);
  Outcome o;
  o.value = r;
  return o;
}

Outcome refuse(const char *action, const std::string &target, const std::string &reason,
               pid_t pid) {
  Outcome o = fromErrno(EACCES);
  std::string t = target;
  if (t.ends_with(" (deleted)")) t.resize(t.size() - 10);
  o.violation = Violation{action, std::move(t), reason, pid};
  return o;
}

int sendResponse(int listener, std::uint64_t id, long value, int error) {
  seccomp_notif_resp resp{};
  resp.id = id;
  resp.val = value;
  resp.error = error == 0 ? 0 : -error;
  resp.flags = 0;  // never CONTINUE for a call whose path was judged
  return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) == 0 ? 0 : errno;
}

// Installs `fd` in the caller and completes its call with the new number.
int sendFd(int listener, std::uint64_t id, int fd, bool closeOnExec) {
  seccomp_notif_addfd add{};
  add.id = id;
  add.flags = SECCOMP_ADDFD_FLAG_SEND;
  add.srcfd = static_cast<std::uint32_t>(fd);
  add.newfd = 0;
  add.newfd_flags = closeOnExec ? O_CLOEXEC : 0;
  return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0 ? 0 : errno;
}

}  // namespace

struct Supervisor::State {
  State(const ConfineRules &rules, UniqueFd l, ViolationSink s)
      : judge(rules), listener(std::move(l)), sink(std::move(s)) {}

  WriteJudge judge;
  UniqueFd listener;
  UniqueFd stopEvent;
  ViolationSink sink;
  std::atomic<std::uint64_t> notifications{0}, performed{0}, denied{0}, bookkept{0};
  TaskStatus own;
  TaskCache tasks;
  mode_t umask = 0;

  void serve(const seccomp_notif &n);
  Outcome perform(ChildView &view, const seccomp_notif &n, const SupervisedCall &c,
                  const TaskStatus &caller, const std::string &path, const std::string &newPath,
                  const std::string &target);
  Outcome open(ChildView &view, const seccomp_notif &n, const SupervisedCall &c,
               const TaskStatus &caller, const std::string &path);
  int startFd(ChildView &view, pid_t tid, int dirfd, const std::string &path, UniqueFd &held,
              int &fd);
  bool bookkeeping(const seccomp_notif &n);
  bool idValid(std::uint64_t id) const {
    return ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  }
};

// The directory a relative path starts from: the thread's cwd or its dirfd
// (`fd` stays -1 for an absolute path). Returns 0 or errno.
int Supervisor::State::startFd(ChildView &view, pid_t tid, int dirfd, const std::string &path,
                               UniqueFd &held, int &fd) {
  fd = -1;
  if (!path.empty() && path[0] == '/') return 0;  // resolution starts at the root
  if (dirfd == AT_FDCWD) {
    fd = view.cwd();
    return fd >= 0 ? 0 : (errno == ENOENT ? ESRCH : errno);
  }
  (void)tid;
  (void)held;
  fd = view.fd(dirfd);
  return fd >= 0 ? 0 : (errno == ENOENT ? EBADF : errno);
}

// The calls the filter reports only so that the task cache stays exact; they
// carry no path, so they go on unchanged (CONTINUE).
bool Supervisor::State::bookkeeping(const seccomp_notif &n) {
  switch (n.data.nr) {
    case __NR_umask: tasks.umaskChanging(n.pid); break;
    case __NR_setuid:
    case __NR_setgid:
    case __NR_setreuid:
    case __NR_setregid:
    case __NR_setgroups:
    case __NR_setresuid:
    case __NR_setresgid:
    case __NR_setfsuid:
    case __NR_setfsgid:
    case __NR_capset: tasks.credentialsChanging(n.pid); break;
    case __NR_execve:
    case __NR_execveat: tasks.execing(n.pid); break;
    case __NR_clone: tasks.fsSharedBetweenProcesses(); break;
    default: return false;
  }
  ++bookkept;
  seccomp_notif_resp resp{};
  resp.id = n.id;
  resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
  ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp);
  return true;
}

void Supervisor::State::serve(const seccomp_notif &n) {
  if (bookkeeping(n)) return;
  ++notifications;
  if (n.pid == 0) {  // a caller outside our pid namespace: nothing to resolve against
    sendResponse(listener.get(), n.id, 0, EPERM);
    return;
  }
  SupervisedCall call;
  if (!decodeSupervisedCall(n.data, call)) {
    sendResponse(listener.get(), n.id, 0, ENOSYS);
    return;
  }
  TaskStatus caller;
  int taskDir = -1;
  if (const int e = tasks.status(n.pid, caller, taskDir); e != 0) {
    sendResponse(listener.get(), n.id, 0, e == ESRCH ? ESRCH : EPERM);
    return;
  }
  // Each path is copied once; everything after works on the copies.
  std::string path, newPath, target;
  int e = 0;
  const bool hasOld = call.kind != CallKind::symlink;
  const bool hasNew = call.kind == CallKind::rename || call.kind == CallKind::link ||
                      call.kind == CallKind::symlink;
  // A NULL path is EFAULT, as from the kernel, except linkat's AT_EMPTY_PATH source.
  auto read = [&](std::uint64_t address, std::string &into, bool nullIsEmpty) {
    if (address == 0) return nullIsEmpty ? 0 : EFAULT;
    return readChildString(n.pid, address, into);
  };
  const bool emptyOldAllowed = call.kind == CallKind::link && (call.flags & AT_EMPTY_PATH);
  if (hasOld) e = read(call.path, path, emptyOldAllowed);
  if (e == 0 && hasNew) e = read(call.newPath, newPath, false);
  if (e == 0 && call.kind == CallKind::symlink) e = read(call.linkTarget, target, false);
  // The thread may have died and its pid been reused while we read: only an
  // id that is still pending proves the copies came from the caller.
  if (!idValid(n.id)) return;
  if (e != 0) {
    sendResponse(listener.get(), n.id, 0, e == ESRCH ? ESRCH : (e == EPERM ? EPERM : e));
    return;
  }
  ChildView view(n.pid, caller.tgid, taskDir);
  if (!(caller.credentials == own.credentials)) {
    // The caller's /proc links and fds are taken with the supervisor's own
    // rights: a caller that changed users is no longer dumpable, and its new
    // credentials would not be allowed to look.
    view.root();
    if (call.dirfd == AT_FDCWD || call.newDirfd == AT_FDCWD) view.cwd();
    for (int d : {call.dirfd, call.newDirfd})
      if (d != AT_FDCWD) view.fd(d);
  }
  Outcome out;
  {
    CallerCredentials creds(own.credentials, caller.credentials);
    if (creds.error() != 0) {
      out = fromErrno(EPERM);
    } else {
      if (caller.umask != umask) ::umask(umask = caller.umask);
      out = perform(view, n, call, caller, path, newPath, target);
    }
  }
  if (out.deferred) return;
  if (out.violation) {
    ++denied;
    if (sink) try {
        sink(*out.violation);
      } catch (...) {
        // A failing sink must not take the supervisor down with it.
      }
  } else if (out.error == 0) {
    ++performed;
  }
  if (out.respondWithFd) {
    UniqueFd fd(static_cast<int>(out.value));
    sendFd(listener.get(), n.id, fd.get(), out.closeOnExec);
    return;
  }
  sendResponse(listener.get(), n.id, out.value, out.error);
}

Outcome Supervisor::State::open(ChildView &view, const seccomp_notif &n, const SupervisedCall &c,
                                const TaskStatus &caller, const std::string &path) {
  const int flags = c.flags;
  const bool tmpfile = (flags & kTmpFileBit) != 0;
  const bool creating = (flags & O_CREAT) != 0 || tmpfile;
  const bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
  UniqueFd held;
  int start = -1;
  if (const int e = startFd(view, n.pid, c.dirfd, path, held, start); e != 0) return fromErrno(e);
  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    ResolvedName rn;
    if (const int e = resolveInChild(view, start, path, follow, rn); e != 0) return fromErrno(e);
    if (!rn.exists && !creating) return fromErrno(ENOENT);
    if (rn.exists && (flags & O_CREAT) && (flags & O_EXCL)) return fromErrno(EEXIST);
    const char *action = (!rn.exists || tmpfile) ? "file-write-create"
                         : (flags & O_TRUNC)     ? "file-write-truncate"
                                                 : "file-write-data";
    const NameChange change = (!rn.exists && !tmpfile) ? NameChange::create : NameChange::write;
    if (const Verdict v = judge.judge(rn.absolute, change); !v.allowed)
      return refuse(action, rn.absolute, v.reason, n.pid);

    const mode_t mode = creating ? c.mode : 0;
    // O_NONBLOCK so that a FIFO without a reader cannot stall the supervisor.
    const bool addNonblock = !(flags & O_NONBLOCK);
    int ours = flags | O_CLOEXEC | O_NONBLOCK;
    if (!rn.magic) ours |= O_NOFOLLOW;  // the name was judged as a non-link
    UniqueFd fd(::openat(rn.dir.get(), rn.callName().c_str(), ours, mode));
    if (!fd) {
      const int e = errno;
      if (e == ELOOP && follow && !rn.magic) continue;  // became a symlink: judge its target
      if (e == ENXIO && addNonblock && rn.type == S_IFIFO) {
        // Blocking open of a FIFO: finished on its own thread, which answers.
        const int listenerCopy = ::fcntl(listener.get(), F_DUPFD_CLOEXEC, 0);
        if (listenerCopy < 0) return fromErrno(errno);
        const int blocking = flags | O_CLOEXEC | (rn.magic ? 0 : O_NOFOLLOW);
        std::thread([listenerCopy, id = n.id, dir = rn.dir.release(), name = rn.callName(), flags,
                     blocking, own = own.credentials, theirs = caller.credentials] {
          UniqueFd l(listenerCopy), d(dir);
          CallerCredentials creds(own, theirs);
          UniqueFd f(creds.error() ? -1 : ::openat(d.get(), name.c_str(), blocking));
          if (!f)
            sendResponse(l.get(), id, 0, creds.error() ? EPERM : errno);
          else
            sendFd(l.get(), id, f.get(), (flags & O_CLOEXEC) != 0);
        }).detach();
        Outcome o;
        o.deferred = true;
        return o;
      }
      return fromErrno(e);
    }
    if (addNonblock) {
      const int fl = ::fcntl(fd.get(), F_GETFL);
      if (fl >= 0) ::fcntl(fd.get(), F_SETFL, fl & ~O_NONBLOCK);
    }
    Outcome o;
    o.value = fd.release();
    o.respondWithFd = true;
    o.closeOnExec = (flags & O_CLOEXEC) != 0;
    return o;
  }
  return fromErrno(ELOOP);
}

Outcome Supervisor::State::perform(ChildView &view, const seccomp_notif &n, const SupervisedCall &c,
                                   const TaskStatus &caller, const std::string &path,
                                   const std::string &newPath, const std::string &target) {
  if (c.kind == CallKind::open) return open(view, n, c, caller, path);
  const char *action = actionOf(c.kind);
  auto check = [&](const ResolvedName &rn, NameChange change) -> std::optional<Outcome> {
    if (const Verdict v = judge.judge(rn.absolute, change); !v.allowed)
      return refuse(action, rn.absolute, v.reason, n.pid);
    return std::nullopt;
  };

  // The name a call creates or removes (the new name for rename/link/symlink).
  const bool twoNames = c.kind == CallKind::rename || c.kind == CallKind::link;
  const std::string &namePath = (twoNames || c.kind == CallKind::symlink) ? newPath : path;
  const int nameDirfd = (twoNames || c.kind == CallKind::symlink) ? c.newDirfd : c.dirfd;

  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    UniqueFd heldNew;
    int newStart = -1;
    if (const int e = startFd(view, n.pid, nameDirfd, namePath, heldNew, newStart); e != 0)
      return fromErrno(e);
    const bool followName = c.kind == CallKind::truncate;
    ResolvedName name;
    if (const int e = resolveInChild(view, newStart, namePath, followName, name); e != 0)
      return fromErrno(e);

    switch (c.kind) {
      case CallKind::mkdir:
      case CallKind::mknod:
      case CallKind::symlink: {
        if (name.exists) return fromErrno(EEXIST);
        if (auto r = check(name, NameChange::create)) return *r;
        long r;
        if (c.kind == CallKind::mkdir)
          r = ::mkdirat(name.dir.get(), name.callName().c_str(), c.mode);
        else if (c.kind == CallKind::mknod)
          r = ::mknodat(name.dir.get(), name.callName().c_str(), c.mode, c.device);
        else
          r = ::symlinkat(target.c_str(), name.dir.get(), name.callName().c_str());
        return fromResult(r);
      }
      case CallKind::unlink: {
        if (c.flags & ~AT_REMOVEDIR) return fromErrno(EINVAL);
        if (!name.exists) return fromErrno(ENOENT);
        if (auto r = check(name, NameChange::remove)) return *r;
        return fromResult(::unlinkat(name.dir.get(), name.callName().c_str(), c.flags));
      }
      case CallKind::truncate: {
        if (!name.exists) return fromErrno(ENOENT);
        if (auto r = check(name, NameChange::write)) return *r;
        UniqueFd obj(::openat(name.dir.get(), name.name.c_str(),
                              O_PATH | O_CLOEXEC | (name.magic ? 0 : O_NOFOLLOW)));
        if (!obj) return fromErrno(errno);
        struct stat st {};
        if (!name.magic && ::fstat(obj.get(), &st) == 0 && S_ISLNK(st.st_mode)) continue;
        char proc[64];
        std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", obj.get());
        return fromResult(::truncate(proc, c.length));
      }
      case CallKind::rename:
      case CallKind::link: {
        if (c.kind == CallKind::link && (c.flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH)))
          return fromErrno(EINVAL);
        UniqueFd heldOld;
        const bool emptyPath =
            c.kind == CallKind::link && (c.flags & AT_EMPTY_PATH) && path.empty();
        if (emptyPath) {
          // linkat(fd, "", …, AT_EMPTY_PATH): the fd itself (O_TMPFILE).
          if (c.dirfd == AT_FDCWD) {
            heldOld.reset(::dup(view.cwd()));
          } else {
            heldOld.reset(::dup(view.fd(c.dirfd)));
          }
          if (!heldOld) return fromErrno(errno == ENOENT ? EBADF : errno);
          if (name.exists) return fromErrno(EEXIST);
          const std::string source = pathOfFd(heldOld.get());
          if (const Verdict v = judge.judge(source, NameChange::write); !v.allowed)
            return refuse(action, source, v.reason, n.pid);
          if (auto r = check(name, NameChange::create)) return *r;
          return fromResult(
              ::linkat(heldOld.get(), "", name.dir.get(), name.callName().c_str(), AT_EMPTY_PATH));
        }
        int oldStart = -1;
        if (const int e = startFd(view, n.pid, c.dirfd, path, heldOld, oldStart); e != 0)
          return fromErrno(e);
        const bool followOld = c.kind == CallKind::link && (c.flags & AT_SYMLINK_FOLLOW);
        ResolvedName old;
        if (const int e = resolveInChild(view, oldStart, path, followOld, old); e != 0)
          return fromErrno(e);
        if (!old.exists) return fromErrno(ENOENT);
        if (c.kind == CallKind::link) {
          if (name.exists) return fromErrno(EEXIST);
          // The source gains a name through which it can be written.
          if (auto r = check(old, NameChange::write)) return *r;
          if (auto r = check(name, NameChange::create)) return *r;
          return fromResult(::linkat(old.dir.get(), old.name.c_str(), name.dir.get(),
                                     name.callName().c_str(), old.magic ? AT_SYMLINK_FOLLOW : 0));
        }
        if (auto r = check(old, NameChange::remove)) return *r;
        if (auto r = check(name, NameChange::create)) return *r;
        if (c.flags & RENAME_EXCHANGE) {
          if (auto r = check(name, NameChange::remove)) return *r;
          if (auto r = check(old, NameChange::create)) return *r;
        }
        return fromResult(::syscall(SYS_renameat2, old.dir.get(), old.callName().c_str(),
                                    name.dir.get(), name.callName().c_str(), c.flags));
      }
      case CallKind::open: break;
    }
  }
  return fromErrno(ELOOP);
}

Supervisor::Supervisor(const ConfineRules &rules, UniqueFd listener, ViolationSink onViolation)
    : state_(std::make_unique<State>(rules, std::move(listener), std::move(onViolation))) {
  if (!state_->listener) throw std::invalid_argument("Supervisor: no seccomp listener");
  state_->stopEvent.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state_->stopEvent) throw std::system_error(errno, std::generic_category(), "eventfd");
  // Same uid as the command: without this it could open /proc/<helper>/mem.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

Supervisor::~Supervisor() = default;

void Supervisor::run() {
  State &s = *state_;
  // The serving thread carries the caller's umask for each call; its own fs
  // attributes keep that from leaking into the rest of the helper.
  if (::unshare(CLONE_FS) != 0)
    throw std::system_error(errno, std::generic_category(), "unshare(CLONE_FS) for the supervisor");
  if (const int e = readOwnStatus(s.own); e != 0)
    throw std::system_error(e, std::generic_category(), "reading the supervisor's credentials");
  s.umask = ::umask(0);
  ::umask(s.umask);
  for (;;) {
    pollfd fds[2] = {{s.listener.get(), POLLIN, 0}, {s.stopEvent.get(), POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), "poll on the seccomp listener");
    }
    if (fds[1].revents & POLLIN) return;
    if (fds[0].revents & POLLIN) {
      seccomp_notif n{};
      if (::ioctl(s.listener.get(), SECCOMP_IOCTL_NOTIF_RECV, &n) != 0) {
        if (errno == EINTR || errno == ENOENT) continue;  // the caller died meanwhile
        throw std::system_error(errno, std::generic_category(), "SECCOMP_IOCTL_NOTIF_RECV");
      }
      s.serve(n);
      continue;
    }
    if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
      return;  // no process left under the filter
  }
}

void Supervisor::stop() noexcept {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(state_->stopEvent.get(), &one, sizeof one);
}

int Supervisor::listenerFd() const {
  return state_->listener.get();
}

SupervisorStats Supervisor::stats() const {
  return {state_->notifications.load(), state_->performed.load(), state_->denied.load(),
          state_->bookkept.load()};
}

SupervisorSupport probeSupervisor() {
  SupervisorSupport s;
  std::uint32_t action = SECCOMP_RET_USER_NOTIF;
  if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
    s.note = "the kernel has no seccomp user notification (Linux 5.0)";
    return s;
  }
  utsname u{};
  int major = 0, minor = 0;
  if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2 || major < 5 ||
      (major == 5 && minor < 14)) {
    s.note = std::string("the kernel ") + u.release +
             " cannot hand an fd back atomically (SECCOMP_ADDFD_FLAG_SEND needs Linux 5.14)";
    return s;
  }
  if (FILE *f = std::fopen("/proc/sys/kernel/yama/ptrace_scope", "re")) {
    int scope = 0;
    const bool read = std::fscanf(f, "%d", &scope) == 1;
    std::fclose(f);
    TaskStatus own;
    const bool ptraceCap = readOwnStatus(own) == 0 && (own.credentials.capEffective >> 19 & 1);
    if (read && (scope >= 3 || (scope == 2 && !ptraceCap))) {
      s.note = "Yama ptrace_scope " + std::to_string(scope) +
               " forbids reading a command's memory (set kernel.yama.ptrace_scope to 1 or less)";
      return s;
    }
  }
  s.available = true;
  return s;
}

}  // namespace ccsandbox::confine
