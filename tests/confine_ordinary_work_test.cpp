// The other side of issue 6, item 7: ordinary work under the confinement is
// untouched — git, make, large trees, modes under the umask, O_CLOEXEC,
// errno values equal to the kernel's, /dev and /proc/self/fd writes,
// per-thread working directories.
#define BOOST_TEST_MODULE confine_ordinary_work
#include <boost/test/unit_test.hpp>

#include "confine_programs/confine_harness.hpp"
#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <filesystem>

using namespace ccsandbox;
using namespace ccsandbox::test;
namespace fs = std::filesystem;

namespace {

struct Workspace {
  TempTree tree;
  std::string ws = fs::canonical(tree.dir("ws")).string();
  confine::ConfineRules rules = [this] {
    auto r = standardRules(ws);
    r.writeDeny = {ws + "/protected"};
    return r;
  }();
  ConfinedOptions at() const {
    auto o = inDir(ws);
    o.env = {{"TMPDIR", ws + "/tmp"}, {"HOME", ws}};
    return o;
  }
};

}  // namespace

BOOST_AUTO_TEST_CASE(git_init_and_commit) {
  Workspace w;
  w.tree.dir("ws/tmp");
  const auto r =
      shConfined(w.rules,
                 "set -e; git init -q; git config user.email a@example.org;"
                 " git config user.name t; echo hi > f; mkdir -p src/x; echo y > src/x/y;"
                 " git add -A; git commit -qm init; git mv f g; git commit -qm mv;"
                 " git log --oneline | wc -l; git status --porcelain | wc -l",
                 w.at());
  BOOST_CHECK_MESSAGE(r.status == 0 && r.out == "2\n0\n", describe(r));
  BOOST_CHECK(r.violations.empty());
  BOOST_CHECK_GT(r.stats.performed, 20u);
}

BOOST_AUTO_TEST_CASE(make_build) {
  Workspace w;
  w.tree.dir("ws/tmp");
  w.tree.file("ws/a.c", "int twice(int x) { return 2 * x; }\n");
  w.tree.file("ws/main.c", "int twice(int);\nint main(void) { return twice(0); }\n");
  w.tree.file("ws/Makefile",
              "prog: a.o main.o\n\tcc -o build/prog a.o main.o\n"
              "%.o: %.c\n\tcc -O1 -c -o $@ $<\n"
              ".PHONY: prep\nprep:\n\tmkdir -p build\n");
  const auto r =
      shConfined(w.rules, "make -s prep && make -s prog && ./build/prog; echo run=$?", w.at());
  BOOST_CHECK(exists(w.ws + "/a.o"));
  BOOST_CHECK(exists(w.ws + "/build/prog"));
  // Built, and (a write root without a grant) not runnable where Landlock is present.
  BOOST_CHECK_MESSAGE(r.out == "run=126\n" || r.out == "run=0\n", describe(r));
  auto granted = w.rules;
  granted.execGrantRoots = {w.ws + "/build"};
  const auto run = shConfined(granted, "./build/prog; echo run=$?", w.at());
  BOOST_CHECK_MESSAGE(run.out == "run=0\n", describe(run));
}

BOOST_AUTO_TEST_CASE(npm_style_tree_of_thousands_of_files) {
  Workspace w;
  const auto r = shConfined(
      w.rules,
      "set -e; for p in $(seq 1 30); do mkdir -p node_modules/p$p/lib; echo '{}' > "
      "node_modules/p$p/package.json; for f in $(seq 1 100); do echo \"module.exports=$f\" > "
      "node_modules/p$p/lib/f$f.js; done; done; find node_modules -type f | wc -l;"
      " cp -r node_modules copy; mv copy moved; rm -rf moved; find . -type f | wc -l",
      w.at());
  BOOST_CHECK_MESSAGE(r.status == 0 && r.out == "3030\n3030\n", describe(r));
  BOOST_CHECK(r.violations.empty());
  BOOST_CHECK_GE(r.stats.performed, 3030u * 3);
}

