#include "git_control_paths.hpp"

#include "ccsandbox/unique_fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <string_view>

namespace ccsandbox {

namespace {

std::string firstLine(const std::string &file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

// `relative` read from a file in `dir`: absolute as is, else against `dir`.
std::string against(const std::string &dir, const std::string &relative) {
  if (!relative.empty() && relative[0] == '/') return lexicallyNormal(relative);
  return lexicallyNormal(dir + "/" + relative);
}

std::string childOf(const std::string &dir, std::string_view name) {
  std::string path = dir == "/" ? "" : dir;
  path += '/';
  path += name;
  return path;
}

void addGitDir(const PathResolver &resolver, const std::string &gitDir,
               std::vector<std::string> &out) {
  out.push_back(gitDir + "/config");
  out.push_back(gitDir + "/hooks");
  // A linked worktree's git dir names the repository's common dir, where the
  // shared config and hooks live; its own config.worktree is read as well.
  std::string common = firstLine(resolver.onHost(gitDir + "/commondir"));
  if (!common.empty()) {
    std::string c = against(gitDir, common);
    out.push_back(c + "/config");
    out.push_back(c + "/hooks");
    out.push_back(gitDir + "/config.worktree");
  }
}

// A `.git` entry of directory `dir`: a git directory, or a file naming one.
void addDotGit(const PathResolver &resolver, const std::string &dir, bool isDirectory,
               std::vector<std::string> &out) {
  std::string path = childOf(dir, ".git");
  if (isDirectory) return addGitDir(resolver, path, out);
  std::string line = firstLine(resolver.onHost(path));
  if (line.rfind("gitdir:", 0) != 0) return;
  std::string target = line.substr(7);
  while (!target.empty() && target.front() == ' ') target.erase(0, 1);
  if (!target.empty()) addGitDir(resolver, against(dir, target), out);
}

// File systems whose directory link count is 2 + its subdirectories, so that
// a count of 2 proves a directory has none. (btrfs always says 1, overlayfs
// says 1 for merged directories, FUSE and network file systems say what they
// like: their directories are always read.)
bool countsSubdirectories(int fd) {
  struct statfs fs {};
  if (::fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<unsigned long>(fs.f_type)) {
    case EXT4_SUPER_MAGIC:  // also ext2 and ext3
    case XFS_SUPER_MAGIC:
    case TMPFS_MAGIC: return true;
    default: return false;
  }
}

// The search, breadth first so that the bound cuts the deepest directories.
// Nearly all of its time is the kernel's: opening and reading directories.
// Hence a directory is opened relative to its parent's descriptor while a
// budget of kept descriptors allows (a one-component lookup instead of a walk
// of the whole path), and a directory its link count proves to have no
// subdirectories is never opened: one lookup of its `.git` says all.
class GitSearch {
 public:
  GitSearch(const PathResolver &resolver, const GitSearchBounds &bounds, GitControlPaths &result)
      : resolver_(resolver), bounds_(bounds), result_(result) {}

  void run(const std::string &root);

 private:
  struct Pending {
    std::shared_ptr<const UniqueFd> parent;  // null: opened by its path below the root
    std::string path;                        // absolute
    std::size_t nameAt = 0;                  // where its own name starts in `path`
    int depth = 0;
    dev_t dev = 0;
  };

  static constexpr std::size_t kKeptDescriptors = 64;
  static constexpr std::size_t kDentsBuffer = 32 * 1024;
  static constexpr int kOpenFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

  bool counted() {
    if (result_.searched >= bounds_.maxDirectories) {
      result_.truncated = true;
      return false;
    }
    ++result_.searched;
    return true;
  }
  bool trusted(dev_t dev, int fd) {
    auto [it, fresh] = trustedDevices_.try_emplace(dev, false);
    if (fresh) it->second = countsSubdirectories(fd);
    return it->second;
  }
  UniqueFd open(const Pending &dir) const;
  void read(Pending &dir, int fd, UniqueFd own);
  void subdirectory(Pending &dir, int dirFd, std::string_view name,
                    std::shared_ptr<const UniqueFd> &self, UniqueFd &own);

  const PathResolver &resolver_;
  const GitSearchBounds &bounds_;
  GitControlPaths &result_;
  UniqueFd root_;
  std::size_t relativeAt_ = 0;
  std::size_t kept_ = 0;
  std::map<dev_t, bool> trustedDevices_;
  std::deque<Pending> queue_;
  std::unique_ptr<char[]> buffer_ =
      std::make_unique_for_overwrite<char[]>(kDentsBuffer);  // not zeroed: fewer page faults
};

void GitSearch::run(const std::string &root) {
  const std::string top = lexicallyNormal(root);
  relativeAt_ = top == "/" ? 1 : top.size() + 1;
  root_.reset(::open(resolver_.onHost(top).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  struct stat st {};
  if (!counted() || !root_ || ::fstat(root_.get(), &st) != 0) return;
  Pending first{nullptr, top, top.size(), 0, st.st_dev};
  read(first, root_.get(), UniqueFd());
  while (!queue_.empty()) {
    Pending dir = std::move(queue_.front());
    queue_.pop_front();
    if (!counted()) break;
    UniqueFd fd = open(dir);
    dir.parent.reset();
    // Unreadable: nothing inside can be written through us either.
    if (fd) {
      int raw = fd.get();
      read(dir, raw, std::move(fd));
    }
  }
  queue_.clear();  // before kept_ goes: the descriptors' deleters count down
}

UniqueFd GitSearch::open(const Pending &dir) const {
  if (dir.parent)
    return UniqueFd(::openat(dir.parent->get(), dir.path.c_str() + dir.nameAt, kOpenFlags));
  return UniqueFd(::openat(root_.get(), dir.path.c_str() + relativeAt_, kOpenFlags));
}

// `own` is `fd` when the descriptor may be kept for the subdirectories; the
// root's stays with root_.
void GitSearch::read(Pending &dir, int fd, UniqueFd own) {
  std::shared_ptr<const UniqueFd> self;  // made when the first subdirectory is queued
  for (;;) {
    long n = ::getdents64(fd, buffer_.get(), kDentsBuffer);
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      const auto *e = reinterpret_cast<const struct dirent64 *>(buffer_.get() + at);
      at += e->d_reclen;
      std::string_view name = e->d_name;
      if (name == "." || name == "..") continue;
      // d_type saves a stat per entry; only file systems that do not fill it pay one.
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (::fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
      }
      if (name == ".git") {
        if (type == DT_DIR || type == DT_REG)
          addDotGit(resolver_, dir.path, type == DT_DIR, result_.paths);
        continue;
      }
      if (type != DT_DIR || name == "node_modules") continue;
      if (dir.depth + 1 > bounds_.maxDepth) continue;  // a documented bound, not an error
      subdirectory(dir, fd, name, self, own);
    }
  }
}

void GitSearch::subdirectory(Pending &dir, int dirFd, std::string_view name,
                             std::shared_ptr<const UniqueFd> &self, UniqueFd &own) {
  std::string path = childOf(dir.path, name);
  std::size_t nameAt = path.size() - name.size();
  struct stat st {};
  st.st_dev = dir.dev;
  if (trusted(dir.dev, dirFd)) {
    if (::fstatat(dirFd, path.c_str() + nameAt, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode))
      return;
  }
  if (st.st_nlink == 2 && st.st_dev == dir.dev) {
    if (!counted()) return;
    struct stat git {};
    if (::fstatat(dirFd, (path.substr(nameAt) + "/.git").c_str(), &git, AT_SYMLINK_NOFOLLOW) == 0 &&
        (S_ISDIR(git.st_mode) || S_ISREG(git.st_mode)))
      addDotGit(resolver_, path, S_ISDIR(git.st_mode), result_.paths);
    return;
  }
  if (!self && own && kept_ < kKeptDescriptors) {
    ++kept_;
    self = std::shared_ptr<const UniqueFd>(new UniqueFd(own.release()), [this](const UniqueFd *f) {
      --kept_;
      delete f;
    });
  }
  queue_.push_back({self, std::move(path), nameAt, dir.depth + 1, st.st_dev});
}

}  // namespace

GitControlPaths findGitControlPaths(const PathResolver &resolver, const std::string &root,
                                    const GitSearchBounds &bounds) {
  GitControlPaths result;
  GitSearch(resolver, bounds, result).run(root);
  return result;
}

}  // namespace ccsandbox
