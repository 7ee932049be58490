#include "ccsandbox/confine/landlock_ruleset.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string_view>
#include <system_error>

namespace ccsandbox::confine {
namespace {

// The uapi values, spelled out: the build host's linux-libc-dev may predate
// the ABI the running kernel offers (Debian 12 ships ABI 2 headers).
constexpr std::uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

constexpr std::uint64_t kExecute = 1ULL << 0;
constexpr std::uint64_t kWriteFile = 1ULL << 1;
constexpr std::uint64_t kRemoveDir = 1ULL << 4;
constexpr std::uint64_t kRemoveFile = 1ULL << 5;
constexpr std::uint64_t kMakeChar = 1ULL << 6;
constexpr std::uint64_t kMakeDir = 1ULL << 7;
constexpr std::uint64_t kMakeReg = 1ULL << 8;
constexpr std::uint64_t kMakeSock = 1ULL << 9;
constexpr std::uint64_t kMakeFifo = 1ULL << 10;
constexpr std::uint64_t kMakeBlock = 1ULL << 11;
constexpr std::uint64_t kMakeSym = 1ULL << 12;
constexpr std::uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3

constexpr std::uint64_t kScopeAbstractUnixSocket = 1ULL << 0;  // ABI 6
constexpr std::uint64_t kScopeSignal = 1ULL << 1;              // ABI 6

struct RulesetAttr {
  std::uint64_t handledAccessFs;
  std::uint64_t handledAccessNet;  // ABI 4
  std::uint64_t scoped;            // ABI 6
};

struct __attribute__((packed)) PathBeneathAttr {
  std::uint64_t allowedAccess;
  std::int32_t parentFd;
};

// Writes that may happen on an existing device file (no name is created).
constexpr const char *kDeviceFiles[] = {"/dev/null",   "/dev/zero",    "/dev/full", "/dev/tty",
                                        "/dev/random", "/dev/urandom", "/dev/ptmx"};
constexpr const char *kDeviceDirs[] = {"/dev/pts"};

bool beneathOrEqual(std::string_view path, std::string_view root) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root == "/") return true;
  if (path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

class RuleWriter {
 public:
  RuleWriter(int ruleset, std::vector<std::string> &missing)
      : ruleset_(ruleset), missing_(missing) {}

  // Adds `access` beneath `path`; a missing path is noted and skipped.
  void add(const std::string &path, std::uint64_t access) {
    UniqueFd fd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    if (!fd) {
      if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) {
        missing_.push_back(path);
        return;
      }
      throw std::system_error(errno, std::generic_category(), "Landlock: cannot open " + path);
    }
    addFd(fd.get(), path, access);
  }

  void addFd(int fd, const std::string &path, std::uint64_t access) {
    struct stat st {};
    if (::fstat(fd, &st) != 0)
      throw std::system_error(errno, std::generic_category(), "Landlock: cannot stat " + path);
    // A rule on a file may only carry the rights that apply to files.
    if (!S_ISDIR(st.st_mode)) access &= (kExecute | kWriteFile | kTruncate);
    if (access == 0) return;
    PathBeneathAttr attr{access, fd};
    if (::syscall(SYS_landlock_add_rule, ruleset_, kRulePathBeneath, &attr, 0U) != 0)
      throw std::system_error(errno, std::generic_category(),
                              "Landlock: cannot add a rule for " + path);
  }

  // EXECUTE on everything except the write roots: Landlock only adds rights
  // down a hierarchy, so the complement is granted piecewise along the
  // ancestors of each write root.
  void executeOutside(const std::string &dir, const std::vector<std::string> &roots, int depth) {
    bool holdsRoot = false;
    for (const auto &r : roots) {
      if (beneathOrEqual(dir, r)) return;  // dir is a write root or inside one
      if (beneathOrEqual(r, dir)) holdsRoot = true;
    }
    if (!holdsRoot || depth > 64) {
      add(dir, kExecute);
      return;
    }
    UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dfd) return;  // unreadable: nothing in it gets exec
    DIR *d = ::fdopendir(dfd.get());
    if (!d) return;
    dfd.release();
    std::vector<std::string> children;
    while (auto *e = ::readdir(d)) {
      std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      children.push_back((dir == "/" ? "" : dir) + "/" + std::string(name));
    }
    ::closedir(d);
    for (const auto &child : children) {
      // Symlinks are skipped: a rule follows its target, which might be a root.
      struct stat st {};
      if (::lstat(child.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
      executeOutside(child, roots, depth + 1);
    }
  }

 private:
  int ruleset_;
  std::vector<std::string> &missing_;
};

}  // namespace

LandlockSupport probeLandlock() {
  LandlockSupport s;
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (abi < 0) {
    s.note = errno == EOPNOTSUPP ? "Landlock is disabled at boot (add landlock to lsm=)"
                                 : "this kernel has no Landlock";
    s.note += "; the seccomp supervisor and the mounts still hold";
    return s;
  }
  s.abi = static_cast<int>(abi);
  s.usable = s.abi >= 2;
  s.scopes = s.abi >= 6;
  if (!s.usable) {
    s.note =
        "Landlock ABI 1 refuses every cross-directory rename, so it is not applied; the "
        "seccomp supervisor and the mounts still hold";
  } else {
    s.note = "Landlock ABI " + std::to_string(s.abi) + ": writes only beneath write roots" +
             (s.scopes ? ", signals and abstract sockets scoped" : ", no signal scoping (ABI < 6)");
  }
  return s;
}

LandlockRuleset LandlockRuleset::prepare(const ConfineRules &rules) {
  LandlockRuleset r;
  r.support_ = probeLandlock();
  if (!r.support_.usable) {
    r.skipReason_ = r.support_.note;
    return r;
  }
  const int abi = r.support_.abi;
  std::uint64_t writes = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg |
                         kMakeSock | kMakeFifo | kMakeBlock | kMakeSym | kRefer;
  if (abi >= 3) writes |= kTruncate;
  RulesetAttr attr{};
  attr.handledAccessFs = writes | (rules.execBlockWritableRoots ? kExecute : 0);
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) size = 2 * sizeof(std::uint64_t);
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttr);
  }
  UniqueFd fd(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0U)));
  if (!fd)
    throw std::system_error(errno, std::generic_category(), "Landlock: cannot create a ruleset");

  RuleWriter w(fd.get(), r.missing_);
  for (const auto &root : rules.writeRoots) w.add(root, writes);
  const std::uint64_t deviceWrites = kWriteFile | (abi >= 3 ? kTruncate : 0);
  for (const char *dev : kDeviceFiles) w.add(dev, deviceWrites);
  for (const char *dev : kDeviceDirs) w.add(dev, deviceWrites);
  if (rules.execBlockWritableRoots) {
    w.executeOutside("/", rules.writeRoots, 0);
    for (const auto &g : rules.execGrantRoots) w.add(g, kExecute);
  }
  r.fd_ = std::move(fd);
  return r;
}

int LandlockRuleset::restrictSelf() const noexcept {
  if (!fd_) return 0;
  if (::syscall(SYS_landlock_restrict_self, fd_.get(), 0U) != 0) return errno;
  return 0;
}

}  // namespace ccsandbox::confine
