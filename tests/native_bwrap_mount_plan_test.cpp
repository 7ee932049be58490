// The mount plan on its own: policy in, bwrap arguments out, over a made-up
// file system. A small model of bwrap's mount table replays the arguments so
// the checks are about what the sandbox would see, not about argument text.
#define BOOST_TEST_MODULE native_bwrap_mount_plan
#include <boost/test/unit_test.hpp>

#include "mount_plan.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>

using namespace ccsandbox;
using namespace ccsandbox::bwrap;

namespace {

class FakeFs final : public FilesystemView {
 public:
  FakeFs &dir(const std::string &p) {
    kinds_[p] = {PathInfo::Kind::directory, ""};
    return *this;
  }
  FakeFs &file(const std::string &p) {
    kinds_[p] = {PathInfo::Kind::file, ""};
    return *this;
  }
  FakeFs &link(const std::string &p, const std::string &target) {
    kinds_[p] = {PathInfo::Kind::symlink, target};
    return *this;
  }
  PathInfo inspect(const std::string &path) const override {
    auto it = kinds_.find(path);
    return it == kinds_.end() ? PathInfo{} : it->second;
  }

 private:
  std::map<std::string, PathInfo> kinds_;
};

MountPlanInput input(bool root = false) {
  MountPlanInput in;
  in.callerIsRoot = root;
  in.helperPath = "/opt/cc/helper";
  in.toolsDir = "/opt/cc";
  in.emptyDir = "/run/rt/empty";
  in.controlFd = 3;
  return in;
}

bool has(const std::vector<std::string> &args, const std::string &a) {
  return std::find(args.begin(), args.end(), a) != args.end();
}

// Index of the triple (op, a, b) in args, or -1.
long find3(const std::vector<std::string> &args, const std::string &op, const std::string &a,
           const std::string &b) {
  for (std::size_t i = 0; i + 2 < args.size(); ++i)
    if (args[i] == op && args[i + 1] == a && args[i + 2] == b) return static_cast<long>(i);
  return -1;
}

// bwrap's mount table, replayed: a mount at G hides every earlier mount at or
// beneath G; a path is served by the deepest mount that contains it.
struct Mount {
  std::string guest, source;
  bool readOnly;
  std::string kind;  // bind, tmpfs, proc, dev, symlink
};

std::vector<Mount> replay(const std::vector<std::string> &args) {
  std::vector<Mount> table;
  auto add = [&](Mount m) {
    table.erase(std::remove_if(table.begin(), table.end(),
                               [&](const Mount &o) { return isWithin(o.guest, m.guest); }),
                table.end());
    table.push_back(std::move(m));
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto &a = args[i];
    if (a == "--") break;
    if (a == "--bind" || a == "--ro-bind") {
      add({args[i + 2], args[i + 1], a == "--ro-bind", "bind"});
      i += 2;
    } else if (a == "--symlink") {
      add({args[i + 2], args[i + 1], true, "symlink"});
      i += 2;
    } else if (a == "--tmpfs" || a == "--proc" || a == "--dev") {
      add({args[i + 1], "", false, a.substr(2)});
      i += 1;
    } else if (a == "--setenv") {
      i += 2;
    } else if (a == "--chdir" || a == "--cap-drop") {
      i += 1;
    }
  }
  return table;
}

std::optional<Mount> serving(const std::vector<Mount> &table, const std::string &guest) {
  std::optional<Mount> best;
  for (const auto &m : table)
    if (isWithin(guest, m.guest) && (!best || m.guest.size() > best->guest.size())) best = m;
  return best;
}

EffectivePolicy basePolicy() {
  EffectivePolicy p;
  p.launchKind = "agent-bash";
  p.mode = "chat";
  p.home = "/home/u";
  p.visible.systemReadOnly = {"/usr", "/bin", "/lib64", "/etc", "/opt"};
  return p;
}

FakeFs baseFs() {
  FakeFs fs;
  fs.dir("/usr").link("/bin", "usr/bin").dir("/etc").link("/lib64", "usr/lib64");
  return fs;  // no /opt: skipped
}

}  // namespace

