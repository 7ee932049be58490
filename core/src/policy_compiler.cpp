#include "policy_compiler.hpp"

#include "ccsandbox/domain_pattern.hpp"
#include "ccsandbox/logging.hpp"
#include "git_control_paths.hpp"
#include "path_forms.hpp"
#include "secret_paths.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>

namespace ccsandbox {

namespace {

void sortUnique(std::vector<std::string> &v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

void append(std::vector<std::string> &to, const std::vector<std::string> &from) {
  to.insert(to.end(), from.begin(), from.end());
}

// A host path from the spec: absolute, or `~`-relative where the field allows it.
std::string hostPath(const std::string &field, const std::string &value, bool allowTilde,
                     const std::string &home) {
  if (value.empty()) throw UsageError(field + ": must be an absolute path, not empty");
  if (value.find('\0') != std::string::npos) throw UsageError(field + ": contains a NUL byte");
  bool tilde = allowTilde && (value == "~" || value.rfind("~/", 0) == 0);
  if (value[0] != '/' && !tilde)
    throw UsageError(field + ": must be an absolute path (\"" + value + "\" is relative)");
  return lexicallyNormal(expandHome(value, home));
}

// A bind's paths, against what a sandbox keeps for itself. The whole host
// file system as one bind would leave nothing outside it (and, writable,
// nothing read-only); the sandbox's root, /proc and /dev are its own; a view of
// the host's /proc would show the host's processes, which the pid namespace hides.
// The host path is judged in each of its forms: a symlink to / or /proc is
// mounted as what it points to.
void refuseReservedBind(const std::string &field, const std::vector<std::string> &hostForms,
                        const std::string &guest) {
  auto within = [](const std::string &p, const std::string &root) {
    return p == root || p.rfind(root + "/", 0) == 0;
  };
  for (const auto &host : hostForms) {
    if (host == "/")
      throw UsageError(field +
                       ".hostPath: \"/\" is the whole host file system; bind the "
                       "directories the command needs instead");
    if (within(host, "/proc"))
      throw UsageError(field + ".hostPath: " + host +
                       " would show the host's processes inside the sandbox");
  }
  if (guest == "/") throw UsageError(field + ".guestPath: \"/\" is the sandbox's own root");
  for (const char *own : {"/proc", "/dev", "/run/ccsandbox"})
    if (within(guest, own))
      throw UsageError(field + ".guestPath: " + guest + " is inside the sandbox's own " + own);
  // Our pieces are mounted beneath it: their mount points would be made in the
  // host directory behind such a bind.
  if (guest == "/run")
    throw UsageError(field + ".guestPath: /run would hold the sandbox's own /run/ccsandbox");
}

// A write root or bind, remembered with the field it came from for error messages.
struct Source {
  std::string field;
  std::string path;  // literal, lexically normal
};

// The system set a namespace backend mounts read-only: what exists of /usr,
// /bin, /sbin, /lib*, /etc, /opt.
std::vector<std::string> systemReadOnly(const PathResolver &fs) {
  std::vector<std::string> out;
  auto present = [&](const std::string &p) {
    struct stat st {};
    return ::stat(fs.onHost(p).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  };
  for (const char *p : {"/usr", "/bin", "/sbin", "/etc", "/opt"})
    if (present(p)) out.push_back(p);
  struct Closer {
    void operator()(DIR *d) const { ::closedir(d); }
  };
  std::unique_ptr<DIR, Closer> root(::opendir(fs.onHost("/").c_str()));
  while (dirent *e = root ? ::readdir(root.get()) : nullptr) {
    std::string name = e->d_name;
    if (name.rfind("lib", 0) == 0 && present("/" + name)) out.push_back("/" + name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Refuses a bind that lies inside a read-denied path: a writable one would be
// a secret made writable, a read-only one would show nothing.
void refuseInsideReadDeny(const Source &s, bool writable, const std::vector<std::string> &forms,
                          const std::vector<std::string> &readDeny) {
  for (const auto &form : forms)
    for (const auto &deny : readDeny) {
      if (!isWithin(form, deny)) continue;
      std::string what = writable ? "would be writable" : "would be mounted";
      throw UsageError(s.field + " \"" + s.path + "\" " + what +
                       " but lies inside the read-denied path " + deny +
                       (writable ? " (a write root may not be inside the secret set)"
                                 : " (it would show nothing: the read deny wins)") +
                       "; choose a path outside it");
    }
}

const EgressLists &egressLists(const HostFacts &host) {
  return host.egress ? *host.egress : shippedEgressLists();
}

// Every non-glob writeDeny entry and its ancestors may not be unlinked or
// renamed; for a glob, its ancestors before the first glob component.
std::vector<std::string> unlinkDenyFor(const std::vector<std::string> &writeDeny) {
  std::vector<std::string> out;
  for (const auto &entry : writeDeny) {
    out.push_back(entry);
    std::string base = entry;
    if (isGlob(entry)) {
      auto star = entry.find_first_of("*?");
      base = entry.substr(0, entry.rfind('/', star));
      if (base.empty()) continue;
      out.push_back(base);
    }
    append(out, ancestorsOf(base));
  }
  sortUnique(out);
  return out;
}

void finish(EffectivePolicy &p) {
  std::sort(p.visible.binds.begin(), p.visible.binds.end(),
            [](const PolicyMount &a, const PolicyMount &b) {
              // Parents before children: a namespace backend mounts in this order.
              return std::tie(a.guestPath, a.hostPath, a.readOnly) <
                     std::tie(b.guestPath, b.hostPath, b.readOnly);
            });
  sortUnique(p.visible.systemReadOnly);
  sortUnique(p.readDeny);
  sortUnique(p.writeRoots);
  sortUnique(p.writeDeny);
  sortUnique(p.writeDenyGlobs);
  p.unlinkDeny = unlinkDenyFor(p.writeDeny);
  sortUnique(p.exec.grantRoots);
  sortUnique(p.network.allowlist);
  sortUnique(p.network.denylist);
}

void baseFacts(EffectivePolicy &p, const SandboxSpec &spec, LaunchKind kind, const HostFacts &host,
               const PathResolver &fs) {
  p.launchKind = std::string(toString(kind));
  p.mode = std::string(toString(spec.mode));
  p.home = host.home;
  p.tempDir = host.tempDir.empty() ? "" : lexicallyNormal(host.tempDir);
  p.visible.systemReadOnly = systemReadOnly(fs);
  if (!p.tempDir.empty()) p.env["TMPDIR"] = p.tempDir;
}

// The seed's server-hosted terminal: $HOME and the session's working directory
// writable, the network open, reads of the five secret paths denied. Fixed:
// nothing in the spec widens it.
EffectivePolicy compileTerminal(const SandboxSpec &spec, const HostFacts &host,
                                const PathResolver &fs) {
  if (lexicallyNormal(host.home) == "/")
    throw UsageError(
        "the terminal profile makes $HOME writable, and the host home is / "
        "(is HOME set?); refusing to make the whole file system writable");
  EffectivePolicy p;
  baseFacts(p, spec, LaunchKind::terminal, host, fs);
  for (const auto &s : terminalSecretPaths())
    append(p.readDeny, fs.forms(expandHome(s, host.home)));
  sortUnique(p.readDeny);
  std::vector<Source> writable{{"home", lexicallyNormal(host.home)}};
  if (spec.guestWorkdir)
    writable.push_back(
        {"guestWorkdir", hostPath("guestWorkdir", *spec.guestWorkdir, false, host.home)});
  if (!p.tempDir.empty()) writable.push_back({"tempDir", p.tempDir});
  for (const auto &s : writable) {
    auto forms = fs.forms(s.path);
    refuseInsideReadDeny(s, true, forms, p.readDeny);
    p.visible.binds.push_back({s.path, s.path, false});
    append(p.writeRoots, forms);
  }
  // A read-denied directory never becomes writable, even under a writable $HOME.
  p.writeDeny = p.readDeny;
  p.exec.blockWritableRoots = false;  // a person's shell runs what they build in $HOME
  p.network.enabled = true;
  p.network.open = networkOpenFor(LaunchKind::terminal);
  finish(p);
  // Two writable sources naming the same path leave one bind.
  auto &b = p.visible.binds;
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return p;
}

}  // namespace

bool networkOpenFor(LaunchKind kind) {
  return kind == LaunchKind::terminal;
}

EffectivePolicy compilePolicy(const SandboxSpec &spec, LaunchKind kind, const HostFacts &host,
                              const PolicyOptions &options) {
  if (host.home.empty() || host.home[0] != '/')
    throw UsageError("the host home \"" + host.home + "\" is not an absolute path (set HOME)");
  PathResolver fs(host.fsRoot);
  if (kind == LaunchKind::terminal) return compileTerminal(spec, host, fs);

  EffectivePolicy p;
  baseFacts(p, spec, kind, host, fs);
  const std::string &home = host.home;

  // readDeny: the secret set, both forms.
  for (const auto &s : secretPaths()) append(p.readDeny, fs.forms(expandHome(s, home)));
  sortUnique(p.readDeny);

  // visible binds and write roots, by mode.
  bool bindsWritable = spec.mode == SandboxMode::chat;
  std::vector<std::pair<Source, PolicyMount>> binds;
  for (std::size_t i = 0; i < spec.bindMounts.size(); ++i) {
    const auto &b = spec.bindMounts[i];
    std::string field = "bindMounts[" + std::to_string(i) + "]";
    std::string h = hostPath(field + ".hostPath", b.hostPath, false, home);
    std::string g =
        b.guestPath.empty() ? h : hostPath(field + ".guestPath", b.guestPath, false, home);
    refuseReservedBind(field, fs.forms(h), g);
    binds.push_back({{field + ".hostPath", h}, {h, g, b.readOnly || !bindsWritable}});
  }
  // Runner state dirs are writable in every mode; a bind of the same path becomes writable.
  for (std::size_t i = 0; i < spec.runnerStateDirs.size(); ++i) {
    std::string field = "runnerStateDirs[" + std::to_string(i) + "]";
    std::string d = hostPath(field, spec.runnerStateDirs[i], true, home);
    refuseReservedBind(field, fs.forms(d), d);
    bool merged = false;
    for (auto &[src, m] : binds)
      if (m.hostPath == d && m.guestPath == d) {
        m.readOnly = false;
        src.field = field;
        merged = true;
      }
    if (!merged) binds.push_back({{field, d}, {d, d, false}});
  }
  if (!p.tempDir.empty()) binds.push_back({{"tempDir", p.tempDir}, {p.tempDir, p.tempDir, false}});

  // One guest path, one host path; the same bind twice keeps the stricter.
  std::vector<std::pair<Source, PolicyMount>> unique;
  for (auto &entry : binds) {
    auto same = std::find_if(unique.begin(), unique.end(), [&](const auto &u) {
      return u.second.guestPath == entry.second.guestPath;
    });
    if (same == unique.end()) {
      unique.push_back(entry);
      continue;
    }
    if (same->second.hostPath != entry.second.hostPath)
      throw UsageError(same->first.field + " and " + entry.first.field +
                       " both mount at the guest path " + entry.second.guestPath);
    bool runner = same->first.field.rfind("runnerStateDirs", 0) == 0 ||
                  entry.first.field.rfind("runnerStateDirs", 0) == 0;
    same->second.readOnly = runner ? false : (same->second.readOnly || entry.second.readOnly);
  }

  std::vector<std::pair<std::string, std::vector<std::string>>> roots;  // literal, forms
  for (const auto &[src, m] : unique) {
    auto forms = fs.forms(m.hostPath);
    refuseInsideReadDeny(src, !m.readOnly, forms, p.readDeny);
    p.visible.binds.push_back(m);
    if (!m.readOnly) {
      append(p.writeRoots, forms);
      roots.push_back({m.hostPath, forms});
    }
  }

  // writeDeny, in every mode: the secret set (a read-denied directory never
  // becomes writable), the protected home paths, the agent's own config,
  // protectedPaths, read-only binds nested in a write root, ccsandbox's own
  // files under a write root, and the hooks and config of every repository
  // under a write root.
  append(p.writeDeny, p.readDeny);
  for (const auto &s : protectedHomePaths()) append(p.writeDeny, fs.forms(expandHome(s, home)));
  std::vector<std::string> configDirs{expandHome("~/.claude", home)};
  for (std::size_t i = 0; i < spec.runnerStateDirs.size(); ++i)
    configDirs.push_back(hostPath("runnerStateDirs", spec.runnerStateDirs[i], true, home));
  for (const auto &dir : configDirs)
    for (const auto &e : agentConfigEntries()) append(p.writeDeny, fs.forms(dir + "/" + e));
  for (std::size_t i = 0; i < spec.protectedPaths.size(); ++i)
    append(p.writeDeny, fs.forms(hostPath("protectedPaths[" + std::to_string(i) + "]",
                                          spec.protectedPaths[i], true, home)));
  for (const auto &[src, m] : unique) {
    if (!m.readOnly) continue;
    // Nested by where the files really are: the last form is the physical one.
    auto forms = fs.forms(m.hostPath);
    bool nested = std::any_of(roots.begin(), roots.end(), [&](const auto &root) {
      return isWithin(forms.back(), root.second.back());
    });
    if (nested) append(p.writeDeny, forms);
  }
  // A plugin planted there would be loaded by the next ccsandbox, outside any sandbox.
  for (const auto &own : host.trustedFiles) {
    auto forms = fs.forms(own);
    bool inside = std::any_of(roots.begin(), roots.end(), [&](const auto &root) {
      return isWithin(forms.back(), root.second.back());
    });
    if (inside) append(p.writeDeny, forms);
  }
  for (const auto &[literal, rootForms] : roots) {
    const std::string &physical = rootForms.back();
    const auto started = std::chrono::steady_clock::now();
    auto git = findGitControlPaths(fs, physical);
    // The one part of a launch that grows with the working copy: said, for a slow start.
    const auto took =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started);
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", took.count());
    logging::write(logging::Level::debug, "policy",
                   "looked for git repositories under " + literal + ": " +
                       std::to_string(git.searched) + " directories in " + ms + " ms, " +
                       std::to_string(git.paths.size()) + " protected paths");
    if (git.truncated)
      logging::write(logging::Level::warning, "policy",
                     "stopped looking for git repositories under " + literal + " after " +
                         std::to_string(git.searched) +
                         " directories: repositories deeper in it keep writable hooks and config");
    for (const auto &g : git.paths) {
      append(p.writeDeny, fs.forms(g));
      // The same file reached through the root as written.
      if (physical != literal && isWithin(g, physical))
        append(p.writeDeny, fs.forms(literal + g.substr(physical == "/" ? 0 : physical.size())));
    }
  }

  // Filename rules: names no command may create or write anywhere.
  if (options.standardFilenameRules) p.writeDenyGlobs = standardFilenameRules();
  for (std::size_t i = 0; i < options.extraWriteDenyGlobs.size(); ++i) {
    const auto &g = options.extraWriteDenyGlobs[i];
    if (g.empty() || g.find('/') != std::string::npos || g == "." || g == "..")
      throw UsageError("deny-write glob \"" + g +
                       "\": must be a file name pattern such as *.p12 (no '/')");
    p.writeDenyGlobs.push_back(g);
  }

  // exec: nothing runs from a write root unless an operator-approved tree reopens it.
  p.exec.blockWritableRoots = true;
  for (std::size_t i = 0; i < spec.execGrantRoots.size(); ++i)
    append(p.exec.grantRoots, fs.forms(hostPath("execGrantRoots[" + std::to_string(i) + "]",
                                                spec.execGrantRoots[i], true, home)));

  // network: the allowlist is empty when the network is off; the deny list always applies.
  for (std::size_t i = 0; i < spec.egressAllowlist.size(); ++i) {
    try {
      DomainPattern::parse(spec.egressAllowlist[i]);
    } catch (const std::exception &e) {
      throw UsageError("egressAllowlist[" + std::to_string(i) + "]: " + e.what());
    }
  }
  p.network.enabled = spec.networkEnabled;
  const EgressLists &lists = egressLists(host);
  if (spec.networkEnabled) {
    append(p.network.allowlist, lists.baseline);
    append(p.network.allowlist, lists.github);
    append(p.network.allowlist, spec.egressAllowlist);
  }
  p.network.denylist = lists.denied;

  finish(p);
  return p;
}

}  // namespace ccsandbox
