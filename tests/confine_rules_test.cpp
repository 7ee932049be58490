// Unit suite for the pure parts of the confinement library: final-name globs,
// the rules copied from an EffectivePolicy, and the supervisor's judge.
#define BOOST_TEST_MODULE confine_rules
#include <boost/test/unit_test.hpp>

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/name_glob.hpp"
#include "ccsandbox/confine/seccomp_filter.hpp"
#include "ccsandbox/confine/write_judge.hpp"
#include "ccsandbox/effective_policy.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>

using namespace ccsandbox;
using namespace ccsandbox::confine;

BOOST_AUTO_TEST_CASE(final_component_is_the_last_name) {
  BOOST_CHECK_EQUAL(finalComponent("/a/b/id.pem"), "id.pem");
  BOOST_CHECK_EQUAL(finalComponent("x"), "x");
  BOOST_CHECK_EQUAL(finalComponent("/a/b/"), "b");
  BOOST_CHECK_EQUAL(finalComponent("/"), "");
}

BOOST_AUTO_TEST_CASE(globs_match_the_final_name_with_shell_rules) {
  NameGlobs g({".env", ".env.*", "*.key", "*.pem"});
  BOOST_CHECK(g.match(".env"));
  BOOST_CHECK(g.match("/w/a/b/.env"));
  BOOST_CHECK(g.match("/w/.env.local"));
  BOOST_CHECK(g.match("/w/server.key"));
  BOOST_CHECK(g.match("id.pem"));
  BOOST_CHECK_EQUAL(*g.match("/w/id.pem"), "*.pem");
  BOOST_CHECK(!g.match("/w/.env/ok.txt"));  // only the final name counts
  BOOST_CHECK(!g.match("/w/env"));
  BOOST_CHECK(!g.match("/w/x.env"));
  BOOST_CHECK(!g.match("/w/keys.txt"));
  BOOST_CHECK(!g.match("/w/.pem"));  // FNM_PERIOD: '*' does not match a leading dot
  BOOST_CHECK(!g.match("/w/."));
}

BOOST_AUTO_TEST_CASE(rules_are_copied_from_the_policy_not_rederived) {
  EffectivePolicy p;
  p.writeRoots = {"/w", "/tmp/s"};
  p.writeDeny = {"/w/.git/hooks"};
  p.writeDenyGlobs = {".env", "*.pem"};
  p.exec.blockWritableRoots = false;
  p.exec.grantRoots = {"/w/bin"};
  const ConfineRules r = confineRulesFrom(p);
  BOOST_CHECK(r.writeRoots == p.writeRoots);
  BOOST_CHECK(r.writeDeny == p.writeDeny);
  BOOST_CHECK(r.writeDenyGlobs == p.writeDenyGlobs);
  BOOST_CHECK(!r.execBlockWritableRoots);
  BOOST_CHECK(r.execGrantRoots == p.exec.grantRoots);
}

