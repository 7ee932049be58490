// The kernel layers on a real child: the seccomp filter's refusals, read-only
// opens staying in the kernel, ENOSYS when the supervisor is gone, Landlock
// (writes, exec from write roots, grants, signal scoping), and calls made
// with the caller's credentials.
#define BOOST_TEST_MODULE confine_kernel_layers
#include <boost/test/unit_test.hpp>

#include "ccsandbox/confine/landlock_ruleset.hpp"
#include "ccsandbox/confine/supervisor.hpp"
#include "confine_programs/confine_harness.hpp"
#include "support/temp_tree.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

using namespace ccsandbox;
using namespace ccsandbox::test;

namespace {

std::map<std::string, std::string> lines(const std::string &out) {
  std::map<std::string, std::string> m;
  std::istringstream in(out);
  std::string name, value;
  while (in >> name >> value) m[name] = value;
  return m;
}

}  // namespace

BOOST_AUTO_TEST_CASE(probes_describe_this_host) {
  const auto ll = confine::probeLandlock();
  BOOST_CHECK(!ll.note.empty());
  BOOST_CHECK_EQUAL(ll.usable, ll.abi >= 2);
  BOOST_CHECK_EQUAL(ll.scopes, ll.abi >= 6);
  const auto sup = confine::probeSupervisor();
  BOOST_CHECK_MESSAGE(sup.available, sup.note);
  // run_unprivileged.sh really dropped root.
  if (unprivilegedRun()) BOOST_CHECK_NE(::geteuid(), 0u);
}

BOOST_AUTO_TEST_CASE(side_doors_are_refused_and_read_only_opens_stay_in_the_kernel) {
  TempTree tree;
  const auto ws = tree.dir("ws");
  const auto r = runConfined(standardRules(ws), {CONFINE_SIDE_DOORS}, inDir(ws));
  BOOST_REQUIRE_MESSAGE(r.status == 0, describe(r));
  auto got = lines(r.out);
  for (const char *name :
       {"io_uring_setup", "ptrace", "process_vm_writev", "open_by_handle_at", "kexec_load", "bpf",
        "mount", "fsopen", "unshare_user", "clone_newuser", "seccomp_listener"})
    BOOST_CHECK_MESSAGE(got[name] == "EPERM", name << " gave " << got[name]);
  BOOST_CHECK_EQUAL(got["clone3"], "ENOSYS");
  BOOST_CHECK_EQUAL(got["openat2"], "ENOSYS");
  BOOST_CHECK_EQUAL(got["seccomp_plain"], "OK");  // an ordinary nested filter is fine
  BOOST_CHECK_EQUAL(got["read_only_open"], "OK");
  // The loader's opens and the program's read-only open never reached the supervisor.
  BOOST_CHECK_EQUAL(r.stats.notifications, 0u);
}

BOOST_AUTO_TEST_CASE(the_supervisor_ends_when_the_command_is_gone) {
  TempTree tree;
  const auto ws = tree.dir("ws");
  const auto r = shConfined(standardRules(ws), "echo x > a; (echo y > b) & wait", inDir(ws));
  BOOST_CHECK_MESSAGE(r.status == 0, describe(r));
  BOOST_CHECK(r.supervisorEndedOnHangUp);
  BOOST_CHECK_EQUAL(r.stats.notifications, 2u);
  BOOST_CHECK_EQUAL(r.stats.performed, 2u);
  BOOST_CHECK_GE(r.stats.bookkept, 1u);  // the exec of sh
}

BOOST_AUTO_TEST_CASE(a_dead_supervisor_means_ENOSYS_never_an_unchecked_call) {
  TempTree tree;
  const auto ws = tree.dir("ws");
  auto opts = inDir(ws);
  opts.supervisorDiesAfter = "ready";
  const auto r = shConfined(standardRules(ws),
                            "echo ready; read line; echo x > created.txt; mkdir d; ln -s a b;"
                            " /bin/true; echo exec=$?; echo done",
                            opts);
  // exec is reported to the supervisor too: with it gone, nothing new runs.
  BOOST_CHECK_MESSAGE(r.out == "ready\nexec=127\ndone\n" || r.out == "ready\nexec=126\ndone\n",
                      describe(r));
  BOOST_CHECK(r.err.find("Function not implemented") != std::string::npos);
  BOOST_CHECK(!exists(ws + "/created.txt"));
  BOOST_CHECK(!exists(ws + "/d"));
  BOOST_CHECK(!exists(ws + "/b"));
}

