// The stderr violation scanner (core/src/stderr_violation_scanner.*): which
// lines are violations, what action and target they carry, and line assembly
// across reads.
#define BOOST_TEST_MODULE native_bwrap_violation_scanner
#include <boost/test/unit_test.hpp>

#include "stderr_violation_scanner.hpp"

using namespace ccsandbox;

BOOST_AUTO_TEST_CASE(the_seed_s_phrases_are_violations_and_others_are_not) {
  struct Case {
    std::string line, action, target;
  };
  for (const auto &c : std::vector<Case>{
           {"touch: cannot touch '/usr/x': Read-only file system", "file-write*", "/usr/x"},
           {"sh: 1: cannot create /etc/passwd: Read-only file system", "file-write*",
            "/etc/passwd"},
           {"cat: /home/u/.ssh/id_rsa: Permission denied", "file-read*", "/home/u/.ssh/id_rsa"},
           {"rm: cannot remove '/w/.git/hooks': Operation not permitted", "file-write*",
            "/w/.git/hooks"},
           {"python3: can't open file \"/x/y.py\": [Errno 13] Permission denied", "file-read*",
            "/x/y.py"},
           {"connect: Operation not permitted", "network-outbound", ""},
           {"mount failed: EPERM", "operation-denied", ""},
       }) {
    BOOST_TEST_CONTEXT(c.line) {
      auto v = violationFromStderrLine(c.line);
      BOOST_REQUIRE(v);
      BOOST_TEST(v->action == c.action);
      BOOST_TEST(v->target == c.target);
      BOOST_TEST(v->raw.value_or("") == c.line);
    }
  }
  for (const char *benign : {"warning: unused variable", "permission check passed",
                             "ls: cannot access '/x': No such file or directory", ""})
    BOOST_TEST(!violationFromStderrLine(benign), benign);
}

BOOST_AUTO_TEST_CASE(lines_are_assembled_across_reads) {
  StderrViolationScanner s;
  BOOST_TEST(s.feed("touch: ").empty());
  BOOST_TEST(s.feed("cannot touch '/a': Read-only").empty());
  auto v = s.feed(" file system\nok line\ncat: /b: Permission denied\r\nunterminated: EPERM");
  BOOST_REQUIRE_EQUAL(v.size(), 2u);
  BOOST_TEST(v[0].target == "/a");
  BOOST_TEST(v[1].target == "/b");
  BOOST_TEST(v[1].raw.value_or("") == "cat: /b: Permission denied");
  auto last = s.finish();
  BOOST_REQUIRE_EQUAL(last.size(), 1u);
  BOOST_TEST(last[0].raw.value_or("") == "unterminated: EPERM");
  BOOST_TEST(s.finish().empty());
}

BOOST_AUTO_TEST_CASE(an_endless_line_is_judged_once_and_bounded) {
  StderrViolationScanner s;
  std::string head = "x: Permission denied ";
  auto v = s.feed(head + std::string(StderrViolationScanner::kMaxLine * 3, 'a'));
  BOOST_TEST(v.size() == 1u);
  BOOST_TEST(v[0].raw->size() <= StderrViolationScanner::kMaxLine);
  BOOST_TEST(s.feed(std::string(100000, 'b')).empty());  // the rest of that line: skipped
  BOOST_TEST(s.feed("\n").empty());
  BOOST_TEST(s.feed("y: EPERM\n").size() == 1u);  // the next line is judged again
}

BOOST_AUTO_TEST_CASE(a_supervised_backend_is_scanned_only_for_read_only_mounts) {
  // The supervisor reports its own denials exactly; "Permission denied" would count them twice.
  StderrViolationScanner scanner(StderrScan::readOnlyFileSystemOnly);
  auto found = scanner.feed(
      "sh: 1: cannot create /w/.env: Permission denied\n"
      "chmod: changing permissions of '/usr/bin/ls': Read-only file system\n"
      "touch: cannot touch '/etc/x': Operation not permitted\n");
  BOOST_REQUIRE_EQUAL(found.size(), 1u);
  BOOST_CHECK_EQUAL(found[0].target, "/usr/bin/ls");
  BOOST_CHECK_EQUAL(found[0].action, "file-write*");
  StderrViolationScanner all;
  BOOST_CHECK_EQUAL(all.feed("sh: 1: cannot create /w/.env: Permission denied\n").size(), 1u);
}
