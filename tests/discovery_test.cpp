// Plugin discovery: good plugins load; every bad file is skipped with one log
// line naming it and the reason, and the rest keeps working.
#define BOOST_TEST_MODULE discovery
#include <boost/test/unit_test.hpp>

#include "ccsandbox/runtime.hpp"
#include "egress_lists.hpp"
#include "egress_proxies.hpp"
#include "install_layout.hpp"
#include "plugin_loader.hpp"
#include "support/child_process.hpp"
#include "support/log_capture.hpp"
#include "support/temp_tree.hpp"
#include "trusted_files.hpp"

#include <algorithm>
#include <filesystem>

using namespace ccsandbox;

namespace {

const std::string kFixtures = CCSANDBOX_FIXTURE_DIR;
const std::string kNoneOnly = kFixtures + "/none-only";

RuntimeOptions only(std::vector<std::string> dirs) {
  RuntimeOptions o;
  o.pluginPath = std::move(dirs);
  o.searchInstallDir = false;
  o.sandbox = SandboxSwitch::on;
  return o;
}

std::vector<std::string> names(const Runtime &rt) {
  std::vector<std::string> out;
  for (const auto &p : rt.plugins()) out.push_back(p.name);
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(good_plugin_is_loaded_and_probed_once) {
  test::LogCapture log;
  Runtime rt(only({kNoneOnly}));
  BOOST_REQUIRE_EQUAL(rt.plugins().size(), 1u);
  const PluginInfo &none = rt.plugins()[0];
  BOOST_CHECK_EQUAL(none.name, "none");
  BOOST_CHECK(none.backend == SandboxBackend::none);
  BOOST_CHECK(none.probe.available);
  BOOST_CHECK_EQUAL(none.abiMajor, 1u);
  BOOST_CHECK(std::filesystem::path(none.file).filename() == "libccsandbox-none.so");
  BOOST_CHECK_EQUAL(log.count({"not loaded"}), 0u);
}

BOOST_AUTO_TEST_CASE(bad_files_are_skipped_with_one_line_each) {
  test::TempTree tree;
  tree.file("plugins/garbage.so", "this is not an ELF file\n");
  test::LogCapture log;
  Runtime rt(
      only({kFixtures + "/bad", tree.path() + "/plugins", tree.path() + "/missing", kNoneOnly}));

  // The survivors: the first of two plugins named fixture-dup, and none.
  BOOST_CHECK((names(rt) == std::vector<std::string>{"fixture-dup", "none"}));
  BOOST_CHECK_EQUAL(rt.plugins()[0].probe.note, "first");

  const std::string bad = kFixtures + "/bad/";
  BOOST_CHECK_EQUAL(log.count({"plugin " + bad + "libfixture-abi99.so: not loaded: plugin ABI 99.",
                               "core ABI 1.", "major versions differ"}),
                    1u);
  BOOST_CHECK_EQUAL(log.count({"plugin " + bad +
                               "libnot-a-plugin.so: not loaded: no "
                               "ccsandbox_backend_v1 symbol"}),
                    1u);
  BOOST_CHECK_EQUAL(log.count({"plugin " + bad +
                               "libfixture-dup-b.so: not loaded: plugin name "
                               "\"fixture-dup\" is already provided by " +
                               bad + "libfixture-dup-a.so"}),
                    1u);
  BOOST_CHECK_EQUAL(log.count({"plugin " + tree.path() + "/plugins/garbage.so: not loaded:"}), 1u);
  BOOST_CHECK_EQUAL(log.count({"plugin directory " + tree.path() + "/missing: skipped"}), 1u);

  // And the rest keeps working: a command runs through the none plugin.
  std::string out;
  LaunchOptions launch;
  launch.backend = RequestedBackend::none;
  launch.onEvent = [&](const SandboxEvent &e) {
    if (e.type == SandboxEventType::stdoutData) out += e.data;
  };
  auto session = rt.launch(std::move(launch));
  auto process = session->exec({.argv = {"sh", "-c", "echo still working"}});
  BOOST_CHECK_EQUAL(process->wait(), 0);
  session->destroy();
  BOOST_CHECK_EQUAL(out, "still working\n");
}

BOOST_AUTO_TEST_CASE(the_same_directory_twice_is_searched_once) {
  test::LogCapture log;
  Runtime rt(only({kNoneOnly, std::string(kNoneOnly) + "/."}));
  BOOST_CHECK_EQUAL(rt.plugins().size(), 1u);
  BOOST_CHECK_EQUAL(log.count({"already provided"}), 0u);
}

BOOST_AUTO_TEST_CASE(plugin_path_comes_from_the_environment) {
  ::setenv("CCSANDBOX_PLUGIN_PATH", (kFixtures + "/native-off::" + kNoneOnly).c_str(), 1);
  RuntimeOptions o;
  o.searchInstallDir = false;
  o.sandbox = SandboxSwitch::on;
  Runtime rt(o);
  ::unsetenv("CCSANDBOX_PLUGIN_PATH");
  BOOST_CHECK((names(rt) == std::vector<std::string>{"fixture-native", "none"}));
  BOOST_CHECK(!rt.plugins()[0].probe.available);
  BOOST_CHECK(rt.plugins()[0].probe.requiresInstall);
}

BOOST_AUTO_TEST_CASE(installed_pieces_are_found_from_the_binary_that_runs_the_core) {
  // This suite links the core's objects and sits in <build>/bin, like the CLI;
  // libccsandbox sits in <build>/lib. Both find the same installation.
  namespace fs = std::filesystem;
  const fs::path build = fs::weakly_canonical(CCSANDBOX_BINARY_DIR);
  BOOST_TEST(fs::path(installedPluginDir()) == fs::weakly_canonical(CCSANDBOX_PLUGIN_DIR));
  BOOST_TEST(fs::exists(egressListsPath()), egressListsPath());
  BOOST_TEST(fs::path(egressListsPath()).parent_path().parent_path().parent_path() == build);
  BOOST_TEST(fs::exists(connectHelperPath()), connectHelperPath());
}

BOOST_AUTO_TEST_CASE(only_programs_that_link_the_shared_core_search_a_directory_for_libraries) {
  // Any library search path in what we ship is a directory where a library
  // planted from inside a sandbox (a build of ccsandbox in the working copy)
  // would be loaded by ccsandbox itself, outside any sandbox.
  namespace fs = std::filesystem;
  std::vector<std::string> shipped{CCSANDBOX_SHARED_CORE};
  for (const auto &dir :
       {fs::path(CCSANDBOX_PLUGIN_DIR), fs::path(connectHelperPath()).parent_path()})
    for (const auto &entry : fs::directory_iterator(dir))
      if (entry.is_regular_file()) shipped.push_back(entry.path().string());
  BOOST_TEST_REQUIRE(shipped.size() >= 4u);  // the core, two plugins, two programs at least
  auto searchPath = [](const std::string &file) {
    const auto r = test::runChild({"readelf", "-d", file});
    BOOST_TEST_REQUIRE(r.status == 0, "readelf -d " << file << ": " << r.err);
    std::string found;
    for (const char *tag : {"(RPATH)", "(RUNPATH)"})
      if (auto at = r.out.find(tag); at != std::string::npos)
        found += r.out.substr(at, r.out.find('\n', at) - at);
    return found;
  };
  for (const auto &file : shipped)
    BOOST_TEST(searchPath(file).empty(), file << ": " << searchPath(file));
  const std::string cli = searchPath(CCSANDBOX_CLI);
  if (CCSANDBOX_CLI_LINKS_SHARED_CORE)
    BOOST_TEST(cli.find("[$ORIGIN/../") != std::string::npos, cli);
  else
    BOOST_TEST(cli.empty(), cli);
}

BOOST_AUTO_TEST_CASE(a_cli_run_with_every_shipped_plugin_loaded_maps_no_shared_cxx_runtime) {
  // What CCSANDBOX_STATIC_CXX_RUNTIME buys (about 1 ms of every run) holds only
  // while neither the CLI nor any plugin it loads pulls in libstdc++.so: the
  // command's parent is the CLI, with all its plugins loaded, so its memory
  // map says what was loaded.
  if (!CCSANDBOX_STATIC_CXX_RUNTIME) return;
  test::ChildOptions options;
  options.setEnv["CCSANDBOX_PROBE_CACHE"] = "off";
  const auto r = test::runChild(
      {CCSANDBOX_CLI, "run", "--backend", "none", "--", "sh", "-c", "cat /proc/$PPID/maps"},
      options);
  BOOST_TEST_REQUIRE(r.status == 0, r.err);
  BOOST_TEST(r.out.find("libccsandbox-none.so") != std::string::npos);  // the right process
#ifdef CCSANDBOX_HAS_NATIVE_BWRAP
  BOOST_TEST(r.out.find("libccsandbox-native-bwrap.so") != std::string::npos);
#endif
  BOOST_TEST(r.out.find("libstdc++") == std::string::npos, r.out);
  BOOST_TEST(r.out.find("libgcc_s") == std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(the_directory_of_a_shared_core_is_trusted_and_a_linked_in_core_adds_none) {
  namespace fs = std::filesystem;
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  // This suite links the core's objects: no library directory to protect.
  BOOST_TEST(sharedCoreDirectory(coreObjectPath(), self).empty());
  const auto files = trustedFiles(only({kNoneOnly}));
  BOOST_TEST((std::find(files.begin(), files.end(), self) != files.end()));
  BOOST_TEST((std::find(files.begin(), files.end(), fs::path(self).parent_path().string()) ==
              files.end()));
  // A program that loads libccsandbox: the directory it was found in.
  const fs::path shared = CCSANDBOX_SHARED_CORE;
  BOOST_TEST(sharedCoreDirectory(shared.string(), self) == shared.parent_path().string());
  // Cannot be told (the program is gone): protected rather than not.
  BOOST_TEST(sharedCoreDirectory(shared.string(), "/nonexistent/program") ==
             shared.parent_path().string());
}

BOOST_AUTO_TEST_CASE(no_plugin_at_all_is_not_fatal) {
  test::TempTree tree;
  Runtime rt(only({tree.path()}));
  BOOST_CHECK(rt.plugins().empty());
  BOOST_CHECK(rt.startupLine().starts_with("no OS-native agent sandbox on this host"));
  BOOST_CHECK_THROW(rt.launch({}), LaunchRefused);
}
