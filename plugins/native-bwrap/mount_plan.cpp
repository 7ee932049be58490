#include "mount_plan.hpp"

#include <algorithm>
#include <optional>

namespace ccsandbox::bwrap {

namespace {

std::string normalise(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::string parentOf(const std::string &path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::size_t depth(const std::string &p) {
  if (p == "/") return 0;
  return static_cast<std::size_t>(std::count(p.begin(), p.end(), '/'));
}

// `path` seen through a mount of `host` at `guest` (path lies within host).
std::string translate(const std::string &path, const std::string &host, const std::string &guest) {
  std::string rest = path.substr(host == "/" ? 0 : host.size());
  if (rest.empty()) return guest;
  return guest == "/" ? rest : guest + rest;
}

// One mount of the visible set.
struct Entry {
  enum class Kind { roBind, rwBind, symlink, tmpfs };
  Kind kind;
  std::string host;  // source (or symlink target)
  std::string guest;
};

class Planner {
 public:
  Planner(const EffectivePolicy &policy, const MountPlanInput &input, const FilesystemView &fs)
      : policy_(policy), input_(input), fs_(fs) {
    for (const auto &w : policy.writeRoots) writeRoots_.push_back(normalise(w));
    for (const auto &w : policy.writeDeny) writeDeny_.push_back(normalise(w));
    for (const auto &r : policy.readDeny) readDeny_.push_back(normalise(r));
  }

  MountPlan run() {
    namespaces();
    const std::size_t namespacesEnd = args_.size();
    visibleSet();  // the mounts decide where our tools go, which the environment names
    placeTools();
    environment();
    args_.insert(args_.end(), {"--chdir", "/"});
    if (policy_.visible.procfs) args_.insert(args_.end(), {"--proc", "/proc"});
    if (policy_.visible.minimalDev) args_.insert(args_.end(), {"--dev", "/dev"});
    emitEntries();
    writeDenies();
    readDenies();
    // Last, so that no mount of the policy covers them: a write root that
    // holds our build stays writable, our tools inside it do not.
    ourPieces();
    // bwrap's root is a tmpfs that only holds mount points: read-only once
    // they exist, so nothing can be written outside the mounts.
    args_.insert(args_.end(), {"--remount-ro", "/"});
    const std::size_t setupEnd = args_.size();
    helperCommand();
    MountPlan plan;
    plan.namespaces.assign(args_.begin(), args_.begin() + static_cast<long>(namespacesEnd));
    plan.setup.assign(args_.begin() + static_cast<long>(namespacesEnd),
                      args_.begin() + static_cast<long>(setupEnd));
    plan.command.assign(args_.begin() + static_cast<long>(setupEnd) + 1, args_.end());
    plan.args = std::move(args_);
    plan.bridges = std::move(bridges_);
    plan.binds = std::move(binds_);
    plan.guestRules = guestRules();
    return plan;
  }

 private:
  void namespaces() {
    auto ns = namespaceArgs(input_, !policy_.network.open);
    args_.insert(args_.end(), ns.begin(), ns.end());
  }

  void environment() {
    // The helper's own environment is the policy's; it overlays it on each
    // command's environment, so the policy's variables (the proxies) win.
    args_.push_back("--clearenv");
    for (const auto &[k, v] : policy_.env)
      args_.insert(args_.end(), {"--setenv", k, guestValue(v)});
  }

  // The session's temp dir is /tmp inside: a variable naming it (TMPDIR)
  // names /tmp there. Our tools, when placed apart, are named where they are
  // (GIT_SSH_COMMAND runs ccsandbox-connect from them, inside a longer text).
  std::string guestValue(std::string v) const {
    if (tools_ != toolsGuest_) {
      const std::string from = tools_ + "/", to = toolsGuest_ + "/";
      for (auto at = v.find(from); at != std::string::npos; at = v.find(from, at + to.size()))
        v.replace(at, from.size(), to);
    }
    if (!policy_.visible.privateTmp || policy_.tempDir.empty()) return v;
    std::string t = normalise(policy_.tempDir);
    if (isWithin(v, t)) return translate(v, t, "/tmp");
    return v;
  }

  void bind(const char *op, const std::string &source, const std::string &target) {
    args_.insert(args_.end(), {op, source, target});
    binds_.push_back({source, target});
  }

  // Our tools stay at their own path unless a bind of the policy shows
  // another host directory there (a guest path of its own covering them):
  // then they go to a place of their own. The sandbox's /tmp is no such bind:
  // their mount point is made in the session's own temp dir, which goes with
  // the session, and the helper's command stays the one a bubblewrap started
  // ahead already has (a build under /tmp, as CI clones it).
  void placeTools() {
    tools_ = toolsGuest_ = normalise(input_.toolsDir);
    if (tools_.empty()) return;
    const Entry *e = coveringEntry(tools_);
    if (!e || e->guest == "/tmp") return;
    const bool ownPath = (e->kind == Entry::Kind::roBind || e->kind == Entry::Kind::rwBind) &&
                         translate(tools_, e->guest, e->host) == tools_;
    if (!ownPath) toolsGuest_ = kGuestToolsDir;
  }

  // Each bind costs bubblewrap a read of the mount table, so our pieces take
  // as few as they can: the helper runs from the tools directory it lives in,
  // which needs no bind at all where the plan already shows it as it is (an
  // installation under /usr); the two proxy sockets come as their directory
  // when they share one (the core gives them one of their own).
  void ourPieces() {
    if (!tools_.empty() && (toolsGuest_ != tools_ || !shownAsIs(tools_)))
      bind("--ro-bind", tools_, toolsGuest_);
    if (guestHelperPath(input_) == kGuestHelper) bind("--ro-bind", input_.helperPath, kGuestHelper);

    const auto &http = policy_.network.httpProxy;
    const auto &socks = policy_.network.socksProxy;
    auto usable = [](const std::optional<ProxyEndpoint> &p) {
      return p && !p->unixSocket.empty() && p->port > 0;
    };
    const std::string sharedDir =
        usable(http) && usable(socks) && parentOf(http->unixSocket) == parentOf(socks->unixSocket)
            ? parentOf(http->unixSocket)
            : "";
    const std::string guestDir = std::string(kGuestRunDir) + "/proxy";
    if (!sharedDir.empty()) bind("--ro-bind", sharedDir, guestDir);
    auto bridge = [&](const std::optional<ProxyEndpoint> &p, const std::string &name) {
      if (!usable(p)) return;
      std::string guest;
      if (!sharedDir.empty()) {
        guest = guestDir + p->unixSocket.substr(sharedDir.size());
      } else {
        guest = std::string(kGuestRunDir) + "/" + name + ".sock";
        bind("--ro-bind", p->unixSocket, guest);
      }
      bridges_.push_back({p->host.empty() ? "127.0.0.1" : p->host, p->port, guest, p->unixSocket});
    };
    bridge(http, "http-proxy");
    bridge(socks, "socks-proxy");
  }

  // Host directory `p` appears at its own path, read-only, with nothing
  // writable, masked or mounted inside it.
  bool shownAsIs(const std::string &p) const {
    const auto at = guestLocations(p);
    if (std::find(at.begin(), at.end(), p) == at.end() || writableWithin(p) || hidden(p))
      return false;
    const auto inside = [&](const std::string &d) { return isWithin(d, p); };
    return std::none_of(readDeny_.begin(), readDeny_.end(), inside) &&
           std::none_of(writeDeny_.begin(), writeDeny_.end(), inside) &&
           std::none_of(entries_.begin(), entries_.end(),
                        [&](const Entry &e) { return e.guest != p && isWithin(e.guest, p); });
  }

  static bool within(const std::string &p, const std::vector<std::string> &roots) {
    return std::any_of(roots.begin(), roots.end(),
                       [&](const std::string &r) { return isWithin(p, r); });
  }

  // Under a write root and under no write deny: a mount inside a protected
  // path stays read-only (the deny wins over an allow nested in it).
  bool writable(const std::string &hostPath) const {
    return within(hostPath, writeRoots_) && !within(hostPath, writeDeny_);
  }

  // A mount inside a read-denied path is not made at all: what it would show
  // is denied (the masks below cover the denied path itself where visible).
  bool hidden(const std::string &hostPath) const { return within(hostPath, readDeny_); }

  void visibleSet() {
    for (const auto &raw : policy_.visible.systemReadOnly) {
      std::string p = normalise(raw);
      PathInfo info = fs_.inspect(p);
      switch (info.kind) {
        case PathInfo::Kind::missing: break;
        case PathInfo::Kind::symlink:
          // /bin -> usr/bin on merged-/usr systems: the same link inside.
          entries_.push_back({Entry::Kind::symlink, info.target, p});
          break;
        default: entries_.push_back({Entry::Kind::roBind, p, p});
      }
    }
    if (policy_.visible.privateTmp) {
      if (!policy_.tempDir.empty()) {
        std::string t = normalise(policy_.tempDir);
        entries_.push_back({writable(t) ? Entry::Kind::rwBind : Entry::Kind::roBind, t, "/tmp"});
      } else {
        entries_.push_back({Entry::Kind::tmpfs, "", "/tmp"});
      }
    }
    const std::string privateTmp = policy_.visible.privateTmp && !policy_.tempDir.empty()
                                       ? normalise(policy_.tempDir)
                                       : std::string();
    for (const auto &b : policy_.visible.binds) {
      std::string host = normalise(b.hostPath);
      std::string guest = normalise(b.guestPath.empty() ? b.hostPath : b.guestPath);
      if (hidden(host)) continue;
      // The session's temp dir is the sandbox's /tmp, and its variables say
      // so: a second view at its host path would only cost a mount.
      if (host == privateTmp && guest == privateTmp) continue;
      bool rw = !b.readOnly && writable(host);
      entries_.push_back({rw ? Entry::Kind::rwBind : Entry::Kind::roBind, host, guest});
    }
    sortEntries();
    // A write root inside a read-only mount (a runner state dir under a bind
    // that review mode made read-only) is bound read-write over it.
    std::vector<Entry> extra;
    for (const auto &w : writeRoots_) {
      if (!writable(w) || hidden(w)) continue;
      bool seen = false;
      for (const auto &g : guestLocations(w)) {
        seen = true;
        if (!writableAt(g)) extra.push_back({Entry::Kind::rwBind, w, g});
      }
      if (!seen && fs_.inspect(w).kind == PathInfo::Kind::directory)
        extra.push_back({Entry::Kind::rwBind, w, w});  // a write root must be reachable
    }
    entries_.insert(entries_.end(), extra.begin(), extra.end());
    sortEntries();
  }

  void sortEntries() {
    std::stable_sort(entries_.begin(), entries_.end(), [](const Entry &a, const Entry &b) {
      return depth(a.guest) < depth(b.guest);
    });
  }

  // Where host path `p` appears inside the sandbox (through every bind mount).
  std::vector<std::string> guestLocations(const std::string &p) const {
    std::vector<std::string> out;
    for (const auto &e : entries_) {
      if (e.kind == Entry::Kind::symlink || e.kind == Entry::Kind::tmpfs) continue;
      if (!isWithin(p, e.host)) continue;
      std::string g = translate(p, e.host, e.guest);
      // Only where this mount is the one that shows `g` (no deeper mount covers it).
      if (coveringEntry(g) != &e) continue;
      if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
    }
    return out;
  }

  // The mount that shows guest path `g`: the last, deepest one containing it.
  const Entry *coveringEntry(const std::string &g) const {
    const Entry *best = nullptr;
    for (const auto &e : entries_)
      if (isWithin(g, e.guest) && (!best || depth(e.guest) >= depth(best->guest))) best = &e;
    return best;
  }

  bool writableAt(const std::string &g) const {
    const Entry *e = coveringEntry(g);
    return e && (e->kind == Entry::Kind::rwBind || e->kind == Entry::Kind::tmpfs);
  }

  // Something writable at or beneath guest path `g`.
  bool writableWithin(const std::string &g) const {
    if (writableAt(g)) return true;
    return std::any_of(entries_.begin(), entries_.end(), [&](const Entry &e) {
      return isWithin(e.guest, g) &&
             (e.kind == Entry::Kind::rwBind || e.kind == Entry::Kind::tmpfs);
    });
  }

  void emitEntries() {
    for (const auto &e : entries_) {
      switch (e.kind) {
        case Entry::Kind::roBind: bind("--ro-bind", e.host, e.guest); break;
        case Entry::Kind::rwBind: bind("--bind", e.host, e.guest); break;
        case Entry::Kind::symlink: args_.insert(args_.end(), {"--symlink", e.host, e.guest}); break;
        case Entry::Kind::tmpfs: args_.insert(args_.end(), {"--tmpfs", e.guest}); break;
      }
    }
  }

  // A deny entry is applied where it is visible; a symlink is skipped because
  // the policy also carries its resolved form, which is what the kernel sees.
  struct Target {
    std::string host;
    std::string guest;
    PathInfo::Kind kind;
  };
  std::vector<Target> targets(const std::vector<std::string> &paths, bool onlyWhereWritable) const {
    std::vector<Target> out;
    for (const auto &raw : paths) {
      std::string p = normalise(raw);
      if (p.find_first_of("*?") != std::string::npos) continue;  // a glob: not a mount
      auto kind = fs_.inspect(p).kind;
      if (kind == PathInfo::Kind::missing || kind == PathInfo::Kind::symlink) continue;
      for (const auto &g : guestLocations(p)) {
        if (onlyWhereWritable && !writableWithin(g)) continue;  // already read-only there
        out.push_back({p, g, kind});
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Target &a, const Target &b) {
      return depth(a.guest) < depth(b.guest);
    });
    return out;
  }

  void writeDenies() {
    for (const auto &t : targets(policy_.writeDeny, true)) bind("--ro-bind", t.host, t.guest);
  }

  void readDenies() {
    for (const auto &t : targets(policy_.readDeny, false)) {
      const std::string &mask = t.kind == PathInfo::Kind::directory ? input_.emptyDir : "/dev/null";
      bind("--ro-bind", mask, t.guest);
    }
  }

  // Every guest path of each host path, in order, without duplicates.
  std::vector<std::string> guestPaths(const std::vector<std::string> &hostPaths) const {
    std::vector<std::string> out;
    for (const auto &raw : hostPaths)
      for (const auto &g : guestLocations(normalise(raw)))
        if (std::find(out.begin(), out.end(), g) == out.end()) out.push_back(g);
    return out;
  }

  GuestWriteRules guestRules() const {
    GuestWriteRules r;
    for (const auto &w : writeRoots_)
      if (writable(w) && !hidden(w))
        for (const auto &g : guestLocations(w))
          if (writableAt(g) &&
              std::find(r.writeRoots.begin(), r.writeRoots.end(), g) == r.writeRoots.end())
            r.writeRoots.push_back(g);
    // The sandbox's own tmpfs mounts are writable and private to it: a fresh
    // /tmp, and the /dev/shm that bwrap's --dev makes (POSIX shared memory).
    if (policy_.visible.privateTmp && policy_.tempDir.empty()) r.writeRoots.push_back("/tmp");
    if (policy_.visible.minimalDev) r.writeRoots.push_back("/dev/shm");
    // The supervisor judges literal paths. A glob entry (a read-denied
    // pattern such as ~/.ssh/id_*) protects its whole literal directory:
    // stricter than the pattern, and in the right place.
    std::vector<std::string> literalDeny;
    for (const auto &d : writeDeny_) {
      auto star = d.find_first_of("*?[");
      if (star == std::string::npos) {
        literalDeny.push_back(d);
      } else if (auto slash = d.rfind('/', star); slash != std::string::npos && slash > 0) {
        literalDeny.push_back(d.substr(0, slash));
      }
    }
    r.writeDeny = guestPaths(literalDeny);
    r.writeDenyGlobs = policy_.writeDenyGlobs;
    r.execBlockWritableRoots = policy_.exec.blockWritableRoots;
    r.execGrantRoots = guestPaths(policy_.exec.grantRoots);
    return r;
  }

  // The bridges go to the helper over the control channel: the command line
  // is fixed before the proxies' ports are known (a bubblewrap started ahead).
  void helperCommand() {
    args_.push_back("--");
    auto command = helperCommandLine(input_);
    command.front() = guestValue(command.front());  // where our tools are
    args_.insert(args_.end(), command.begin(), command.end());
  }

  const EffectivePolicy &policy_;
  const MountPlanInput &input_;
  const FilesystemView &fs_;
  std::vector<std::string> writeRoots_, writeDeny_, readDeny_;
  std::string tools_, toolsGuest_;  // our tools directory on the host, and inside
  std::vector<Entry> entries_;
  std::vector<std::string> args_;
  std::vector<Bridge> bridges_;
  std::vector<PlannedBind> binds_;
};

}  // namespace

std::vector<std::string> namespaceArgs(const MountPlanInput &input, bool isolateNetwork) {
  // --as-pid-1: the helper is init, so nothing inside can signal it away;
  // --die-with-parent and the helper's watch on the control channel end the
  // sandbox with the host; --new-session keeps the caller's terminal out of reach.
  std::vector<std::string> args{"--die-with-parent",   "--new-session", "--as-pid-1",
                                "--unshare-ipc",       "--unshare-pid", "--unshare-uts",
                                "--unshare-cgroup-try"};
  if (isolateNetwork) args.push_back("--unshare-net");
  if (!input.callerIsRoot) {
    args.push_back("--unshare-user");
    if (input.disableNestedUserns) args.push_back("--disable-userns");
  }
  // As root without a user namespace bwrap would keep every capability.
  args.insert(args.end(), {"--cap-drop", "ALL"});
  return args;
}

std::string guestHelperPath(const MountPlanInput &input) {
  const std::string tools = normalise(input.toolsDir);
  const std::string helper = normalise(input.helperPath);
  return !tools.empty() && parentOf(helper) == tools ? helper : kGuestHelper;
}

std::vector<std::string> helperCommandLine(const MountPlanInput &input) {
  return {guestHelperPath(input), "--control-fd", std::to_string(input.controlFd)};
}

bool isWithin(const std::string &path, const std::string &root) {
  if (root == "/") return !path.empty() && path[0] == '/';
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

MountPlan planMounts(const EffectivePolicy &policy, const MountPlanInput &input,
                     const FilesystemView &fs) {
  return Planner(policy, input, fs).run();
}

}  // namespace ccsandbox::bwrap
