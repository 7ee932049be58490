// The policy compiler on a fake host: a temp tree read like a chroot, a fixed
// home and fixed egress lists, so every expectation is exact.
#define BOOST_TEST_MODULE policy_compiler
#include <boost/test/unit_test.hpp>

#include "git_control_paths.hpp"
#include "path_forms.hpp"
#include "policy_compiler.hpp"
#include "secret_paths.hpp"
#include "support/temp_tree.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace ccsandbox;
using ccsandbox::test::TempTree;

namespace {

const std::string kHome = "/home/user";
const std::string kTemp = "/tmp/ccsandbox-test/tmp";

struct FakeHost {
  TempTree tree;
  EgressLists lists{{"api.anthropic.com", "*.pypi.org"},
                    {"github.com", "*.github.com"},
                    {"169.254.169.254", "metadata.google.internal"}};

  FakeHost() {
    tree.dir("usr/bin");
    tree.dir("etc/ssh");
    tree.dir("usr/lib");
    tree.symlink("bin", "usr/bin");
    tree.symlink("lib", "usr/lib");
    tree.dir("private/tmp/ccsandbox-test/tmp");
    tree.symlink("tmp", "/private/tmp");  // the macOS layout
    tree.dir("home/user/work/repo/src");
    tree.dir("home/user/work/repo/.git/hooks");
    tree.file("home/user/work/repo/.git/config", "[core]\n");
  }

  HostFacts facts() const {
    HostFacts f;
    f.home = kHome;
    f.platform = "linux";
    f.tempDir = kTemp;
    f.fsRoot = tree.path();
    f.egress = &lists;
    return f;
  }

