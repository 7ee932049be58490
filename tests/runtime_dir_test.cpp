// Session runtime directories: private, locked while their session lives, and
// removed by a later session once their owner is gone (kill -9 runs no
// destructor). Nothing that is not plainly an abandoned directory of ours is
// touched.
#define BOOST_TEST_MODULE runtime_dir
#include <boost/test/unit_test.hpp>

#include "runtime_dir.hpp"
#include "support/temp_tree.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>

using namespace ccsandbox;
namespace fs = std::filesystem;

namespace {

// Points RuntimeDir at a base of the test's own for the scope.
struct BaseDir {
  test::TempTree tree;
  std::optional<std::string> oldTmp, oldXdg;
  BaseDir() {
    if (const char *v = std::getenv("TMPDIR")) oldTmp = v;
    if (const char *v = std::getenv("XDG_RUNTIME_DIR")) oldXdg = v;
    ::setenv("TMPDIR", tree.path().c_str(), 1);
    ::unsetenv("XDG_RUNTIME_DIR");
  }
  ~BaseDir() {
    oldTmp ? (void)::setenv("TMPDIR", oldTmp->c_str(), 1) : (void)::unsetenv("TMPDIR");
    if (oldXdg) ::setenv("XDG_RUNTIME_DIR", oldXdg->c_str(), 1);
  }
  const std::string &path() const { return tree.path(); }
};

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
