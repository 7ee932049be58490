// The confinement layers wired into the native backend: the helper puts
// Landlock and the seccomp supervisor on every command of a real bubblewrap
// sandbox, under the standard policy. The library's own suites (confine_*)
// cover each attack in depth; these prove the wiring — rules reach the helper
// in the sandbox's view, refusals come back as exact violation events with the
// command's execId, and ordinary work is untouched. Runs as root and again
// unprivileged.
#define BOOST_TEST_MODULE native_bwrap_supervised
#include <boost/test/unit_test.hpp>

#include "native_bwrap_support.hpp"
#include "support/temp_tree.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

using namespace ccsandbox;
using namespace ccsandbox::test;
namespace fs = std::filesystem;

namespace {

bool exists(const std::string &p) {
  return fs::exists(fs::symlink_status(p));
}

// The one violation a command reported, with the checks every one must pass.
void expectOneViolation(const Outcome &r, const std::string &action, const std::string &target) {
  auto v = r.violations();
  BOOST_REQUIRE_MESSAGE(v.size() == 1u, v.size() << " violations; stderr: " << r.err);
  BOOST_TEST(v[0].action == action);
  BOOST_TEST(v[0].target == target);
  for (const auto &e : r.events)
    if (e.type == SandboxEventType::violation) BOOST_TEST(e.execId.has_value());
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(native_bwrap_supervised, FakeHomeFixture)

BOOST_AUTO_TEST_CASE(mv_onto_a_secret_name_is_refused) {
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("echo x > tmp && mv tmp .env");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(!exists(work + "/.env"));
  BOOST_TEST(exists(work + "/tmp"));  // the source stays where it was
  expectOneViolation(r, "file-write-rename", work + "/.env");
}

BOOST_AUTO_TEST_CASE(symlink_to_a_secret_name_is_refused) {
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("ln -s /etc/hostname id.pem");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(!exists(work + "/id.pem"));
  expectOneViolation(r, "file-write-symlink", work + "/id.pem");
}

BOOST_AUTO_TEST_CASE(tar_x_does_not_leave_the_pem_behind) {
  // The archive is made outside the sandbox, where nothing refuses the name.
  std::string src = tree.dir("src");
  tree.file("src/id.pem", "KEY\n");
  tree.file("src/readme.txt", "fine\n");
  std::string archive = tree.path() + "/home/a.tar";
  BOOST_REQUIRE(std::system(("tar -C " + src + " -cf " + archive + " id.pem readme.txt").c_str()) ==
                0);
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("mkdir out && tar -C out -xf " + archive);
  BOOST_TEST(r.status != 0);  // tar reports the refused member
  BOOST_TEST(!exists(work + "/out/id.pem"));
  BOOST_TEST(exists(work + "/out/readme.txt"));  // the rest of the archive is unpacked
  auto v = r.violations();
  BOOST_REQUIRE(!v.empty());
  for (const auto &one : v) BOOST_TEST(one.target == work + "/out/id.pem");
}

BOOST_AUTO_TEST_CASE(dot_env_in_a_directory_made_after_launch_is_refused) {
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("mkdir -p later/deeper && echo x > later/deeper/.env");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(exists(work + "/later/deeper"));
  BOOST_TEST(!exists(work + "/later/deeper/.env"));
  expectOneViolation(r, "file-write-create", work + "/later/deeper/.env");
}

// A read-only bind moves with its renamed parent: `mv .git .git.old; mkdir -p
// .git/hooks` would otherwise plant a hook. The supervisor refuses renaming or
// removing a protected path's ancestors (unlinkRules).
BOOST_AUTO_TEST_CASE(renaming_a_protected_parent_away_is_refused) {
  BOOST_REQUIRE(std::system(("git init -q " + work).c_str()) == 0);
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("mv .git .git.old");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(exists(work + "/.git/hooks"));
  BOOST_TEST(!exists(work + "/.git.old"));
  expectOneViolation(r, "file-write-rename", work + "/.git");
  auto planted = s.sh("mkdir -p .git/hooks && echo 'echo pwned' > .git/hooks/pre-commit");
  BOOST_TEST(planted.status != 0);
  BOOST_TEST(!exists(work + "/.git/hooks/pre-commit"));
  auto removed = s.sh("rm -rf .git");
  BOOST_TEST(exists(work + "/.git/hooks"));
  BOOST_TEST(exists(work + "/.git/config"));
}

// Rules are judged in the sandbox's view: a bind shown at another path gets
// its write root and its protected paths at that path.
BOOST_AUTO_TEST_CASE(rules_follow_a_bind_to_its_guest_path) {
  std::string project = tree.dir("project");
  tree.dir("project/keep");
  tree.file("project/keep/file", "kept\n");
  auto sp = spec();
  sp.bindMounts.push_back({project, "/workspace", false});
  sp.protectedPaths.push_back(project + "/keep");
  sp.guestWorkdir = "/workspace";
  NativeSession s(runtime, sp, true);
  auto ok = s.sh("echo ok > /workspace/new && cat /workspace/new");
  BOOST_TEST(ok.status == 0, ok.err);
  BOOST_TEST(ok.violations().empty());
  BOOST_TEST(exists(project + "/new"));
  auto env = s.sh("echo x > /workspace/.env");
  BOOST_TEST(!exists(project + "/.env"));
  expectOneViolation(env, "file-write-create", "/workspace/.env");
  auto moved = s.sh("mv /workspace/keep /workspace/moved");
  BOOST_TEST(moved.status != 0);
  BOOST_TEST(exists(project + "/keep/file"));
  expectOneViolation(moved, "file-write-rename", "/workspace/keep");
}

BOOST_AUTO_TEST_CASE(git_init_and_commit_are_untouched) {
  NativeSession s(runtime, spec(), true);
  auto r = s.sh(
      "export GIT_CONFIG_NOSYSTEM=1 HOME=" + work +
      " && git init -q repo && cd repo && echo hi > a.txt && git add a.txt && "
      "git -c user.name=t -c user.email=t@example.invalid commit -qm first && git log --oneline");
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.find("first") != std::string::npos, r.out);
  BOOST_TEST(r.violations().empty());
}

BOOST_AUTO_TEST_CASE(a_small_make_build_is_untouched) {
  tree.file("home/work/build/Makefile",
            "all: prog\nprog: main.o util.o\n\tcc -o $@ $^\n%.o: %.c\n\tcc -c -o $@ $<\n");
  tree.file("home/work/build/main.c", "int util(void);\nint main(void) { return util() - 42; }\n");
  tree.file("home/work/build/util.c", "int util(void) { return 42; }\n");
  NativeSession s(runtime, spec(), true);
  auto build = s.sh("cd build && make -s && ls prog main.o util.o");
  BOOST_TEST(build.status == 0, build.err);
  BOOST_TEST(build.violations().empty());
  BOOST_TEST(exists(work + "/build/prog"));
  // What it built does not run from the write root (exec.blockWritableRoots,
  // enforced by Landlock), while the compiler from /usr did.
  auto run = s.sh("./build/prog");
  BOOST_TEST(run.status == 126, run.err);
}

BOOST_AUTO_TEST_SUITE_END()
