// The native backend end to end through the Runtime: the policy compiled by
// the core from a SandboxSpec, a real bubblewrap sandbox, real commands. Every
// session is launched with an explicit native backend, so nothing here can
// pass by running on the host. ctest runs this suite as root and again as an
// unprivileged user (native_bwrap_runtime_test_unprivileged).
#define BOOST_TEST_MODULE native_bwrap_runtime
#include <boost/test/unit_test.hpp>

#include "native_bwrap_support.hpp"
#include "support/temp_tree.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

using namespace ccsandbox;
using namespace ccsandbox::test;
namespace fs = std::filesystem;

namespace {

bool exists(const std::string &p) {
  return fs::exists(fs::symlink_status(p));
}

}  // namespace

BOOST_FIXTURE_TEST_SUITE(native_bwrap_runtime, FakeHomeFixture)

BOOST_AUTO_TEST_CASE(read_denied_ssh_is_unreadable_and_not_writable) {
  NativeSession s(runtime, spec());
  auto read = s.sh("cat ~/.ssh/id_ed25519; ls -A ~/.ssh");
  BOOST_TEST(read.out.find("PRIVATE-KEY") == std::string::npos);
  BOOST_TEST(read.out.find("id_ed25519") == std::string::npos);  // masked by an empty dir
  auto write = s.sh("echo planted > ~/.ssh/authorized_keys");
  BOOST_TEST(write.status != 0);
  BOOST_TEST(!exists(home + "/.ssh/authorized_keys"));
  BOOST_TEST(!write.violations().empty());  // the supervisor's refusal
  // The rest of the home is still there and writable.
  BOOST_TEST(s.sh("echo ok > ~/work/new && cat ~/work/README").status == 0);
  BOOST_TEST(readFile(work + "/new") == "ok\n");
}

BOOST_AUTO_TEST_CASE(read_denied_file_inside_an_allowed_dir_is_unreadable) {
  NativeSession s(runtime, spec());
  auto r = s.sh("cat ~/.netrc");
  BOOST_TEST(r.out.find("hunter2") == std::string::npos);
  BOOST_TEST(s.sh("echo x >> ~/.netrc").status != 0);
  BOOST_TEST(readFile(home + "/.netrc") == "machine example.com password hunter2\n");
}

BOOST_AUTO_TEST_CASE(nested_write_root_under_unrelated_rules_stays_writable) {
  std::string outer = tree.dir("outer");
  std::string inner = tree.dir("outer/inner");
  tree.dir("outer/protected");
  tree.file("outer/file", "outer\n");
  auto sp = spec();
  sp.bindMounts.push_back({outer, outer, true});   // read-only
  sp.bindMounts.push_back({inner, inner, false});  // writable inside it
  sp.protectedPaths.push_back(outer + "/protected");
  NativeSession s(runtime, sp);
  BOOST_TEST(s.sh("echo in > " + inner + "/x").status == 0);
  BOOST_TEST(readFile(inner + "/x") == "in\n");
  BOOST_TEST(s.sh("echo out > " + outer + "/y").status != 0);
  BOOST_TEST(!exists(outer + "/y"));
  BOOST_TEST(s.sh("cat " + outer + "/file").out == "outer\n");
}

BOOST_AUTO_TEST_CASE(writes_outside_the_write_roots_fail) {
  std::string elsewhere = tree.dir("elsewhere");
  NativeSession s(runtime, spec());
  for (const std::string &target :
       {std::string("/usr/ccsandbox-probe"), std::string("/etc/ccsandbox-probe"), elsewhere + "/x",
        std::string("/ccsandbox-probe")}) {
    BOOST_TEST_CONTEXT(target) {
      BOOST_TEST(s.sh("echo x > " + target).status != 0);
      BOOST_TEST(!exists(target));
    }
  }
  auto r = s.sh("touch /usr/ccsandbox-probe");
  auto v = r.violations();
  // One exact fact from the supervisor (the mount would have said EROFS; the
  // supervisor judges the create first, outside every write root).
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].action == "file-write-create");
  BOOST_TEST(v[0].target == "/usr/ccsandbox-probe");
  BOOST_TEST(r.err.find("Permission denied") != std::string::npos);  // passed through unchanged
}

BOOST_AUTO_TEST_CASE(protected_paths_inside_a_writable_bind_are_not_writable) {
  std::string repo = tree.dir("home/work/original");
  tree.file("home/work/original/main.c", "int main;\n");
  auto sp = spec();
  sp.protectedPaths.push_back(repo);
  NativeSession s(runtime, sp);
  BOOST_TEST(s.sh("echo evil > " + repo + "/main.c").status != 0);
  BOOST_TEST(s.sh("touch " + repo + "/new").status != 0);
  BOOST_TEST(s.sh("rm -f " + repo + "/main.c").status != 0);
  BOOST_TEST(readFile(repo + "/main.c") == "int main;\n");
  BOOST_TEST(!exists(repo + "/new"));
  BOOST_TEST(s.sh("touch " + work + "/sibling").status == 0);  // the rest of the bind
}

