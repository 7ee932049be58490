// The mount plan: an EffectivePolicy turned into bubblewrap's command line.
// This is the one place where policy becomes bwrap arguments; it decides
// nothing the policy did not say and refuses nothing (the core's router does).
//
// A pure function of its inputs: what it needs to know about the host's files
// (is this a directory, a file, a symlink, missing) comes through a
// FilesystemView, so the tests run it on a made-up tree.
//
// Order of the mounts (bwrap applies them in order; a later one wins):
//   1. fresh /proc, minimal /dev;
//   2. the visible set — the read-only system set, the private /tmp and the
//      policy's binds — parents before children, each read-write only when a
//      write root covers it, plus write roots that lie inside a read-only mount;
//   3. existing writeDeny paths re-bound read-only over themselves, after
//      every mount that contains them, so a deny always wins;
//   4. existing readDeny paths masked: a directory by an empty read-only
//      directory, a file by /dev/null read-only;
//   5. our pieces, read-only: the tools directory at its own path (the helper
//      runs from it) and the proxy sockets' directory at /run/ccsandbox/proxy.
#pragma once

#include "ccsandbox/effective_policy.hpp"

#include <string>
#include <vector>

namespace ccsandbox::bwrap {

struct PathInfo {
  enum class Kind { missing, directory, file, symlink };
  Kind kind = Kind::missing;
  std::string target;  // a symlink's target, as written
};

class FilesystemView {
 public:
  virtual ~FilesystemView() = default;
  // What `path` is on the host, without following a final symlink.
  virtual PathInfo inspect(const std::string &path) const = 0;
};

// Where our own pieces appear inside the sandbox.
inline constexpr const char *kGuestRunDir = "/run/ccsandbox";
// The helper's place when it does not live in the tools directory.
inline constexpr const char *kGuestHelper = "/run/ccsandbox/helper";
// Our tools' place when their own path inside shows something else (a bind
// whose guest path covers it): bubblewrap would otherwise make their mount
// point inside that bind, in the host directory behind it.
inline constexpr const char *kGuestToolsDir = "/run/ccsandbox/tools";

// One loopback listener the helper opens inside the network namespace.
struct Bridge {
  std::string host;         // 127.0.0.1
  int port = 0;             // the same port the proxy has on the host
  std::string guestSocket;  // the proxy's Unix socket, bound into the sandbox
  std::string hostSocket;

  bool operator==(const Bridge &) const = default;
};

struct MountPlanInput {
  bool callerIsRoot = false;        // root: no user namespace, every capability dropped
  bool disableNestedUserns = true;  // bwrap >= 0.8: no user namespace inside the sandbox
  std::string helperPath;           // the helper on the host
  // Our libexec directory (the helper's, with ccsandbox-connect beside it),
  // bound read-only at its own path: the policy's environment names these
  // tools by host path (GIT_SSH_COMMAND's proxy command), and the helper runs
  // from it when it lives there.
  std::string toolsDir;
  std::string emptyDir;  // an empty directory on the host, the mask for directories
  int controlFd = -1;    // the helper's end of the control channel
};

// The policy's write rules as the command sees them inside the sandbox, for
// the helper's kernel layers (Landlock, the seccomp supervisor), which judge
// guest paths. Each host path appears at every guest path a mount shows it at
// (the identity where guestPath == hostPath); a path no mount shows needs no
// rule. Globs on final names carry over unchanged.
struct GuestWriteRules {
  std::vector<std::string> writeRoots;  // plus the sandbox's own writable tmpfs
  std::vector<std::string> writeDeny;   // existing or not (a deny may precede its path)
  std::vector<std::string> writeDenyGlobs;
  bool execBlockWritableRoots = true;
  std::vector<std::string> execGrantRoots;

  bool operator==(const GuestWriteRules &) const = default;
};

// One bind of the plan, in order: what bubblewrap mounts from the host.
struct PlannedBind {
  std::string source;  // on the host
  std::string target;  // inside
};

struct MountPlan {
  // bwrap's namespace and privilege options: fixed for a host, so a bubblewrap
  // started ahead of the launch has them on its command line.
  std::vector<std::string> namespaces;
  // The environment, /proc, /dev and the mounts: what `--args` hands bwrap.
  std::vector<std::string> setup;
  std::vector<std::string> command;  // the helper and its control fd (after "--")
  // Everything after "bwrap" as one command line: namespaces, setup, "--", command.
  std::vector<std::string> args;
  std::vector<Bridge> bridges;  // sent to the helper over the control channel
  std::vector<PlannedBind> binds;
  GuestWriteRules guestRules;
};

MountPlan planMounts(const EffectivePolicy &policy, const MountPlanInput &input,
                     const FilesystemView &fs);

// The namespace and privilege options alone (the probe's trial sandbox uses
// exactly these, so it tests what a launch will ask for).
// `isolateNetwork` false only for a policy whose network is open (the fixed
// terminal profile): then the host's network namespace is shared.
std::vector<std::string> namespaceArgs(const MountPlanInput &input, bool isolateNetwork = true);

// Where the helper is inside: at its own path in the tools directory it lives
// in, else at kGuestHelper. And its command line (MountPlan::command).
std::string guestHelperPath(const MountPlanInput &input);
std::vector<std::string> helperCommandLine(const MountPlanInput &input);

// True when `path` is `root` or lies beneath it (both absolute, normalised).
bool isWithin(const std::string &path, const std::string &root);

}  // namespace ccsandbox::bwrap
