// The SDK's types and their JSON codecs: names, defaults, round trips, and
// every rejection naming the field path.
#define BOOST_TEST_MODULE sdk_types
#include <boost/test/unit_test.hpp>

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/launch_request.hpp"
#include "ccsandbox/probe_result.hpp"
#include "ccsandbox/sandbox_event.hpp"
#include "ccsandbox/sandbox_handle.hpp"
#include "ccsandbox/sandbox_spec.hpp"

using namespace ccsandbox;

namespace {

SandboxSpec decode(const std::string &text) {
  return decodeSandboxSpec(json::parse(text, "spec"));
}

// The message of the DecodeError that decoding `text` throws.
std::string rejection(const std::string &text) {
  try {
    decode(text);
  } catch (const DecodeError &e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

BOOST_AUTO_TEST_CASE(from_name_table) {
  BOOST_CHECK(fromName(std::nullopt) == SandboxBackend::none);
  BOOST_CHECK(fromName("native") == SandboxBackend::native);
  BOOST_CHECK(fromName("none") == SandboxBackend::none);
  BOOST_CHECK(fromName("microvm") == SandboxBackend::microvm);
  BOOST_CHECK(fromName("docker") == SandboxBackend::native);
  BOOST_CHECK(fromName("") == SandboxBackend::none);
  BOOST_CHECK(fromName("Native") == SandboxBackend::none);  // stored values are exact
  BOOST_CHECK(fromName("seatbelt") == SandboxBackend::none);
  BOOST_CHECK_EQUAL(toString(SandboxBackend::microvm), "microvm");
}

BOOST_AUTO_TEST_CASE(state_and_event_names_are_the_seeds) {
  std::vector<std::string> states;
  for (auto &[s, name] : kSandboxStateNames) states.emplace_back(name);
  BOOST_CHECK((states == std::vector<std::string>{"created", "warm", "active", "suspended",
                                                  "destroyed", "error"}));
  std::vector<std::string> events;
  for (auto &[e, name] : kSandboxEventTypeNames) events.emplace_back(name);
  BOOST_CHECK((events == std::vector<std::string>{"stdout", "stderr", "exit", "starting", "ready",
                                                  "killed", "violation"}));
}

BOOST_AUTO_TEST_CASE(spec_defaults) {
  SandboxSpec s = decode("{}");
  BOOST_CHECK(s.networkEnabled);
  BOOST_CHECK(s.mode == SandboxMode::chat);
  BOOST_CHECK(s.bindMounts.empty() && s.egressAllowlist.empty() && s.protectedPaths.empty() &&
              s.runnerStateDirs.empty() && s.execGrantRoots.empty());
  BOOST_CHECK(!s.agentId && !s.guestWorkdir);
  SandboxBindMount m = decode(R"({"bindMounts":[{"hostPath":"/w"}]})").bindMounts.at(0);
  BOOST_CHECK_EQUAL(m.guestPath, "/w");  // guestPath defaults to hostPath
  BOOST_CHECK(!m.readOnly);
}

BOOST_AUTO_TEST_CASE(spec_round_trip_all_eleven_fields) {
  SandboxSpec s;
  s.sessionId = "s1";
  s.workspaceId = "w1";
  s.agentId = "a1";
  s.bindMounts = {{"/work/repo", "/repo", false}, {"/work/cfg", "/work/cfg", true}};
  s.networkEnabled = false;
  s.egressAllowlist = {"*.example.com"};
  s.guestWorkdir = "/repo";
  s.mode = SandboxMode::review;
  s.protectedPaths = {"/work/original"};
  s.runnerStateDirs = {"/home/u/.cc"};
  s.execGrantRoots = {"/opt/tools"};
  boost::json::value v = toJson(s);
  BOOST_CHECK_EQUAL(v.as_object().size(), 11u);
  BOOST_CHECK(decodeSandboxSpec(v) == s);
  BOOST_CHECK(decode(boost::json::serialize(v)) == s);
}

BOOST_AUTO_TEST_CASE(spec_rejections_name_the_field) {
  BOOST_CHECK_EQUAL(
      rejection(R"({"bindMounts":[{"hostPath":"/a"},{"hostPath":"/b"},{"hostPath":"rel/c"}]})"),
      "bindMounts[2].hostPath: must be absolute (\"rel/c\" is relative)");
  BOOST_CHECK_EQUAL(rejection(R"({"networkEnabled":"yes"})"),
                    "networkEnabled: must be a boolean, not a string");
  BOOST_CHECK_EQUAL(rejection(R"({"bindMounts":{}})"),
                    "bindMounts: must be an array, not an object");
  BOOST_CHECK_EQUAL(
      rejection(R"({"mode":"yolo"})"),
      "mode: unknown value \"yolo\" (expected one of: chat, review, plan, orchestrate)");
  BOOST_CHECK_EQUAL(rejection(R"({"protectedPaths":["/ok", 3]})"),
                    "protectedPaths[1]: must be a string, not a number");
  BOOST_CHECK_EQUAL(rejection(R"({"protectedPaths":["relative"]})"),
                    "protectedPaths[0]: must be absolute (\"relative\" is relative)");
  BOOST_CHECK_EQUAL(rejection(R"({"bindMounts":[{"readOnly":true}]})"),
                    "bindMounts[0].hostPath: required field is missing");
  BOOST_CHECK_EQUAL(rejection(R"({"bindMounts":[{"hostPath":"/a","guestPath":"x"}]})"),
                    "bindMounts[0].guestPath: must be absolute (\"x\" is relative)");
  BOOST_CHECK_EQUAL(rejection("[]"), "(document): must be an object, not an array");
  BOOST_CHECK(rejection(R"({"networkEnabled":true,"netwrokEnabled":false})")
                  .starts_with("netwrokEnabled: unknown field"));
  BOOST_CHECK(rejection(R"({"bindMounts":[{"hostPath":"/a","ro":true}]})")
                  .starts_with("bindMounts[0].ro: unknown field"));
  // `~` is the host home where a policy path is meant, never for a bind's host side.
  BOOST_CHECK_EQUAL(decode(R"({"protectedPaths":["~/repo"]})").protectedPaths.at(0), "~/repo");
  BOOST_CHECK(
      rejection(R"({"bindMounts":[{"hostPath":"~/x"}]})").starts_with("bindMounts[0].hostPath"));
}

BOOST_AUTO_TEST_CASE(invalid_json_names_line_and_column) {
  try {
    json::parse("{\n  \"mode\": \"chat\",\n  oops\n}", "spec.json");
    BOOST_FAIL("accepted invalid JSON");
  } catch (const DecodeError &e) {
    BOOST_CHECK_EQUAL(std::string(e.what()).substr(0, 40),
                      "spec.json: invalid JSON at line 3, colum");
  }
  BOOST_CHECK_THROW(json::parse("{} {}", "x"), DecodeError);
  BOOST_CHECK_THROW(json::parse("", "x"), DecodeError);
}

BOOST_AUTO_TEST_CASE(handle_round_trip_and_stored_backend) {
  SandboxHandle h;
  h.sessionId = "s";
  h.backend = SandboxBackend::native;
  h.state = SandboxState::error;
  h.error = boost::json::object{{"message", "bwrap failed"}};
  h.details = {{"pid", 42}};
  SandboxHandle back = decodeSandboxHandle(toJson(h));
  BOOST_CHECK(back.backend == SandboxBackend::native && back.state == SandboxState::error);
  BOOST_CHECK_EQUAL(back.error->at("message").as_string(), "bwrap failed");
  // A stored handle with an unknown backend reads as none, never as an upgrade.
  auto stored = json::parse(R"({"sessionId":"s","backend":"docker","state":"warm"})", "h");
  BOOST_CHECK(decodeSandboxHandle(stored).backend == SandboxBackend::native);
  stored = json::parse(R"({"sessionId":"s","backend":"hyperv","state":"warm"})", "h");
  BOOST_CHECK(decodeSandboxHandle(stored).backend == SandboxBackend::none);
  stored = json::parse(R"({"sessionId":"s","state":"melted"})", "h");
  BOOST_CHECK_THROW(decodeSandboxHandle(stored), DecodeError);
}

BOOST_AUTO_TEST_CASE(events_round_trip) {
  SandboxEvent v;
  v.type = SandboxEventType::violation;
  v.sessionId = "s";
  v.execId = "e1";
  v.violation = SandboxViolation{"file-write-create", "/w/.env", std::string("raw line")};
  SandboxEvent back = decodeSandboxEvent(toJson(v));
  BOOST_CHECK(back.violation == v.violation);
  BOOST_CHECK_EQUAL(*back.execId, "e1");

  SandboxEvent k;
  k.type = SandboxEventType::killed;
  k.sessionId = "s";
  k.reason = KillReason::timeout;
  BOOST_CHECK_EQUAL(boost::json::serialize(toJson(k)),
                    R"({"type":"killed","sessionId":"s","reason":"timeout"})");

  SandboxEvent r;
  r.type = SandboxEventType::ready;
  r.sessionId = "s";
  r.backend = SandboxBackend::none;
  BOOST_CHECK_EQUAL(toJson(r).at("backend").as_string(), "none");  // the badge

  auto exit = json::parse(
      R"({"type":"exit","sessionId":"s","execId":"e2","exitCode":137,"signal":9})", "e");
  SandboxEvent e = decodeSandboxEvent(exit);
  BOOST_CHECK(*e.exitCode == 137 && *e.signal == 9);
  BOOST_CHECK_THROW(decodeSandboxEvent(json::parse(R"({"type":"exit","sessionId":"s"})", "e")),
                    DecodeError);
  BOOST_CHECK_THROW(decodeSandboxEvent(json::parse(R"({"type":"violation","sessionId":"s"})", "e")),
                    DecodeError);
}

BOOST_AUTO_TEST_CASE(output_that_is_not_utf8_travels_as_base64) {
  SandboxEvent out;
  out.type = SandboxEventType::stdoutData;
  out.sessionId = "s";
  out.data = "h\xc3\xa9llo\n";
  BOOST_CHECK_EQUAL(toJson(out).at("data").as_string(), out.data);
  out.data = std::string("\xff\x00\x01", 3);
  auto o = toJson(out).as_object();
  BOOST_CHECK(!o.contains("data"));
  BOOST_CHECK_EQUAL(o.at("dataBase64").as_string(), "/wAB");
  BOOST_CHECK(!detail::isValidUtf8("\xc0\xaf"));         // overlong
  BOOST_CHECK(!detail::isValidUtf8("\xed\xa0\x80"));     // surrogate
  BOOST_CHECK(!detail::isValidUtf8("\xe2\x82"));         // truncated
  BOOST_CHECK(detail::isValidUtf8("\xf0\x9f\x98\x80"));  // U+1F600
  BOOST_CHECK_EQUAL(detail::base64Encode("ab"), "YWI=");
  BOOST_CHECK_EQUAL(detail::base64Encode("abc"), "YWJj");
  BOOST_CHECK_EQUAL(detail::base64Encode("a"), "YQ==");
}

BOOST_AUTO_TEST_CASE(probe_result_round_trip) {
  ProbeResult p;
  p.available = false;
  p.hint = "install bubblewrap";
  p.requiresInstall = true;
  p.capabilities = {capability::kFilenameRules, capability::kReadDeny};
  ProbeResult back = decodeProbeResult(toJson(p));
  BOOST_CHECK(!back.available && back.requiresInstall && back.hint == p.hint);
  BOOST_CHECK(back.has(capability::kFilenameRules) && !back.has(capability::kKernelBoundary));
  BOOST_CHECK_THROW(decodeProbeResult(json::parse(R"({"note":"x"})", "p")), DecodeError);
}

BOOST_AUTO_TEST_CASE(requests_round_trip) {
  ExecRequest e;
  e.sessionId = "s";
  e.execId = "e1";
  e.argv = {"sh", "-c", "echo hi"};
  e.env = {{"PATH", "/usr/bin"}};
  e.cwd = "/w";
  e.stdio = {0, 5, 7};
  ExecRequest back = decodeExecRequest(toJson(e));
  BOOST_CHECK(back.argv == e.argv && back.env == e.env && back.stdio.err == 7);
  auto empty = json::parse(
      R"({"sessionId":"s","execId":"e","argv":[],"env":{},"cwd":"/","stdio":{"stdin":0,"stdout":1,"stderr":2}})",
      "r");
  BOOST_CHECK_THROW(decodeExecRequest(empty), DecodeError);

  LaunchRequest l;
  l.sessionId = "s";
  l.launchKind = LaunchKind::claudeCode;
  l.policy.writeRoots = {"/w"};
  l.policy.network.httpProxy = ProxyEndpoint{"127.0.0.1", 3128, "/run/x/http.sock"};
  l.runtimeDir = "/run/x";
  LaunchRequest lb = decodeLaunchRequest(toJson(l));
  BOOST_CHECK(lb.policy == l.policy && lb.launchKind == LaunchKind::claudeCode);
}