BOOST_AUTO_TEST_CASE(git_hooks_and_config_are_not_writable) {
  tree.dir("home/work/.git/hooks");
  tree.file("home/work/.git/config", "[core]\n");
  tree.dir("home/work/.git/objects");
  NativeSession s(runtime, spec());
  BOOST_TEST(s.sh("printf '#!/bin/sh\\n' > .git/hooks/pre-commit").status != 0);
  BOOST_TEST(!exists(work + "/.git/hooks/pre-commit"));
  BOOST_TEST(s.sh("echo '[alias] x = !evil' >> .git/config").status != 0);
  BOOST_TEST(readFile(work + "/.git/config") == "[core]\n");
  BOOST_TEST(s.sh("touch .git/objects/ok").status == 0);  // the repository still works
}

BOOST_AUTO_TEST_CASE(review_mode_writes_nothing_but_runner_state_dirs) {
  std::string state = tree.dir("runner-state");
  auto sp = spec(SandboxMode::review);
  sp.runnerStateDirs.push_back(state);
  NativeSession s(runtime, sp);
  BOOST_TEST(s.sh("touch " + work + "/x").status != 0);
  BOOST_TEST(s.sh("touch " + home + "/y").status != 0);
  BOOST_TEST(!exists(work + "/x"));
  BOOST_TEST(!exists(home + "/y"));
  BOOST_TEST(s.sh("cat README").out == "readme\n");  // still readable
  BOOST_TEST(s.sh("echo s > " + state + "/session").status == 0);
  BOOST_TEST(readFile(state + "/session") == "s\n");
}

BOOST_AUTO_TEST_CASE(ps_inside_sees_only_the_sandbox) {
  NativeSession s(runtime, spec());
  auto r = s.sh("ls /proc | grep -E '^[0-9]+$' | sort -n | tr '\\n' ' '");
  // pid 1 is our helper, then this shell and its pipeline: nothing of the host.
  BOOST_TEST(r.out.rfind("1 ", 0) == 0);
  BOOST_TEST(r.out.find(" " + std::to_string(::getpid()) + " ") == std::string::npos);
  auto comm = s.sh("cat /proc/1/cmdline | tr '\\0' ' '");
  BOOST_TEST(comm.out.find("ccsandbox-bwrap-helper") != std::string::npos);
  auto count = s.sh("ls /proc | grep -cE '^[0-9]+$'");
  BOOST_TEST(std::stoi(count.out) < 10);
}

BOOST_AUTO_TEST_CASE(kill_9_of_pid_1_inside_does_not_end_the_helper) {
  NativeSession s(runtime, spec());
  auto r = s.sh("kill -9 1; kill -TERM 1; echo still");
  BOOST_TEST(r.out == "still\n");
  // The session is still warm: the next command runs in the same sandbox.
  BOOST_TEST(s.sh("echo again").out == "again\n");
  BOOST_TEST(toString(s.session().handle().state) == "warm");
}