BOOST_AUTO_TEST_CASE(writes_outside_the_write_roots_are_refused_with_a_violation) {
  TempTree tree;
  const auto ws = tree.dir("ws");
  const auto outside = tree.dir("outside");
  const auto r = shConfined(standardRules(ws), "echo x > " + outside + "/f", inDir(ws));
  BOOST_CHECK_NE(r.status, 0);
  BOOST_CHECK(!exists(outside + "/f"));
  BOOST_REQUIRE_EQUAL(r.violations.size(), 1u);
  BOOST_CHECK_EQUAL(r.violations[0].action, "file-write-create");
  BOOST_CHECK_EQUAL(r.violations[0].target, std::filesystem::canonical(outside).string() + "/f");
  BOOST_CHECK_EQUAL(r.violations[0].reason, "outside the write roots");
}

BOOST_AUTO_TEST_CASE(landlock_blocks_what_the_supervisor_does_not_see) {
  const auto ll = confine::probeLandlock();
  if (!ll.usable) {
    BOOST_TEST_MESSAGE("skipped: " << ll.note);
    return;
  }
  TempTree tree;
  const auto ws = tree.dir("ws");
  const auto outside = tree.dir("outside");
  // A Unix socket is a name bind() creates, not a supervised call: Landlock
  // (MAKE_SOCK only beneath write roots) is what stops it outside.
  const std::string script =
      "import socket,sys\n"
      "for p in sys.argv[1:]:\n"
      "  s=socket.socket(socket.AF_UNIX)\n"
      "  try:\n"
      "    s.bind(p); print(p.rsplit('/',1)[1], 'OK')\n"
      "  except OSError as e: print(p.rsplit('/',1)[1], e.errno)\n";
  const auto r = runConfined(
      standardRules(ws), {"/usr/bin/python3", "-c", script, ws + "/in.sock", outside + "/out.sock"},
      inDir(ws));
  BOOST_CHECK_MESSAGE(r.out == "in.sock OK\nout.sock 13\n", describe(r));
  BOOST_CHECK(!exists(outside + "/out.sock"));
}

BOOST_AUTO_TEST_CASE(no_exec_from_a_write_root_unless_granted) {
  const auto ll = confine::probeLandlock();
  if (!ll.usable) {
    BOOST_TEST_MESSAGE("skipped: " << ll.note);
    return;
  }
  TempTree tree;
  const auto ws = tree.dir("ws");
  tree.dir("ws/granted");
  std::filesystem::copy_file("/bin/true", ws + "/true");
  std::filesystem::copy_file("/bin/true", ws + "/granted/true");
  auto rules = standardRules(ws);
  rules.execGrantRoots = {ws + "/granted"};
  const auto r = shConfined(rules,
                            "./true; echo plain=$?; ./granted/true; echo granted=$?; "
                            "/bin/true; echo system=$?",
                            inDir(ws));
  BOOST_CHECK_MESSAGE(r.out == "plain=126\ngranted=0\nsystem=0\n", describe(r));

  rules.execBlockWritableRoots = false;
  const auto open = shConfined(rules, "./true; echo plain=$?", inDir(ws));
  BOOST_CHECK_MESSAGE(open.out == "plain=0\n", describe(open));
}

BOOST_AUTO_TEST_CASE(signals_are_scoped_to_the_command) {
  const auto ll = confine::probeLandlock();
  if (!ll.scopes) {
    BOOST_TEST_MESSAGE("skipped: Landlock ABI " << ll.abi << " has no signal scoping");
    return;
  }
  TempTree tree;
  const auto ws = tree.dir("ws");
  const auto self = std::to_string(::getpid());
  const auto r = shConfined(standardRules(ws),
                            "kill -0 " + self +
                                " 2>/dev/null; echo outside=$?; "
                                "sleep 5 & kill $!; wait $!; echo own=$?",
                            inDir(ws));
  // Our own process is outside the command's Landlock domain; its children are inside.
  BOOST_CHECK_MESSAGE(r.out == "outside=1\nown=143\n", describe(r));
}

