// The routing table and the start-up line, as pure functions of probe results.
#define BOOST_TEST_MODULE router
#include <boost/test/unit_test.hpp>

#include "router.hpp"

#include <algorithm>

using namespace ccsandbox;

namespace {

PluginInfo plugin(const std::string &name, SandboxBackend backend, bool available,
                  const std::string &noteOrHint = "") {
  PluginInfo p;
  p.name = name;
  p.backend = backend;
  p.probe.available = available;
  (available ? p.probe.note : p.probe.hint) = noteOrHint;
  return p;
}

const PluginInfo kNone = plugin("none", SandboxBackend::none, true, "no isolation");
const PluginInfo kNativeOn = plugin("native-bwrap", SandboxBackend::native, true,
                                    "bubblewrap — namespace isolation, no kernel boundary");
const PluginInfo kNativeOff = plugin("native-bwrap", SandboxBackend::native, false,
                                     "(install bubblewrap: sudo apt-get install bubblewrap)");
const PluginInfo kVm = plugin("vm", SandboxBackend::microvm, true, "microvm");

std::string refusal(const RouterInput &in, LaunchKind kind, RequestedBackend req,
                    std::optional<std::string> name = std::nullopt) {
  try {
    routeLaunch(in, kind, req, name);
  } catch (const LaunchRefused &e) {
    return e.what();
  }
  return "(routed)";
}

}  // namespace

BOOST_AUTO_TEST_CASE(agent_dispatch_table) {
  const std::vector<PluginInfo> withNative{kNone, kNativeOn}, withoutNative{kNone, kNativeOff},
      noNativePlugin{kNone};
  struct Row {
    SandboxSwitch sw;
    const std::vector<PluginInfo> *plugins;
    SandboxBackend expected;
  };
  for (auto row : {Row{SandboxSwitch::on, &withNative, SandboxBackend::native},
                   Row{SandboxSwitch::on, &withoutNative, SandboxBackend::none},
                   Row{SandboxSwitch::on, &noNativePlugin, SandboxBackend::none},
                   Row{SandboxSwitch::off, &withNative, SandboxBackend::none},
                   Row{SandboxSwitch::off, &withoutNative, SandboxBackend::none}}) {
    RouterInput in{row.sw, SandboxBackend::none, row.plugins};
    for (auto kind : {LaunchKind::agentBash, LaunchKind::acp, LaunchKind::claudeCode}) {
      Route r = routeLaunch(in, kind, RequestedBackend::automatic, std::nullopt);
      BOOST_CHECK(r.backend == row.expected);
      BOOST_CHECK(!r.logLine);
    }
  }
}

BOOST_AUTO_TEST_CASE(explicit_requests_never_degrade) {
  std::vector<PluginInfo> plugins{kNone, kNativeOff};
  RouterInput on{SandboxSwitch::on, SandboxBackend::none, &plugins};
  std::string why = refusal(on, LaunchKind::agentBash, RequestedBackend::native);
  BOOST_CHECK_MESSAGE(why.find("install bubblewrap") != std::string::npos, why);
  BOOST_CHECK(refusal(on, LaunchKind::agentBash, RequestedBackend::microvm)
                  .find("no microvm backend plugin is installed") != std::string::npos);
  BOOST_CHECK(
      routeLaunch(on, LaunchKind::agentBash, RequestedBackend::none, std::nullopt).backend ==
      SandboxBackend::none);

  std::vector<PluginInfo> full{kNone, kNativeOn};
  RouterInput off{SandboxSwitch::off, SandboxBackend::none, &full};
  BOOST_CHECK(refusal(off, LaunchKind::agentBash, RequestedBackend::native).find("--sandbox off") !=
              std::string::npos);
}

