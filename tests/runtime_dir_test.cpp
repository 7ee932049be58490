// Session runtime directories: private, locked while their session lives, and
// removed by a later session once their owner is gone (kill -9 runs no
// destructor). Nothing that is not plainly an abandoned directory of ours is
// touched.
#define BOOST_TEST_MODULE runtime_dir
#include <boost/test/unit_test.hpp>

#include "deferred_removal.hpp"
#include "runtime_dir.hpp"
#include "support/temp_tree.hpp"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

using namespace ccsandbox;
namespace fs = std::filesystem;

namespace {

void restore(const char *var, const std::optional<std::string> &value) {
  value ? (void)::setenv(var, value->c_str(), 1) : (void)::unsetenv(var);
}

std::optional<std::string> current(const char *var) {
  const char *v = std::getenv(var);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

// Points RuntimeDir at bases of the test's own for the scope: the session
// directories (XDG_RUNTIME_DIR) and the temp dir (TMPDIR), one directory unless
// `apart` asks for two.
struct BaseDir {
  test::TempTree tree, temp;
  std::optional<std::string> oldTmp = current("TMPDIR"), oldXdg = current("XDG_RUNTIME_DIR");
  explicit BaseDir(bool apart = false) {
    ::setenv("XDG_RUNTIME_DIR", tree.path().c_str(), 1);
    ::setenv("TMPDIR", (apart ? temp : tree).path().c_str(), 1);
  }
  ~BaseDir() {
    restore("TMPDIR", oldTmp);
    restore("XDG_RUNTIME_DIR", oldXdg);
  }
  const std::string &path() const { return tree.path(); }
};

std::vector<std::string> entries(const std::string &dir) {
  std::vector<std::string> out;
  for (const auto &e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_session_dir_is_private_and_locked_and_goes_with_its_session) {
  BaseDir base;
  std::string path;
  {
    RuntimeDir dir;
    path = dir.path();
    BOOST_CHECK_EQUAL(fs::path(path).parent_path().string(), base.path());
    struct stat st {};
    BOOST_REQUIRE_EQUAL(::stat(path.c_str(), &st), 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);
    BOOST_CHECK(fs::exists(path + "/.session-lock"));
    BOOST_CHECK(!fs::exists(path + "/.session-lock.new"));
    // Alive: a sweep leaves it alone.
    BOOST_CHECK_EQUAL(RuntimeDir::removeAbandoned(base.path()), 0);
    BOOST_CHECK(fs::exists(path));
  }
  BOOST_CHECK(!fs::exists(path));
}

BOOST_AUTO_TEST_CASE(only_abandoned_session_dirs_of_this_user_are_removed) {
  BaseDir base;
  auto &t = base.tree;
  // Abandoned: a session dir whose lock nobody holds, with what a session leaves.
  t.file("ccsandbox-dead01/.session-lock");
  t.file("ccsandbox-dead01/tmp/build/output.o", "bytes");
  // Not ours to judge: no lock file (an older version, or being created).
  t.file("ccsandbox-nolock/tmp/x");
  // Not session dirs at all: the probe cache, other tools' scratch, a file.
  t.file("ccsandbox-0/probe-native-bwrap.json", "{}");
  t.file("ccsandbox-conformance-abc123/.session-lock");
  t.file("ccsandbox-file01", "a file with a session-like name");
  // A link with a session-like name: neither it nor its target is touched.
  t.file("elsewhere/.session-lock");
  t.file("elsewhere/precious", "keep");
  fs::create_symlink(t.path() + "/elsewhere", t.path() + "/ccsandbox-link01");

  RuntimeDir live;  // its own sweep (once per process) may already have run: sweep again
  RuntimeDir::removeAbandoned(base.path());
  BOOST_CHECK(!fs::exists(t.path() + "/ccsandbox-dead01"));
  BOOST_CHECK(fs::exists(t.path() + "/ccsandbox-nolock/tmp/x"));
  BOOST_CHECK(fs::exists(t.path() + "/ccsandbox-0/probe-native-bwrap.json"));
  BOOST_CHECK(fs::exists(t.path() + "/ccsandbox-conformance-abc123"));
  BOOST_CHECK(fs::exists(t.path() + "/ccsandbox-file01"));
  BOOST_CHECK(fs::exists(t.path() + "/elsewhere/precious"));
  BOOST_CHECK(fs::is_symlink(t.path() + "/ccsandbox-link01"));
  BOOST_CHECK(fs::exists(live.path()));

  if (::geteuid() == 0) {
    // Another user's abandoned directory is theirs to clean, not ours.
    std::string theirs = t.file("ccsandbox-their1/.session-lock");
    BOOST_REQUIRE_EQUAL(::chown(fs::path(theirs).parent_path().c_str(), 65534, 65534), 0);
    RuntimeDir::removeAbandoned(base.path());
    BOOST_CHECK(fs::exists(theirs));
  }
}

BOOST_AUTO_TEST_CASE(the_sandbox_tmp_stays_in_the_temp_dir_and_goes_with_its_session) {
  // Session directories in a RAM-backed base, the sandbox's /tmp where the
  // host keeps its temp files: as much room as the host's /tmp.
  BaseDir base(true);
  std::string tmp, session;
  {
    RuntimeDir dir;
    session = dir.path();
    tmp = dir.makeTempDir();
    BOOST_CHECK_EQUAL(dir.makeTempDir(), tmp);  // one per session
    BOOST_CHECK_EQUAL(fs::path(session).parent_path().string(), base.path());
    BOOST_CHECK_EQUAL(fs::path(tmp).parent_path().string(), base.temp.path());
    BOOST_CHECK(fs::path(tmp).filename().string().rfind("ccsandbox-tmp-", 0) == 0);
    BOOST_CHECK_EQUAL(fs::read_symlink(session + "/tmp").string(), tmp);
    struct stat st {};
    BOOST_REQUIRE_EQUAL(::stat(tmp.c_str(), &st), 0);
    BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);
    base.temp.file(fs::path(tmp).filename().string() + "/build/out.o", "bytes");
  }
  BOOST_CHECK(!fs::exists(tmp));
  BOOST_CHECK(!fs::exists(session));
  BOOST_CHECK(entries(base.temp.path()).empty());
}

BOOST_AUTO_TEST_CASE(one_base_keeps_the_sandbox_tmp_inside_the_session_dir) {
  BaseDir base;
  RuntimeDir dir;
  const std::string tmp = dir.makeTempDir();
  BOOST_CHECK_EQUAL(tmp, dir.path() + "/tmp");
  BOOST_CHECK(fs::is_directory(fs::symlink_status(tmp)));
}

BOOST_AUTO_TEST_CASE(a_sweep_removes_the_temp_dir_an_abandoned_session_links_to_and_nothing_else) {
  BaseDir base(true);
  auto &t = base.tree;
  auto &temp = base.temp;
  // Abandoned, with its sandbox /tmp in the temp dir.
  t.file("ccsandbox-dead02/.session-lock");
  std::string theirTmp = temp.file("ccsandbox-tmp-dead02/deep/file", "bytes");
  fs::create_symlink(temp.path() + "/ccsandbox-tmp-dead02", t.path() + "/ccsandbox-dead02/tmp");
  // Abandoned, linking to something that is not a temp dir of ours: the link
  // goes with the session directory, its target stays.
  t.file("ccsandbox-dead03/.session-lock");
  std::string precious = temp.file("precious/keep", "keep");
  fs::create_symlink(temp.path() + "/precious", t.path() + "/ccsandbox-dead03/tmp");
  // Abandoned, its link dangling (killed between the link and the directory).
  t.file("ccsandbox-dead04/.session-lock");
  fs::create_symlink(temp.path() + "/ccsandbox-tmp-gone04", t.path() + "/ccsandbox-dead04/tmp");

  RuntimeDir::removeAbandoned(base.path());
  for (const char *dead : {"ccsandbox-dead02", "ccsandbox-dead03", "ccsandbox-dead04"})
    BOOST_CHECK_MESSAGE(!fs::exists(fs::symlink_status(t.path() + "/" + dead)), dead);
  BOOST_CHECK(!fs::exists(fs::path(theirTmp).parent_path().parent_path()));
  BOOST_CHECK(fs::exists(precious));

  if (::geteuid() == 0) {
    // A temp dir named like ours but another user's: theirs to clean.
    t.file("ccsandbox-dead05/.session-lock");
    std::string other = temp.file("ccsandbox-tmp-other5/x", "theirs");
    const std::string otherDir = fs::path(other).parent_path().string();
    BOOST_REQUIRE_EQUAL(::chown(otherDir.c_str(), 65534, 65534), 0);
    fs::create_symlink(otherDir, t.path() + "/ccsandbox-dead05/tmp");
    RuntimeDir::removeAbandoned(base.path());
    BOOST_CHECK(!fs::exists(t.path() + "/ccsandbox-dead05"));
    BOOST_CHECK(fs::exists(other));
  }
}

BOOST_AUTO_TEST_CASE(session_dirs_prefer_a_private_then_a_memory_base) {
  std::optional<std::string> oldTmp = current("TMPDIR"), oldXdg = current("XDG_RUNTIME_DIR");
  test::TempTree xdg, tmp;
  ::setenv("TMPDIR", tmp.path().c_str(), 1);
  ::setenv("XDG_RUNTIME_DIR", xdg.path().c_str(), 1);
  BOOST_CHECK_EQUAL(RuntimeDir::baseDir(), xdg.path());
  BOOST_CHECK_EQUAL(RuntimeDir::tempBaseDir(), tmp.path());
  ::setenv("XDG_RUNTIME_DIR", "relative/dir", 1);  // not a path: passed over
  const std::string runUser = "/run/user/" + std::to_string(::geteuid());
  struct stat st {};
  const bool hasRunUser = ::stat(runUser.c_str(), &st) == 0 && st.st_uid == ::geteuid();
  struct statfs shm {};
  const bool memoryShm = ::stat("/dev/shm", &st) == 0 && (st.st_mode & S_ISVTX) &&
                         ::access("/dev/shm", W_OK | X_OK) == 0 &&
                         ::statfs("/dev/shm", &shm) == 0 && shm.f_type == TMPFS_MAGIC;
  const std::string expected = hasRunUser ? runUser : memoryShm ? "/dev/shm" : tmp.path();
  BOOST_TEST_MESSAGE("without XDG_RUNTIME_DIR this host's base is " << expected);
  BOOST_CHECK_EQUAL(RuntimeDir::baseDir(), expected);
  BOOST_CHECK_EQUAL(RuntimeDir::tempDirPlaceholder(), expected == tmp.path()
                                                          ? tmp.path() + "/ccsandbox-XXXXXX/tmp"
                                                          : tmp.path() + "/ccsandbox-tmp-XXXXXX");
  ::unsetenv("TMPDIR");
  BOOST_CHECK_EQUAL(RuntimeDir::tempBaseDir(), "/tmp");
  restore("TMPDIR", oldTmp);
  restore("XDG_RUNTIME_DIR", oldXdg);
}

BOOST_AUTO_TEST_CASE(deferred_removal_leaves_nothing_once_it_is_gone) {
  // Ended sessions' directories go on a thread of their own (the CLI's
  // teardown runs meanwhile); once the remover is destroyed, every one handed
  // over is gone, with what the sandbox left in its /tmp.
  BaseDir base(true);
  std::vector<std::string> sessions, temps;
  {
    DeferredRemoval removal;
    for (int i = 0; i < 5; ++i) {
      auto dir = std::make_unique<RuntimeDir>();
      sessions.push_back(dir->path());
      temps.push_back(dir->makeTempDir());
      dir->makeSubdir("proxy");
      base.temp.file(fs::path(temps.back()).filename().string() + "/deep/er/out.o", "bytes");
      removal.add(std::move(dir));
    }
    removal.add(nullptr);  // nothing to remove: ignored
  }
  for (const auto &p : sessions) BOOST_CHECK_MESSAGE(!fs::exists(p), p << " was left behind");
  for (const auto &p : temps) BOOST_CHECK_MESSAGE(!fs::exists(p), p << " was left behind");
  BOOST_CHECK(entries(base.path()).empty());
  BOOST_CHECK(entries(base.temp.path()).empty());
}
