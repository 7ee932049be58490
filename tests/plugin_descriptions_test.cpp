// Plugins loaded as needed (RuntimeOptions::loadPluginsAsNeeded, the CLI's
// choice): a plugin file an earlier process loaded is described in the probe
// cache's directory and not loaded again until a route, the start-up line or
// plugins() reads its probe; a file that changed is loaded again; a kept
// description that no longer holds makes the plugin unavailable, saying why;
// without the option every plugin is loaded and probed at start-up.
#define BOOST_TEST_MODULE plugin_descriptions
#include <boost/test/unit_test.hpp>

#include "ccsandbox/file_identity.hpp"
#include "ccsandbox/runtime.hpp"
#include "probe_cache.hpp"
#include "support/kept_probe_log.hpp"
#include "support/log_capture.hpp"
#include "support/temp_tree.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

using namespace ccsandbox;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = CCSANDBOX_FIXTURE_DIR;

struct Fixture {
  test::TempTree tree;
  std::string cacheDir = tree.path() + "/cache";
  std::string log = tree.path() + "/calls.log";
  // Copies, so that a test may change a file's identity.
  std::string nativeDir = tree.dir("native");
  std::string keptDir = tree.dir("kept");
  std::string native = copy(kFixtures + "/native-ok/libfixture-native-ok.so", nativeDir);
  std::string kept = copy(kFixtures + "/kept/libfixture-kept.so", keptDir);

  static std::string copy(const std::string &from, const std::string &dir) {
    std::string to = dir + "/" + fs::path(from).filename().string();
    fs::copy_file(from, to);
    return to;
  }

  RuntimeOptions options(std::vector<std::string> dirs = {}, bool asNeeded = true) {
    RuntimeOptions o;
    o.pluginPath = dirs.empty() ? std::vector<std::string>{nativeDir, keptDir} : dirs;
    o.searchInstallDir = false;
    o.sandbox = SandboxSwitch::on;
    o.probeCacheDir = cacheDir;
    o.loadPluginsAsNeeded = asNeeded;
    o.pluginSettings = {{"fixture-kept", {{"log", log}, {"logInit", true}}}};
    return o;
  }
  // What the kept fixture did since the last call: init (loaded), probe.
  std::string calls() { return test::takeKeptProbeCalls(log); }
  std::string keptList() const { return test::readFile(cacheDir + "/plugins.json"); }
};