BOOST_AUTO_TEST_CASE(terminal_rules) {
  std::vector<PluginInfo> plugins{kNone, kNativeOn};
  RouterInput in{SandboxSwitch::on, SandboxBackend::none, &plugins};
  // Default none, whatever the dispatch probe says; the switch does not apply.
  BOOST_CHECK(
      routeLaunch(in, LaunchKind::terminal, RequestedBackend::automatic, std::nullopt).backend ==
      SandboxBackend::none);
  BOOST_CHECK(
      routeLaunch(in, LaunchKind::terminal, RequestedBackend::native, std::nullopt).backend ==
      SandboxBackend::native);
  // An explicit microvm fails loudly: never "I asked for a VM and got my laptop".
  BOOST_CHECK(refusal(in, LaunchKind::terminal, RequestedBackend::microvm).find("microvm") !=
              std::string::npos);
  // Only an unspecified default that prefers microvm falls back to native, saying so.
  RouterInput prefersVm{SandboxSwitch::on, SandboxBackend::microvm, &plugins};
  Route r = routeLaunch(prefersVm, LaunchKind::terminal, RequestedBackend::automatic, std::nullopt);
  BOOST_CHECK(r.backend == SandboxBackend::native);
  BOOST_REQUIRE(r.logLine);
  BOOST_CHECK(r.logLine->find("falling back to native") != std::string::npos);
  // …and never further down to none.
  std::vector<PluginInfo> onlyNone{kNone};
  RouterInput bare{SandboxSwitch::on, SandboxBackend::microvm, &onlyNone};
  BOOST_CHECK(refusal(bare, LaunchKind::terminal, RequestedBackend::automatic) != "(routed)");
  // With a VM present the default gets it.
  std::vector<PluginInfo> vm{kNone, kNativeOn, kVm};
  RouterInput withVm{SandboxSwitch::on, SandboxBackend::microvm, &vm};
  BOOST_CHECK(routeLaunch(withVm, LaunchKind::terminal, RequestedBackend::automatic, std::nullopt)
                  .backend == SandboxBackend::microvm);
  // Native requested on a host without it: the session fails rather than show a false badge.
  std::vector<PluginInfo> noNative{kNone, kNativeOff};
  RouterInput hostOnly{SandboxSwitch::on, SandboxBackend::none, &noNative};
  BOOST_CHECK(refusal(hostOnly, LaunchKind::terminal, RequestedBackend::native) != "(routed)");
}

BOOST_AUTO_TEST_CASE(plugin_by_name) {
  std::vector<PluginInfo> plugins{kNone, kNativeOn, kVm};
  RouterInput in{SandboxSwitch::on, SandboxBackend::none, &plugins};
  BOOST_CHECK_EQUAL(
      routeLaunch(in, LaunchKind::agentBash, RequestedBackend::automatic, "vm").plugin, "vm");
  BOOST_CHECK(refusal(in, LaunchKind::agentBash, RequestedBackend::automatic, "nope")
                  .find("no plugin named nope") != std::string::npos);
  BOOST_CHECK(refusal(in, LaunchKind::agentBash, RequestedBackend::none, "vm") != "(routed)");
  RouterInput off{SandboxSwitch::off, SandboxBackend::none, &plugins};
  BOOST_CHECK(refusal(off, LaunchKind::agentBash, RequestedBackend::automatic, "native-bwrap") !=
              "(routed)");
}

BOOST_AUTO_TEST_CASE(the_three_startup_lines) {
  std::vector<PluginInfo> on{kNone, kNativeOn}, off{kNone, kNativeOff}, absent{kNone};
  BOOST_CHECK_EQUAL(startupLine({SandboxSwitch::on, SandboxBackend::none, &on}, {}),
                    "agent sandbox ON bubblewrap — namespace isolation, no kernel boundary");
  BOOST_CHECK_EQUAL(startupLine({SandboxSwitch::on, SandboxBackend::none, &off}, {}),
                    "no OS-native agent sandbox on this host (install bubblewrap: sudo apt-get "
                    "install bubblewrap)");
  BOOST_CHECK_EQUAL(startupLine({SandboxSwitch::off, SandboxBackend::none, &on}, {}),
                    "agent sandbox DISABLED by --sandbox off");
  BOOST_CHECK(startupLine({SandboxSwitch::on, SandboxBackend::none, &absent}, {"/p"})
                  .starts_with("no OS-native agent sandbox on this host (no native backend plugin "
                               "installed; searched /p)"));
}

