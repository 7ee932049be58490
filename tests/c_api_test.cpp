// The C API, through the exported shared library only (as an FFI host sees it).
#define BOOST_TEST_MODULE c_api
#include <boost/test/unit_test.hpp>

#include <string>

extern "C" int c_client_run(const char *plugin_dir, const char *script, char *events, size_t cap);
extern "C" void c_client_bad_launch(const char *plugin_dir, char *message, size_t cap);
extern "C" void c_client_bad_options(char *message, size_t cap);

namespace {
const std::string kNoneOnly = std::string(CCSANDBOX_FIXTURE_DIR) + "/none-only";
}

BOOST_AUTO_TEST_CASE(a_session_through_the_c_api) {
  char events[4096];
  int status = c_client_run(kNoneOnly.c_str(), "echo from-c; exit 6", events, sizeof events);
  std::string text = events;
  BOOST_CHECK_EQUAL(status, 6);
  BOOST_CHECK(text.find(R"("type":"starting")") != std::string::npos);
  BOOST_CHECK(text.find(R"("type":"ready","sessionId")") != std::string::npos);
  BOOST_CHECK(text.find(R"("data":"from-c\n")") != std::string::npos);
  BOOST_CHECK(text.find(R"("type":"exit")") != std::string::npos);
  BOOST_CHECK(text.find(R"("exitCode":6)") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(errors_come_back_as_messages) {
  char message[1024];
  c_client_bad_launch(kNoneOnly.c_str(), message, sizeof message);
  BOOST_CHECK_EQUAL(std::string(message),
                    "spec.bindMounts[0].hostPath: must be absolute (\"rel\" is relative)");
}

BOOST_AUTO_TEST_CASE(runtime_options_are_checked_field_by_field) {
  char message[1024];
  c_client_bad_options(message, sizeof message);
  BOOST_CHECK_NE(std::string(message).find("probeCacheDir"), std::string::npos);
}
