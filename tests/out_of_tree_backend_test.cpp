// A third party's view: install ccsandbox, build sdk/examples/hello-backend
// out of tree against the installed SDK with find_package, and run it through
// the installed CLI found via CCSANDBOX_PLUGIN_PATH.
#define BOOST_TEST_MODULE out_of_tree_backend
#include <boost/test/unit_test.hpp>

#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <filesystem>

using ccsandbox::test::runChild;

BOOST_AUTO_TEST_CASE(example_backend_builds_against_the_installed_sdk_and_runs) {
  ccsandbox::test::TempTree tree;
  const std::string prefix = tree.path() + "/prefix";
  ccsandbox::test::ChildOptions slow;
  slow.limit = std::chrono::seconds(600);
  // The example must not see the source tree: only what was installed.
  auto install = runChild({"cmake", "--install", CCSANDBOX_BINARY_DIR, "--prefix", prefix}, slow);
  BOOST_REQUIRE_MESSAGE(install.status == 0, install.out + install.err);
  for (const char *installed :
       {"bin/ccsandbox", "lib/libccsandbox.so", "lib/ccsandbox/plugins/libccsandbox-none.so",
        "include/ccsandbox/backend_abi.h", "include/ccsandbox/runtime.hpp",
        "lib/cmake/ccsandbox-sdk/ccsandbox-sdk-config.cmake"})
    BOOST_CHECK_MESSAGE(std::filesystem::exists(prefix + "/" + installed), installed);

  const std::string build = tree.path() + "/hello-build";
  auto configure =
      runChild({"cmake", "-S", std::string(CCSANDBOX_SOURCE_DIR) + "/sdk/examples/hello-backend",
                "-B", build, "-DCMAKE_PREFIX_PATH=" + prefix, "-DCMAKE_BUILD_TYPE=Release"},
               slow);
  BOOST_REQUIRE_MESSAGE(configure.status == 0, configure.out + configure.err);
  auto compile = runChild({"cmake", "--build", build, "-j2"}, slow);
  BOOST_REQUIRE_MESSAGE(compile.status == 0, compile.out + compile.err);

  ccsandbox::test::ChildOptions env;
  env.setEnv["CCSANDBOX_PLUGIN_PATH"] = build;
  env.unsetEnv = {"CC_SERVER_SANDBOX"};
  auto plugins = runChild({prefix + "/bin/ccsandbox", "plugins"}, env);
  BOOST_CHECK_EQUAL(plugins.status, 0);
  BOOST_CHECK_MESSAGE(plugins.out.find("hello") != std::string::npos &&
                          plugins.out.find(build + "/libhello-backend.so") != std::string::npos,
                      plugins.out);
  // `nice` with no argument prints the niceness it runs at: the plugin's wrapper worked.
  auto run = runChild({prefix + "/bin/ccsandbox", "run", "--plugin", "hello", "--", "nice"}, env);
  BOOST_CHECK_EQUAL(run.status, 0);
  int expected = std::min(19, ::getpriority(PRIO_PROCESS, 0) + 10);
  BOOST_CHECK_EQUAL(run.out, std::to_string(expected) + "\n");
  auto code = runChild({prefix + "/bin/ccsandbox", "run", "--plugin", "hello", "--", "sh", "-c",
                        "echo out; echo err >&2; exit 5"},
                       env);
  BOOST_CHECK_EQUAL(code.status, 5);
  BOOST_CHECK_EQUAL(code.out, "out\n");
  BOOST_CHECK_EQUAL(code.err, "err\n");
  // A third party's backend passes the same conformance kit as ours.
  auto kit =
      runChild({prefix + "/bin/ccsandbox", "conformance", build + "/libhello-backend.so"}, env);
  BOOST_CHECK_MESSAGE(kit.status == 0, kit.out + kit.err);
}
