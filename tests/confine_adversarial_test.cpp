// Issue 6, item 7: each of these tries to leave a protected name behind under
// the confinement (real processes, real kernel) and must fail — with one exact
// violation where the supervisor refused it.
#define BOOST_TEST_MODULE confine_adversarial
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
  confine::ConfineRules rules = standardRules(ws);
  ConfinedOptions at() const { return inDir(ws); }
};

bool refusedOnce(const ConfinedResult &r, const std::string &action, const std::string &target) {
  return r.violations.size() == 1 && r.violations[0].action == action &&
         r.violations[0].target == target;
}

// Every name under `dir` that matches one of the standard deny globs.
std::vector<std::string> protectedNames(const std::string &dir) {
  std::vector<std::string> found;
  for (const auto &e : fs::recursive_directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name == ".env" || name.starts_with(".env.") || name.ends_with(".pem") ||
        name.ends_with(".key"))
      found.push_back(e.path().string());
  }
  return found;
}

}  // namespace

BOOST_AUTO_TEST_CASE(shell_redirection) {
  Workspace w;
  const auto r = shConfined(w.rules, "echo x > .env", w.at());
  BOOST_CHECK_NE(r.status, 0);
  BOOST_CHECK(!exists(w.ws + "/.env"));
  BOOST_CHECK_MESSAGE(refusedOnce(r, "file-write-create", w.ws + "/.env"), describe(r));
  BOOST_CHECK_EQUAL(r.violations.at(0).reason, "writeDenyGlobs .env");

  const auto more = shConfined(w.rules,
                               "echo x > .env.local; echo x >> id.pem; echo x > server.key;"
                               " echo x > ok.txt",
                               w.at());
  BOOST_CHECK_MESSAGE(more.violations.size() == 3, describe(more));
  BOOST_CHECK(protectedNames(w.ws).empty());
  BOOST_CHECK(exists(w.ws + "/ok.txt"));
}

BOOST_AUTO_TEST_CASE(cp_and_install) {
  Workspace w;
  const auto r = shConfined(w.rules, "echo data > ok.txt && cp ok.txt .env", w.at());
  BOOST_CHECK_NE(r.status, 0);
  BOOST_CHECK(!exists(w.ws + "/.env"));
  BOOST_CHECK_MESSAGE(refusedOnce(r, "file-write-create", w.ws + "/.env"), describe(r));

  const auto i = shConfined(w.rules, "install -m 600 ok.txt secret.key", w.at());
  BOOST_CHECK_NE(i.status, 0);
  BOOST_CHECK(protectedNames(w.ws).empty());
  BOOST_CHECK_MESSAGE(!i.violations.empty() && i.violations[0].target == w.ws + "/secret.key",
                      describe(i));
}

BOOST_AUTO_TEST_CASE(mv_onto_a_protected_name) {
  Workspace w;
  const auto r = shConfined(w.rules, "echo secret > tmp && mv tmp .env", w.at());
  BOOST_CHECK_NE(r.status, 0);
  BOOST_CHECK(!exists(w.ws + "/.env"));
  BOOST_CHECK(exists(w.ws + "/tmp"));
  BOOST_CHECK_MESSAGE(refusedOnce(r, "file-write-rename", w.ws + "/.env"), describe(r));
}

BOOST_AUTO_TEST_CASE(ln_and_ln_s) {
  Workspace w;
  const auto hard = shConfined(w.rules, "echo x > ok.txt && ln ok.txt .env", w.at());
  BOOST_CHECK(!exists(w.ws + "/.env"));
  BOOST_CHECK_MESSAGE(refusedOnce(hard, "file-write-link", w.ws + "/.env"), describe(hard));

  const auto soft = shConfined(w.rules, "ln -s ok.txt x.pem", w.at());
  BOOST_CHECK(!exists(w.ws + "/x.pem"));
  BOOST_CHECK_MESSAGE(refusedOnce(soft, "file-write-symlink", w.ws + "/x.pem"), describe(soft));

  // A harmless name pointing at a protected one: writing through it is judged by its target.
  const auto via = shConfined(w.rules, "ln -s .env alias && echo x > alias", w.at());
  BOOST_CHECK(exists(w.ws + "/alias"));
  BOOST_CHECK(!exists(w.ws + "/.env"));
  BOOST_CHECK_MESSAGE(refusedOnce(via, "file-write-create", w.ws + "/.env"), describe(via));
}

