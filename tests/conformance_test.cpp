// The conformance kit passes our backends and catches one that lies.
#define BOOST_TEST_MODULE conformance
#include <boost/test/unit_test.hpp>

#include "ccsandbox/json_reader.hpp"
#include "support/child_process.hpp"

using ccsandbox::test::runChild;

namespace {

ccsandbox::test::ChildResult conformance(const std::vector<std::string> &args) {
  std::vector<std::string> argv{CCSANDBOX_CLI, "conformance"};
  argv.insert(argv.end(), args.begin(), args.end());
  ccsandbox::test::ChildOptions o;
  o.unsetEnv = {"CC_SERVER_SANDBOX", "CCSANDBOX_PLUGIN_PATH"};
  return runChild(argv, o);
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_none_backend_conforms) {
  auto r = conformance({CCSANDBOX_NONE_PLUGIN});
  BOOST_CHECK_MESSAGE(r.status == 0, r.out + r.err);
  BOOST_CHECK(r.out.find("FAIL") == std::string::npos);
  BOOST_CHECK(r.out.find("10 passed, 0 failed") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(the_native_bwrap_backend_conforms_where_it_is_available) {
  const std::string plugin = CCSANDBOX_BWRAP_PLUGIN;
  if (plugin.empty()) {
    BOOST_TEST_MESSAGE("native-bwrap not built in this configuration: not checked");
    return;
  }
  auto r = conformance({plugin, "--json"});
  auto doc = ccsandbox::json::parse(r.out, "conformance --json").as_object();
  if (!doc.at("available").as_bool()) {
    // Not a pass: this host cannot run bubblewrap, so nothing was checked.
    BOOST_TEST_MESSAGE("native-bwrap unavailable on this host: not checked");
    BOOST_CHECK_EQUAL(r.status, 2);
    return;
  }
  BOOST_CHECK_MESSAGE(r.status == 0, r.out + r.err);
  BOOST_CHECK_EQUAL(doc.at("failed").as_int64(), 0);
  // The session checks, run on a plugin that restored its kept probe (ABI 1.1).
  const auto &checks = doc.at("checks").as_array();
  BOOST_CHECK_EQUAL(checks.size(), 11u);
  BOOST_CHECK_EQUAL(checks.at(0).at("check").as_string(),
                    "a kept probe result restores to the same result (ABI 1.1)");
}

BOOST_AUTO_TEST_CASE(a_lying_backend_fails) {
  auto r = conformance({CCSANDBOX_LIAR_PLUGIN});
  BOOST_CHECK_EQUAL(r.status, 1);
  BOOST_CHECK(r.out.find("FAIL  exit code and streams kept apart") != std::string::npos);
  BOOST_CHECK(r.out.find("FAIL  command not found is 127") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(a_file_that_is_not_a_plugin_is_a_usage_error) {
  auto r = conformance({std::string(CCSANDBOX_FIXTURE_DIR) + "/bad/libnot-a-plugin.so"});
  BOOST_CHECK_EQUAL(r.status, 125);
  BOOST_CHECK(r.err.find("ccsandbox: conformance: ") != std::string::npos);
  r = conformance({"/nonexistent/plugin.so"});
  BOOST_CHECK_EQUAL(r.status, 125);
  r = conformance({});
  BOOST_CHECK_EQUAL(r.status, 125);
}
