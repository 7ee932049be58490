// Precedence as properties over generated trees. For every path in a random
// tree (through symlinks too), a policy compiled from random binds, protected
// paths, runner dirs and repositories must say "writable" exactly when an
// independent oracle (std::filesystem's resolution, the inputs' own lists) does:
//   - a deny anywhere under an allow stays denied;
//   - no rule makes an unrelated allowed path read-only.
#define BOOST_TEST_MODULE policy_properties
#include <boost/test/unit_test.hpp>

#include "path_forms.hpp"
#include "policy_compiler.hpp"
#include "support/temp_tree.hpp"

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>

using namespace ccsandbox;
namespace fs = std::filesystem;

namespace {

// Names chosen so that string-prefix mistakes show: /w/a, /w/ab, /w/a-b.
const std::vector<std::string> kNames = {"a", "ab", "a-b", "b", "c"};

struct Generated {
  std::vector<std::string> dirs;   // every directory (literal, no symlink in it)
  std::vector<std::string> links;  // symlinks to directories
  std::vector<std::string> repos;  // directories holding .git/hooks and .git/config
};

Generated generate(const test::TempTree &tree, std::mt19937 &rng) {
  Generated g;
  g.dirs.push_back("/w");
  tree.dir("w");
  std::uniform_int_distribution<std::size_t> name(0, kNames.size() - 1);
  for (int i = 0; i < 24; ++i) {
    std::string parent =
        g.dirs[std::uniform_int_distribution<std::size_t>(0, g.dirs.size() - 1)(rng)];
    if (std::count(parent.begin(), parent.end(), '/') >= 4) continue;
    std::string d = parent + "/" + kNames[name(rng)];
    if (std::find(g.dirs.begin(), g.dirs.end(), d) != g.dirs.end()) continue;
    tree.dir(d.substr(1));
    g.dirs.push_back(d);
  }
  std::uniform_int_distribution<std::size_t> anyDir(0, g.dirs.size() - 1);
  for (int i = 0; i < 4; ++i) {
    // A relative link, so std::filesystem (the oracle) and the compiler see the same tree.
    std::string from = g.dirs[anyDir(rng)], to = g.dirs[anyDir(rng)];
    std::string link = from + "/l" + std::to_string(i);
    fs::path rel = fs::path(to).lexically_relative(fs::path(from));
    tree.symlink(link.substr(1), rel.string());
    g.links.push_back(link);
  }
  for (const auto &d : g.dirs)
    if (rng() % 5 == 0) {
      tree.dir(d.substr(1) + "/.git/hooks");
      tree.file(d.substr(1) + "/.git/config", "[core]\n");
      g.repos.push_back(d);
    }
  return g;
}

// Containment by std::filesystem's own components, independent of the compiler's isWithin.
bool beneath(const std::string &path, const std::string &dir) {
  fs::path p(path), d(dir);
  auto [di, pi] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
  return di == d.end() || (std::next(di) == d.end() && di->empty());
}

struct Oracle {
  std::string root;
  // Physical path, by std::filesystem, relative to the fake root.
  std::string resolve(const std::string &path) const {
    std::string r = fs::weakly_canonical(fs::path(root + path)).string();
    BOOST_REQUIRE(r.rfind(root, 0) == 0);
    r = r.substr(root.size());
    return r.empty() ? "/" : r;
  }
  bool within(const std::string &path, const std::vector<std::string> &dirs) const {
    std::string p = resolve(path);
    return std::any_of(dirs.begin(), dirs.end(),
                       [&](const std::string &d) { return beneath(p, resolve(d)); });
  }
};

bool covered(const std::vector<std::string> &rules, const std::string &path) {
  return std::any_of(rules.begin(), rules.end(),
                     [&](const std::string &r) { return isWithin(path, r); });
}

}  // namespace