BOOST_AUTO_TEST_CASE(tar_x_of_an_archive_holding_id_pem) {
  Workspace w;
  w.tree.file("staging/readme.txt", "hello\n");
  w.tree.file("staging/keys/id.pem", "-----BEGIN-----\n");
  const auto archive = w.tree.path() + "/a.tar";
  const auto made = runChild({"tar", "cf", archive, "-C", w.tree.path() + "/staging", "."});
  BOOST_REQUIRE_EQUAL(made.status, 0);
  const auto r = runConfined(w.rules, {"tar", "xf", archive}, w.at());
  BOOST_CHECK_NE(r.status, 0);
  BOOST_CHECK(exists(w.ws + "/readme.txt"));
  BOOST_CHECK(exists(w.ws + "/keys"));
  BOOST_CHECK(!exists(w.ws + "/keys/id.pem"));
  BOOST_CHECK(protectedNames(w.ws).empty());
  bool named = false;
  for (const auto &v : r.violations) named |= v.target == w.ws + "/keys/id.pem";
  BOOST_CHECK_MESSAGE(named, describe(r));
}

BOOST_AUTO_TEST_CASE(python_and_perl_open) {
  Workspace w;
  const auto py =
      runConfined(w.rules, {"/usr/bin/python3", "-c", "open('.env','w').write('x')"}, w.at());
  BOOST_CHECK_NE(py.status, 0);
  BOOST_CHECK(py.err.find("PermissionError") != std::string::npos);
  BOOST_CHECK_MESSAGE(refusedOnce(py, "file-write-create", w.ws + "/.env"), describe(py));

  const auto pl =
      runConfined(w.rules, {"perl", "-e", "open(my $f, '>', 'sub/x.pem') or die \"$!\\n\";"},
                  inDir(w.tree.dir("ws/sub") + "/.."));
  BOOST_CHECK_NE(pl.status, 0);
  BOOST_CHECK(pl.err.find("Permission denied") != std::string::npos);
  BOOST_CHECK(!exists(w.ws + "/sub/x.pem"));
}

BOOST_AUTO_TEST_CASE(o_tmpfile_then_linkat) {
  Workspace w;
  const auto r = runConfined(w.rules, {CONFINE_TMPFILE_LINK, w.ws, "x.pem"}, w.at());
  BOOST_CHECK_MESSAGE(r.out.find("tmpfile OK\n") != std::string::npos, describe(r));
  BOOST_CHECK(r.out.find("link-proc EACCES\n") != std::string::npos);
  BOOST_CHECK(r.out.find("link-empty OK") == std::string::npos);
  BOOST_CHECK(!exists(w.ws + "/x.pem"));
  // And the other side: an anonymous file may be given an ordinary name.
  const auto ok = runConfined(w.rules, {CONFINE_TMPFILE_LINK, w.ws, "ok.txt"}, w.at());
  BOOST_CHECK_MESSAGE(ok.out.find("link-proc OK\n") != std::string::npos, describe(ok));
  BOOST_CHECK_EQUAL(readFile(w.ws + "/ok.txt"), "secret\n");
}

BOOST_AUTO_TEST_CASE(io_uring_open) {
  Workspace w;
  const auto r = runConfined(w.rules, {CONFINE_IO_URING_OPEN, "x.pem"}, w.at());
  BOOST_CHECK_MESSAGE(r.status == 3 && r.out == "io_uring_setup: EPERM\n", describe(r));
  BOOST_CHECK(!exists(w.ws + "/x.pem"));
}

