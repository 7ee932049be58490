#include "child_path_resolver.hpp"

#include "child_task.hpp"

#include <fcntl.h>
#include <linux/limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <string_view>
#include <vector>

namespace ccsandbox::confine {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's MAXSYMLINKS
constexpr ino_t kProcRootIno = 1;

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const std::size_t start = i;
    while (i < path.size() && path[i] != '/') ++i;
    if (i > start) out.emplace_back(path.substr(start, i - start));
  }
  return out;
}

bool isProcfs(int fd) {
  struct statfs s {};
  return ::fstatfs(fd, &s) == 0 && s.f_type == PROC_SUPER_MAGIC;
}

bool isProcRoot(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_ino == kProcRootIno && isProcfs(fd);
}

bool sameInode(int a, int b) {
  struct stat x {
  }, y{};
  return ::fstat(a, &x) == 0 && ::fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

bool isNumeric(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

int readLinkAt(int dir, const std::string &name, std::string &out) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlinkat(dir, name.c_str(), buf, sizeof buf);
  if (n < 0) return errno;
  if (static_cast<std::size_t>(n) >= sizeof buf) return ENAMETOOLONG;
  out.assign(buf, static_cast<std::size_t>(n));
  return 0;
}

UniqueFd dup(int fd) {
  return UniqueFd(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
}

std::string join(const std::string &base, const std::string &name) {
  if (name == ".") return base;
  return base == "/" ? "/" + name : base + "/" + name;
}

class Walk {
 public:
  Walk(ChildView &view, ResolvedName &out, bool followFinal)
      : view_(view), out_(out), followFinal_(followFinal) {}

  int run(UniqueFd start, std::vector<std::string> comps) {
    cur_ = std::move(start);
    pending_.assign(comps.begin(), comps.end());
    if (pending_.empty()) return finish(".", true, S_IFDIR);
    while (!pending_.empty()) {
      std::string comp = std::move(pending_.front());
      pending_.pop_front();
      const bool last = pending_.empty();
      if (comp == ".") {
        if (last) return finish(".", true, S_IFDIR);
        continue;
      }
      if (comp == "..") {
        if (const int e = up(); e != 0) return e;
        if (last) return finish(".", true, S_IFDIR);
        continue;
      }
      if (comp.size() > NAME_MAX) return ENAMETOOLONG;
      if (last) {
        struct stat st {};
        if (::fstatat(cur_.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
          if (errno == ENOENT) return finish(comp, false, 0);
          return errno;
        }
        if (S_ISLNK(st.st_mode) && (followFinal_ || out_.trailingSlash)) {
          bool magic = false;
          if (const int e = link(comp, magic); e != 0) return e;
          if (magic) return finishMagic(comp);
          continue;
        }
        return finish(comp, true, st.st_mode & S_IFMT);
      }
      UniqueFd next(::openat(cur_.get(), comp.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!next) return errno;
      struct stat st {};
      if (::fstat(next.get(), &st) != 0) return errno;
      if (S_ISDIR(st.st_mode)) {
        if (isNumeric(comp) && isProcRoot(cur_.get()) && !ownProcEntry(comp)) return EACCES;
        cur_ = std::move(next);
        continue;
      }
      if (!S_ISLNK(st.st_mode)) return ENOTDIR;
      bool magic = false;
      if (const int e = link(comp, magic); e != 0) return e;
      if (magic) {
        // The kernel follows the magic link on our open; the path names the
        // caller's task, so this lands on the caller's directory.
        UniqueFd target(::openat(cur_.get(), comp.c_str(), O_PATH | O_CLOEXEC));
        if (!target) return errno;
        if (::fstat(target.get(), &st) != 0) return errno;
        if (!S_ISDIR(st.st_mode)) return ENOTDIR;
        cur_ = std::move(target);
      }
    }
    return EINVAL;  // unreachable: the last component always returns
  }

 private:
  int up() {
    const int root = view_.root();
    if (root < 0) return errno;
    if (sameInode(cur_.get(), root)) return 0;  // ".." at the caller's root stays there
    UniqueFd parent(::openat(cur_.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return errno;
    cur_ = std::move(parent);
    return 0;
  }

  // A magic link is followed with the supervisor's access to procfs, so it
  // must live under the caller's own /proc/<pid> (a cwd inside /proc/1 must
  // not reach the helper's fds).
  bool magicBelongsToCaller() {
    UniqueFd dir = dup(cur_.get());
    for (int depth = 0; dir && depth < 8 && !isProcRoot(dir.get()); ++depth)
      dir.reset(::openat(dir.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir || !isProcRoot(dir.get())) return false;
    const std::string mount = pathOfFd(dir.get());
    const std::string here = pathOfFd(cur_.get());
    const std::string prefix = mount == "/" ? "/" : mount + "/";
    if (mount.empty() || here.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string rest = here.substr(prefix.size());
    const std::string pid = rest.substr(0, rest.find('/'));
    if (!isNumeric(pid)) return false;
    std::swap(cur_, dir);  // ownProcEntry looks relative to the procfs root
    const bool own = ownProcEntry(pid);
    std::swap(cur_, dir);
    return own;
  }

  bool ownProcEntry(const std::string &pid) const {
    const std::string own = std::to_string(view_.tgid());
    if (pid == own) return true;
    return ::faccessat(cur_.get(), (own + "/task/" + pid).c_str(), F_OK, 0) == 0;
  }

  // Expands the symlink `comp` in cur_ into pending_, or reports a procfs
  // magic link through `magic`.
  int link(const std::string &comp, bool &magic) {
    if (++links_ > kMaxSymlinks) return ELOOP;
    if (isProcfs(cur_.get())) {
      const bool root = isProcRoot(cur_.get());
      if (root && comp == "self") {
        pending_.push_front(std::to_string(view_.tgid()));
        return 0;
      }
      if (root && comp == "thread-self") {
        pending_.push_front(std::to_string(view_.tid()));
        pending_.push_front("task");
        pending_.push_front(std::to_string(view_.tgid()));
        return 0;
      }
      std::string target;
      if (const int e = readLinkAt(cur_.get(), comp, target); e != 0) return e;
      if (root && !target.empty() && target[0] != '/') {  // /proc/mounts -> self/mounts
        push(target);
        return 0;
      }
      if (!magicBelongsToCaller()) return EACCES;
      magic = true;
      return 0;
    }
    std::string target;
    if (const int e = readLinkAt(cur_.get(), comp, target); e != 0) return e;
    if (target.empty()) return ENOENT;
    if (target[0] == '/') {
      const int root = view_.root();
      if (root < 0) return errno;
      cur_ = dup(root);
      if (!cur_) return errno;
    }
    push(target);
    return 0;
  }

  void push(const std::string &target) {
    auto comps = components(target);
    if (comps.empty()) comps.emplace_back(".");
    pending_.insert(pending_.begin(), comps.begin(), comps.end());
  }

  int finish(const std::string &name, bool exists, mode_t type) {
    out_.dir = std::move(cur_);
    out_.name = name;
    out_.exists = exists;
    out_.type = type;
    out_.magic = false;
    out_.absolute = join(pathOfFd(out_.dir.get()), name);
    return 0;
  }

  int finishMagic(const std::string &name) {
    struct stat st {};
    const bool exists = ::fstatat(cur_.get(), name.c_str(), &st, 0) == 0;
    std::string target;
    if (const int e = readLinkAt(cur_.get(), name, target); e != 0) return e;
    out_.dir = std::move(cur_);
    out_.name = name;
    out_.exists = exists;
    out_.type = exists ? (st.st_mode & S_IFMT) : 0;
    out_.magic = true;
    out_.absolute = std::move(target);
    return 0;
  }

  ChildView &view_;
  ResolvedName &out_;
  bool followFinal_;
  UniqueFd cur_;
  std::deque<std::string> pending_;
  int links_ = 0;
};

}  // namespace

int ChildView::root() {
  if (!root_) root_ = openTaskLink(tid_, "root", taskDir_);
  return root_.get();
}

int ChildView::cwd() {
  if (!cwd_) cwd_ = openTaskLink(tid_, "cwd", taskDir_);
  return cwd_.get();
}

int ChildView::fd(int fd) {
  for (int i = 0; i < 2; ++i)
    if (taken_[i] && takenNumber_[i] == fd) return taken_[i].get();
  const int slot = taken_[0] ? 1 : 0;
  taken_[slot] = takeTaskFd(tid_, fd);
  takenNumber_[slot] = fd;
  return taken_[slot].get();
}

std::string pathOfFd(int fd) {
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link, buf, sizeof buf);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return {};
  return std::string(buf, static_cast<std::size_t>(n));
}

int resolveInChild(ChildView &view, int startFd, const std::string &path, bool followFinal,
                   ResolvedName &out) {
  if (path.empty()) return ENOENT;
  if (path.size() >= PATH_MAX) return ENAMETOOLONG;
  const bool absolute = path[0] == '/';
  out.trailingSlash = path.size() > 1 && path.back() == '/';
  auto comps = components(path);
  int base = startFd;
  if (absolute) {
    base = view.root();
    if (base < 0) return errno;
  }

  // Fast path: the directory part holds no symlink, no "..", and is outside
  // procfs, so one openat2 call is the kernel's own walk.
  bool plain = comps.size() > 1;
  for (std::size_t i = 0; plain && i + 1 < comps.size(); ++i)
    if (comps[i] == "..") plain = false;
  if (plain) {
    std::string dir;
    for (std::size_t i = 0; i + 1 < comps.size(); ++i) (dir += comps[i]) += '/';
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (absolute ? RESOLVE_IN_ROOT : 0);
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, base, dir.c_str(), &how, sizeof how)));
    if (fd && !isProcfs(fd.get())) {
      Walk walk(view, out, followFinal);
      return walk.run(std::move(fd), {comps.back()});
    }
    if (!fd && (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG))
      return errno;
    // ELOOP (a symlink), EXDEV, EAGAIN, ENOSYS or procfs: the careful walk.
  }
  UniqueFd start = dup(base);
  if (!start) return errno;
  Walk walk(view, out, followFinal);
  return walk.run(std::move(start), std::move(comps));
}

}  // namespace ccsandbox::confine