BOOST_AUTO_TEST_CASE(modes_follow_the_callers_umask) {
  Workspace w;
  auto opts = w.at();
  opts.umask = 027;
  const auto r =
      shConfined(w.rules,
                 "touch a; mkdir d; mkfifo p; ln -s a s;"
                 " python3 -c \"import os; os.close(os.open('m', os.O_CREAT|os.O_WRONLY, 0o604))\"",
                 opts);
  BOOST_REQUIRE_MESSAGE(r.status == 0, describe(r));
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/a"), 0640u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/d"), 0750u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/p"), 0640u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/m"), 0600u);
  opts.umask = 0;
  const auto z = shConfined(w.rules, "touch z; mkdir zd", opts);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/z"), 0666u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/zd"), 0777u);
}

BOOST_AUTO_TEST_CASE(a_umask_changed_midway_applies_at_once) {
  Workspace w;
  const auto r = shConfined(w.rules,
                            "umask 077; : > a; umask 022; : > b; umask 0; mkdir c; umask 027;"
                            " mkdir d",
                            w.at());
  BOOST_REQUIRE_MESSAGE(r.status == 0, describe(r));
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/a"), 0600u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/b"), 0644u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/c"), 0777u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/d"), 0750u);
  // Another thread of the same process changes the umask between two creates.
  const auto t =
      runConfined(w.rules,
                  {"/usr/bin/python3", "-c",
                   "import os, threading\nos.umask(0o022)\nopen('t1','w').close()\n"
                   "th = threading.Thread(target=lambda: os.umask(0o077)); th.start(); th.join()\n"
                   "open('t2','w').close()\n"
                   "th = threading.Thread(target=lambda: os.umask(0o002)); th.start(); th.join()\n"
                   "open('t3','w').close()\n"},
                  w.at());
  BOOST_REQUIRE_MESSAGE(t.status == 0, describe(t));
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/t1"), 0644u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/t2"), 0600u);
  BOOST_CHECK_EQUAL(modeOf(w.ws + "/t3"), 0664u);
}

BOOST_AUTO_TEST_CASE(o_cloexec_holds_both_ways) {
  Workspace w;
  const auto r = runConfined(
      w.rules,
      {"/usr/bin/python3", "-c",
       "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
       "for name, extra in (('with', os.O_CLOEXEC), ('without', 0)):\n"
       "  fd = libc.open(name.encode(), os.O_CREAT|os.O_WRONLY|os.O_APPEND|extra, 0o600)\n"
       "  flags = int(open('/proc/self/fdinfo/%d' % fd).read().split('flags:')[1].split()[0], 8)\n"
       "  print(name, bool(flags & os.O_CLOEXEC), bool(flags & os.O_APPEND))\n"},
      w.at());
  BOOST_CHECK_MESSAGE(r.out == "with True True\nwithout False True\n", describe(r));
}