BOOST_AUTO_TEST_CASE(namespaces_session_and_privileges) {
  auto p = basePolicy();
  auto user = planMounts(p, input(false), baseFs()).args;
  for (const char *flag :
       {"--die-with-parent", "--new-session", "--as-pid-1", "--unshare-ipc", "--unshare-pid",
        "--unshare-net", "--unshare-uts", "--unshare-cgroup-try", "--unshare-user",
        "--disable-userns", "--clearenv"})
    BOOST_TEST(has(user, flag), flag);
  BOOST_TEST(find3(user, "--cap-drop", "ALL", user[0]) == -1);  // sanity of find3
  auto root = planMounts(p, input(true), baseFs()).args;
  BOOST_TEST(!has(root, "--unshare-user"));  // root: no user namespace…
  BOOST_TEST(has(root, "--cap-drop"));       // …and no capability either
  BOOST_TEST(has(root, "--unshare-net"));
  p.network.open = true;  // the terminal profile: the host's network
  BOOST_TEST(!has(planMounts(p, input(true), baseFs()).args, "--unshare-net"));
}

BOOST_AUTO_TEST_CASE(system_set_proc_dev_and_helper) {
  auto args = planMounts(basePolicy(), input(), baseFs()).args;
  BOOST_TEST(find3(args, "--ro-bind", "/usr", "/usr") >= 0);
  BOOST_TEST(find3(args, "--symlink", "usr/bin", "/bin") >= 0);
  BOOST_TEST(find3(args, "--symlink", "usr/lib64", "/lib64") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/etc", "/etc") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/opt", "/opt") == -1);  // absent on this host
  BOOST_TEST(find3(args, "--proc", "/proc", "--dev") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/opt/cc", "/opt/cc") >= 0);  // our tools, at their path
  // The helper is the command, with its control fd, run from the tools
  // directory it lives in: no bind of its own.
  BOOST_TEST(!has(args, kGuestHelper));
  auto dash = std::find(args.begin(), args.end(), "--");
  BOOST_REQUIRE(dash != args.end());
  BOOST_TEST(std::vector<std::string>(dash + 1, args.end()) ==
                 (std::vector<std::string>{"/opt/cc/helper", "--control-fd", "3"}),
             boost::test_tools::per_element());

  // A helper kept elsewhere is bound at a place of its own.
  auto apart = input();
  apart.helperPath = "/srv/helper/ccsandbox-bwrap-helper";
  auto other = planMounts(basePolicy(), apart, baseFs()).args;
  BOOST_TEST(find3(other, "--ro-bind", apart.helperPath, kGuestHelper) >= 0);
  BOOST_TEST(find3(other, "--", kGuestHelper, "--control-fd") >= 0);
}

BOOST_AUTO_TEST_CASE(our_tools_stay_read_only_inside_a_write_root) {
  // A build of ccsandbox inside the repository being worked on: the write
  // root's bind must not cover the tools bound from it.
  auto p = basePolicy();
  p.visible.binds = {{"/w/repo", "/w/repo", false}};
  p.writeRoots = {"/w/repo"};
  auto in = input();
  in.toolsDir = "/w/repo/build/libexec";
  in.helperPath = "/w/repo/build/libexec/ccsandbox-bwrap-helper";
  auto args = planMounts(p, in, baseFs()).args;
  const long root = find3(args, "--bind", "/w/repo", "/w/repo");
  const long tools = find3(args, "--ro-bind", in.toolsDir, in.toolsDir);
  BOOST_REQUIRE(root >= 0);
  BOOST_TEST(tools > root);
}