const PluginInfo &byName(const Runtime &rt, const std::string &name) {
  for (const auto &p : rt.plugins())
    if (p.name == name) return p;
  BOOST_FAIL("no plugin " + name);
  throw std::logic_error("unreachable");
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_route_loads_only_the_plugins_it_reaches) {
  Fixture f;
  // Nothing described yet: both are loaded to learn what they are; the start-up
  // line probes the native one only.
  { Runtime first(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  BOOST_CHECK_NE(f.keptList().find("\"fixture-kept\""), std::string::npos);
  BOOST_CHECK_NE(f.keptList().find("\"fixture-native\""), std::string::npos);
  {
    Runtime second(f.options());
    BOOST_CHECK_EQUAL(second.startupLine(),
                      "agent sandbox ON fixture — namespace isolation, no kernel boundary");
    BOOST_CHECK_EQUAL(second.route(LaunchKind::agentBash, RequestedBackend::automatic).plugin,
                      "fixture-native");
    BOOST_CHECK_EQUAL(f.calls(), "");  // the microvm plugin was not even loaded
    BOOST_CHECK_EQUAL(second.route(LaunchKind::agentBash, RequestedBackend::microvm).plugin,
                      "fixture-kept");
    BOOST_CHECK_EQUAL(f.calls(), "init probe ");
    second.route(LaunchKind::agentBash, RequestedBackend::microvm);
    BOOST_CHECK_EQUAL(f.calls(), "");  // probed once
  }
  {
    Runtime third(f.options());
    BOOST_CHECK_EQUAL(f.calls(), "");
    // plugins(): every plugin, loaded and probed, in discovery order.
    BOOST_REQUIRE_EQUAL(third.plugins().size(), 2u);
    BOOST_CHECK_EQUAL(f.calls(), "init probe ");
    BOOST_CHECK_EQUAL(third.plugins()[0].name, "fixture-native");
    BOOST_CHECK_EQUAL(third.plugins()[1].name, "fixture-kept");
    BOOST_CHECK(third.plugins()[1].backend == SandboxBackend::microvm);
    BOOST_CHECK(third.plugins()[1].probe.available);
    BOOST_CHECK_EQUAL(third.plugins()[1].probe.note, "kept-probe fixture");
  }
}

BOOST_AUTO_TEST_CASE(without_the_option_every_plugin_is_loaded_and_probed_at_start) {
  Fixture f;
  { Runtime first(f.options()); }
  f.calls();
  Runtime rt(f.options({}, false));
  BOOST_CHECK_EQUAL(f.calls(), "init probe ");
  BOOST_CHECK_EQUAL(rt.plugins().size(), 2u);
  BOOST_CHECK_EQUAL(f.calls(), "");
}

BOOST_AUTO_TEST_CASE(a_changed_file_is_loaded_again) {
  Fixture f;
  { Runtime first(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  { Runtime same(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "");
  std::string before = fileIdentity(f.kept);
  // A rebuilt plugin at the same path: another identity, so a real load.
  fs::last_write_time(f.kept, fs::last_write_time(f.kept) - std::chrono::hours(1));
  BOOST_REQUIRE_NE(fileIdentity(f.kept), before);
  { Runtime changed(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  BOOST_CHECK_NE(f.keptList().find(fileIdentity(f.kept)), std::string::npos);
  { Runtime again(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "");
}

BOOST_AUTO_TEST_CASE(a_description_that_no_longer_holds_makes_the_plugin_unavailable) {
  Fixture f;
  // Described as a microvm plugin of another name, with the file's own identity:
  // only loading it can tell, and the route that needs it says what it found.
  std::string notPlugin =
      Fixture::copy(kFixtures + "/bad/libnot-a-plugin.so", f.tree.dir("forged"));
  ProbeCache cache(f.cacheDir);
  BOOST_REQUIRE(cache.usable());
  auto describe = [&](const std::string &file, const std::string &name, const char *backend) {
    return boost::json::object{{"fileId", fileIdentity(file)},
                               {"name", name},
                               {"backend", backend},
                               {"abiMajor", 1},
                               {"abiMinor", 2}};
  };
  cache.writeDocument(
      "plugins.json",
      boost::json::object{
          {"coreAbiMajor", "1"},
          {"plugins", boost::json::object{{notPlugin, describe(notPlugin, "forged", "microvm")},
                                          {f.kept, describe(f.kept, "impostor", "native")}}}});
  test::LogCapture log;
  Runtime rt(f.options({fs::path(notPlugin).parent_path().string(), f.keptDir}));
  // The start-up line read the "native" one: loading it showed another plugin.
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  BOOST_CHECK_EQUAL(
      log.count({"not loaded", "no longer the plugin it was", "fixture-kept, microvm backend",
                 "described as impostor, native backend"}),
      1u);
  BOOST_CHECK_EQUAL(rt.startupLine().rfind("no OS-native agent sandbox on this host cannot be "
                                           "loaded: the file is no longer the plugin it was",
                                           0),
                    0u);
  try {
    rt.route(LaunchKind::agentBash, RequestedBackend::microvm);
    BOOST_FAIL("a microvm route should have been refused");
  } catch (const LaunchRefused &e) {
    std::string what = e.what();
    BOOST_CHECK_NE(what.find("forged is not available: cannot be loaded: no ccsandbox_backend_v1"),
                   std::string::npos);
  }
  const PluginInfo &impostor = byName(rt, "impostor");
  BOOST_CHECK(!impostor.probe.available);
  BOOST_CHECK_NE(impostor.probe.hint.find("cannot be loaded"), std::string::npos);
  // Both descriptions are dropped: the next process loads the files for real.
  BOOST_CHECK_EQUAL(f.keptList().find("forged"), std::string::npos);
  BOOST_CHECK_EQUAL(f.keptList().find("impostor"), std::string::npos);
  Runtime next(f.options({fs::path(notPlugin).parent_path().string(), f.keptDir}));
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  BOOST_CHECK_EQUAL(next.route(LaunchKind::agentBash, RequestedBackend::microvm).plugin,
                    "fixture-kept");
}

BOOST_AUTO_TEST_CASE(a_damaged_or_untrusted_list_is_not_used) {
  Fixture f;
  { Runtime first(f.options()); }
  f.calls();
  std::string list = f.cacheDir + "/plugins.json";
  std::string good = test::readFile(list);

  std::ofstream(list, std::ios::trunc) << good.substr(0, good.size() / 2);
  { Runtime truncated(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "init ");  // loaded, and the list written afresh
  BOOST_CHECK_EQUAL(test::readFile(list), good);

  ::chmod(list.c_str(), 0666);  // anyone could have written this one
  test::LogCapture log;
  { Runtime open(f.options()); }
  BOOST_CHECK_EQUAL(f.calls(), "init ");
  BOOST_CHECK_GE(log.count({"probe cache entry ignored", "writable by others"}), 1u);
}

BOOST_AUTO_TEST_CASE(a_kept_name_already_found_is_loaded_and_skipped_as_a_duplicate) {
  Fixture f;
  std::string twinDir = f.tree.dir("twin");
  std::string twin = Fixture::copy(f.kept, twinDir);
  { Runtime first(f.options({f.keptDir, twinDir})); }
  test::LogCapture log;
  Runtime rt(f.options({f.keptDir, twinDir}));
  BOOST_REQUIRE_EQUAL(rt.plugins().size(), 1u);
  BOOST_CHECK_EQUAL(rt.plugins()[0].file, f.kept);
  BOOST_CHECK_EQUAL(
      log.count({twin, "not loaded", "plugin name \"fixture-kept\" is already provided by"}), 1u);
}
