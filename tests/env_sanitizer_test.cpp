// The environment each launch kind starts from.
#define BOOST_TEST_MODULE env_sanitizer
#include <boost/test/unit_test.hpp>

#include "env_sanitizer.hpp"

using namespace ccsandbox;

namespace {

const std::map<std::string, std::string> kHost = {
    {"PATH", "/usr/bin:/bin"},
    {"HOME", "/home/u"},
    {"LANG", "C.UTF-8"},
    {"LD_PRELOAD", "/tmp/evil.so"},
    {"LD_LIBRARY_PATH", "/tmp"},
    {"LD_AUDIT", "/tmp/audit.so"},
    {"DYLD_INSERT_LIBRARIES", "/tmp/evil.dylib"},
    {"DYLD_LIBRARY_PATH", "/tmp"},
    {"NODE_OPTIONS", "--require /tmp/x.js"},
    {"GIT_SSH_COMMAND", "ssh -o ProxyCommand=evil"},
    {"BASH_ENV", "/tmp/rc"},
    {"ENV", "/tmp/rc"},
    {"PYTHONSTARTUP", "/tmp/s.py"},
    {"PERL5OPT", "-Mevil"},
    {"RUBYOPT", "-revil"},
    {"PROMPT_COMMAND", "evil"},
    {"BASH_FUNC_ls%%", "() { evil; }"},
    {"GIT_CONFIG_PARAMETERS", "'core.hooksPath'='/tmp'"},
    {"GIT_CONFIG_COUNT", "1"},
    {"GLIBC_TUNABLES", "x"},
};

const std::vector<std::string> kKept = {"PATH", "HOME", "LANG"};

}  // namespace

BOOST_AUTO_TEST_CASE(sanitising_removes_every_injection_vector) {
  auto env = sanitiseEnvironment(kHost);
  BOOST_CHECK_EQUAL(env.size(), kKept.size());
  for (const auto &k : kKept) BOOST_CHECK_MESSAGE(env.count(k), k << " was removed");
}

BOOST_AUTO_TEST_CASE(names_are_exact_not_substrings) {
  BOOST_CHECK(isInjectionVariable("LD_PRELOAD"));
  BOOST_CHECK(isInjectionVariable("DYLD_FALLBACK_LIBRARY_PATH"));
  BOOST_CHECK(!isInjectionVariable("OLD_PRELOAD"));
  BOOST_CHECK(!isInjectionVariable("MY_ENV"));
  BOOST_CHECK(!isInjectionVariable("ENVIRONMENT"));
  BOOST_CHECK(!isInjectionVariable("GIT_AUTHOR_NAME"));
}

BOOST_AUTO_TEST_CASE(which_launches_are_sanitised) {
  // Agent bash and ACP: always, sandboxed or not.
  for (auto b : {SandboxBackend::none, SandboxBackend::native, SandboxBackend::microvm}) {
    BOOST_CHECK(sanitisesEnvironment(LaunchKind::agentBash, b));
    BOOST_CHECK(sanitisesEnvironment(LaunchKind::acp, b));
  }
  // Claude Code through the no-sandbox path inherits the host environment (the seed);
  // wrapped natively it is sanitised.
  BOOST_CHECK(!sanitisesEnvironment(LaunchKind::claudeCode, SandboxBackend::none));
  BOOST_CHECK(sanitisesEnvironment(LaunchKind::claudeCode, SandboxBackend::native));
  // A host terminal is the user's own shell; a sandboxed one is not.
  BOOST_CHECK(!sanitisesEnvironment(LaunchKind::terminal, SandboxBackend::none));
  BOOST_CHECK(sanitisesEnvironment(LaunchKind::terminal, SandboxBackend::native));
}
