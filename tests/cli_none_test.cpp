// The ccsandbox command end to end with the none plugin: exit codes, streams
// kept apart, timeouts, large output, events, and every bad input exiting 125.
#define BOOST_TEST_MODULE cli_none
#include <boost/test/unit_test.hpp>

#include "ccsandbox/json_reader.hpp"
#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <dirent.h>

#include <fstream>
#include <sstream>

using namespace ccsandbox;
using test::runChild;

namespace {

test::ChildResult cli(std::vector<std::string> args, test::ChildOptions options = {}) {
  args.insert(args.begin(), CCSANDBOX_CLI);
  options.unsetEnv.push_back("CC_SERVER_SANDBOX");
  options.unsetEnv.push_back("CCSANDBOX_PLUGIN_PATH");
  return runChild(args, options);
}

std::vector<boost::json::object> readEvents(const std::string &path) {
  std::vector<boost::json::object> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) out.push_back(json::parse(line, path).as_object());
  return out;
}

// Processes whose command line contains `marker`.
int countProcesses(const std::string &marker) {
  int n = 0;
  DIR *d = ::opendir("/proc");
  while (auto *e = ::readdir(d)) {
    std::string pid = e->d_name;
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmd = test::readFile("/proc/" + pid + "/cmdline");
    for (auto &c : cmd)
      if (c == '\0') c = ' ';
    if (cmd.find(marker) != std::string::npos && cmd.find("ccsandbox") == std::string::npos) ++n;
  }
  ::closedir(d);
  return n;
}

}  // namespace

BOOST_AUTO_TEST_CASE(streams_apart_and_exit_status_kept) {
  auto r = cli({"run", "--backend", "none", "--", "sh", "-c", "echo out; echo err >&2; exit 3"});
  BOOST_CHECK_EQUAL(r.status, 3);
  BOOST_CHECK_EQUAL(r.out, "out\n");
  BOOST_CHECK_EQUAL(r.err, "err\n");
}

BOOST_AUTO_TEST_CASE(stdin_is_passed_through) {
  test::ChildOptions o;
  o.stdinData = "from stdin\n";
  auto r = cli({"run", "--backend", "none", "--", "cat"}, o);
  BOOST_CHECK_EQUAL(r.status, 0);
  BOOST_CHECK_EQUAL(r.out, "from stdin\n");
}

BOOST_AUTO_TEST_CASE(not_found_and_not_executable_as_a_shell_says) {
  auto r = cli({"run", "--backend", "none", "--", "no-such-command-ccsandbox"});
  BOOST_CHECK_EQUAL(r.status, 127);
  BOOST_CHECK_EQUAL(r.err, "ccsandbox: no-such-command-ccsandbox: command not found\n");
  test::TempTree tree;
  std::string script = tree.file("script.sh", "#!/bin/sh\necho hi\n");
  r = cli({"run", "--backend", "none", "--", script});
  BOOST_CHECK_EQUAL(r.status, 126);
  BOOST_CHECK(r.err.starts_with("ccsandbox: " + script + ": "));
}

BOOST_AUTO_TEST_CASE(workdir_is_the_commands_cwd) {
  test::TempTree tree;
  auto r = cli({"run", "--backend", "none", "--workdir", tree.path(), "--", "pwd"});
  BOOST_CHECK_EQUAL(r.out, tree.path() + "\n");
  test::ChildOptions o;
  o.cwd = tree.path();
  r = cli({"run", "--backend", "none", "--", "pwd"}, o);
  BOOST_CHECK_EQUAL(r.out, tree.path() + "\n");
}

BOOST_AUTO_TEST_CASE(the_root_directory_is_no_workspace) {
  // Run from /, the default writable bind would be the whole file system.
  test::ChildOptions o;
  o.cwd = "/";
  auto r = cli({"run", "--", "true"}, o);
  BOOST_TEST(r.status == 125);
  BOOST_TEST(r.err.find("the working directory is /") != std::string::npos, r.err);
  BOOST_TEST(r.err.find("--workdir DIR") != std::string::npos, r.err);
  test::TempTree tree;
  r = cli({"run", "--backend", "none", "--workdir", tree.path(), "--", "pwd"}, o);
  BOOST_TEST(r.status == 0, r.err);
}