BOOST_AUTO_TEST_CASE(installed_tools_under_a_read_only_system_dir_need_no_bind) {
  // /usr/libexec/ccsandbox is shown by the /usr bind as it is: one mount (and
  // one read of bubblewrap's mount table) fewer.
  auto in = input();
  in.toolsDir = "/usr/libexec/ccsandbox";
  in.helperPath = "/usr/libexec/ccsandbox/ccsandbox-bwrap-helper";
  auto plan = planMounts(basePolicy(), in, baseFs());
  BOOST_TEST(find3(plan.args, "--ro-bind", in.toolsDir, in.toolsDir) == -1);
  BOOST_TEST(plan.command.front() == in.helperPath);
  auto served = serving(replay(plan.args), in.helperPath);
  BOOST_REQUIRE(served.has_value());
  BOOST_TEST(served->guest == "/usr");
  BOOST_TEST(served->readOnly);

  // Anything that changes what is seen there brings the bind back, last.
  auto masked = basePolicy();
  masked.readDeny = {"/usr/libexec"};
  auto nested = basePolicy();
  nested.visible.binds = {{"/usr/libexec/ccsandbox/x", "/usr/libexec/ccsandbox/x", true}};
  auto writable = basePolicy();
  writable.visible.binds = {{"/usr/libexec", "/usr/libexec", false}};
  writable.writeRoots = {"/usr/libexec"};
  auto deniedInside = basePolicy();
  deniedInside.readDeny = {"/usr/libexec/ccsandbox/ccsandbox-connect"};
  for (const auto &p : {masked, nested, writable, deniedInside}) {
    auto fs = baseFs();
    fs.dir("/usr/libexec").dir("/usr/libexec/ccsandbox/x");
    fs.file("/usr/libexec/ccsandbox/ccsandbox-connect");
    auto args = planMounts(p, in, fs).args;
    const long tools = find3(args, "--ro-bind", in.toolsDir, in.toolsDir);
    BOOST_TEST(tools >= 0);
    auto table = replay(args);
    auto helper = serving(table, in.helperPath);
    BOOST_REQUIRE(helper.has_value());
    BOOST_TEST(helper->guest == in.toolsDir);
    BOOST_TEST(helper->readOnly);
  }
}

BOOST_AUTO_TEST_CASE(our_tools_go_apart_where_their_path_shows_something_else) {
  // A bind at guest /w shows another host directory there; our tools, built
  // under the host's /w, would get their mount point made inside that bind
  // (in /srv/other on the host, or failing on a read-only one). They go to a
  // place of their own, and what names them follows.
  auto in = input();
  in.toolsDir = "/w/build/libexec";
  in.helperPath = "/w/build/libexec/ccsandbox-bwrap-helper";
  const std::string guestTools = kGuestToolsDir;
  auto check = [&](EffectivePolicy p, const std::string &why) {
    BOOST_TEST_CONTEXT(why) {
      p.env = {{"GIT_SSH_COMMAND",
                "ssh -o 'ProxyCommand=/w/build/libexec/ccsandbox-connect --socks5 x %h %p'"}};
      auto plan = planMounts(p, in, baseFs());
      BOOST_TEST(find3(plan.args, "--ro-bind", in.toolsDir, guestTools) >= 0);
      BOOST_TEST(find3(plan.args, "--ro-bind", in.toolsDir, in.toolsDir) == -1);
      BOOST_TEST(plan.command.front() == guestTools + "/ccsandbox-bwrap-helper");
      BOOST_TEST(find3(plan.args, "--setenv", "GIT_SSH_COMMAND",
                       "ssh -o 'ProxyCommand=" + guestTools +
                           "/ccsandbox-connect --socks5 x %h %p'") >= 0);
      auto served = serving(replay(plan.args), plan.command.front());
      BOOST_REQUIRE(served.has_value());
      BOOST_TEST(served->guest == guestTools);
      BOOST_TEST(served->readOnly);
    }
  };
  auto other = basePolicy();
  other.visible.binds = {{"/srv/other", "/w", false}};
  other.writeRoots = {"/srv/other"};
  check(other, "a writable bind at /w");
  auto readOnly = basePolicy();
  readOnly.visible.binds = {{"/srv/other", "/w", true}};
  check(readOnly, "a read-only bind at /w");
  // Under the sandbox's /tmp (the session's own temp dir, gone with it) they
  // stay: the helper's command is then the one a bubblewrap started ahead has.
  auto tmp = basePolicy();
  tmp.visible.privateTmp = true;
  tmp.tempDir = "/run/rt/tmp";
  tmp.writeRoots = {"/run/rt/tmp"};
  in.toolsDir = "/tmp/ccs/libexec";
  in.helperPath = "/tmp/ccs/libexec/ccsandbox-bwrap-helper";
  auto plan = planMounts(tmp, in, baseFs());
  BOOST_TEST(find3(plan.args, "--ro-bind", in.toolsDir, in.toolsDir) >= 0);
  BOOST_TEST(plan.command == helperCommandLine(in), boost::test_tools::per_element());
  // Where the path is free (bubblewrap's own root) or shows the tools
  // themselves, they stay at their own path.
  in.toolsDir = "/w/build/libexec";
  in.helperPath = "/w/build/libexec/ccsandbox-bwrap-helper";
  auto same = basePolicy();
  same.visible.binds = {{"/w", "/w", false}};
  same.writeRoots = {"/w"};
  BOOST_TEST(planMounts(same, in, baseFs()).command.front() == in.helperPath);
  BOOST_TEST(planMounts(basePolicy(), in, baseFs()).command.front() == in.helperPath);
}

