// The probe cache (backend ABI 1.1): a kept result is reused only under the same
// boot, user, plugin file and plugin fingerprint; only available results are
// kept; a directory or entry others could have written is never trusted; a
// refused restore or a failed launch sends the next start back to a real probe;
// a plugin of ABI 1.0 loads and is simply probed every time.
#define BOOST_TEST_MODULE probe_cache
#include <boost/test/unit_test.hpp>

#include "ccsandbox/runtime.hpp"
#include "probe_cache.hpp"
#include "support/kept_probe_log.hpp"
#include "support/log_capture.hpp"
#include "support/temp_tree.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace ccsandbox;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = CCSANDBOX_FIXTURE_DIR;

ProbeResult available(const std::string &note) {
  ProbeResult p;
  p.available = true;
  p.note = note;
  p.capabilities = {capability::kReadDeny};
  p.state = {{"k", 1}};
  return p;
}

// A plugin file of our own, so the test can change its identity.
std::string pluginFile(test::TempTree &tree) {
  return tree.file("lib/libfake.so", "not really a plugin");
}

struct Fixture {
  test::TempTree tree;
  std::string cacheDir = tree.path() + "/cache";
  std::string log = tree.path() + "/probe.log";

  RuntimeOptions options(const std::string &dir, boost::json::object settings) {
    settings["log"] = log;
    RuntimeOptions o;
    o.pluginPath = {kFixtures + "/" + dir};
    o.searchInstallDir = false;
    o.probeCacheDir = cacheDir;
    o.pluginSettings = {{"fixture-kept", settings}, {"fixture-kept-abi10", settings}};
    return o;
  }
  // What the fixture did, one word per probe or restore, since the last call.
  std::string calls() { return test::takeKeptProbeCalls(log); }
};

}  // namespace

BOOST_AUTO_TEST_CASE(an_entry_matches_only_its_own_key) {
  test::TempTree tree;
  ProbeCache cache(tree.path() + "/cache");
  BOOST_REQUIRE(cache.usable());
  ProbeKey key{"fake", pluginFile(tree), "facts-1"};
  BOOST_CHECK(!cache.find(key));
  cache.store(key, available("first"));
  auto kept = cache.find(key);
  BOOST_REQUIRE(kept);
  BOOST_CHECK_EQUAL(kept->note, "first");
  BOOST_CHECK(kept->has(capability::kReadDeny));
  BOOST_CHECK_EQUAL(boost::json::serialize(kept->state), R"({"k":1})");

  ProbeKey otherFacts = key;
  otherFacts.fingerprint = "facts-2";
  BOOST_CHECK(!cache.find(otherFacts));
  ProbeKey otherPlugin = key;
  otherPlugin.plugin = "other";
  BOOST_CHECK(!cache.find(otherPlugin));
  // A rebuilt plugin (same path, new contents) is a new key.
  std::ofstream(key.pluginFile) << "rebuilt, and longer than before";
  BOOST_CHECK(!cache.find(key));
}

BOOST_AUTO_TEST_CASE(only_available_results_are_kept) {
  test::TempTree tree;
  ProbeCache cache(tree.path() + "/cache");
  ProbeKey key{"fake", pluginFile(tree), "facts"};
  cache.store(key, available("yes"));
  BOOST_REQUIRE(cache.find(key));
  ProbeResult no;
  no.hint = "install it";
  cache.store(key, no);  // also drops the earlier, available one
  BOOST_CHECK(!cache.find(key));
  BOOST_CHECK(!fs::exists(tree.path() + "/cache/probe-fake.json"));
}