BOOST_AUTO_TEST_CASE(judge_applies_globs_deny_paths_and_roots) {
  ConfineRules rules;
  rules.writeRoots = {"/nonexistent-w"};
  rules.writeDeny = {"/nonexistent-w/.git/hooks"};
  rules.writeDenyGlobs = {".env", "*.pem"};
  WriteJudge j(rules);
  BOOST_CHECK(j.judge("/nonexistent-w/a/ok.txt", NameChange::create).allowed);
  BOOST_CHECK(!j.judge("/nonexistent-w/a/.env", NameChange::create).allowed);
  BOOST_CHECK_EQUAL(j.judge("/nonexistent-w/x.pem", NameChange::write).reason,
                    "writeDenyGlobs *.pem");
  BOOST_CHECK(!j.judge("/nonexistent-w/.git/hooks/pre-commit", NameChange::create).allowed);
  // Moving or removing an ancestor of a protected path would move it aside.
  BOOST_CHECK(!j.judge("/nonexistent-w/.git", NameChange::remove).allowed);
  BOOST_CHECK(j.judge("/nonexistent-w/.git", NameChange::write).allowed);
  // Where a protected path's directory belongs (when it is missing), only an
  // empty directory may appear: a symlink or a directory renamed in there
  // would give the protected path content of the command's choosing.
  BOOST_CHECK(j.judge("/nonexistent-w/.git", NameChange::createDirectory).allowed);
  BOOST_CHECK_EQUAL(j.judge("/nonexistent-w/.git", NameChange::create).reason,
                    "writeDeny /nonexistent-w/.git/hooks (ancestor)");
  BOOST_CHECK(j.judge("/nonexistent-w/.gitx", NameChange::create).allowed);
  BOOST_CHECK(!j.judge("/nonexistent-w/.git/hooks", NameChange::createDirectory).allowed);
  BOOST_CHECK(!j.judge("/etc/passwd", NameChange::write).allowed);
  BOOST_CHECK_EQUAL(j.judge("/etc/x", NameChange::create).reason, "outside the write roots");
  BOOST_CHECK(!j.judge("/nonexistent-wx/a", NameChange::create).allowed);  // not a prefix match
  // The root itself may be written to, never created or removed.
  BOOST_CHECK(!j.judge("/nonexistent-w", NameChange::remove).allowed);
  // Devices a shell writes to; no new names under /dev.
  BOOST_CHECK(j.judge("/dev/null", NameChange::write).allowed);
  BOOST_CHECK(j.judge("/dev/pts/3", NameChange::write).allowed);
  BOOST_CHECK(!j.judge("/dev/null", NameChange::remove).allowed);
  BOOST_CHECK(!j.judge("/dev/evil", NameChange::create).allowed);
  // Anonymous objects behind /proc/self/fd (pipes, sockets) carry no name.
  BOOST_CHECK(j.judge("pipe:[1234]", NameChange::write).allowed);
  // An unlinked file's magic link reads "… (deleted)": judged by its path.
  BOOST_CHECK(j.judge("/nonexistent-w/#12 (deleted)", NameChange::write).allowed);
  BOOST_CHECK(!j.judge("/etc/#12 (deleted)", NameChange::write).allowed);
}

