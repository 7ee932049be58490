#include "runtime_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace ccsandbox {

namespace {

constexpr const char *kPrefix = "ccsandbox-";
constexpr const char *kTempPrefix = "ccsandbox-tmp-";
constexpr std::size_t kRandomPart = 6;  // mkdtemp's XXXXXX
constexpr const char *kLock = ".session-lock";
constexpr const char *kTemp = "tmp";  // the sandbox's /tmp, or the link to it

// `prefix` followed by exactly the random part: what mkdtemp made from our template.
bool madeName(const char *name, const char *prefix) {
  std::size_t n = std::strlen(prefix);
  if (std::strncmp(name, prefix, n) != 0 || std::strlen(name) != n + kRandomPart) return false;
  for (const char *c = name + n; *c; ++c)
    if (!std::isalnum(static_cast<unsigned char>(*c))) return false;
  return true;
}

bool sessionDirName(const char *name) {
  return madeName(name, kPrefix);
}

// A directory we may create entries in.
bool writableDir(const std::string &path, const struct stat &st) {
  return S_ISDIR(st.st_mode) && ::access(path.c_str(), W_OK | X_OK) == 0;
}

std::optional<std::string> privateDir(const char *path) {
  struct stat st {};
  if (!path || *path != '/' || ::stat(path, &st) != 0 || !writableDir(path, st)) return {};
  return std::string(path);
}

// /dev/shm: shared like /tmp, so only when sticky (no one else may rename or
// remove what we make there) and really in memory.
std::optional<std::string> sharedMemoryDir() {
  constexpr const char *kShm = "/dev/shm";
  struct stat st {};
  struct statfs fs {};
  if (::stat(kShm, &st) != 0 || !writableDir(kShm, st) || !(st.st_mode & S_ISVTX) ||
      ::statfs(kShm, &fs) != 0 || fs.f_type != TMPFS_MAGIC)
    return {};
  return std::string(kShm);
}

// The temp dir a session directory's `tmp` link names, when it is one of ours
// to remove: absolute, named as we name them, a directory of this user.
std::optional<std::string> linkedTempDir(int sessionDir) {
  char target[4096];
  ssize_t n = ::readlinkat(sessionDir, kTemp, target, sizeof target - 1);
  if (n <= 0) return {};
  target[n] = '\0';
  std::string path(target);
  auto slash = path.rfind('/');
  if (path[0] != '/' || slash == std::string::npos ||
      !madeName(path.c_str() + slash + 1, kTempPrefix))
    return {};
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
    return {};
  return path;
}

struct DirCloser {
  void operator()(DIR *d) const { ::closedir(d); }
};

// From the kernel, like mkdtemp's (std::random_device's set-up costs cpuid
// questions, about 6 us each in a VM). The name only needs to be hard to
// guess; mkdir refuses an existing one.
std::string randomPart() {
  static constexpr char kChars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  unsigned char bytes[kRandomPart];
  while (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "getrandom");
  std::string out(kRandomPart, 'x');
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = kChars[bytes[i] % (sizeof kChars - 1)];
  return out;
}

// Gives the owner back every right on `dir` and the directories beneath it
// (not following links): a command may leave a directory it made read-only,
// or unreadable, in its /tmp.
void makeRemovable(const std::filesystem::path &dir) {
  namespace fs = std::filesystem;
  const auto add = fs::perm_options::add | fs::perm_options::nofollow;
  std::error_code ec;
  fs::permissions(dir, fs::perms::owner_all, add, ec);
  // Iterative (a command chooses the depth); each directory is opened up
  // before the iterator descends into it.
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec), end;
  while (!ec && it != end) {
    if (it->is_directory(ec) && !it->is_symlink(ec))
      fs::permissions(it->path(), fs::perms::owner_all, add, ec);
    ec.clear();
    it.increment(ec);
  }
}

// remove_all, and again after makeRemovable() when a directory's mode stood in
// the way. True when nothing is left.
bool removeTree(const std::string &path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (!ec) return true;
  makeRemovable(path);
  ec.clear();
  std::filesystem::remove_all(path, ec);
  return !ec;
}

}  // namespace

std::string RuntimeDir::baseDir() {
  // Per-user and private first; then memory shared like /tmp, where mkdtemp's
  // fresh 0700 name is what keeps others out; then the temp dir.
  const std::string runUser = "/run/user/" + std::to_string(::geteuid());
  struct stat st {};
  if (auto xdg = privateDir(std::getenv("XDG_RUNTIME_DIR"))) return *xdg;
  if (::stat(runUser.c_str(), &st) == 0 && st.st_uid == ::geteuid() && !(st.st_mode & 0077))
    if (auto run = privateDir(runUser.c_str())) return *run;
  if (auto shm = sharedMemoryDir()) return *shm;
  return tempBaseDir();
}

