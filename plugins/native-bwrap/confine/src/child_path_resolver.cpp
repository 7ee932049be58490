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
#include <string_view>
#include <vector>

namespace ccsandbox::confine {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's MAXSYMLINKS
constexpr ino_t kProcRootIno = 1;

// The components of `path`, last first (a stack: the next one is at the back).
void pushComponents(std::string_view path, std::vector<std::string> &stack) {
  std::size_t end = path.size();
  while (end > 0) {
    while (end > 0 && path[end - 1] == '/') --end;
    std::size_t start = end;
    while (start > 0 && path[start - 1] != '/') --start;
    if (end > start) stack.emplace_back(path.substr(start, end - start));
    end = start;
  }
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

// A directory's absolute path. With a private cwd, fchdir + getcwd(2) is a
// third of the cost of readlink("/proc/self/fd/N"); the raw call, because
// glibc's getcwd would walk ".." itself for a path it does not like. A
// directory removed or out of our root ("(unreachable)/…") is left to readlink.
std::string directoryPath(int dir, bool mayChdir) {
  if (mayChdir && ::fchdir(dir) == 0) {
    char buf[PATH_MAX];
    const long n = ::syscall(SYS_getcwd, buf, sizeof buf);
    if (n > 1 && buf[0] == '/') return std::string(buf, static_cast<std::size_t>(n - 1));
  }
  return pathOfFd(dir);
}

std::string join(const std::string &base, const std::string &name) {
  if (name == ".") return base;
  return base == "/" ? "/" + name : base + "/" + name;
}

class Walk {
 public:
  Walk(ChildView &view, ResolvedName &out, bool followFinal, FinalName final)
      : view_(view), out_(out), followFinal_(followFinal), final_(final) {}

  // `start` is borrowed unless `owned` holds it.
  int run(int start, UniqueFd owned, std::string_view path) {
    moveTo(start, std::move(owned));
    pushComponents(path, pending_);
    if (pending_.empty()) return finish(".", true, S_IFDIR);
    while (!pending_.empty()) {
      std::string comp = std::move(pending_.back());
      pending_.pop_back();
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
        if (final_ == FinalName::leave && !out_.trailingSlash) return finishUnlooked(comp);
        struct stat st {};
        if (::fstatat(cur_, comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
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
      UniqueFd next(::openat(cur_, comp.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!next) return errno;
      struct stat st {};
      if (::fstat(next.get(), &st) != 0) return errno;
      if (S_ISDIR(st.st_mode)) {
        if (isNumeric(comp) && isProcRoot(cur_) && !ownProcEntry(cur_, comp)) return EACCES;
        moveTo(std::move(next));
        continue;
      }
      if (!S_ISLNK(st.st_mode)) return ENOTDIR;
      bool magic = false;
      if (const int e = link(comp, magic); e != 0) return e;
      if (magic) {
        // The kernel follows the magic link on our open; the path names the
        // caller's task, so this lands on the caller's directory.
        UniqueFd target(::openat(cur_, comp.c_str(), O_PATH | O_CLOEXEC));
        if (!target) return errno;
        if (::fstat(target.get(), &st) != 0) return errno;
        if (!S_ISDIR(st.st_mode)) return ENOTDIR;
        moveTo(std::move(target));
      }
    }
    return EINVAL;  // unreachable: the last component always returns
  }

 private:
  void moveTo(int fd, UniqueFd owned = UniqueFd()) {
    owned_ = std::move(owned);
    cur_ = fd;
  }
  void moveTo(UniqueFd owned) {
    const int fd = owned.get();
    moveTo(fd, std::move(owned));
  }

  int up() {
    const int root = view_.root();
    if (root < 0) return errno;
    if (sameInode(cur_, root)) return 0;  // ".." at the caller's root stays there
    UniqueFd parent(::openat(cur_, "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!parent) return errno;
    moveTo(std::move(parent));
    return 0;
  }

  // A magic link is followed with the supervisor's access to procfs, so it
  // must live under the caller's own /proc/<pid> (a cwd inside /proc/1 must
  // not reach the helper's fds).
  bool magicBelongsToCaller() {
    UniqueFd dir = dup(cur_);
    for (int depth = 0; dir && depth < 8 && !isProcRoot(dir.get()); ++depth)
      dir.reset(::openat(dir.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!dir || !isProcRoot(dir.get())) return false;
    const std::string mount = pathOfFd(dir.get());
    const std::string here = pathOfFd(cur_);
    const std::string prefix = mount == "/" ? "/" : mount + "/";
    if (mount.empty() || here.compare(0, prefix.size(), prefix) != 0) return false;
    const std::string rest = here.substr(prefix.size());
    const std::string pid = rest.substr(0, rest.find('/'));
    if (!isNumeric(pid)) return false;
    return ownProcEntry(dir.get(), pid);
  }

  // `procRoot` is the procfs root the entry `pid` is looked up in.
  bool ownProcEntry(int procRoot, const std::string &pid) const {
    const std::string own = std::to_string(view_.tgid());
    if (pid == own) return true;
    return ::faccessat(procRoot, (own + "/task/" + pid).c_str(), F_OK, 0) == 0;
  }

  // Expands the symlink `comp` in cur_ into pending_, or reports a procfs
  // magic link through `magic`.
  int link(const std::string &comp, bool &magic) {
    if (++links_ > kMaxSymlinks) return ELOOP;
    if (isProcfs(cur_)) {
      const bool root = isProcRoot(cur_);
      if (root && comp == "self") {
        pending_.push_back(std::to_string(view_.tgid()));
        return 0;
      }
      if (root && comp == "thread-self") {
        pending_.push_back(std::to_string(view_.tid()));
        pending_.push_back("task");
        pending_.push_back(std::to_string(view_.tgid()));
        return 0;
      }
      std::string target;
      if (const int e = readLinkAt(cur_, comp, target); e != 0) return e;
      if (root && !target.empty() && target[0] != '/') {  // /proc/mounts -> self/mounts
        push(target);
        return 0;
      }
      if (!magicBelongsToCaller()) return EACCES;
      magic = true;
      return 0;
    }
    std::string target;
    if (const int e = readLinkAt(cur_, comp, target); e != 0) return e;
    if (target.empty()) return ENOENT;
    if (target[0] == '/') {
      const int root = view_.root();
      if (root < 0) return errno;
      moveTo(root);
    }
    push(target);
    return 0;
  }

  void push(const std::string &target) {
    const std::size_t before = pending_.size();
    pushComponents(target, pending_);
    if (pending_.size() == before) pending_.emplace_back(".");
  }

  void pinDir() {
    out_.ownedDir = std::move(owned_);
    out_.dir = cur_;
  }

  int finish(const std::string &name, bool exists, mode_t type) {
    pinDir();
    out_.name = name;
    out_.exists = exists;
    out_.type = type;
    out_.magic = false;
    out_.looked = true;
    const std::string dir = directoryPath(out_.dir, view_.mayChdir());
    if (dir.empty()) return ENAMETOOLONG;  // no path to judge: refuse rather than guess
    out_.absolute = join(dir, name);
    return 0;
  }

  int finishUnlooked(const std::string &name) {
    const int e = finish(name, false, 0);
    out_.looked = false;
    return e;
  }

  int finishMagic(const std::string &name) {
    struct stat st {};
    const bool exists = ::fstatat(cur_, name.c_str(), &st, 0) == 0;
    std::string target;
    if (const int e = readLinkAt(cur_, name, target); e != 0) return e;
    pinDir();
    out_.name = name;
    out_.exists = exists;
    out_.type = exists ? (st.st_mode & S_IFMT) : 0;
    out_.magic = true;
    out_.looked = true;
    out_.absolute = std::move(target);
    return 0;
  }

  ChildView &view_;
  ResolvedName &out_;
  bool followFinal_;
  FinalName final_;
  int cur_ = -1;
  UniqueFd owned_;
  std::vector<std::string> pending_;  // a stack: the next component is at the back
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
  int slot = -1;
  for (int i = 0; i < kTakenSlots; ++i) {
    if (taken_[i] && takenNumber_[i] == fd) return taken_[i].get();
    if (!taken_[i] && slot < 0) slot = i;
  }
  // Resolutions borrow what is taken here, so nothing is ever evicted (a call
  // names at most two dirfds).
  if (slot < 0) {
    errno = EMFILE;
    return -1;
  }
  taken_[slot] = takeTaskFd(tid_, fd, pidfd_);
  takenNumber_[slot] = fd;
  return taken_[slot].get();
}

UniqueFd ResolvedName::duplicateDir() const {
  return dup(dir);
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
                   ResolvedName &out, FinalName final) {
  if (path.empty()) return ENOENT;
  if (path.size() >= PATH_MAX) return ENAMETOOLONG;
  const bool absolute = path[0] == '/';
  out.trailingSlash = path.size() > 1 && path.back() == '/';
  int base = startFd;
  if (absolute) {
    base = view.root();
    if (base < 0) return errno;
  }

  // Fast path: the directory part holds no symlink, no "..", and is outside
  // procfs, so one openat2 call is the kernel's own walk.
  std::string_view p(path);
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  const std::size_t slash = p.rfind('/');
  const std::string_view dirPart = slash == std::string_view::npos ? "" : p.substr(0, slash + 1);
  const std::string_view lastPart = slash == std::string_view::npos ? p : p.substr(slash + 1);
  bool plain = !lastPart.empty();
  for (std::size_t at = 0; plain && at < dirPart.size();) {
    const std::size_t next = dirPart.find('/', at);
    if (dirPart.substr(at, next - at) == "..") plain = false;
    at = next == std::string_view::npos ? dirPart.size() : next + 1;
  }
  // Whether the directory part names anything but the start ("x", "/x", "//x").
  const bool hasDir = dirPart.find_first_not_of('/') != std::string_view::npos;
  if (plain && hasDir) {
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (absolute ? RESOLVE_IN_ROOT : 0);
    const std::string dir(dirPart);
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, base, dir.c_str(), &how, sizeof how)));
    if (fd && !isProcfs(fd.get())) {
      Walk walk(view, out, followFinal, final);
      const int at = fd.get();
      return walk.run(at, std::move(fd), lastPart);
    }
    if (!fd && (errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG))
      return errno;
    // ELOOP (a symlink), EXDEV, EAGAIN, ENOSYS or procfs: the careful walk.
  }
  Walk walk(view, out, followFinal, final);
  return walk.run(base, UniqueFd(), path);
}

}  // namespace ccsandbox::confine