BOOST_AUTO_TEST_CASE(falling_back_to_no_sandbox_is_never_silent) {
  // No bubblewrap on PATH: the automatic route runs the command unsandboxed
  // (the seed's fallback) and says so; asking for none does not warn, asking
  // for native refuses.
  test::TempTree tree;
  test::ChildOptions o;
  o.cwd = tree.path();
  o.setEnv = {{"PATH", tree.path() + "/no-bin"}, {"CCSANDBOX_PROBE_CACHE", "off"}};
  auto fellBack = cli({"run", "--", "/bin/true"}, o);
  BOOST_TEST(fellBack.status == 0, fellBack.err);
  BOOST_TEST(fellBack.err.find("ccsandbox: warning: no OS-native agent sandbox on this host") == 0u,
             fellBack.err);
  BOOST_TEST(fellBack.err.find("WITHOUT isolation") != std::string::npos, fellBack.err);
  auto asked = cli({"run", "--backend", "none", "--", "/bin/true"}, o);
  BOOST_TEST(asked.status == 0, asked.err);
  BOOST_TEST(asked.err.empty(), asked.err);
  auto off = cli({"run", "--sandbox", "off", "--", "/bin/true"}, o);
  BOOST_TEST(off.err.empty(), off.err);
  auto native = cli({"run", "--backend", "native", "--", "/bin/true"}, o);
  BOOST_TEST(native.status == 125);
}