BOOST_AUTO_TEST_CASE(threads_flipping_the_path_buffer) {
  Workspace w;
  const auto r = runConfined(w.rules, {CONFINE_RACING_THREADS, "20000"}, w.at());
  BOOST_TEST_MESSAGE("racing threads: " << r.out << " violations=" << r.violations.size());
  BOOST_CHECK_MESSAGE(r.status == 0, describe(r));
  BOOST_CHECK(r.out.find("pem-seen=0\n") != std::string::npos);
  BOOST_CHECK(protectedNames(w.ws).empty());
  BOOST_CHECK(exists(w.ws + "/ok.txt"));
  // Every file the race left behind was created with mode 0666 under umask 027.
  for (const auto &e : fs::directory_iterator(w.ws))
    BOOST_CHECK_MESSAGE(modeOf(e.path().string()) == 0640,
                        e.path() << " has mode " << std::oct << modeOf(e.path().string()));
  for (const auto &v : r.violations) BOOST_CHECK(v.target.ends_with(".pem"));
}

BOOST_AUTO_TEST_CASE(nested_and_late_directories) {
  Workspace w;
  w.tree.dir("ws/a/b");
  // a/b existed at launch; c/d is created by the command itself.
  const auto r = shConfined(w.rules,
                            "echo x > a/b/.env; mkdir -p c/d && echo x > c/d/.env;"
                            " cd c/d && echo x > ../.env.prod; echo x > /proc/self/cwd/.env;"
                            " echo x > " +
                                w.ws + "/c/../c/d/x.pem",
                            w.at());
  BOOST_CHECK(protectedNames(w.ws).empty());
  BOOST_CHECK(exists(w.ws + "/c/d"));
  std::vector<std::string> targets;
  for (const auto &v : r.violations) targets.push_back(v.target);
  const std::vector<std::string> want = {w.ws + "/a/b/.env", w.ws + "/c/d/.env",
                                         w.ws + "/c/.env.prod", w.ws + "/c/d/.env",
                                         w.ws + "/c/d/x.pem"};
  BOOST_CHECK_MESSAGE(targets == want, describe(r));
}

BOOST_AUTO_TEST_CASE(dirfd_relative_creation) {
  Workspace w;
  w.tree.dir("ws/deep/er");
  const auto r = runConfined(
      w.rules,
      {"/usr/bin/python3", "-c",
       "import os\nd=os.open('deep/er', os.O_RDONLY|os.O_DIRECTORY)\n"
       "for n in ('ok.txt', '.env'):\n"
       "  try:\n    os.close(os.open(n, os.O_CREAT|os.O_WRONLY, 0o644, dir_fd=d)); print(n, 'OK')\n"
       "  except OSError as e: print(n, e.errno)\n"},
      w.at());
  BOOST_CHECK_MESSAGE(r.out == "ok.txt OK\n.env 13\n", describe(r));
  BOOST_CHECK(exists(w.ws + "/deep/er/ok.txt"));
  BOOST_CHECK(refusedOnce(r, "file-write-create", w.ws + "/deep/er/.env"));
}

BOOST_AUTO_TEST_CASE(protected_paths_inside_a_root) {
  Workspace w;
  w.tree.file("ws/.git/hooks/pre-commit", "#!/bin/sh\n");
  w.tree.file("ws/.git/HEAD", "ref: refs/heads/main\n");
  const auto r = shConfined(w.rules,
                            "echo evil > .git/hooks/pre-commit; rm -rf .git/hooks; mv .git g;"
                            " echo ok > .git/HEAD",
                            w.at());
  BOOST_CHECK_EQUAL(readFile(w.ws + "/.git/hooks/pre-commit"), "#!/bin/sh\n");
  BOOST_CHECK(exists(w.ws + "/.git/hooks"));
  BOOST_CHECK(!exists(w.ws + "/g"));
  BOOST_CHECK_EQUAL(readFile(w.ws + "/.git/HEAD"), "ok\n");  // the rest of .git stays writable
  bool renameRefused = false;
  for (const auto &v : r.violations)
    renameRefused |= v.action == "file-write-rename" && v.target == w.ws + "/.git";
  BOOST_CHECK_MESSAGE(renameRefused, describe(r));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_of_a_protected_path) {
  // ~/.config/git/config protected while ~/.config does not exist yet: a
  // symlink, or a prepared directory renamed in, standing there would give
  // the protected file content of the command's choosing. An empty directory
  // may appear; the protected name beneath it stays refused.
  Workspace w;
  w.rules.writeDeny.push_back(w.ws + "/.config/git/config");
  const auto evil = fs::canonical(w.tree.dir("ws/evil/git")).string();
  const auto r = shConfined(w.rules,
                            "echo '[core] fsmonitor = sh -c id' > evil/git/config;"
                            " ln -s evil .config; mv evil .config;"
                            " mkdir .config && mkdir .config/git && ln -s ../evil/git/config "
                            ".config/git/config; echo x > .config/git/config; echo ok",
                            w.at());
  BOOST_CHECK_MESSAGE(r.out == "ok\n", describe(r));
  BOOST_CHECK(exists(evil + "/config"));
  BOOST_CHECK(fs::is_directory(fs::symlink_status(w.ws + "/.config")));
  BOOST_CHECK(!exists(w.ws + "/.config/git/config"));
  int refused = 0;
  for (const auto &v : r.violations)
    refused += v.action == "file-write-symlink" || v.action == "file-write-rename" ||
               v.action == "file-write-create";
  BOOST_CHECK_MESSAGE(refused == 4, describe(r));
}