BOOST_AUTO_TEST_CASE(calls_are_made_with_the_callers_credentials) {
  if (::geteuid() != 0) {
    BOOST_TEST_MESSAGE("skipped: needs root to start a command as another user");
    return;
  }
  TempTree tree;
  const auto ws = tree.dir("ws");
  tree.dir("ws/rootonly");
  ::chmod(tree.path().c_str(), 0755);
  ::chmod(ws.c_str(), 0777);
  ::chmod((ws + "/rootonly").c_str(), 0755);
  const auto r =
      shConfined(standardRules(ws),
                 "echo x > mine.txt; echo a=$?; echo x > rootonly/f 2>/dev/null; echo b=$?", [&] {
                   auto o = inDir(ws);
                   o.dropToUid = 65534;
                   return o;
                 }());
  BOOST_CHECK_MESSAGE(r.out == "a=0\nb=2\n", describe(r));
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::stat((ws + "/mine.txt").c_str(), &st), 0);
  BOOST_CHECK_EQUAL(st.st_uid, 65534u);
  BOOST_CHECK_EQUAL(st.st_gid, 65534u);
  BOOST_CHECK(!exists(ws + "/rootonly/f"));  // the kernel refused it as the caller: no violation
  BOOST_CHECK(r.violations.empty());
}

BOOST_AUTO_TEST_CASE(a_thread_that_changes_its_credentials_is_seen_at_once) {
  if (::geteuid() != 0) {
    BOOST_TEST_MESSAGE("skipped: needs root to change users");
    return;
  }
  TempTree tree;
  const auto ws = tree.dir("ws");
  ::chmod(tree.path().c_str(), 0755);
  ::chmod(ws.c_str(), 0777);
  // Without exec (setresuid is reported), and through exec of setpriv and touch.
  const auto r = runConfined(standardRules(ws),
                             {"/usr/bin/python3", "-c",
                              "import os\nopen('root.txt','w').close()\nos.setgroups([])\n"
                              "os.setresgid(65534,65534,65534)\nos.setresuid(65534,65534,65534)\n"
                              "open('nobody.txt','w').close()\n"},
                             inDir(ws));
  BOOST_REQUIRE_MESSAGE(r.status == 0, describe(r));
  const auto e = shConfined(standardRules(ws),
                            "touch before; setpriv --reuid=65534 --regid=65534 --clear-groups "
                            "touch after",
                            inDir(ws));
  BOOST_REQUIRE_MESSAGE(e.status == 0, describe(e));
  // execve sets the fsuid back to the effective uid: what the supervisor knew
  // of the thread before the exec no longer holds after it.
  const auto f = runConfined(standardRules(ws),
                             {"/usr/bin/python3", "-c",
                              "import ctypes, os\nlibc = ctypes.CDLL(None)\n"
                              "libc.setfsgid(65534); libc.setfsuid(65534)\n"
                              "open('fs.txt','w').close()\n"
                              "os.execv('/usr/bin/touch', ['touch', 'exec.txt'])\n"},
                             inDir(ws));
  BOOST_REQUIRE_MESSAGE(f.status == 0, describe(f));
  struct stat st {};
  for (auto [name, uid] :
       {std::pair{"root.txt", 0u}, std::pair{"nobody.txt", 65534u}, std::pair{"before", 0u},
        std::pair{"after", 65534u}, std::pair{"fs.txt", 65534u}, std::pair{"exec.txt", 0u}}) {
    BOOST_REQUIRE_EQUAL(::stat((ws + "/" + name).c_str(), &st), 0);
    BOOST_CHECK_MESSAGE(st.st_uid == uid, name << " belongs to " << st.st_uid);
  }
}