BOOST_AUTO_TEST_CASE(a_direct_connection_leaves_nowhere) {
  // A listener on the host's loopback: the sandbox has its own, empty network.
  int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  BOOST_REQUIRE(::bind(listener, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  BOOST_REQUIRE(::listen(listener, 4) == 0);
  socklen_t len = sizeof addr;
  ::getsockname(listener, reinterpret_cast<sockaddr *>(&addr), &len);
  std::string port = std::to_string(ntohs(addr.sin_port));
  NativeSession s(runtime, spec());
  const std::string connect =
      "import socket,sys\n"
      "s=socket.socket(); s.settimeout(3)\n"
      "try:\n s.connect((sys.argv[1], int(sys.argv[2]))); print('connected')\n"
      "except OSError as e: print('refused', e.errno)\n";
  auto local = s.run({"python3", "-c", connect, "127.0.0.1", port});
  BOOST_TEST(local.out.find("refused") == 0, local.out + local.err);
  // Only after loopback proved isolated: a public address (TEST-NET-1, never
  // routed) has no route at all — nothing is sent.
  auto pub = s.run({"python3", "-c", connect, "192.0.2.1", "80"});
  BOOST_TEST(pub.out.find("refused") == 0, pub.out + pub.err);
  ::close(listener);
}

BOOST_AUTO_TEST_CASE(the_session_proxy_is_the_way_out_and_refusals_are_violations) {
  NativeSession s(runtime, spec());
  // The proxy variables point at loopback inside; the helper relays to the
  // session's proxy, which refuses a host outside the allowlist (no DNS, no
  // packet: the name is judged first) and reports it.
  auto r = s.run({"curl", "-sS", "--max-time", "10", "http://denied.invalid/"});
  BOOST_TEST(r.out.find("refused") != std::string::npos, r.out + r.err);
  bool reported = false;
  for (const auto &e : s.events())
    if (e.type == SandboxEventType::violation && e.violation &&
        e.violation->action == "network-outbound" && e.violation->target == "denied.invalid:80")
      reported = true;
  BOOST_TEST(reported);
}

BOOST_AUTO_TEST_CASE(guest_path_different_from_host_path) {
  std::string src = tree.dir("checkout");
  tree.file("checkout/f", "content\n");
  SandboxSpec sp;
  sp.bindMounts.push_back({src, "/workspace", false});
  sp.guestWorkdir = "/workspace";
  NativeSession s(runtime, sp);
  auto r = s.sh("pwd; cat f; echo new > g");
  BOOST_TEST(r.out == "/workspace\ncontent\n");
  BOOST_TEST(readFile(src + "/g") == "new\n");
}

BOOST_AUTO_TEST_CASE(warm_session_runs_commands_without_a_new_bubblewrap) {
  NativeSession s(runtime, spec());
  auto pid = s.session().handle().details.at("bwrapPid");
  BOOST_TEST(s.sh("echo one > /tmp/state").status == 0);
  // The same sandbox: its private /tmp kept the file.
  BOOST_TEST(s.sh("cat /tmp/state").out == "one\n");
  BOOST_TEST(s.session().handle().details.at("bwrapPid") == pid);
  auto types = s.events();
  BOOST_REQUIRE(types.size() >= 2);
  BOOST_TEST(toString(types[0].type) == "starting");
  BOOST_TEST(toString(types[1].type) == "ready");
  BOOST_TEST(toString(types[1].backend.value_or(SandboxBackend::none)) == "native");
}

BOOST_AUTO_TEST_CASE(a_session_launched_from_a_thread_that_ended_lives_on) {
  // --die-with-parent follows the thread that forked bubblewrap: the plugin
  // forks from its own long-lived thread, so a caller's thread may come and go.
  std::unique_ptr<NativeSession> s;
  std::thread([&] { s = std::make_unique<NativeSession>(runtime, spec()); }).join();
  BOOST_TEST(s->sh("echo alive").out == "alive\n");
}

BOOST_AUTO_TEST_CASE(state_is_active_while_a_command_runs) {
  NativeSession s(runtime, spec());
  ExecOptions o;
  o.argv = {"sh", "-c", "read line"};
  int fds[2];
  BOOST_REQUIRE(::pipe(fds) == 0);
  o.stdinFd = fds[0];
  auto p = s.session().exec(o);
  BOOST_TEST(toString(s.session().handle().state) == "active");
  ::close(fds[1]);  // EOF: `read` returns, the command ends
  p->wait();
  ::close(fds[0]);
  BOOST_TEST(toString(s.session().handle().state) == "warm");
}

BOOST_AUTO_TEST_CASE(timeout_ends_the_whole_process_group) {
  NativeSession s(runtime, spec());
  ExecOptions o;
  o.timeout = std::chrono::milliseconds(300);
  auto r = s.sh("(sleep 30; echo leaked > " + work + "/leak) & sleep 30", o);
  BOOST_TEST(r.has(SandboxEventType::killed));
  BOOST_TEST(r.status >= 128);
  // The background child died with its group: nothing is left in the sandbox.
  auto left = s.sh("cat /proc/[0-9]*/comm 2>/dev/null | grep -c '^sleep$'");
  BOOST_TEST(left.out == "0\n");
  BOOST_TEST(!exists(work + "/leak"));
}

BOOST_AUTO_TEST_CASE(command_not_found_and_bad_cwd_are_answers) {
  NativeSession s(runtime, spec());
  auto missing = s.run({"no-such-command-ccsandbox"});
  BOOST_TEST(missing.status == 127);
  ExecOptions o;
  o.cwd = "/no/such/dir";
  BOOST_TEST(s.run({"true"}, o).status == 126);
}

BOOST_AUTO_TEST_CASE(standard_policy_runs_natively_and_refuses_new_secret_names) {
  // The seeds' refusal is lifted: the supervisor enforces the globs at creation.
  NativeSession s(runtime, spec(), true);
  auto r = s.sh("cd " + work + " && echo x > .env");
  BOOST_TEST(r.status != 0);
  BOOST_TEST(!exists(work + "/.env"));
  auto v = r.violations();
  BOOST_REQUIRE_EQUAL(v.size(), 1u);
  BOOST_TEST(v[0].action == "file-write-create");
  BOOST_TEST(v[0].target == work + "/.env");
  BOOST_TEST(s.sh("cd " + work + " && echo ok > notes.txt").status == 0);
  BOOST_TEST(readFile(work + "/notes.txt") == "ok\n");
}

BOOST_AUTO_TEST_SUITE_END()