BOOST_AUTO_TEST_CASE(symlinks_out_of_the_root) {
  Workspace w;
  const auto outside = fs::canonical(w.tree.dir("outside")).string();
  const auto r = shConfined(w.rules, "ln -s " + outside + " out && echo x > out/f", w.at());
  BOOST_CHECK(!exists(outside + "/f"));
  BOOST_CHECK_MESSAGE(refusedOnce(r, "file-write-create", outside + "/f"), describe(r));
}

BOOST_AUTO_TEST_CASE(every_kind_of_call_names_its_exact_action) {
  // The supervisor acts on a final name without looking at it only when the
  // judge allows the change whatever is there; each refusal here goes back
  // through the careful path and must still name its call and its target.
  Workspace w;
  w.tree.file("ws/.env", "SECRET=1\n");
  w.tree.file("ws/plain", "x\n");
  const auto r =
      runConfined(w.rules,
                  {"/usr/bin/python3", "-c",
                   "import os\n"
                   "def t(name, f):\n"
                   "  try: f(); print(name, 'OK')\n"
                   "  except OSError as e: print(name, e.errno)\n"
                   "t('unlink', lambda: os.unlink('.env'))\n"
                   "t('mkdir', lambda: os.mkdir('x.pem'))\n"
                   "t('mknod', lambda: os.mkfifo('f.key'))\n"
                   "t('symlink', lambda: os.symlink('plain', 'l.pem'))\n"
                   "t('rename-from', lambda: os.rename('.env', 'moved'))\n"
                   "t('rename-to', lambda: os.rename('plain', 'k.key'))\n"
                   "t('link', lambda: os.link('plain', 'h.pem'))\n"
                   "t('open', lambda: os.close(os.open('c.pem', os.O_WRONLY | "
                   "os.O_CREAT | os.O_EXCL, 0o600)))\n"
                   "t('open-existing', lambda: os.close(os.open('.env', os.O_WRONLY)))\n"},
                  w.at());
  BOOST_CHECK_MESSAGE(r.out ==
                          "unlink 13\nmkdir 13\nmknod 13\nsymlink 13\nrename-from 13\n"
                          "rename-to 13\nlink 13\nopen 13\nopen-existing 13\n",
                      describe(r));
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"file-write-unlink", ".env"}, {"file-write-mkdir", "x.pem"},
      {"file-write-mknod", "f.key"}, {"file-write-symlink", "l.pem"},
      {"file-write-rename", ".env"}, {"file-write-rename", "k.key"},
      {"file-write-link", "h.pem"},  {"file-write-create", "c.pem"},
      {"file-write-data", ".env"}};
  BOOST_REQUIRE_MESSAGE(r.violations.size() == expected.size(), describe(r));
  for (std::size_t i = 0; i < expected.size(); ++i) {
    BOOST_CHECK_EQUAL(r.violations[i].action, expected[i].first);
    BOOST_CHECK_EQUAL(r.violations[i].target, w.ws + "/" + expected[i].second);
  }
  const auto left = protectedNames(w.ws);
  BOOST_CHECK(left == std::vector<std::string>{w.ws + "/.env"});
  BOOST_CHECK(exists(w.ws + "/plain"));
}