BOOST_AUTO_TEST_CASE(the_plan_lists_every_bind_it_asks_for) {
  // The launch checks each source before bubblewrap runs: the list must be
  // exactly the plan's binds, in order, and a value that merely looks like
  // an option (an environment variable's) is none.
  auto p = basePolicy();
  p.visible.binds = {{"/w/repo", "/w/repo", false}, {"/w/docs", "/w/docs", true}};
  p.writeRoots = {"/w/repo"};
  p.readDeny = {"/w/repo/secret"};
  p.env = {{"ODD", "--ro-bind"}};
  auto fs = baseFs();
  fs.dir("/w/repo").dir("/w/repo/secret").dir("/w/docs");
  auto plan = planMounts(p, input(), fs);
  std::vector<std::pair<std::string, std::string>> fromArgs, listed;
  for (std::size_t i = 0; i + 2 < plan.setup.size(); ++i) {
    if (plan.setup[i] == "--setenv") {
      i += 2;
    } else if (plan.setup[i] == "--bind" || plan.setup[i] == "--ro-bind") {
      fromArgs.emplace_back(plan.setup[i + 1], plan.setup[i + 2]);
      i += 2;
    }
  }
  for (const auto &b : plan.binds) listed.emplace_back(b.source, b.target);
  BOOST_TEST(listed.size() >= 5u);  // /usr, /etc, two binds, the mask, our tools
  BOOST_TEST((listed == fromArgs));
}

BOOST_AUTO_TEST_CASE(binds_writable_only_under_write_roots) {
  auto p = basePolicy();
  p.visible.binds = {{"/w/repo", "/w/repo", false},  // write root
                     {"/w/docs", "/w/docs", false},  // not a write root: read-only
                     {"/w/conf", "/w/conf", true}};  // read-only by the spec
  p.writeRoots = {"/w/repo"};
  auto table = replay(planMounts(p, input(), baseFs()).args);
  BOOST_TEST(!serving(table, "/w/repo/src/a.c")->readOnly);
  BOOST_TEST(serving(table, "/w/docs/x")->readOnly);
  BOOST_TEST(serving(table, "/w/conf/x")->readOnly);
  BOOST_TEST(serving(table, "/usr/bin/sh")->readOnly);
  BOOST_TEST(!serving(table, "/home/u/.bashrc"));  // not visible at all
}