namespace {

// Runs the classic BPF program the way the kernel does for one call, for the
// instructions the filter is made of; anything else fails the test.
std::uint32_t runFilter(const std::vector<sock_filter> &prog, const seccomp_data &data) {
  std::uint32_t a = 0;
  for (std::size_t pc = 0; pc < prog.size(); ++pc) {
    const sock_filter &i = prog[pc];
    switch (i.code) {
      case BPF_LD | BPF_W | BPF_ABS: {
        BOOST_REQUIRE(i.k + 4 <= sizeof data);
        std::memcpy(&a, reinterpret_cast<const char *>(&data) + i.k, 4);
        break;
      }
      case BPF_JMP | BPF_JEQ | BPF_K: pc += a == i.k ? i.jt : i.jf; break;
      case BPF_JMP | BPF_JGE | BPF_K: pc += a >= i.k ? i.jt : i.jf; break;
      case BPF_JMP | BPF_JSET | BPF_K: pc += (a & i.k) ? i.jt : i.jf; break;
      case BPF_RET | BPF_K: return i.k;
      default: BOOST_FAIL("unexpected instruction " << i.code << " at " << pc);
    }
  }
  BOOST_FAIL("the program ran off its end");
  return 0;
}

std::uint32_t actionFor(const SupervisedFilter &f, int nr, std::uint64_t arg0 = 0,
                        std::uint64_t arg1 = 0, std::uint64_t arg2 = 0,
                        std::uint32_t arch = AUDIT_ARCH_X86_64) {
  seccomp_data d{};
  d.nr = nr;
  d.arch = arch;
  d.args[0] = arg0;
  d.args[1] = arg1;
  d.args[2] = arg2;
  return runFilter(f.program(), d);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_filter_gives_every_call_the_action_of_its_table) {
  // The program is a search tree built from SupervisedFilter::table(): run it
  // for every syscall number and compare with the table.
  const std::uint32_t notify = SECCOMP_RET_USER_NOTIF, allow = SECCOMP_RET_ALLOW,
                      enosys = SECCOMP_RET_ERRNO | ENOSYS, eperm = SECCOMP_RET_ERRNO | EPERM;
  using Rule = SupervisedFilter::Rule;
  std::map<int, Rule> table(SupervisedFilter::table().begin(), SupervisedFilter::table().end());
  BOOST_TEST(table.size() == SupervisedFilter::table().size());  // no number twice
  SupervisedFilter f;
  for (int nr = 0; nr < 1024; ++nr) {
    auto it = table.find(nr);
    if (it == table.end()) {
      BOOST_CHECK_MESSAGE(actionFor(f, nr) == allow, "syscall " << nr);
      continue;
    }
    switch (it->second) {
      case Rule::notify: BOOST_CHECK_MESSAGE(actionFor(f, nr) == notify, "syscall " << nr); break;
      case Rule::enosys: BOOST_CHECK_MESSAGE(actionFor(f, nr) == enosys, "syscall " << nr); break;
      case Rule::eperm: BOOST_CHECK_MESSAGE(actionFor(f, nr) == eperm, "syscall " << nr); break;
      default: break;  // by their arguments: below
    }
  }
  // The table itself, where a mistake would open a door: what creates or
  // removes a name is supervised; what bypasses the filter or the mounts fails.
  for (int nr : {__NR_creat, __NR_mkdirat, __NR_unlinkat, __NR_renameat2, __NR_linkat,
                 __NR_symlinkat, __NR_mknodat, __NR_truncate, __NR_execve, __NR_umask})
    BOOST_TEST((table.count(nr) && table[nr] == Rule::notify), "syscall " << nr);
  for (int nr : {__NR_io_uring_setup, __NR_ptrace, __NR_process_vm_writev, __NR_open_by_handle_at,
                 __NR_bpf, __NR_mount, __NR_move_mount, __NR_setns})
    BOOST_TEST((table.count(nr) && table[nr] == Rule::eperm), "syscall " << nr);
  BOOST_TEST((table.count(__NR_openat2) && table[__NR_openat2] == Rule::enosys));
  // Opens: only the flags that may write or create a name leave the kernel.
  BOOST_CHECK_EQUAL(actionFor(f, __NR_openat, AT_FDCWD, 0, O_RDONLY | O_CLOEXEC), allow);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_openat, AT_FDCWD, 0, O_RDONLY | O_DIRECTORY), allow);
  for (std::uint64_t flags : {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_TMPFILE})
    BOOST_CHECK_EQUAL(actionFor(f, __NR_openat, AT_FDCWD, 0, flags), notify);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_open, 0, O_RDONLY), allow);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_open, 0, O_WRONLY | O_APPEND), notify);
  // New user namespaces, a nested listener, processes sharing one umask.
  BOOST_CHECK_EQUAL(actionFor(f, __NR_unshare, CLONE_NEWUSER | CLONE_NEWNS), eperm);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_unshare, CLONE_NEWNS), allow);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_clone, CLONE_NEWUSER), eperm);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_clone, CLONE_THREAD | CLONE_FS | CLONE_VM), allow);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_clone, CLONE_FS), notify);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_clone, SIGCHLD), allow);
  BOOST_CHECK_EQUAL(
      actionFor(f, __NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER), eperm);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_seccomp, SECCOMP_SET_MODE_FILTER, 0), allow);
  // Other ABIs never reach the table.
  BOOST_CHECK_EQUAL(actionFor(f, __NR_read, 0, 0, 0, AUDIT_ARCH_I386), SECCOMP_RET_KILL_PROCESS);
  BOOST_CHECK_EQUAL(actionFor(f, __NR_read | 0x40000000), SECCOMP_RET_KILL_PROCESS);
}

BOOST_AUTO_TEST_CASE(filter_checks_the_architecture_first) {
  SupervisedFilter f;
  const auto &p = f.program();
  BOOST_REQUIRE_GT(p.size(), 10u);
  BOOST_CHECK_EQUAL(p[0].code, BPF_LD | BPF_W | BPF_ABS);
  BOOST_CHECK_EQUAL(p[0].k, offsetof(seccomp_data, arch));
  BOOST_CHECK_EQUAL(p[1].k, AUDIT_ARCH_X86_64);
  // The last instruction of every path is a return; no USER_NOTIF with CONTINUE exists in BPF.
  BOOST_CHECK_EQUAL(p.back().code, BPF_RET | BPF_K);
}