BOOST_AUTO_TEST_CASE(damaged_or_untrusted_entries_are_ignored) {
  test::TempTree tree;
  std::string dir = tree.path() + "/cache";
  ProbeCache cache(dir);
  ProbeKey key{"fake", pluginFile(tree), "facts"};
  std::string entry = dir + "/probe-fake.json";

  cache.store(key, available("yes"));
  std::string good = test::readFile(entry);
  std::ofstream(entry, std::ios::trunc) << good.substr(0, good.size() / 2);
  BOOST_CHECK(!cache.find(key));  // truncated JSON

  std::ofstream(entry, std::ios::trunc) << good;
  BOOST_REQUIRE(cache.find(key));
  ::chmod(entry.c_str(), 0666);  // anyone could have written this one
  test::LogCapture log;
  BOOST_CHECK(!cache.find(key));
  BOOST_CHECK_EQUAL(log.count({"probe cache entry ignored", "writable by others"}), 1u);

  fs::remove(entry);
  fs::create_symlink(tree.file("elsewhere.json", good), entry);
  BOOST_CHECK(!cache.find(key));  // never through a link

  // A plugin name that is not a plain file name is never kept.
  ProbeKey odd{"../escape", key.pluginFile, "facts"};
  cache.store(odd, available("no"));
  BOOST_CHECK(!fs::exists(tree.path() + "/escape.json"));
  BOOST_CHECK(!cache.find(odd));
}

BOOST_AUTO_TEST_CASE(a_directory_others_can_write_is_not_used) {
  test::TempTree tree;
  std::string shared = tree.dir("shared");
  ::chmod(shared.c_str(), 0777);
  ProbeCache open(shared);
  BOOST_CHECK(!open.usable());
  BOOST_CHECK_NE(open.unusableReason().find("writable by others"), std::string::npos);

  std::string real = tree.dir("real");
  ::chmod(real.c_str(), 0700);
  fs::create_symlink(real, tree.path() + "/link");
  BOOST_CHECK(!ProbeCache(tree.path() + "/link").usable());
  BOOST_CHECK(!ProbeCache("relative/dir").usable());

  if (::geteuid() == 0) {
    std::string theirs = tree.dir("theirs");
    BOOST_REQUIRE_EQUAL(::chown(theirs.c_str(), 65534, 65534), 0);
    ProbeCache cache(theirs);
    BOOST_CHECK(!cache.usable());
    BOOST_CHECK_NE(cache.unusableReason().find("belongs to uid 65534"), std::string::npos);
  }
  ProbeCache fresh(tree.path() + "/made/here");  // parent missing: not created, not used
  BOOST_CHECK(!fresh.usable());
  ProbeCache made(tree.path() + "/new");
  BOOST_CHECK(made.usable());
  struct stat st {};
  BOOST_REQUIRE_EQUAL(::stat((tree.path() + "/new").c_str(), &st), 0);
  BOOST_CHECK_EQUAL(st.st_mode & 0777, 0700u);
}

