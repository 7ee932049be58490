#include "ccsandbox/confine/supervisor.hpp"

#include "caller_credentials.hpp"
#include "ccsandbox/confine/write_judge.hpp"
#include "child_memory.hpp"
#include "child_path_resolver.hpp"
#include "child_task.hpp"
#include "supervised_call.hpp"

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
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
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
  State(std::shared_ptr<const WriteJudge> j, UniqueFd l, ViolationSink s)
      : judge(std::move(j)), listener(std::move(l)), sink(std::move(s)) {}

  std::shared_ptr<const WriteJudge> judge;
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
  bool bookkeeping(const seccomp_notif &n);
  bool idValid(std::uint64_t id) const {
    return ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
  }
};

namespace {

// The directory a relative path starts from: the thread's cwd or its dirfd
// (`fd` stays -1 for an absolute path). Returns 0 or errno.
int startFd(ChildView &view, int dirfd, const std::string &path, int &fd) {
  fd = -1;
  if (!path.empty() && path[0] == '/') return 0;  // resolution starts at the root
  if (dirfd == AT_FDCWD) {
    fd = view.cwd();
    return fd >= 0 ? 0 : (errno == ENOENT ? ESRCH : errno);
  }
  fd = view.fd(dirfd);
  return fd >= 0 ? 0 : (errno == ENOENT ? EBADF : errno);
}

}  // namespace

