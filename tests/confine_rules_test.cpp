// Unit suite for the pure parts of the confinement library: final-name globs,
// the rules copied from an EffectivePolicy, and the supervisor's judge.
#define BOOST_TEST_MODULE confine_rules
#include <boost/test/unit_test.hpp>

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/name_glob.hpp"
#include "ccsandbox/confine/seccomp_filter.hpp"
#include "ccsandbox/confine/write_judge.hpp"
#include "ccsandbox/effective_policy.hpp"

#include <linux/audit.h>
#include <linux/seccomp.h>

#include <cstddef>

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