std::string RuntimeDir::tempBaseDir() {
  if (auto tmp = privateDir(std::getenv("TMPDIR"))) return *tmp;
  return "/tmp";
}

std::string RuntimeDir::tempDirPlaceholder() {
  const std::string base = baseDir(), temp = tempBaseDir();
  if (base == temp) return base + "/" + kPrefix + std::string(kRandomPart, 'X') + "/" + kTemp;
  return temp + "/" + kTempPrefix + std::string(kRandomPart, 'X');
}

RuntimeDir::RuntimeDir() {
  const std::string base = baseDir();
  // Short on purpose: Unix socket paths inside it must fit in 108 bytes.
  std::string tmpl = base + "/" + kPrefix + std::string(kRandomPart, 'X');
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::system_error(errno, std::generic_category(),
                            "cannot create the session's runtime directory under " + base);
  path_ = buf.data();
  // Locked before it gets its final name, so no sweeper ever sees it unlocked.
  std::string pending = path_ + "/" + kLock + ".new";
  lock_.reset(::open(pending.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!lock_ || ::flock(lock_.get(), LOCK_EX) != 0 ||
      ::rename(pending.c_str(), (path_ + "/" + kLock).c_str()) != 0) {
    int e = errno;
    // By name, no descriptor needed: out of descriptors (EMFILE) is one way
    // to get here, and remove_all would have to open the directory.
    ::unlink(pending.c_str());
    ::unlink((path_ + "/" + kLock).c_str());
    ::rmdir(path_.c_str());
    throw std::system_error(e, std::generic_category(), "cannot lock " + path_);
  }
  // Once per process: a sweep reads the whole base directory.
  static std::once_flag swept;
  std::call_once(swept, [&] { removeAbandoned(base); });
}

std::string RuntimeDir::makeSubdir(const std::string &name) const {
  std::string sub = path_ + "/" + name;
  if (::mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::system_error(errno, std::generic_category(), "cannot create " + sub);
  return sub;
}

std::string RuntimeDir::makeTempDir() {
  const std::string temp = tempBaseDir();
  if (temp == std::filesystem::path(path_).parent_path().string()) return makeSubdir(kTemp);
  if (!outsideTemp_.empty()) return outsideTemp_;
  // The link first, then the directory it names: a session killed at any
  // point leaves a dangling link or a linked directory, and its sweeper
  // handles both. (mkdtemp would make the directory before the link.)
  const std::string link = path_ + "/" + kTemp;
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string candidate = temp + "/" + kTempPrefix + randomPart();
    ::unlink(link.c_str());
    if (::symlink(candidate.c_str(), link.c_str()) != 0)
      throw std::system_error(errno, std::generic_category(),
                              "cannot record the sandbox's /tmp in " + path_);
    if (::mkdir(candidate.c_str(), 0700) == 0) {
      outsideTemp_ = candidate;
      return outsideTemp_;
    }
    if (errno != EEXIST)
      throw std::system_error(errno, std::generic_category(),
                              "cannot create the sandbox's /tmp under " + temp);
  }
  throw std::runtime_error("cannot create the sandbox's /tmp under " + temp +
                           ": every name tried exists");
}

RuntimeDir::~RuntimeDir() {
  // Left behind only if it cannot be removed: the link stays with it, and a
  // later sweep tries again once this session's lock is free.
  if (!outsideTemp_.empty() && !removeTree(outsideTemp_)) return;
  removeTree(path_);
}

int RuntimeDir::removeAbandoned(const std::string &base) {
  std::unique_ptr<DIR, DirCloser> dir(::opendir(base.c_str()));
  if (!dir) return 0;
  int removed = 0;
  while (dirent *e = ::readdir(dir.get())) {
    if (!sessionDirName(e->d_name)) continue;
    struct stat st {};
    if (::fstatat(::dirfd(dir.get()), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
      continue;
    std::string path = base + "/" + e->d_name;
    // No lock file: not ours to judge (being created, or from an older version).
    UniqueFd lock(::open((path + "/" + kLock).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!lock) continue;
    if (::flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // its session is alive
    {
      UniqueFd session(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!session) continue;
      // Its link goes with it only once the temp dir is gone.
      if (auto temp = linkedTempDir(session.get()); temp && !removeTree(*temp)) continue;
    }
    if (removeTree(path)) ++removed;
  }
  return removed;
}

}  // namespace ccsandbox