// The calls the filter reports only so that the task cache stays exact; they
// carry no path, so they go on unchanged (CONTINUE).
bool Supervisor::State::bookkeeping(const seccomp_notif &n) {
  switch (n.data.nr) {
    case __NR_umask: tasks.umaskChanging(n.pid, static_cast<mode_t>(n.data.args[0])); break;
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
  TaskCache::Task task;
  if (const int e = tasks.status(n.pid, task); e != 0) {
    sendResponse(listener.get(), n.id, 0, e == ESRCH ? ESRCH : EPERM);
    return;
  }
  const TaskStatus &caller = *task.status;  // the cache's: valid until its next call
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
  ChildView view(n.pid, caller.tgid, task.taskDir, task.pidfd);
  view.allowChdir();  // run() gave this thread fs attributes of its own
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

// A name resolved without looking at it (FinalName::leave) is acted on only
// when the judge allows the change whatever is there; otherwise it is looked
// at and judged again, so that a refusal names the exact action and errors
// the kernel would return first (ENOENT, EEXIST) keep their precedence.
Outcome Supervisor::State::open(ChildView &view, const seccomp_notif &n, const SupervisedCall &c,
                                const TaskStatus &caller, const std::string &path) {
  const int flags = c.flags;
  const bool tmpfile = (flags & kTmpFileBit) != 0;
  const bool creating = (flags & O_CREAT) != 0 || tmpfile;
  const bool follow = !(flags & O_NOFOLLOW) && !((flags & O_CREAT) && (flags & O_EXCL));
  int start = -1;
  if (const int e = startFd(view, c.dirfd, path, start); e != 0) return fromErrno(e);
  // Our open carries O_NOFOLLOW, so a final name left unseen that turns out
  // to be a symlink fails with ELOOP and is then looked at and followed.
  FinalName final = tmpfile ? FinalName::look : FinalName::leave;
  for (int attempt = 0; attempt < kMaxRetries;) {
    ResolvedName rn;
    if (const int e = resolveInChild(view, start, path, follow, rn, final); e != 0)
      return fromErrno(e);
    if (!rn.looked) {
      // A creation is the strictest change an open can make.
      if (!judge->judge(rn.absolute, NameChange::create).allowed) {
        final = FinalName::look;
        continue;
      }
    } else {
      if (!rn.exists && !creating) return fromErrno(ENOENT);
      if (rn.exists && (flags & O_CREAT) && (flags & O_EXCL)) return fromErrno(EEXIST);
      const char *action = (!rn.exists || tmpfile) ? "file-write-create"
                           : (flags & O_TRUNC)     ? "file-write-truncate"
                                                   : "file-write-data";
      const NameChange change = (!rn.exists && !tmpfile) ? NameChange::create : NameChange::write;
      if (const Verdict v = judge->judge(rn.absolute, change); !v.allowed)
        return refuse(action, rn.absolute, v.reason, n.pid);
    }

    const mode_t mode = creating ? c.mode : 0;
    // O_NONBLOCK so that a FIFO without a reader cannot stall the supervisor
    // (not needed, nor cleared afterwards, where only a new file can come of it).
    const bool onlyNew = ((flags & O_CREAT) && (flags & O_EXCL)) || tmpfile;
    const bool addNonblock = !(flags & O_NONBLOCK) && !onlyNew;
    int ours = flags | O_CLOEXEC | (addNonblock ? O_NONBLOCK : 0);
    if (!rn.magic) ours |= O_NOFOLLOW;  // the name was judged as a non-link
    UniqueFd fd(::openat(rn.dir, rn.callName().c_str(), ours, mode));
    if (!fd) {
      const int e = errno;
      if (e == ELOOP && follow && !rn.magic) {  // a symlink: judge its target
        if (rn.looked) ++attempt;               // it became one after we looked
        final = FinalName::look;
        continue;
      }
      if (e == ENXIO && addNonblock && !rn.looked) {  // perhaps a FIFO: look
        final = FinalName::look;
        continue;
      }
      if (e == ENXIO && addNonblock && rn.type == S_IFIFO) {
        // Blocking open of a FIFO: finished on its own thread, which answers.
        const int listenerCopy = ::fcntl(listener.get(), F_DUPFD_CLOEXEC, 0);
        if (listenerCopy < 0) return fromErrno(errno);
        UniqueFd dirCopy = rn.duplicateDir();
        if (!dirCopy) {
          ::close(listenerCopy);
          return fromErrno(errno);
        }
        const int blocking = flags | O_CLOEXEC | (rn.magic ? 0 : O_NOFOLLOW);
        std::thread([listenerCopy, id = n.id, dir = dirCopy.release(), name = rn.callName(), flags,
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
  // Whether the judge refuses `change` to `rn`. A refusal of a name that was
  // looked at goes to `refusal`; one left unseen is looked at first (see open()).
  FinalName final = c.kind == CallKind::truncate ? FinalName::look : FinalName::leave;
  std::optional<Outcome> refusal;
  auto refused = [&](const ResolvedName &rn, NameChange change) {
    const Verdict v = judge->judge(rn.absolute, change);
    if (v.allowed) return false;
    if (rn.looked)
      refusal = refuse(action, rn.absolute, v.reason, n.pid);
    else
      final = FinalName::look;
    return true;
  };

  // The name a call creates or removes (the new name for rename/link/symlink).
  const bool twoNames = c.kind == CallKind::rename || c.kind == CallKind::link;
  const std::string &namePath = (twoNames || c.kind == CallKind::symlink) ? newPath : path;
  const int nameDirfd = (twoNames || c.kind == CallKind::symlink) ? c.newDirfd : c.dirfd;

  for (int attempt = 0; attempt < kMaxRetries; ++attempt) {
    if (refusal) return *refusal;
    int newStart = -1;
    if (const int e = startFd(view, nameDirfd, namePath, newStart); e != 0) return fromErrno(e);
    const bool followName = c.kind == CallKind::truncate;
    ResolvedName name;
    if (const int e = resolveInChild(view, newStart, namePath, followName, name, final); e != 0)
      return fromErrno(e);

    switch (c.kind) {
      case CallKind::mkdir:
      case CallKind::mknod:
      case CallKind::symlink: {
        if (name.exists) return fromErrno(EEXIST);
        if (refused(name,
                    c.kind == CallKind::mkdir ? NameChange::createDirectory : NameChange::create))
          continue;
        long r;
        if (c.kind == CallKind::mkdir)
          r = ::mkdirat(name.dir, name.callName().c_str(), c.mode);
        else if (c.kind == CallKind::mknod)
          r = ::mknodat(name.dir, name.callName().c_str(), c.mode, c.device);
        else
          r = ::symlinkat(target.c_str(), name.dir, name.callName().c_str());
        return fromResult(r);
      }
      case CallKind::unlink: {
        if (c.flags & ~AT_REMOVEDIR) return fromErrno(EINVAL);
        if (name.looked && !name.exists) return fromErrno(ENOENT);
        if (refused(name, NameChange::remove)) continue;
        return fromResult(::unlinkat(name.dir, name.callName().c_str(), c.flags));
      }
      case CallKind::truncate: {
        if (!name.exists) return fromErrno(ENOENT);
        if (refused(name, NameChange::write)) continue;
        UniqueFd obj(::openat(name.dir, name.name.c_str(),
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
        const bool emptyPath =
            c.kind == CallKind::link && (c.flags & AT_EMPTY_PATH) && path.empty();
        if (emptyPath) {
          // linkat(fd, "", …, AT_EMPTY_PATH): the fd itself (O_TMPFILE).
          const int source = c.dirfd == AT_FDCWD ? view.cwd() : view.fd(c.dirfd);
          if (source < 0) return fromErrno(errno == ENOENT ? EBADF : errno);
          if (name.exists) return fromErrno(EEXIST);
          const std::string sourcePath = pathOfFd(source);
          if (const Verdict v = judge->judge(sourcePath, NameChange::write); !v.allowed)
            return refuse(action, sourcePath, v.reason, n.pid);
          if (refused(name, NameChange::create)) continue;
          return fromResult(::linkat(source, "", name.dir, name.callName().c_str(), AT_EMPTY_PATH));
        }
        int oldStart = -1;
        if (const int e = startFd(view, c.dirfd, path, oldStart); e != 0) return fromErrno(e);
        const bool followOld = c.kind == CallKind::link && (c.flags & AT_SYMLINK_FOLLOW);
        ResolvedName old;
        if (const int e = resolveInChild(view, oldStart, path, followOld, old,
                                         followOld ? FinalName::look : final);
            e != 0)
          return fromErrno(e);
        if (old.looked && !old.exists) return fromErrno(ENOENT);
        if (c.kind == CallKind::link) {
          if (name.exists) return fromErrno(EEXIST);
          // The source gains a name through which it can be written.
          if (refused(old, NameChange::write) || refused(name, NameChange::create)) continue;
          return fromResult(::linkat(old.dir, old.name.c_str(), name.dir, name.callName().c_str(),
                                     old.magic ? AT_SYMLINK_FOLLOW : 0));
        }
        if (refused(old, NameChange::remove) || refused(name, NameChange::create)) continue;
        if (c.flags & RENAME_EXCHANGE) {
          if (refused(name, NameChange::remove) || refused(old, NameChange::create)) continue;
        }
        return fromResult(::syscall(SYS_renameat2, old.dir, old.callName().c_str(), name.dir,
                                    name.callName().c_str(), c.flags));
      }
      case CallKind::open: break;
    }
  }
  if (refusal) return *refusal;
  return fromErrno(ELOOP);
}

Supervisor::Supervisor(const ConfineRules &rules, UniqueFd listener, ViolationSink onViolation)
    : Supervisor(std::make_shared<const WriteJudge>(rules), std::move(listener),
                 std::move(onViolation)) {}

Supervisor::Supervisor(std::shared_ptr<const WriteJudge> judge, UniqueFd listener,
                       ViolationSink onViolation)
    : state_(
          std::make_unique<State>(std::move(judge), std::move(listener), std::move(onViolation))) {
  if (!state_->judge) throw std::invalid_argument("Supervisor: no judge");
  if (!state_->listener) throw std::invalid_argument("Supervisor: no seccomp listener");
  state_->stopEvent.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!state_->stopEvent) throw std::system_error(errno, std::generic_category(), "eventfd");
  // Same uid as the command: without this it could open /proc/<helper>/mem.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  // The caller waits while we serve it, so the kernel may hand the CPU over
  // in both directions instead of waking the other side on another CPU
  // (Linux 6.6). Only a matter of speed: older kernels refuse it (EINVAL,
  // ENOTTY), and the result is deliberately ignored.
  ::ioctl(state_->listener.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS,
          SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
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