BOOST_AUTO_TEST_CASE(fail_closed_on_what_a_backend_cannot_enforce) {
  PluginInfo bwrapLike = kNativeOn;
  bwrapLike.probe.capabilities = {capability::kReadDeny, capability::kWriteRoots,
                                  capability::kWriteDeny, capability::kNetworkProxy};
  EffectivePolicy policy;
  policy.readDeny = {"/home/u/.ssh"};
  policy.writeDeny = {"/w/.git/hooks"};
  BOOST_CHECK_NO_THROW(checkEnforceable(bwrapLike, policy));
  policy.writeDenyGlobs = {".env", ".env.*", "*.key", "*.pem"};
  try {
    checkEnforceable(bwrapLike, policy);
    BOOST_FAIL("a policy with filename globs ran on a backend without filename rules");
  } catch (const LaunchRefused &e) {
    std::string why = e.what();
    BOOST_CHECK(why.find("cannot forbid new files matching .env, .env.*, *.key, *.pem") !=
                std::string::npos);
  }
  bwrapLike.probe.capabilities.insert(capability::kFilenameRules);
  BOOST_CHECK_NO_THROW(checkEnforceable(bwrapLike, policy));
  // Renaming a protected path's parent away needs its own enforcement.
  policy.unlinkDeny = {"/w", "/w/.git", "/w/.git/hooks"};
  BOOST_CHECK_THROW(checkEnforceable(bwrapLike, policy), LaunchRefused);
  bwrapLike.probe.capabilities.insert(capability::kUnlinkRules);
  BOOST_CHECK_NO_THROW(checkEnforceable(bwrapLike, policy));
  bwrapLike.probe.capabilities.erase(capability::kNetworkProxy);
  BOOST_CHECK_THROW(checkEnforceable(bwrapLike, policy), LaunchRefused);
  // The none backend enforces nothing and is never "checked" into refusing.
  BOOST_CHECK_NO_THROW(checkEnforceable(kNone, policy));
}

// With RouterInput::probe, a probe is read only when the route depends on it:
// a native backend that serves leaves the none plugin unprobed (and, in the
// runtime, unloaded); one that cannot sends the router on to none.
BOOST_AUTO_TEST_CASE(only_the_probes_a_route_depends_on_are_read) {
  for (bool nativeAvailable : {true, false}) {
    std::vector<PluginInfo> plugins{kNativeOn, kNone, kVm};
    plugins[0].probe.available = nativeAvailable;
    std::vector<std::string> read;
    RouterInput in{SandboxSwitch::on, SandboxBackend::none, &plugins};
    in.probe = [&](const PluginInfo &p) { read.push_back(p.name); };
    Route r = routeLaunch(in, LaunchKind::agentBash, RequestedBackend::automatic, std::nullopt);
    BOOST_CHECK(r.backend == (nativeAvailable ? SandboxBackend::native : SandboxBackend::none));
    std::vector<std::string> expected =
        nativeAvailable ? std::vector<std::string>{"native-bwrap", "native-bwrap"}
                        : std::vector<std::string>{"native-bwrap", "none"};
    BOOST_CHECK_EQUAL_COLLECTIONS(read.begin(), read.end(), expected.begin(), expected.end());

    read.clear();
    startupLine(in, {});
    BOOST_CHECK_EQUAL(read.front(), "native-bwrap");
    BOOST_CHECK(std::find(read.begin(), read.end(), "none") == read.end());
    BOOST_CHECK(std::find(read.begin(), read.end(), "vm") == read.end());

    read.clear();
    routeLaunch(in, LaunchKind::agentBash, RequestedBackend::automatic, std::string("vm"));
    BOOST_CHECK_EQUAL(read.size(), 1u);
    BOOST_CHECK_EQUAL(read.front(), "vm");
  }
}
