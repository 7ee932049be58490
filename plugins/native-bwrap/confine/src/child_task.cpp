#include "child_task.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

namespace ccsandbox::confine {
namespace {

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

int parseStatus(int fd, TaskStatus &out, int *threads = nullptr) {
  char buf[16384];
  std::size_t have = 0;
  for (;;) {
    const std::size_t want = sizeof buf - have;
    const ssize_t n = ::pread(fd, buf + have, want, static_cast<off_t>(have));
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    have += static_cast<std::size_t>(n);
    // A short read is the whole file: procfs generates it afresh on every
    // read, so asking once more for the end would cost a second generation.
    if (n == 0 || static_cast<std::size_t>(n) < want) break;
    if (have == sizeof buf) return EIO;  // thousands of groups: refuse, never guess
  }
  std::string_view text(buf, have);
  auto field = [&](std::string_view key) -> std::string_view {
    const auto at = text.find(key);
    if (at == std::string_view::npos || (at != 0 && text[at - 1] != '\n')) return {};
    auto rest = text.substr(at + key.size());
    return rest.substr(0, rest.find('\n'));
  };
  auto numbers = [](std::string_view s, int base) {
    std::vector<std::uint64_t> v;
    const char *p = s.data(), *end = s.data() + s.size();
    while (p < end) {
      while (p < end && (*p == ' ' || *p == '\t')) ++p;
      std::uint64_t x = 0;
      auto r = std::from_chars(p, end, x, base);
      if (r.ec != std::errc()) break;
      v.push_back(x);
      p = r.ptr;
    }
    return v;
  };
  const auto tgid = numbers(field("Tgid:"), 10);
  const auto umask = numbers(field("Umask:"), 8);
  const auto uids = numbers(field("Uid:"), 10);
  const auto gids = numbers(field("Gid:"), 10);
  const auto caps = numbers(field("CapEff:"), 16);
  const auto permitted = numbers(field("CapPrm:"), 16);
  if (tgid.size() != 1 || uids.size() != 4 || gids.size() != 4 || caps.size() != 1 ||
      permitted.size() != 1)
    return EIO;
  out.tgid = static_cast<pid_t>(tgid[0]);
  if (threads) {
    const auto n = numbers(field("Threads:"), 10);
    *threads = n.size() == 1 ? static_cast<int>(n[0]) : 2;  // unknown: assume company
  }
  out.umask = umask.size() == 1 ? static_cast<mode_t>(umask[0]) : 022;
  out.credentials.fsuid = static_cast<uid_t>(uids[3]);
  out.credentials.fsgid = static_cast<gid_t>(gids[3]);
  out.credentials.capEffective = caps[0];
  // execve sets fsuid/fsgid to the effective ids; under no_new_privs it
  // changes nothing else here unless the thread holds capabilities.
  out.execKeepsCredentials = permitted[0] == 0 && uids[1] == uids[3] && gids[1] == gids[3];
  out.credentials.groups.clear();
  for (auto g : numbers(field("Groups:"), 10))
    out.credentials.groups.push_back(static_cast<gid_t>(g));
  std::sort(out.credentials.groups.begin(), out.credentials.groups.end());
  return 0;
}

int readStatusAt(const char *path, TaskStatus &out) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return errno == ENOENT ? ESRCH : errno;
  return parseStatus(fd.get(), out);
}

}  // namespace

int readOwnStatus(TaskStatus &out) {
  return readStatusAt("/proc/thread-self/status", out);
}

UniqueFd openTaskLink(pid_t tid, const char *link, int taskDir) {
  if (taskDir >= 0) return UniqueFd(::openat(taskDir, link, O_PATH | O_CLOEXEC));
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/%s", tid, link);
  return UniqueFd(::open(path, O_PATH | O_CLOEXEC));
}

namespace {

constexpr std::size_t kMaxEntries = 256;  // each holds two fds

// Whether `tid` is the only thread of its process: its task directory links
// ".", ".." and one entry per thread. A blocked thread is the only one that
// could start another, so the answer holds until its call returns. False
// when it cannot be told.
bool onlyThread(pid_t tid) {
  char task[48];
  std::snprintf(task, sizeof task, "/proc/%d/task", tid);
  struct stat st {};
  return ::stat(task, &st) == 0 && st.st_nlink == 3;
}

bool exited(int pidfd) {
  pollfd p{pidfd, POLLIN, 0};
  return ::poll(&p, 1, 0) != 0;  // readable (gone) or an error: do not trust the entry
}

}  // namespace

int TaskCache::readFresh(pid_t tid, Entry &out) {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d", tid);
  out.dir.reset(::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!out.dir) return errno == ENOENT ? ESRCH : errno;
  UniqueFd status(::openat(out.dir.get(), "status", O_RDONLY | O_CLOEXEC));
  if (!status) return errno == ENOENT ? ESRCH : errno;
  if (const int e = parseStatus(status.get(), out.status, &out.threads); e != 0)
    return e == ENOENT ? ESRCH : e;
  out.tgid = out.status.tgid;
  return 0;
}