  EffectivePolicy compile(const SandboxSpec &spec, LaunchKind kind = LaunchKind::agentBash,
                          const PolicyOptions &options = {}) const {
    return compilePolicy(spec, kind, facts(), options);
  }
};

SandboxSpec repoSpec(SandboxMode mode = SandboxMode::chat) {
  SandboxSpec s;
  s.bindMounts.push_back({kHome + "/work/repo", kHome + "/work/repo", false});
  s.guestWorkdir = kHome + "/work/repo";
  s.mode = mode;
  return s;
}

bool has(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool coveredBy(const std::vector<std::string> &rules, const std::string &path) {
  return std::any_of(rules.begin(), rules.end(),
                     [&](const std::string &r) { return isWithin(path, r); });
}

std::string refusal(const FakeHost &host, const SandboxSpec &spec,
                    LaunchKind kind = LaunchKind::agentBash) {
  try {
    host.compile(spec, kind);
  } catch (const UsageError &e) {
    return e.what();
  }
  return "(compiled)";
}

const PolicyMount *bindAt(const EffectivePolicy &p, const std::string &guest) {
  for (const auto &b : p.visible.binds)
    if (b.guestPath == guest) return &b;
  return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_CASE(standard_policy_in_chat) {
  FakeHost host;
  auto p = host.compile(repoSpec());
  BOOST_TEST(p.launchKind == "agent-bash");
  BOOST_TEST(p.mode == "chat");
  BOOST_TEST(has(p.writeRoots, kHome + "/work/repo"));
  BOOST_TEST(has(p.writeRoots, kTemp));
  BOOST_TEST(has(p.writeRoots, "/private" + kTemp));  // the temp dir through /tmp -> /private/tmp
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/.git/hooks"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/.git/config"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.bashrc"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.zshenv"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.config/fish"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.claude/settings.json"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.claude/commands"));
  BOOST_TEST(p.writeDenyGlobs == (std::vector<std::string>{"*.key", "*.pem", ".env", ".env.*"}));
  for (const char *secret :
       {"/.ssh", "/.aws", "/.gnupg", "/.config/gh", "/Library/Keychains", "/.kube",
        "/.config/gcloud", "/.azure", "/.docker/config.json", "/.netrc", "/.git-credentials",
        "/.npmrc", "/.pypirc", "/.cargo/credentials*"}) {
    BOOST_TEST(has(p.readDeny, kHome + secret), secret);
    BOOST_TEST(has(p.writeDeny, kHome + secret), secret);  // a secret never becomes writable
  }
  BOOST_TEST(has(p.readDeny, "/etc/shadow"));
  BOOST_TEST(has(p.readDeny, "/etc/gshadow"));
  BOOST_TEST(has(p.readDeny, "/etc/ssh/ssh_host_*_key"));
  BOOST_TEST(p.visible.systemReadOnly ==
             (std::vector<std::string>{"/bin", "/etc", "/lib", "/usr"}));  // only what exists
  BOOST_TEST(p.exec.blockWritableRoots);
  BOOST_TEST(p.network.enabled);
  BOOST_TEST(!p.network.open);
  BOOST_TEST(p.env.at("TMPDIR") == kTemp);
  const PolicyMount *repo = bindAt(p, kHome + "/work/repo");
  BOOST_REQUIRE(repo);
  BOOST_TEST(!repo->readOnly);
}

BOOST_AUTO_TEST_CASE(symlinked_directories_give_both_forms) {
  FakeHost host;
  host.tree.dir("private/tmp/originals/app");
  host.tree.dir("home/user/vault/aws");
  host.tree.symlink("home/user/.aws", "vault/aws");             // relative target
  host.tree.symlink("home/user/.ssh", "/home/user/vault/ssh");  // dangling: no vault/ssh yet
  SandboxSpec spec = repoSpec();
  spec.protectedPaths = {"/tmp/originals/app"};
  auto p = host.compile(spec);
  BOOST_TEST(has(p.writeDeny, "/tmp/originals/app"));
  BOOST_TEST(has(p.writeDeny, "/private/tmp/originals/app"));
  BOOST_TEST(has(p.readDeny, kHome + "/.aws"));
  BOOST_TEST(has(p.readDeny, kHome + "/vault/aws"));
  // A dangling link still resolves to where a write through it would land.
  BOOST_TEST(has(p.readDeny, kHome + "/.ssh"));
  BOOST_TEST(has(p.readDeny, kHome + "/vault/ssh"));
  // Not a symlink: one form only.
  BOOST_TEST(!has(p.readDeny, "/private" + kHome + "/.gnupg"));
  BOOST_TEST(std::count_if(p.readDeny.begin(), p.readDeny.end(), [](const std::string &s) {
               return s.find(".gnupg") != std::string::npos;
             }) == 1);
}

BOOST_AUTO_TEST_CASE(globs_are_kept_as_written) {
  FakeHost host;
  host.tree.dir("home/user/rust/cargo");
  host.tree.symlink("home/user/.cargo", "rust/cargo");
  PolicyOptions options;
  options.extraWriteDenyGlobs = {"*.p12", "id_*"};
  auto p = host.compile(repoSpec(), LaunchKind::agentBash, options);
  BOOST_TEST(has(p.readDeny, kHome + "/.cargo/credentials*"));
  // The directories before the glob resolve; the glob itself stays as written.
  BOOST_TEST(has(p.readDeny, kHome + "/rust/cargo/credentials*"));
  BOOST_TEST(has(p.readDeny, "/etc/ssh/ssh_host_*_key"));
  BOOST_TEST(p.writeDenyGlobs ==
             (std::vector<std::string>{"*.key", "*.p12", "*.pem", ".env", ".env.*", "id_*"}));
}

BOOST_AUTO_TEST_CASE(unresolvable_paths_are_kept_as_written) {
  FakeHost host;
  host.tree.symlink("home/user/.kube", ".kube-loop");
  host.tree.symlink("home/user/.kube-loop", ".kube");
  SandboxSpec spec = repoSpec();
  spec.protectedPaths = {"/srv/nothing/here"};
  auto p = host.compile(spec);
  BOOST_TEST(has(p.readDeny, kHome + "/.kube"));
  BOOST_TEST(std::none_of(p.readDeny.begin(), p.readDeny.end(), [](const std::string &s) {
    return s.find(".kube-loop") != std::string::npos;
  }));
  BOOST_TEST(has(p.writeDeny, "/srv/nothing/here"));
}

BOOST_AUTO_TEST_CASE(each_mode) {
  FakeHost host;
  auto chat = host.compile(repoSpec(SandboxMode::chat));
  BOOST_TEST(has(chat.writeRoots, kHome + "/work/repo"));
  BOOST_TEST(!bindAt(chat, kHome + "/work/repo")->readOnly);
  for (auto mode : {SandboxMode::review, SandboxMode::plan, SandboxMode::orchestrate}) {
    auto p = host.compile(repoSpec(mode));
    BOOST_TEST(p.mode == std::string(toString(mode)));
    BOOST_TEST(bindAt(p, kHome + "/work/repo")->readOnly);
    BOOST_TEST(p.writeRoots == (std::vector<std::string>{"/private" + kTemp, kTemp}));
    // The mandatory denies do not depend on the mode; only the repository's
    // hooks and config drop out, as it is no longer under a write root.
    std::vector<std::string> dropped;
    std::set_difference(chat.writeDeny.begin(), chat.writeDeny.end(), p.writeDeny.begin(),
                        p.writeDeny.end(), std::back_inserter(dropped));
    BOOST_TEST(dropped == (std::vector<std::string>{kHome + "/work/repo/.git/config",
                                                    kHome + "/work/repo/.git/hooks"}));
    BOOST_TEST(std::includes(chat.writeDeny.begin(), chat.writeDeny.end(), p.writeDeny.begin(),
                             p.writeDeny.end()));
    BOOST_TEST(p.readDeny == chat.readDeny);
    BOOST_TEST(p.writeDenyGlobs == chat.writeDenyGlobs);
  }
  // A bind the spec marks read-only stays read-only in chat.
  SandboxSpec ro = repoSpec();
  ro.bindMounts[0].readOnly = true;
  BOOST_TEST(!has(host.compile(ro).writeRoots, kHome + "/work/repo"));
}

BOOST_AUTO_TEST_CASE(protected_paths_denied_in_chat) {
  FakeHost host;
  host.tree.dir("home/user/work/repo/vendor");
  SandboxSpec spec = repoSpec();
  spec.protectedPaths = {kHome + "/work/repo/vendor", "~/originals/repo"};
  auto p = host.compile(spec);
  BOOST_TEST(has(p.writeRoots, kHome + "/work/repo"));  // the bind stays writable
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/vendor"));
  BOOST_TEST(has(p.writeDeny, kHome + "/originals/repo"));  // `~` expanded
  // Deny and its ancestors may not be unlinked or renamed.
  BOOST_TEST(has(p.unlinkDeny, kHome + "/work/repo/vendor"));
  BOOST_TEST(has(p.unlinkDeny, kHome + "/work/repo"));
  BOOST_TEST(has(p.unlinkDeny, kHome + "/work"));
  BOOST_TEST(has(p.unlinkDeny, "/home"));
  BOOST_TEST(!has(p.unlinkDeny, "/"));
  BOOST_TEST(!has(p.unlinkDeny, kHome + "/work/repo/src"));
}

BOOST_AUTO_TEST_CASE(runner_state_dirs_writable_in_review) {
  FakeHost host;
  host.tree.dir("home/user/.cc/claude");
  SandboxSpec spec = repoSpec(SandboxMode::review);
  spec.runnerStateDirs = {"~/.cc/claude"};
  auto p = host.compile(spec);
  BOOST_TEST(has(p.writeRoots, kHome + "/.cc/claude"));
  const PolicyMount *runner = bindAt(p, kHome + "/.cc/claude");
  BOOST_REQUIRE(runner);
  BOOST_TEST(!runner->readOnly);
  BOOST_TEST(!has(p.writeRoots, kHome + "/work/repo"));
  // The agent's own config inside it stays protected.
  BOOST_TEST(has(p.writeDeny, kHome + "/.cc/claude/settings.json"));
  BOOST_TEST(has(p.writeDeny, kHome + "/.cc/claude/commands"));

  // A runner dir that is also a spec bind: writable in review too.
  SandboxSpec same = repoSpec(SandboxMode::plan);
  same.runnerStateDirs = {kHome + "/work/repo"};
  auto q = host.compile(same);
  BOOST_TEST(!bindAt(q, kHome + "/work/repo")->readOnly);
  BOOST_TEST(has(q.writeRoots, kHome + "/work/repo"));
}

BOOST_AUTO_TEST_CASE(write_root_inside_read_denied_path_is_refused_naming_both) {
  FakeHost host;
  SandboxSpec spec = repoSpec();
  spec.bindMounts.push_back({kHome + "/.ssh/keys", kHome + "/.ssh/keys", false});
  std::string why = refusal(host, spec);
  BOOST_TEST(why.find("bindMounts[1].hostPath") != std::string::npos, why);
  BOOST_TEST(why.find(kHome + "/.ssh/keys") != std::string::npos, why);
  BOOST_TEST(why.find("read-denied path " + kHome + "/.ssh") != std::string::npos, why);

  SandboxSpec runner = repoSpec(SandboxMode::review);
  runner.runnerStateDirs = {"~/.aws"};
  why = refusal(host, runner);
  BOOST_TEST(why.find("runnerStateDirs[0]") != std::string::npos, why);
  BOOST_TEST(why.find(kHome + "/.aws") != std::string::npos, why);

  // Reached through a symlink: the resolved form of the secret catches it.
  host.tree.dir("home/user/vault/aws");
  host.tree.symlink("home/user/.aws", "vault/aws");
  SandboxSpec viaTarget = repoSpec();
  viaTarget.bindMounts.push_back({kHome + "/vault/aws/x", kHome + "/vault/aws/x", false});
  why = refusal(host, viaTarget);
  BOOST_TEST(why.find("bindMounts[1].hostPath") != std::string::npos, why);
  BOOST_TEST(why.find(kHome + "/vault/aws") != std::string::npos, why);

  // A glob entry: ~/.cargo/credentials* covers ~/.cargo/credentials.d/…
  SandboxSpec glob = repoSpec();
  glob.bindMounts.push_back({kHome + "/.cargo/credentials.d", kHome + "/cred", false});
  why = refusal(host, glob);
  BOOST_TEST(why.find(".cargo/credentials*") != std::string::npos, why);

  // A write root that contains a secret is fine: the deny inside it wins.
  SandboxSpec home = repoSpec();
  home.bindMounts.push_back({kHome, kHome, false});
  auto p = host.compile(home);
  BOOST_TEST(has(p.writeRoots, kHome));
  BOOST_TEST(has(p.writeDeny, kHome + "/.ssh"));
}

BOOST_AUTO_TEST_CASE(relative_and_colliding_paths_are_refused) {
  FakeHost host;
  SandboxSpec spec;
  spec.bindMounts.push_back({"work/repo", "/work/repo", false});
  std::string why = refusal(host, spec);
  BOOST_TEST(why.find("bindMounts[0].hostPath") != std::string::npos, why);
  BOOST_TEST(why.find("relative") != std::string::npos, why);

  SandboxSpec prot = repoSpec();
  prot.protectedPaths = {"originals"};
  BOOST_TEST(refusal(host, prot).find("protectedPaths[0]") != std::string::npos);

  SandboxSpec collide = repoSpec();
  collide.bindMounts.push_back({"/srv/other", kHome + "/work/repo", true});
  why = refusal(host, collide);
  BOOST_TEST(why.find("bindMounts[0].hostPath and bindMounts[1].hostPath") != std::string::npos,
             why);

  SandboxSpec egress = repoSpec();
  egress.egressAllowlist = {"*.*.example.com"};
  BOOST_TEST(refusal(host, egress).find("egressAllowlist[0]") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(binds_over_what_the_sandbox_keeps_for_itself_are_refused) {
  FakeHost host;
  struct Case {
    SandboxBindMount bind;
    std::string field, says;
  };
  const std::vector<Case> cases{
      {{"/", "/", false}, "bindMounts[0].hostPath", "whole host file system"},
      {{"/", "/host", true}, "bindMounts[0].hostPath", "whole host file system"},
      {{"/proc", "/hostproc", true}, "bindMounts[0].hostPath", "host's processes"},
      {{"/proc/1/root", "/x", true}, "bindMounts[0].hostPath", "host's processes"},
      {{kHome + "/w", "/", false}, "bindMounts[0].guestPath", "sandbox's own root"},
      {{kHome + "/w", "/proc/x", false}, "bindMounts[0].guestPath", "sandbox's own /proc"},
      {{kHome + "/w", "/dev", false}, "bindMounts[0].guestPath", "sandbox's own /dev"},
      {{kHome + "/w", "/run/ccsandbox/x", false}, "bindMounts[0].guestPath", "/run/ccsandbox"},
      {{kHome + "/w", "/run", false}, "bindMounts[0].guestPath", "/run/ccsandbox"},
  };
  for (const auto &c : cases) {
    SandboxSpec spec;
    spec.bindMounts.push_back(c.bind);
    const std::string why = refusal(host, spec);
    BOOST_TEST(why.find(c.field) != std::string::npos, why);
    BOOST_TEST(why.find(c.says) != std::string::npos, why);
  }
  // A symlink to /proc is mounted as what it points to.
  host.tree.dir("proc/1");
  host.tree.symlink("procview", "/proc");
  SandboxSpec viaLink;
  viaLink.bindMounts.push_back({"/procview", "/procview", true});
  const std::string why = refusal(host, viaLink);
  BOOST_TEST(why.find("bindMounts[0].hostPath: /proc would show") != std::string::npos, why);
  SandboxSpec runner = repoSpec();
  runner.runnerStateDirs = {"/"};
  BOOST_TEST(refusal(host, runner).find("runnerStateDirs[0]") != std::string::npos);
  // Near misses are ordinary binds.
  SandboxSpec near = repoSpec();
  near.bindMounts.push_back({"/procfs-notes", "/devices", true});
  near.bindMounts.push_back({"/srv/user-run", "/run/user/1000", true});
  BOOST_TEST(refusal(host, near) == "(compiled)");
}

BOOST_AUTO_TEST_CASE(read_only_bind_inside_a_write_root_stays_read_only) {
  FakeHost host;
  host.tree.dir("home/user/work/repo/third_party");
  SandboxSpec spec = repoSpec();
  spec.bindMounts.push_back(
      {kHome + "/work/repo/third_party", kHome + "/work/repo/third_party", true});
  auto p = host.compile(spec);
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/third_party"));
  // Binds are ordered parents first, so the read-only child mounts over the parent.
  BOOST_TEST(p.visible.binds[0].guestPath < p.visible.binds[1].guestPath);
}

BOOST_AUTO_TEST_CASE(git_repositories_under_a_write_root) {
  FakeHost host;
  // A submodule (a .git file naming a git dir) and a linked worktree (its git
  // dir names the common dir through `commondir`).
  host.tree.dir("home/user/work/repo/.git/modules/lib/hooks");
  host.tree.file("home/user/work/repo/lib/.git", "gitdir: ../.git/modules/lib\n");
  host.tree.dir("home/user/work/main/.git/worktrees/wt");
  host.tree.file("home/user/work/main/.git/worktrees/wt/commondir", "../..\n");
  host.tree.file("home/user/work/repo/wt/.git", "gitdir: /home/user/work/main/.git/worktrees/wt\n");
  host.tree.dir("home/user/work/repo/node_modules/x/.git");
  auto p = host.compile(repoSpec());
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/.git/modules/lib/config"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/.git/modules/lib/hooks"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/main/.git/config"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/main/.git/hooks"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/main/.git/worktrees/wt/config.worktree"));
  BOOST_TEST(!has(p.writeDeny, kHome + "/work/repo/node_modules/x/.git/config"));
  // Only hooks and config: the rest of the repository stays writable.
  BOOST_TEST(!coveredBy(p.writeDeny, kHome + "/work/repo/.git/index"));
  BOOST_TEST(!coveredBy(p.writeDeny, kHome + "/work/repo/src/main.c"));
}

BOOST_AUTO_TEST_CASE(git_search_finds_every_repository_of_a_wide_tree) {
  // More directories waiting at once than the search keeps descriptors for, so
  // later ones are opened by their path; leaf directories (no subdirectory) are
  // judged by their link count without being read, a `.git` file in one included.
  TempTree tree;
  for (int i = 0; i < 150; ++i) {
    std::string d = "w/d" + std::to_string(i);
    tree.dir(d + "/leaf");
    if (i % 2)
      tree.dir(d + "/repo/.git/hooks");
    else
      tree.file(d + "/leaf/.git", "gitdir: /w/g" + std::to_string(i) + "\n");
  }
  PathResolver fs(tree.path());
  auto found = findGitControlPaths(fs, "/w");
  BOOST_TEST(!found.truncated);
  BOOST_TEST(found.paths.size() == 300u);
  BOOST_TEST(has(found.paths, "/w/d149/repo/.git/hooks"));
  BOOST_TEST(has(found.paths, "/w/g148/config"));
  BOOST_TEST(has(found.paths, "/w/g0/hooks"));
}

BOOST_AUTO_TEST_CASE(ccsandbox_s_own_files_under_a_write_root_are_write_denied) {
  // A build of ccsandbox inside the working copy: a plugin planted in its
  // plugin directory would be loaded by the next ccsandbox, outside any sandbox.
  FakeHost host;
  host.tree.dir("home/user/work/repo/build/lib/ccsandbox/plugins");
  host.tree.dir("usr/lib/ccsandbox/plugins");
  HostFacts facts = host.facts();
  facts.trustedFiles = {kHome + "/work/repo/build/lib/ccsandbox/plugins",
                        kHome + "/work/repo/build/bin/ccsandbox", "/usr/lib/ccsandbox/plugins"};
  auto p = compilePolicy(repoSpec(), LaunchKind::agentBash, facts);
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/build/lib/ccsandbox/plugins"));
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/build/bin/ccsandbox"));  // missing: still denied
  BOOST_TEST(!has(p.writeDeny, "/usr/lib/ccsandbox/plugins"));  // under no write root: no rule
  // Nor may a rename move them aside.
  BOOST_TEST(has(p.unlinkDeny, kHome + "/work/repo/build/lib/ccsandbox"));
}

BOOST_AUTO_TEST_CASE(write_root_reached_through_a_symlink) {
  FakeHost host;
  host.tree.dir("private/tmp/wt/.git/hooks");
  SandboxSpec spec;
  spec.bindMounts.push_back({"/tmp/wt", "/tmp/wt", false});
  auto p = host.compile(spec);
  BOOST_TEST(has(p.writeRoots, "/tmp/wt"));
  BOOST_TEST(has(p.writeRoots, "/private/tmp/wt"));
  BOOST_TEST(has(p.writeDeny, "/private/tmp/wt/.git/hooks"));
  BOOST_TEST(has(p.writeDeny, "/tmp/wt/.git/hooks"));
}

BOOST_AUTO_TEST_CASE(the_network_is_open_exactly_where_networkOpenFor_says) {
  // A launch binds its proxy pair before compiling, trusting networkOpenFor();
  // a kind whose compiled policy disagreed would fail every launch of it.
  FakeHost host;
  for (const auto &[kind, name] : kLaunchKindNames) {
    auto p = host.compile(repoSpec(SandboxMode::chat), kind);
    BOOST_TEST(p.network.open == networkOpenFor(kind), name);
  }
}

BOOST_AUTO_TEST_CASE(terminal_profile_is_fixed) {
  FakeHost host;
  SandboxSpec spec = repoSpec(SandboxMode::review);
  spec.bindMounts.push_back({"/srv/data", "/srv/data", false});
  spec.egressAllowlist = {"example.com"};
  spec.networkEnabled = false;
  auto p = host.compile(spec, LaunchKind::terminal);
  BOOST_TEST(p.launchKind == "terminal");
  BOOST_TEST(has(p.writeRoots, kHome));
  BOOST_TEST(has(p.writeRoots, kHome + "/work/repo"));  // the session's working directory
  BOOST_TEST(!has(p.writeRoots, "/srv/data"));          // the spec cannot widen it
  BOOST_TEST(bindAt(p, "/srv/data") == nullptr);
  std::vector<std::string> five;
  for (const auto &s : terminalSecretPaths()) five.push_back(expandHome(s, kHome));
  std::sort(five.begin(), five.end());
  BOOST_TEST(p.readDeny == five);
  BOOST_TEST(p.writeDeny == five);  // inside the writable $HOME, still not writable
  BOOST_TEST(p.network.enabled);
  BOOST_TEST(p.network.open);
  BOOST_TEST(p.network.allowlist.empty());
  BOOST_TEST(p.writeDenyGlobs.empty());

  // Without a home the profile would make / writable: refused.
  HostFacts rootHome = host.facts();
  rootHome.home = "/";
  BOOST_CHECK_THROW(compilePolicy(spec, LaunchKind::terminal, rootHome), UsageError);

  SandboxSpec inSecret;
  inSecret.guestWorkdir = kHome + "/.gnupg/private";
  BOOST_TEST(refusal(host, inSecret, LaunchKind::terminal).find("guestWorkdir") !=
             std::string::npos);
}

BOOST_AUTO_TEST_CASE(network_lists) {
  FakeHost host;
  SandboxSpec spec = repoSpec();
  spec.egressAllowlist = {"bedrock.*.amazonaws.com", "api.anthropic.com"};
  auto on = host.compile(spec);
  BOOST_TEST(on.network.allowlist ==
             (std::vector<std::string>{"*.github.com", "*.pypi.org", "api.anthropic.com",
                                       "bedrock.*.amazonaws.com", "github.com"}));
  BOOST_TEST(on.network.denylist ==
             (std::vector<std::string>{"169.254.169.254", "metadata.google.internal"}));
  spec.networkEnabled = false;
  auto off = host.compile(spec);
  BOOST_TEST(!off.network.enabled);
  BOOST_TEST(off.network.allowlist.empty());
  BOOST_TEST(off.network.denylist == on.network.denylist);
}

BOOST_AUTO_TEST_CASE(no_filename_rules_drops_only_the_standard_globs) {
  FakeHost host;
  PolicyOptions options;
  options.standardFilenameRules = false;
  auto p = host.compile(repoSpec(), LaunchKind::agentBash, options);
  BOOST_TEST(p.writeDenyGlobs.empty());
  BOOST_TEST(has(p.writeDeny, kHome + "/work/repo/.git/hooks"));
  BOOST_TEST(has(p.readDeny, kHome + "/.ssh"));
  options.extraWriteDenyGlobs = {"*.p12"};
  BOOST_TEST(host.compile(repoSpec(), LaunchKind::agentBash, options).writeDenyGlobs ==
             std::vector<std::string>{"*.p12"});
  options.extraWriteDenyGlobs = {"secrets/*.txt"};
  BOOST_CHECK_THROW(host.compile(repoSpec(), LaunchKind::agentBash, options), UsageError);
}

BOOST_AUTO_TEST_CASE(deterministic_and_order_independent) {
  FakeHost host;
  host.tree.dir("srv/a");
  host.tree.dir("srv/b");
  SandboxSpec one = repoSpec();
  one.bindMounts.push_back({"/srv/a", "/srv/a", true});
  one.bindMounts.push_back({"/srv/b", "/srv/b", false});
  one.protectedPaths = {"/srv/b/x", "/srv/a/y"};
  SandboxSpec two = one;
  std::reverse(two.bindMounts.begin(), two.bindMounts.end());
  std::reverse(two.protectedPaths.begin(), two.protectedPaths.end());
  auto p = host.compile(one);
  BOOST_TEST(boost::json::serialize(toJson(p)) ==
             boost::json::serialize(toJson(host.compile(two))));
  for (const auto *list : {&p.readDeny, &p.writeRoots, &p.writeDeny, &p.writeDenyGlobs,
                           &p.unlinkDeny, &p.network.allowlist}) {
    BOOST_TEST(std::is_sorted(list->begin(), list->end()));
    BOOST_TEST((std::adjacent_find(list->begin(), list->end()) == list->end()));
  }
  // The JSON codec carries every field.
  BOOST_TEST((decodeEffectivePolicy(toJson(p)) == p));
}

BOOST_AUTO_TEST_CASE(golden_standard_policy) {
  // The standard dispatch policy on a fixed fake home: a repository as the one
  // writable bind, a protected original, a runner state dir.
  FakeHost host;
  host.tree.dir("home/user/vault/aws");
  host.tree.symlink("home/user/.aws", "vault/aws");
  host.tree.dir("home/user/.cc/claude");
  SandboxSpec spec = repoSpec();
  spec.protectedPaths = {"~/originals/repo"};
  spec.runnerStateDirs = {"~/.cc/claude"};
  auto p = host.compile(spec);
  std::string actual = boost::json::serialize(toJson(p));
  std::string file = std::string(CCSANDBOX_SOURCE_DIR) + "/tests/golden/policy_standard.json";
  if (const char *update = std::getenv("CCSANDBOX_UPDATE_GOLDEN"); update && *update == '1') {
    std::ofstream(file, std::ios::trunc) << actual << "\n";
  }
  std::string expected = ccsandbox::test::readFile(file);
  BOOST_REQUIRE_MESSAGE(!expected.empty(),
                        "missing " << file << " (run with CCSANDBOX_UPDATE_GOLDEN=1)");
  auto golden = decodeEffectivePolicy(boost::json::parse(expected));
  BOOST_TEST((golden == p), "compiled policy differs from " << file << ":\n" << actual);
}

BOOST_AUTO_TEST_CASE(git_search_is_bounded_and_says_so) {
  TempTree tree;
  tree.dir("w/a/b/c/.git/hooks");
  tree.dir("w/x/.git/hooks");
  tree.symlink("w/link", "/w/a");  // not followed: the repository is found once
  PathResolver fs(tree.path());
  auto all = findGitControlPaths(fs, "/w");
  BOOST_TEST(!all.truncated);
  BOOST_TEST(all.paths.size() == 4u);
  BOOST_TEST(has(all.paths, "/w/a/b/c/.git/hooks"));
  GitSearchBounds shallow;
  shallow.maxDepth = 2;
  auto near = findGitControlPaths(fs, "/w", shallow);
  BOOST_TEST(has(near.paths, "/w/x/.git/config"));
  BOOST_TEST(!has(near.paths, "/w/a/b/c/.git/config"));
  GitSearchBounds few;
  few.maxDirectories = 2;
  BOOST_TEST(findGitControlPaths(fs, "/w", few).truncated);
}