BOOST_AUTO_TEST_CASE(a_second_runtime_restores_instead_of_probing) {
  Fixture f;
  auto settings = boost::json::object{{"fingerprint", "host-a"}};
  { Runtime first(f.options("kept", settings)); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
  {
    test::LogCapture log;
    Runtime second(f.options("kept", settings));
    BOOST_CHECK_EQUAL(f.calls(), "restore ");
    BOOST_REQUIRE_EQUAL(second.plugins().size(), 1u);
    const auto &p = second.plugins()[0].probe;
    BOOST_CHECK(p.available);
    BOOST_CHECK_EQUAL(p.note, "kept-probe fixture");
    BOOST_CHECK(p.state.empty());  // the plugin's state is not shown to API users
    BOOST_CHECK_EQUAL(log.count({"probe of fixture-kept: kept result from", f.cacheDir}), 1u);
  }
  // Other host facts: a real probe, and the entry is replaced.
  { Runtime changed(f.options("kept", {{"fingerprint", "host-b"}})); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
  { Runtime again(f.options("kept", {{"fingerprint", "host-b"}})); }
  BOOST_CHECK_EQUAL(f.calls(), "restore ");
  // `ccsandbox probe`: always a real probe.
  auto refresh = f.options("kept", {{"fingerprint", "host-b"}});
  refresh.refreshProbeCache = true;
  { Runtime fresh(refresh); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
  // No cache directory: always a real probe.
  auto none = f.options("kept", {{"fingerprint", "host-b"}});
  none.probeCacheDir.reset();
  { Runtime plain(none); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
}

BOOST_AUTO_TEST_CASE(nothing_is_kept_without_a_fingerprint_or_when_unavailable) {
  Fixture f;
  { Runtime a(f.options("kept", {})); }
  { Runtime b(f.options("kept", {})); }
  BOOST_CHECK_EQUAL(f.calls(), "probe probe ");
  auto off = boost::json::object{{"fingerprint", "host"}, {"available", false}};
  { Runtime a(f.options("kept", off)); }
  { Runtime b(f.options("kept", off)); }
  BOOST_CHECK_EQUAL(f.calls(), "probe probe ");
}

BOOST_AUTO_TEST_CASE(a_refused_restore_probes_afresh) {
  Fixture f;
  { Runtime a(f.options("kept", {{"fingerprint", "host"}})); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
  { Runtime b(f.options("kept", {{"fingerprint", "host"}, {"refuseRestore", true}})); }
  BOOST_CHECK_EQUAL(f.calls(), "restore probe ");
}

BOOST_AUTO_TEST_CASE(a_launch_that_fails_on_a_kept_result_drops_it) {
  Fixture f;
  auto settings = boost::json::object{{"fingerprint", "host"}, {"failLaunch", true}};
  { Runtime a(f.options("kept", settings)); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
  {
    Runtime b(f.options("kept", settings));
    BOOST_CHECK_EQUAL(f.calls(), "restore ");
    LaunchOptions launch;
    launch.backend = RequestedBackend::microvm;
    try {
      b.launch(std::move(launch));
      BOOST_FAIL("the launch should have failed");
    } catch (const BackendError &e) {
      std::string what = e.what();
      BOOST_CHECK_NE(what.find("the fixture's sandbox did not start"), std::string::npos);
      BOOST_CHECK_NE(
          what.find("kept from an earlier run; in case the host changed since, it is dropped"),
          std::string::npos);
    }
  }
  { Runtime c(f.options("kept", settings)); }
  BOOST_CHECK_EQUAL(f.calls(), "probe ");
}

BOOST_AUTO_TEST_CASE(an_abi_1_0_plugin_loads_and_is_probed_every_time) {
  Fixture f;
  auto settings = boost::json::object{{"fingerprint", "host"}};
  for (int i = 0; i < 2; ++i) {
    Runtime rt(f.options("kept-abi10", settings));
    BOOST_REQUIRE_EQUAL(rt.plugins().size(), 1u);
    BOOST_CHECK_EQUAL(rt.plugins()[0].name, "fixture-kept-abi10");
    BOOST_CHECK_EQUAL(rt.plugins()[0].abiMinor, 0u);
    BOOST_CHECK(rt.plugins()[0].probe.available);
  }
  BOOST_CHECK_EQUAL(f.calls(), "probe probe ");
  BOOST_CHECK(!fs::exists(f.cacheDir + "/probe-fixture-kept-abi10.json"));
}

BOOST_AUTO_TEST_CASE(an_unusable_cache_directory_is_said_and_every_plugin_probed) {
  Fixture f;
  std::string shared = f.tree.dir("shared");
  ::chmod(shared.c_str(), 0777);
  auto o = f.options("kept", {{"fingerprint", "host"}});
  o.probeCacheDir = shared;
  test::LogCapture log;
  { Runtime a(o); }
  { Runtime b(o); }
  BOOST_CHECK_EQUAL(f.calls(), "probe probe ");
  BOOST_CHECK_EQUAL(log.count({"probe cache off:", "writable by others", "probed afresh"}), 2u);
  BOOST_CHECK(fs::is_empty(shared));
}
