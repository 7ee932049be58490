// `ccsandbox policy` and `ccsandbox run` from the outside: the policy a user
// sees is the policy a launch hands its backend.
#define BOOST_TEST_MODULE policy_cli
#include <boost/test/unit_test.hpp>

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/policy_preview.hpp"
#include "support/child_process.hpp"
#include "support/temp_tree.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

using namespace ccsandbox;
using ccsandbox::test::ChildOptions;
using ccsandbox::test::runChild;
using ccsandbox::test::TempTree;

namespace {

bool has(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A checkout in a temp tree, and a fake home so the host's own files stay out.
struct Checkout {
  TempTree tree;
  std::string home, repo;
  Checkout() {
    home = std::filesystem::canonical(tree.dir("home")).string();
    repo = std::filesystem::canonical(tree.dir("home/src/repo")).string();
    tree.dir("home/src/repo/.git/hooks");
    tree.file("home/src/repo/.git/config", "[core]\n");
    tree.dir("home/.ssh");
  }
  ChildOptions options() const {
    ChildOptions o;
    o.cwd = repo;
    o.setEnv["HOME"] = home;
    o.setEnv["CCSANDBOX_PLUGIN_PATH"] = CCSANDBOX_PLUGIN_DIR;
    return o;
  }
};

EffectivePolicy policyJson(std::vector<std::string> args, const ChildOptions &options) {
  std::vector<std::string> argv{CCSANDBOX_CLI, "policy", "--json"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = runChild(argv, options);
  BOOST_REQUIRE_MESSAGE(r.status == 0, "policy --json failed: " << r.err);
  return decodeEffectivePolicy(boost::json::parse(r.out));
}

// Replaces the random part of the sandbox's temp dir (ccsandbox-<random>/tmp,
// or ccsandbox-tmp-<random> where the session directory is elsewhere) by the
// placeholder `policy` shows, in the literal and the resolved forms alike, then
// re-sorts, so the two policies compare field by field.
EffectivePolicy withPlaceholderTempDir(EffectivePolicy p) {
  const auto start = p.tempDir.rfind("/ccsandbox-");
  BOOST_REQUIRE(start != std::string::npos);
  auto at = start + std::string("/ccsandbox-").size();
  if (p.tempDir.compare(at, 4, "tmp-") == 0) at += 4;
  BOOST_REQUIRE(p.tempDir.size() >= at + 6);
  // The name alone: a resolved form may reach it through another path.
  const std::string real = p.tempDir.substr(start, at + 6 - start);
  const std::string shown = p.tempDir.substr(start, at - start) + "XXXXXX";
  auto swap = [&](std::string &s) {
    for (auto i = s.find(real); i != std::string::npos; i = s.find(real, i + 1))
      s.replace(i, real.size(), shown);
  };
  for (auto *list : {&p.writeRoots, &p.writeDeny, &p.unlinkDeny}) {
    for (auto &s : *list) swap(s);
    std::sort(list->begin(), list->end());
  }
  for (auto &b : p.visible.binds) {
    swap(b.hostPath);
    swap(b.guestPath);
  }
  std::sort(p.visible.binds.begin(), p.visible.binds.end(), [](const auto &a, const auto &b) {
    return std::tie(a.guestPath, a.hostPath, a.readOnly) <
           std::tie(b.guestPath, b.hostPath, b.readOnly);
  });
  for (auto &[k, v] : p.env) swap(v);
  swap(p.tempDir);
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(policy_json_in_a_checkout) {
  Checkout c;
  auto p = policyJson({}, c.options());
  BOOST_TEST(p.launchKind == "agent-bash");
  BOOST_TEST(p.mode == "chat");
  BOOST_TEST(has(p.writeRoots, c.repo));
  BOOST_TEST(has(p.writeDeny, c.repo + "/.git/hooks"));
  BOOST_TEST(has(p.writeDeny, c.repo + "/.git/config"));
  BOOST_TEST(p.writeDenyGlobs == (std::vector<std::string>{"*.key", "*.pem", ".env", ".env.*"}));
  BOOST_TEST(has(p.readDeny, c.home + "/.ssh"));
  BOOST_TEST(p.network.enabled);
  BOOST_TEST(!p.network.allowlist.empty());  // the shipped baseline and GitHub
  bool repoBindWritable = false;
  for (const auto &b : p.visible.binds)
    if (b.hostPath == c.repo) repoBindWritable = !b.readOnly;
  BOOST_TEST(repoBindWritable);
}

BOOST_AUTO_TEST_CASE(secret_through_a_symlink_in_both_forms) {
  Checkout c;
  c.tree.dir("home/vault/aws");
  c.tree.symlink("home/.aws", "vault/aws");
  auto p = policyJson({}, c.options());
  BOOST_TEST(has(p.readDeny, c.home + "/.aws"));
  BOOST_TEST(has(p.readDeny, c.home + "/vault/aws"));
}

BOOST_AUTO_TEST_CASE(review_mode_has_no_writable_bind_but_the_runner_state_dirs) {
  Checkout c;
  std::string state = std::filesystem::canonical(c.tree.dir("home/.cc/state")).string();
  std::string spec = c.tree.file("spec.json", "{\"bindMounts\":[{\"hostPath\":\"" + c.repo +
                                                  "\"}],\"runnerStateDirs\":[\"" + state + "\"]}");
  auto p = policyJson({"--mode", "review", "--spec", spec}, c.options());
  BOOST_TEST(p.mode == "review");
  for (const auto &b : p.visible.binds) {
    bool runnerOrTemp = b.hostPath == state || b.hostPath == p.tempDir;
    BOOST_TEST(b.readOnly == !runnerOrTemp, b.hostPath);
  }
  BOOST_TEST(!has(p.writeRoots, c.repo));
  BOOST_TEST(has(p.writeRoots, state));

  // The human-readable form says the same.
  auto argv = std::vector<std::string>{CCSANDBOX_CLI, "policy", "--mode", "review", "--spec", spec};
  auto r = runChild(argv, c.options());
  BOOST_TEST(r.status == 0, r.err);
  BOOST_TEST(r.out.find("ro " + c.repo) != std::string::npos, r.out);
  BOOST_TEST(r.out.find("rw " + state) != std::string::npos, r.out);
}

BOOST_AUTO_TEST_CASE(relative_host_path_exits_125_naming_the_field) {
  Checkout c;
  std::string spec = c.tree.file("spec.json", R"({"bindMounts":[{"hostPath":"src/repo"}]})");
  for (const char *command : {"policy", "run"}) {
    std::vector<std::string> argv{CCSANDBOX_CLI, command, "--spec", spec};
    if (std::string(command) == "run") argv.insert(argv.end(), {"--", "true"});
    auto r = runChild(argv, c.options());
    BOOST_TEST(r.status == 125, command);
    BOOST_TEST(r.err.find("bindMounts[0].hostPath") != std::string::npos, r.err);
  }
  auto r = runChild({CCSANDBOX_CLI, "policy", "--bind", "data:/data"}, c.options());
  BOOST_TEST(r.status == 125);
  BOOST_TEST(r.err.find("--bind") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(secret_as_write_root_exits_125_naming_both) {
  Checkout c;
  auto r = runChild({CCSANDBOX_CLI, "policy", "--bind", c.home + "/.ssh"}, c.options());
  BOOST_TEST(r.status == 125);
  BOOST_TEST(r.err.find("bindMounts[1].hostPath \"" + c.home + "/.ssh\"") != std::string::npos,
             r.err);
  BOOST_TEST(r.err.find("read-denied path " + c.home + "/.ssh") != std::string::npos, r.err);
}

BOOST_AUTO_TEST_CASE(options_add_to_the_default_spec) {
  Checkout c;
  std::string data = std::filesystem::canonical(c.tree.dir("data")).string();
  std::string tools = std::filesystem::canonical(c.tree.dir("tools")).string();
  auto p =
      policyJson({"--bind", data + ":/mnt/data:ro", "--protect", "~/originals", "--deny-write-glob",
                  "*.p12", "--allow-domain", "*.example.org", "--exec-grant", tools},
                 c.options());
  BOOST_TEST(has(p.writeRoots, c.repo));  // the default bind is still there
  bool dataBind = false;
  for (const auto &b : p.visible.binds)
    if (b.hostPath == data) dataBind = b.guestPath == "/mnt/data" && b.readOnly;
  BOOST_TEST(dataBind);
  BOOST_TEST(has(p.writeDeny, c.home + "/originals"));
  BOOST_TEST(has(p.writeDenyGlobs, "*.p12"));
  BOOST_TEST(has(p.writeDenyGlobs, ".env"));
  BOOST_TEST(has(p.network.allowlist, "*.example.org"));
  BOOST_TEST(has(p.exec.grantRoots, tools));

  auto off = policyJson({"--no-network", "--no-filename-rules"}, c.options());
  BOOST_TEST(!off.network.enabled);
  BOOST_TEST(off.network.allowlist.empty());
  BOOST_TEST(!off.network.denylist.empty());
  BOOST_TEST(off.writeDenyGlobs.empty());
  BOOST_TEST(has(off.writeDeny, c.repo + "/.git/hooks"));  // the opt-out drops globs only

  auto help = runChild({CCSANDBOX_CLI, "policy", "--help"}, c.options());
  BOOST_TEST(help.out.find("--no-filename-rules   WEAKER") != std::string::npos);
  help = runChild({CCSANDBOX_CLI, "run", "--help"}, c.options());
  BOOST_TEST(help.out.find("--no-filename-rules   WEAKER") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(policy_json_is_what_run_hands_the_backend) {
  // A recorder plugin writes the policy a launch hands it; `policy --json` with
  // the same options must print the same policy, the session's temp dir aside.
  Checkout c;
  std::string state = std::filesystem::canonical(c.tree.dir("home/.cc/state")).string();
  std::string spec = c.tree.file(
      "spec.json",
      "{\"bindMounts\":[{\"hostPath\":\"" + c.repo + "\"}],\"runnerStateDirs\":[\"" + state +
          "\"],\"protectedPaths\":[\"~/originals\"],\"egressAllowlist\":[\"x.test\"]}");
  std::string out = c.tree.path() + "/recorded.json";
  for (std::vector<std::string> options :
       {std::vector<std::string>{},
        {"--mode", "plan", "--spec", spec, "--deny-write-glob", "*.p12"},
        {"--no-network", "--no-filename-rules", "--launch-kind", "acp"}}) {
    BOOST_TEST_CONTEXT("options:" << [&] {
      std::string s;
      for (auto &o : options) s += " " + o;
      return s;
    }()) {
      ChildOptions env = c.options();
      env.setEnv["CCSANDBOX_PLUGIN_PATH"] = CCSANDBOX_POLICY_RECORDER_DIR;
      env.setEnv["CCSANDBOX_TEST_POLICY_OUT"] = out;
      std::filesystem::remove(out);
      std::vector<std::string> run{CCSANDBOX_CLI, "run", "--plugin", "policy-recorder"};
      run.insert(run.end(), options.begin(), options.end());
      run.insert(run.end(), {"--", "true"});
      auto r = runChild(run, env);
      BOOST_REQUIRE_MESSAGE(r.status == 0, "run failed: " << r.err);
      auto recorded = decodeEffectivePolicy(boost::json::parse(test::readFile(out)));
      auto shown = policyJson(options, env);
      BOOST_TEST(recorded.tempDir != shown.tempDir);  // a real session dir, not the placeholder
      BOOST_TEST(recorded.tempDir.find("/ccsandbox-") != std::string::npos);
      auto normalised = withPlaceholderTempDir(recorded);
      BOOST_TEST(boost::json::serialize(toJson(normalised)) ==
                 boost::json::serialize(toJson(shown)));
    }
  }
}

BOOST_AUTO_TEST_CASE(unprivileged_user_keeps_what_it_cannot_resolve) {
  // As root every link resolves; a real user may not search a directory on the
  // way, and then the path is kept as written instead of failing the launch.
  if (::geteuid() != 0 || !std::filesystem::exists("/usr/bin/setpriv")) {
    BOOST_TEST_MESSAGE("skipped: needs root and setpriv to become an unprivileged user");
    return;
  }
  TempTree tree;
  namespace fs = std::filesystem;
  fs::permissions(tree.path(),
                  fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  std::string home = tree.dir("home");
  std::string work = tree.dir("work");
  tree.dir("home/locked/aws");
  tree.symlink("home/.aws", "locked/aws");
  fs::permissions(home, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(work, fs::perms::all);
  fs::permissions(tree.path() + "/home/locked", fs::perms::owner_all);  // root only
  ChildOptions o;
  o.cwd = work;
  o.setEnv["HOME"] = home;
  auto policyAs = [&](bool unprivileged) {
    std::vector<std::string> argv{CCSANDBOX_CLI, "policy", "--json"};
    if (unprivileged)
      argv.insert(argv.begin(),
                  {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
    auto r = runChild(argv, o);
    BOOST_REQUIRE_MESSAGE(r.status == 0, "policy --json failed: " << r.err);
    return decodeEffectivePolicy(boost::json::parse(r.out));
  };
  auto asRoot = policyAs(false);
  BOOST_TEST(has(asRoot.readDeny, home + "/.aws"));
  BOOST_TEST(has(asRoot.readDeny, home + "/locked/aws"));
  auto asUser = policyAs(true);
  BOOST_TEST(has(asUser.readDeny, home + "/.aws"));
  // The link is readable but its target's directory is not searchable: the
  // path does not resolve and is kept as written (the user cannot read the
  // target either).
  BOOST_TEST(!has(asUser.readDeny, home + "/locked/aws"));
  BOOST_TEST(has(asUser.writeRoots, work));
}
