#include "runtime_dir.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <system_error>
#include <vector>

namespace ccsandbox {

namespace {

constexpr const char *kPrefix = "ccsandbox-";
constexpr std::size_t kRandomPart = 6;  // mkdtemp's XXXXXX
constexpr const char *kLock = ".session-lock";

bool sessionDirName(const char *name) {
  std::size_t prefix = std::strlen(kPrefix);
  if (std::strncmp(name, kPrefix, prefix) != 0 || std::strlen(name) != prefix + kRandomPart)
    return false;
  for (const char *c = name + prefix; *c; ++c)
    if (!std::isalnum(static_cast<unsigned char>(*c))) return false;
  return true;
}

struct DirCloser {
  void operator()(DIR *d) const { ::closedir(d); }
};

}  // namespace

std::string RuntimeDir::baseDir() {
  // XDG_RUNTIME_DIR is per-user and private; otherwise the temp dir, where
  // mkdtemp's fresh 0700 name is what keeps others out.
  for (const char *var : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
    const char *v = std::getenv(var);
    struct stat st {};
    if (v && *v == '/' && ::stat(v, &st) == 0 && S_ISDIR(st.st_mode) &&
        ::access(v, W_OK | X_OK) == 0)
      return v;
  }
  return "/tmp";
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
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
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

RuntimeDir::~RuntimeDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
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
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
    if (!ec) ++removed;
  }
  return removed;
}

}  // namespace ccsandbox