BOOST_AUTO_TEST_CASE(precedence_over_generated_trees) {
  for (unsigned seed = 1; seed <= 150; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      test::TempTree tree;
      std::string root = fs::canonical(tree.path()).string();
      std::mt19937 rng(seed);
      Generated g = generate(tree, rng);
      std::vector<std::string> paths = g.dirs;  // where binds and protections are picked from
      for (const auto &l : g.links) paths.push_back(l);
      auto pick = [&] {
        return paths[std::uniform_int_distribution<std::size_t>(0, paths.size() - 1)(rng)];
      };

      SandboxSpec spec;
      const SandboxMode modes[] = {SandboxMode::chat, SandboxMode::chat, SandboxMode::review,
                                   SandboxMode::plan, SandboxMode::orchestrate};
      spec.mode = modes[rng() % 5];
      std::set<std::string> rw, ro, runner;
      for (int i = 0, n = 1 + static_cast<int>(rng() % 3); i < n; ++i) rw.insert(pick());
      for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i) ro.insert(pick());
      for (int i = 0, n = static_cast<int>(rng() % 2); i < n; ++i) runner.insert(pick());
      for (const auto &b : rw) spec.bindMounts.push_back({b, b, false});
      for (const auto &b : ro) spec.bindMounts.push_back({b, b, true});
      for (int i = 0, n = static_cast<int>(rng() % 3); i < n; ++i)
        spec.protectedPaths.push_back(pick() + (rng() % 2 ? "" : "/new"));
      spec.runnerStateDirs.assign(runner.begin(), runner.end());

      HostFacts facts;
      facts.home = "/home/user";
      facts.platform = "linux";
      facts.tempDir = "/w/tmp-session";
      facts.fsRoot = root;
      EgressLists lists;
      facts.egress = &lists;
      EffectivePolicy p = compilePolicy(spec, LaunchKind::agentBash, facts);

      // The oracle's view of the inputs.
      Oracle o{root};
      bool chat = spec.mode == SandboxMode::chat;
      std::vector<std::string> writable(runner.begin(), runner.end()), readOnly;
      writable.push_back(facts.tempDir);
      for (const auto &b : rw)
        if (chat && !ro.count(b)) writable.push_back(b);
      for (const auto &b : ro)
        if (!runner.count(b)) readOnly.push_back(b);
      for (const auto &b : rw)
        if (!chat && !runner.count(b)) readOnly.push_back(b);
      std::vector<std::string> denied = spec.protectedPaths;
      for (const auto &b : readOnly)
        if (o.within(b, writable)) denied.push_back(b);
      for (const auto &r : g.repos)
        if (o.within(r, writable)) {
          denied.push_back(r + "/.git/hooks");
          denied.push_back(r + "/.git/config");
        }

      // Every path of the tree, reached literally and through each link, plus new files.
      std::vector<std::string> probes = paths;
      for (const auto &d : g.dirs) probes.push_back(d + "/new.txt");
      for (const auto &r : g.repos)
        for (const char *leaf : {"/.git/hooks/pre-commit", "/.git/config", "/.git/index"})
          probes.push_back(r + leaf);
      for (const auto &l : g.links)
        for (const auto &n : kNames) probes.push_back(l + "/" + n);

      for (const auto &x : probes) {
        std::string physical = o.resolve(x);
        bool expectWritable = o.within(x, writable) && !o.within(x, denied);
        bool actualWritable = covered(p.writeRoots, physical) && !covered(p.writeDeny, physical);
        BOOST_TEST(actualWritable == expectWritable, x << " (physical " << physical << ")");
        // A literal path under a literal deny input is denied in its literal form too.
        for (const auto &d : denied)
          if (isWithin(lexicallyNormal(x), lexicallyNormal(d)))
            BOOST_TEST(covered(p.writeDeny, lexicallyNormal(x)), x << " literal under " << d);
        // And a path no deny input covers is matched by no deny rule. (Only for
        // paths without a link in them: a link inside a denied directory that
        // points out of it is matched literally, harmlessly, by the directory's rule.)
        if (!o.within(x, denied) && physical == lexicallyNormal(x))
          BOOST_TEST(
              !covered(p.writeDeny, physical), x << " matched by " << [&] {
                std::string by;
                for (const auto &r : p.writeDeny)
                  if (isWithin(physical, r)) by += r + " ";
                std::string in;
                for (const auto &d : denied) in += d + " ";
                return by + "; deny inputs: " + in;
              }());
      }

      // The visible binds agree with the mode.
      for (const auto &b : p.visible.binds) {
        bool expectRw = b.hostPath == facts.tempDir || runner.count(b.hostPath) ||
                        (chat && rw.count(b.hostPath) && !ro.count(b.hostPath));
        BOOST_TEST(b.readOnly == !expectRw, b.hostPath);
      }
      // A read-denied path is never writable.
      for (const auto &r : p.readDeny) BOOST_TEST(covered(p.writeDeny, r), r);
    }
  }
}