BOOST_AUTO_TEST_CASE(private_tmp_is_the_session_temp_dir) {
  auto p = basePolicy();
  p.tempDir = "/run/rt/tmp";
  p.writeRoots = {"/run/rt/tmp"};
  // The compiler lists the temp dir among the binds too (at its own path, for
  // the backends without a private /tmp): here it is /tmp and nothing else.
  p.visible.binds = {{"/run/rt/tmp", "/run/rt/tmp", false}};
  auto args = planMounts(p, input(), baseFs()).args;
  BOOST_TEST(find3(args, "--bind", "/run/rt/tmp", "/tmp") >= 0);
  BOOST_TEST(find3(args, "--bind", "/run/rt/tmp", "/run/rt/tmp") == -1);
  p.tempDir.clear();
  BOOST_TEST(has(planMounts(p, input(), baseFs()).args, "--tmpfs"));
}

BOOST_AUTO_TEST_CASE(read_deny_masks_directories_read_only_and_files_with_dev_null) {
  auto p = basePolicy();
  p.visible.binds = {{"/home/u", "/home/u", false}};
  p.writeRoots = {"/home/u"};
  p.readDeny = {"/home/u/.ssh",
                "/home/u/.netrc",
                "/home/u/.aws",
                "/home/u/*.pem",
                "/root/.ssh" /* not visible */,
                "/home/u/.kube" /* missing */};
  FakeFs fs = baseFs();
  fs.dir("/home/u/.ssh").file("/home/u/.netrc").dir("/home/u/.aws").dir("/root/.ssh");
  auto args = planMounts(p, input(), fs).args;
  long ssh = find3(args, "--ro-bind", "/run/rt/empty", "/home/u/.ssh");
  BOOST_TEST(ssh >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/dev/null", "/home/u/.netrc") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/run/rt/empty", "/home/u/.aws") >= 0);
  BOOST_TEST(!has(args, "/root/.ssh"));
  BOOST_TEST(!has(args, "/home/u/.kube"));
  BOOST_TEST(!has(args, "/home/u/*.pem"));
  // Never a writable tmpfs: the masks are read-only binds, after the home bind.
  BOOST_TEST(ssh > find3(args, "--bind", "/home/u", "/home/u"));
  auto table = replay(args);
  BOOST_TEST(serving(table, "/home/u/.ssh/id_ed25519")->source == "/run/rt/empty");
  BOOST_TEST(serving(table, "/home/u/.ssh/id_ed25519")->readOnly);
  BOOST_TEST(!serving(table, "/home/u/project/x")->readOnly);
}

BOOST_AUTO_TEST_CASE(write_deny_rebound_after_the_binds_that_contain_it) {
  auto p = basePolicy();
  p.visible.binds = {{"/w", "/w", false}, {"/w/repo/sub", "/w/repo/sub", false}};
  p.writeRoots = {"/w", "/w/repo/sub"};
  p.writeDeny = {"/w/repo/.git/hooks", "/w/repo/.git/config", "/w/repo/sub/protected", "/w/missing",
                 "/usr/share" /* already read-only */};
  FakeFs fs = baseFs();
  fs.dir("/w/repo/.git/hooks")
      .file("/w/repo/.git/config")
      .dir("/w/repo/sub/protected")
      .dir("/usr/share");
  auto args = planMounts(p, input(), fs).args;
  long hooks = find3(args, "--ro-bind", "/w/repo/.git/hooks", "/w/repo/.git/hooks");
  long sub = find3(args, "--bind", "/w/repo/sub", "/w/repo/sub");
  BOOST_TEST(hooks > sub);
  BOOST_TEST(find3(args, "--ro-bind", "/usr/share", "/usr/share") == -1);
  BOOST_TEST(!has(args, "/w/missing"));
  auto table = replay(args);
  BOOST_TEST(serving(table, "/w/repo/.git/hooks/pre-commit")->readOnly);
  BOOST_TEST(serving(table, "/w/repo/.git/config")->readOnly);
  BOOST_TEST(serving(table, "/w/repo/sub/protected/x")->readOnly);
  // Unrelated paths keep their write access.
  BOOST_TEST(!serving(table, "/w/repo/.git/objects/ab")->readOnly);
  BOOST_TEST(!serving(table, "/w/repo/sub/other")->readOnly);
  BOOST_TEST(!serving(table, "/w/repo/README")->readOnly);
}