BOOST_AUTO_TEST_CASE(a_timeout_ends_a_group_that_ignores_sigterm) {
  test::TempTree tree;
  std::string events = tree.path() + "/events.jsonl";
  // Both the shell and its background child ignore SIGTERM; the marker finds stragglers.
  auto r = cli({"run", "--backend", "none", "--timeout", "2", "--events", events, "--", "sh", "-c",
                "trap '' TERM; sleep 31.4159 & sleep 31.4159; wait"});
  BOOST_CHECK_EQUAL(r.status, 137);
  BOOST_CHECK_EQUAL(countProcesses("sleep 31.4159"), 0);
  bool killedByTimeout = false;
  for (auto &e : readEvents(events))
    if (e.at("type") == "killed") killedByTimeout = e.at("reason") == "timeout";
  BOOST_CHECK(killedByTimeout);
  BOOST_CHECK(r.err.find("timed out") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(fifty_mebibytes_arrive_whole) {
  test::TempTree tree;
  // Binary, not repeating: a wrong, lost or reordered chunk changes the bytes.
  std::string data;
  data.reserve(50u << 20);
  std::uint32_t x = 2463534242u;
  while (data.size() < (50u << 20)) {
    x ^= x << 13, x ^= x >> 17, x ^= x << 5;
    data.append(reinterpret_cast<const char *>(&x), sizeof x);
  }
  std::string file = tree.file("blob.bin", data);
  auto r = cli({"run", "--backend", "none", "--", "cat", file});
  BOOST_CHECK_EQUAL(r.status, 0);
  BOOST_CHECK_EQUAL(r.out.size(), data.size());
  BOOST_CHECK(r.out == data);
  r = cli({"run", "--backend", "none", "--", "sh", "-c", "cat \"$0\" >&2", file});
  BOOST_CHECK(r.err == data);
  BOOST_CHECK(r.out.empty());
}

BOOST_AUTO_TEST_CASE(events_file_has_one_json_object_per_event) {
  test::TempTree tree;
  std::string events = tree.path() + "/ev.jsonl";
  auto r = cli({"run", "--backend", "none", "--events", events, "--", "sh", "-c",
                "printf 'a\\377b'; echo e >&2; exit 4"});
  BOOST_CHECK_EQUAL(r.status, 4);
  auto ev = readEvents(events);
  BOOST_REQUIRE_GE(ev.size(), 5u);
  BOOST_CHECK_EQUAL(ev.front().at("type"), "starting");
  BOOST_CHECK_EQUAL(ev.front().at("backend"), "none");
  BOOST_CHECK_EQUAL(ev[1].at("type"), "ready");
  BOOST_CHECK_EQUAL(ev[1].at("backend"), "none");
  BOOST_CHECK_EQUAL(ev.back().at("type"), "exit");
  BOOST_CHECK_EQUAL(ev.back().at("exitCode"), 4);
  bool sawBinary = false, sawStderr = false;
  for (auto &e : ev) {
    if (e.at("type") == "stdout") sawBinary = e.at("dataBase64") == "Yf9i";
    if (e.at("type") == "stderr") sawStderr = e.at("data") == "e\n";
  }
  BOOST_CHECK(sawBinary && sawStderr);
  // With `-`, the events are the output.
  r = cli({"run", "--backend", "none", "--events", "-", "--", "echo", "hi"});
  BOOST_CHECK(r.out.find(R"("type":"stdout")") != std::string::npos);
  BOOST_CHECK(r.out.find(R"("data":"hi\n")") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(bad_input_exits_125_with_one_line) {
  test::TempTree tree;
  std::string unknown = tree.file("bad.json", R"({"sessionId":"x","bindMount":[]})");
  std::string relative = tree.file("rel.json", R"({"bindMounts":[{"hostPath":"a/b"}]})");
  std::string broken = tree.file("broken.json", "{\"mode\": ");
  struct Case {
    std::vector<std::string> args;
    std::string mentions;
  };
  for (const auto &c : std::vector<Case>{
           {{"run", "--spec", unknown, "--", "true"}, "bindMount: unknown field"},
           {{"run", "--spec", relative, "--", "true"}, "bindMounts[0].hostPath: must be absolute"},
           {{"run", "--spec", broken, "--", "true"}, "invalid JSON at line 1"},
           {{"run", "--spec", tree.path() + "/nope.json", "--", "true"}, "cannot read"},
           {{"run", "--sandbox", "maybe", "--", "true"}, "(accepted: on, off)"},
           {{"run", "--backend", "docker", "--", "true"},
            "(accepted: auto, native, none, microvm)"},
           {{"run", "--mode", "yolo", "--", "true"}, "(accepted: chat, review, plan, orchestrate)"},
           {{"run", "--timeout", "soon", "--", "true"}, "--timeout"},
           {{"run", "--timeout", "-1", "--", "true"}, "--timeout"},
           {{"run", "--workdir", tree.path() + "/missing", "--", "true"},
            "not an existing directory"},
           {{"run", "--frobnicate", "--", "true"}, "unknown option --frobnicate"},
           {{"run", "--"}, "no command given"},
           {{"run", "--backend", "microvm", "--", "true"}, "microvm"},
           {{"run", "--backend", "native", "--sandbox", "off", "--", "true"}, "--sandbox off"},
           {{"run", "--plugin", "nope", "--", "true"}, "no plugin named nope"},
           {{"frobnicate"}, "unknown command"},
       }) {
    auto r = cli(c.args);
    BOOST_CHECK_MESSAGE(r.status == 125, c.args[1] << ": status " << r.status);
    BOOST_CHECK_MESSAGE(r.err.starts_with("ccsandbox: "), r.err);
    BOOST_CHECK_MESSAGE(r.err.find(c.mentions) != std::string::npos, r.err);
    BOOST_CHECK_MESSAGE(std::count(r.err.begin(), r.err.end(), '\n') == 1, r.err);
    BOOST_CHECK(r.out.empty());
  }
}

BOOST_AUTO_TEST_CASE(sandbox_off_from_the_environment) {
  test::ChildOptions o;
  o.setEnv["CC_SERVER_SANDBOX"] = "off";
  auto r = runChild({CCSANDBOX_CLI, "probe"}, o);
  BOOST_CHECK(r.out.find("agent sandbox DISABLED by --sandbox off\n") != std::string::npos);
  o.setEnv["CC_SERVER_SANDBOX"] = "sometimes";
  r = runChild({CCSANDBOX_CLI, "run", "--", "true"}, o);
  BOOST_CHECK_EQUAL(r.status, 125);
  BOOST_CHECK(r.err.find("CC_SERVER_SANDBOX") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(probe_and_plugins_list_every_plugin) {
  auto r = cli({"probe"});
  BOOST_CHECK_EQUAL(r.status, 0);
  BOOST_CHECK(r.out.find("none") != std::string::npos);
  BOOST_CHECK(r.out.find("libccsandbox-none.so") != std::string::npos);
  // The last line is the start-up line.
  std::string last = r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1);
  BOOST_CHECK(last.starts_with("agent sandbox ON ") ||
              last.starts_with("no OS-native agent sandbox on this host "));
  r = cli({"probe", "--json"});
  auto doc = json::parse(r.out, "probe --json").as_object();
  bool sawNone = false;
  for (auto &p : doc.at("plugins").as_array())
    if (p.at("name") == "none") {
      sawNone = true;
      BOOST_CHECK(p.at("available").as_bool());
      BOOST_CHECK(p.as_object().contains("requiresInstall"));
      BOOST_CHECK(p.as_object().contains("file"));
    }
  BOOST_CHECK(sawNone);
  BOOST_CHECK(doc.at("startupLine").is_string());
  r = cli({"plugins"});
  BOOST_CHECK(r.out.find("ABI 1.2") != std::string::npos);
  for (const char *sub : {"run", "probe", "plugins"}) {
    r = cli({sub, "--help"});
    BOOST_CHECK_EQUAL(r.status, 0);
    BOOST_CHECK(r.out.starts_with(std::string("usage: ccsandbox ") + sub));
  }
}

BOOST_AUTO_TEST_CASE(libraries_are_never_loaded_from_the_working_directory) {
  // An empty search-path entry makes the loader look in the current
  // directory: a workspace could then plant a library into ccsandbox itself.
  test::TempTree tree;
  for (const char *name : {"libc.so.6", "libstdc++.so.6", "libboost_log.so.1.81.0",
                           "libboost_thread.so.1.81.0", "libccsandbox.so.0"})
    tree.file(name, "not a shared object\n");
  test::ChildOptions o;
  o.cwd = tree.path();
  auto r = cli({"--version"}, o);
  BOOST_CHECK_MESSAGE(r.status == 0, r.err);
  r = cli({"run", "--backend", "none", "--", "true"}, o);
  BOOST_CHECK_MESSAGE(r.status == 0, r.err);
}