bool TaskCache::processUncached(pid_t tgid) {
  auto it = uncached_.find(tgid);
  if (it == uncached_.end()) return false;
  if (!exited(it->second.get())) return true;
  uncached_.erase(it);  // that process is gone; its number may be someone else's now
  return false;
}

void TaskCache::forgetProcess(pid_t tgid) {
  std::erase_if(entries_, [tgid](const auto &kv) { return kv.second.tgid == tgid; });
}

void TaskCache::makeRoom() {
  if (entries_.size() < kMaxEntries) return;
  std::erase_if(entries_, [](const auto &kv) { return exited(kv.second.pidfd.get()); });
  if (entries_.size() >= kMaxEntries) entries_.clear();
  if (uncached_.size() >= kMaxEntries)
    std::erase_if(uncached_, [](const auto &kv) { return exited(kv.second.get()); });
}

int TaskCache::status(pid_t tid, Task &out) {
  if (auto it = entries_.find(tid); it != entries_.end()) {
    if (!exited(it->second.pidfd.get())) {
      out = {&it->second.status, it->second.dir.get(), it->second.pidfd.get()};
      return 0;
    }
    entries_.erase(it);
  }
  Entry fresh;
  if (const int e = readFresh(tid, fresh); e != 0) return e;
  fresh.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, tid, PIDFD_THREAD)));
  Entry *kept = &scratch_;
  if (fresh.pidfd && !umaskShared_ && !processUncached(fresh.tgid)) {
    makeRoom();
    kept = &entries_[tid];
  }
  *kept = std::move(fresh);
  out = {&kept->status, kept->dir.get(), kept->pidfd.get()};
  return 0;
}

void TaskCache::umaskChanging(pid_t tid, mode_t mask) {
  if (onlyThread(tid)) {
    // Nobody can look before the call lands, and umask(2) cannot fail.
    if (auto it = entries_.find(tid); it != entries_.end()) it->second.status.umask = mask & 0777;
    return;
  }
  Entry fresh;
  if (readFresh(tid, fresh) != 0) {
    entries_.erase(tid);
    return;
  }
  if (fresh.threads > 1) {
    // Another thread could read the old umask before this call lands.
    if (!uncacheProcess(fresh.tgid))
      umaskShared_ = true;  // cannot tell when it ends: stop caching umasks
    forgetProcess(fresh.tgid);
    return;
  }
  entries_.erase(tid);
}

bool TaskCache::uncacheProcess(pid_t tgid) {
  UniqueFd leader(static_cast<int>(::syscall(SYS_pidfd_open, tgid, 0)));
  if (!leader) return false;
  uncached_[tgid] = std::move(leader);
  return true;
}

void TaskCache::credentialsChanging(pid_t tid) {
  entries_.erase(tid);
}

void TaskCache::execing(pid_t tid) {
  // The common case, cheaply: a thread-group leader (pidfd_open without
  // PIDFD_THREAD accepts nothing else) keeps its number through exec, and the
  // other threads die with their entries (their pidfds say so). Its own entry
  // survives unless the exec could change what it holds — and an exec that
  // fails changes nothing at all.
  if (UniqueFd leader(static_cast<int>(::syscall(SYS_pidfd_open, tid, 0))); leader) {
    const auto it = entries_.find(tid);
    if (it != entries_.end() && !it->second.status.execKeepsCredentials) entries_.erase(it);
    return;
  }
  Entry fresh;
  if (readFresh(tid, fresh) != 0) {
    entries_.clear();
    return;
  }
  // A non-leader thread that execs takes over the leader's number: with other
  // threads around, an entry for that number could be refilled meanwhile.
  if (fresh.threads > 1 && !uncacheProcess(fresh.tgid)) entries_.clear();
  forgetProcess(fresh.tgid);
}

UniqueFd takeTaskFd(pid_t tid, int fd, int pidfd) {
  UniqueFd opened;
  if (pidfd < 0) {
    opened.reset(static_cast<int>(::syscall(SYS_pidfd_open, tid, PIDFD_THREAD)));
    pidfd = opened.get();
  }
  if (pidfd >= 0) {
    UniqueFd taken(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0)));
    if (taken || errno != ENOSYS) return taken;
  }
  // Before 6.9 (no PIDFD_THREAD): the thread's fd link reopens the same object.
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/fd/%d", tid, fd);
  UniqueFd viaProc(::open(path, O_PATH | O_CLOEXEC));
  if (!viaProc && errno == ENOENT) errno = EBADF;
  return viaProc;
}

}  // namespace ccsandbox::confine