BOOST_AUTO_TEST_CASE(errno_values_match_the_kernels) {
  Workspace w;
  w.tree.file("ws/file", "x");
  w.tree.file("ws/full/inner", "x");
  w.tree.dir("ws/dir");
  const std::string script =
      "import os\n"
      "def t(name, f):\n"
      "  try: f(); print(name, 'OK')\n"
      "  except OSError as e: print(name, e.errno)\n"
      "W, C, X = os.O_WRONLY, os.O_CREAT, os.O_EXCL\n"
      "t('create-in-missing', lambda: os.open('missing/x', C|W, 0o644))\n"
      "t('write-missing', lambda: os.open('missing.txt', W))\n"
      "t('excl-existing', lambda: os.open('file', C|X|W, 0o644))\n"
      "t('mkdir-existing', lambda: os.mkdir('dir'))\n"
      "t('mkdir-existing-outside', lambda: os.mkdir('/usr'))\n"
      "t('unlink-missing', lambda: os.unlink('missing'))\n"
      "t('unlink-dir', lambda: os.unlink('dir'))\n"
      "t('rmdir-full', lambda: os.rmdir('full'))\n"
      "t('rename-missing', lambda: os.rename('missing', 'y'))\n"
      "t('link-missing', lambda: os.link('missing', 'z'))\n"
      "t('symlink-existing', lambda: os.symlink('t', 'file'))\n"
      "t('through-a-file', lambda: os.open('file/x', C|W, 0o644))\n"
      "t('write-a-dir', lambda: os.open('dir', W))\n"
      "t('truncate-missing', lambda: os.truncate('missing', 0))\n"
      "t('trailing-slash-file', lambda: os.open('file/', W))\n"
      "t('empty', lambda: os.open('', C|W, 0o644))\n"
      "t('long-name', lambda: os.open('n'*300, C|W, 0o644))\n"
      "t('loop', lambda: (os.symlink('l2','l1'), os.symlink('l1','l2'), os.open('l1', C|W, "
      "0o644)))\n"
      "t('bad-dirfd', lambda: os.open('x', C|W, 0o644, dir_fd=999))\n"
      "t('file-dirfd', lambda: os.open('x', C|W, 0o644, dir_fd=os.open('file', os.O_RDONLY)))\n"
      "t('null-dev', lambda: os.close(os.open('/dev/null', W|os.O_TRUNC)))\n"
      "t('rename-onto-dir', lambda: os.rename('file', 'dir'))\n";
  // The same script without any confinement gives the kernel's own answers.
  TempTree plainTree;
  const auto plain = fs::canonical(plainTree.dir("ws")).string();
  plainTree.file("ws/file", "x");
  plainTree.file("ws/full/inner", "x");
  plainTree.dir("ws/dir");
  ChildOptions plainOpts;
  plainOpts.cwd = plain;
  const auto expected = runChild({"/usr/bin/python3", "-c", script}, plainOpts);
  BOOST_REQUIRE_EQUAL(expected.status, 0);
  const auto r = runConfined(w.rules, {"/usr/bin/python3", "-c", script}, w.at());
  BOOST_CHECK_MESSAGE(r.out == expected.out, "confined:\n"
                                                 << r.out << "kernel:\n"
                                                 << expected.out << describe(r));
  BOOST_CHECK(r.violations.empty());
}

BOOST_AUTO_TEST_CASE(devices_and_inherited_fds) {
  Workspace w;
  const auto r = shConfined(w.rules,
                            "echo a > /dev/null; echo b > /dev/stdout; echo c > /proc/self/fd/1;"
                            " echo d > /dev/fd/1; echo e >> /dev/stderr; echo done",
                            w.at());
  BOOST_CHECK_MESSAGE(r.out == "b\nc\nd\ndone\n" && r.err == "e\n", describe(r));
  BOOST_CHECK(r.violations.empty());
}

BOOST_AUTO_TEST_CASE(each_thread_resolves_from_its_own_cwd) {
  Workspace w;
  w.tree.dir("ws/sub");
  const auto r =
      runConfined(w.rules,
                  {"/usr/bin/python3", "-c",
                   "import ctypes, os, threading\nlibc = ctypes.CDLL(None, use_errno=True)\n"
                   "def worker():\n"
                   "  assert libc.unshare(0x200) == 0  # CLONE_FS: a cwd of its own\n"
                   "  os.chdir('sub'); open('t.txt', 'w').close()\n"
                   "t = threading.Thread(target=worker); t.start(); t.join()\n"
                   "open('m.txt', 'w').close(); print(os.getcwd())\n"},
                  w.at());
  BOOST_CHECK_MESSAGE(r.status == 0 && r.out == w.ws + "\n", describe(r));
  BOOST_CHECK(exists(w.ws + "/sub/t.txt"));
  BOOST_CHECK(exists(w.ws + "/m.txt"));
  BOOST_CHECK(!exists(w.ws + "/t.txt"));
}

BOOST_AUTO_TEST_CASE(fifo_writers_do_not_stall_the_supervisor) {
  Workspace w;
  const auto r = shConfined(w.rules,
                            "mkfifo p; (sleep 0.2; cat p > got.txt) & echo through > p; wait;"
                            " echo x > after.txt; cat got.txt",
                            w.at());
  BOOST_CHECK_MESSAGE(r.status == 0 && r.out == "through\n", describe(r));
  BOOST_CHECK(exists(w.ws + "/after.txt"));
}