BOOST_AUTO_TEST_CASE(write_root_inside_a_read_only_bind_is_writable) {
  // review mode: every bind read-only, the runner's state dir writable.
  auto p = basePolicy();
  p.mode = "review";
  p.visible.binds = {{"/w", "/w", true}};
  p.writeRoots = {"/w/.state"};
  FakeFs fs = baseFs();
  fs.dir("/w/.state").dir("/var/state");
  auto table = replay(planMounts(p, input(), fs).args);
  BOOST_TEST(serving(table, "/w/file")->readOnly);
  BOOST_TEST(!serving(table, "/w/.state/x")->readOnly);
  // A write root no bind shows is bound where it is.
  p.writeRoots.push_back("/var/state");
  table = replay(planMounts(p, input(), fs).args);
  BOOST_TEST(!serving(table, "/var/state/x")->readOnly);
}

BOOST_AUTO_TEST_CASE(guest_path_different_from_host_path) {
  auto p = basePolicy();
  p.visible.binds = {{"/srv/checkout", "/workspace", false}};
  p.writeRoots = {"/srv/checkout"};
  p.readDeny = {"/srv/checkout/.env.secret"};
  p.writeDeny = {"/srv/checkout/.git/hooks"};
  FakeFs fs = baseFs();
  fs.file("/srv/checkout/.env.secret").dir("/srv/checkout/.git/hooks");
  auto args = planMounts(p, input(), fs).args;
  BOOST_TEST(find3(args, "--bind", "/srv/checkout", "/workspace") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/dev/null", "/workspace/.env.secret") >= 0);
  BOOST_TEST(find3(args, "--ro-bind", "/srv/checkout/.git/hooks", "/workspace/.git/hooks") >= 0);
  BOOST_TEST(!has(args, "/srv/checkout/.env.secret"));
}

BOOST_AUTO_TEST_CASE(environment_is_cleared_then_the_policy_s) {
  auto p = basePolicy();
  p.env = {{"HTTP_PROXY", "http://127.0.0.1:4100"}, {"LANG", "C.UTF-8"}};
  auto args = planMounts(p, input(), baseFs()).args;
  long clear = std::find(args.begin(), args.end(), "--clearenv") - args.begin();
  long proxy = find3(args, "--setenv", "HTTP_PROXY", "http://127.0.0.1:4100");
  BOOST_TEST(proxy > clear);
  BOOST_TEST(find3(args, "--setenv", "LANG", "C.UTF-8") > clear);
}

BOOST_AUTO_TEST_CASE(proxies_become_bridges_with_their_sockets_bound) {
  auto p = basePolicy();
  p.network.httpProxy = ProxyEndpoint{"127.0.0.1", 4100, "/run/rt/http.sock"};
  p.network.socksProxy = ProxyEndpoint{"127.0.0.1", 4101, "/run/rt/socks.sock"};
  auto plan = planMounts(p, input(), baseFs());
  BOOST_REQUIRE_EQUAL(plan.bridges.size(), 2u);
  BOOST_TEST(plan.bridges[0].port == 4100);
  // Sockets that share a directory come as that directory: one bind.
  BOOST_TEST(find3(plan.args, "--ro-bind", "/run/rt", "/run/ccsandbox/proxy") >= 0);
  BOOST_TEST(plan.bridges[0].guestSocket == "/run/ccsandbox/proxy/http.sock");
  BOOST_TEST(plan.bridges[1].guestSocket == "/run/ccsandbox/proxy/socks.sock");
  BOOST_TEST(!has(plan.args, "/run/rt/http.sock"));
  // The bridges reach the helper over its control channel, not its command line.
  BOOST_TEST(!has(plan.args, "--bridge"));
  BOOST_TEST(plan.command == (std::vector<std::string>{"/opt/cc/helper", "--control-fd", "3"}),
             boost::test_tools::per_element());
  // The parts add up to the command line.
  std::vector<std::string> joined = plan.namespaces;
  joined.insert(joined.end(), plan.setup.begin(), plan.setup.end());
  joined.push_back("--");
  joined.insert(joined.end(), plan.command.begin(), plan.command.end());
  BOOST_TEST(joined == plan.args, boost::test_tools::per_element());
  BOOST_TEST(plan.namespaces == namespaceArgs(input()), boost::test_tools::per_element());

  // Apart, each socket is bound on its own.
  p.network.socksProxy = ProxyEndpoint{"127.0.0.1", 4101, "/run/other/socks.sock"};
  auto apart = planMounts(p, input(), baseFs());
  BOOST_REQUIRE_EQUAL(apart.bridges.size(), 2u);
  BOOST_TEST(find3(apart.args, "--ro-bind", "/run/rt/http.sock", apart.bridges[0].guestSocket) >=
             0);
  BOOST_TEST(
      find3(apart.args, "--ro-bind", "/run/other/socks.sock", apart.bridges[1].guestSocket) >= 0);
}

// Properties over generated policies: whatever the mix of binds and rules,
// (1) every visible read-denied path is masked, (2) every visible write-denied
// path is read-only, (3) every other path under a write root stays writable,
// (4) nothing outside the write roots is writable.
BOOST_AUTO_TEST_CASE(precedence_properties_over_generated_policies) {
  std::mt19937 rng(20261130);
  const std::vector<std::string> names = {"a", "b", "c"};
  std::vector<std::string> all;
  for (auto &x : names)
    for (auto &y : names)
      for (auto &z : names) {
        all.push_back("/h/" + x);
        all.push_back("/h/" + x + "/" + y);
        all.push_back("/h/" + x + "/" + y + "/" + z);
      }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  auto pick = [&](std::size_t n) {
    std::set<std::string> out;
    std::uniform_int_distribution<std::size_t> d(0, all.size() - 1);
    while (out.size() < n) out.insert(all[d(rng)]);
    return std::vector<std::string>(out.begin(), out.end());
  };
  for (int round = 0; round < 300; ++round) {
    auto p = basePolicy();
    FakeFs fs = baseFs();
    for (auto &x : all) fs.dir(x);
    for (auto &b : pick(1 + rng() % 3)) p.visible.binds.push_back({b, b, rng() % 4 == 0});
    for (auto &b : p.visible.binds)
      if (!b.readOnly && rng() % 3) p.writeRoots.push_back(b.hostPath);
    for (auto &w : pick(rng() % 2)) p.writeRoots.push_back(w);
    p.writeDeny = pick(rng() % 4);
    p.readDeny = pick(rng() % 3);
    auto args = planMounts(p, input(), fs).args;
    auto table = replay(args);
    std::string described = "binds:";
    for (auto &b : p.visible.binds) described += " " + b.hostPath + (b.readOnly ? "(ro)" : "");
    described += " writeRoots:";
    for (auto &w : p.writeRoots) described += " " + w;
    described += " writeDeny:";
    for (auto &w : p.writeDeny) described += " " + w;
    described += " readDeny:";
    for (auto &w : p.readDeny) described += " " + w;
    described += " args:";
    for (auto &a : args) described += " " + a;
    auto visible = [&](const std::string &path) {
      auto m = serving(table, path);
      return m && m->kind == "bind" && m->source != "/run/rt/empty" && m->source != "/dev/null";
    };
    for (const auto &path : all) {
      std::string probe = path + "/f";
      auto m = serving(table, probe);
      bool underBind = std::any_of(p.visible.binds.begin(), p.visible.binds.end(),
                                   [&](auto &b) { return isWithin(probe, b.hostPath); });
      bool underRoot = std::any_of(p.writeRoots.begin(), p.writeRoots.end(),
                                   [&](auto &w) { return isWithin(probe, w); });
      bool readDenied = std::any_of(p.readDeny.begin(), p.readDeny.end(),
                                    [&](auto &r) { return isWithin(probe, r); });
      bool writeDenied = std::any_of(p.writeDeny.begin(), p.writeDeny.end(),
                                     [&](auto &w) { return isWithin(probe, w); });
      BOOST_TEST_CONTEXT("round " << round << " path " << probe << "\n  " << described) {
        if (readDenied) {
          BOOST_TEST(!visible(probe));
          if (m) BOOST_TEST(m->readOnly);
          continue;
        }
        if (!m) {
          // Invisible is right only where nothing should be reachable.
          BOOST_TEST((!underBind && (!underRoot || writeDenied)));
          continue;
        }
        // The innermost rule decides: a read-only bind inside a write root
        // stays read-only, a write root inside a read-only bind is writable.
        std::size_t bindDepth = 0, rootDepth = 0;
        bool bindReadOnly = false;
        for (auto &b : p.visible.binds)
          if (isWithin(probe, b.hostPath) && b.hostPath.size() >= bindDepth) {
            bindReadOnly = b.hostPath.size() == bindDepth ? bindReadOnly && b.readOnly : b.readOnly;
            bindDepth = b.hostPath.size();
          }
        for (auto &w : p.writeRoots)
          if (isWithin(probe, w)) rootDepth = std::max(rootDepth, w.size());
        bool writable = !writeDenied && underRoot && (!bindReadOnly || rootDepth >= bindDepth);
        BOOST_TEST(m->readOnly == !writable);
      }
    }
  }
}

// The helper's kernel layers judge guest paths: the rules follow each mount.
BOOST_AUTO_TEST_CASE(guest_write_rules_follow_the_mounts) {
  auto p = basePolicy();
  p.tempDir = "/run/rt/tmp";
  p.visible.binds = {{"/home/u/proj", "/workspace", false},  // shown elsewhere
                     {"/w/repo", "/w/repo", false},          // the identity
                     {"/w/docs", "/w/docs", false}};         // visible, not a write root
  p.writeRoots = {"/home/u/proj", "/w/repo", "/run/rt/tmp", "/nowhere"};
  p.writeDeny = {"/home/u/proj/.git/hooks", "/w/repo/.env.d", "/home/u/.ssh/id_*",
                 "/w/repo/keys/*.key"};
  p.writeDenyGlobs = {".env", "*.pem"};
  p.exec.grantRoots = {"/home/u/proj/bin"};
  FakeFs fs = baseFs();
  fs.dir("/home/u/proj").dir("/w/repo").dir("/w/docs").dir("/run/rt/tmp");
  auto rules = planMounts(p, input(), fs).guestRules;
  using V = std::vector<std::string>;
  // Host paths never appear where a mount shows them elsewhere; an invisible
  // root gets no rule; the sandbox's own /dev/shm is writable.
  BOOST_TEST(rules.writeRoots == (V{"/workspace", "/w/repo", "/tmp", "/dev/shm"}),
             boost::test_tools::per_element());
  // A deny that does not exist yet still counts; a glob protects its literal
  // directory where that is visible (/w/repo/keys), and nothing where it is not.
  BOOST_TEST(rules.writeDeny == (V{"/workspace/.git/hooks", "/w/repo/.env.d", "/w/repo/keys"}),
             boost::test_tools::per_element());
  BOOST_TEST(rules.writeDenyGlobs == (V{".env", "*.pem"}), boost::test_tools::per_element());
  BOOST_TEST(rules.execGrantRoots == (V{"/workspace/bin"}), boost::test_tools::per_element());
  BOOST_TEST(rules.execBlockWritableRoots);
}
