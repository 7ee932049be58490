// The core's public C++ API: a Runtime discovers and probes the backend
// plugins once, routes each launch to a backend, and runs commands in sessions.
//
//   ccsandbox::Runtime rt({});                       // discovery, probe, startup line
//   auto session = rt.launch({.spec = spec, .kind = LaunchKind::agentBash,
//                             .onEvent = [](const SandboxEvent &e) { ... }});
//   auto proc = session->exec({.argv = {"make"}, .cwd = "/work"});
//   int status = proc->wait();
//   session->destroy();
#pragma once

#include "ccsandbox/export.hpp"
#include "ccsandbox/launch_request.hpp"
#include "ccsandbox/probe_result.hpp"
#include "ccsandbox/sandbox_event.hpp"
#include "ccsandbox/sandbox_handle.hpp"
#include "ccsandbox/sandbox_spec.hpp"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ccsandbox {

// `--sandbox` / CC_SERVER_SANDBOX. An opt-out, not an opt-in: `on` means "wrap
// where the host offers a backend", never "require one".
enum class SandboxSwitch { on, off };

inline constexpr EnumNames<SandboxSwitch, 2> kSandboxSwitchNames{{
    {SandboxSwitch::on, "on"},
    {SandboxSwitch::off, "off"},
}};

// What a caller asks for; `automatic` follows the routing rules.
enum class RequestedBackend { automatic, native, none, microvm };

inline constexpr EnumNames<RequestedBackend, 4> kRequestedBackendNames{{
    {RequestedBackend::automatic, "auto"},
    {RequestedBackend::native, "native"},
    {RequestedBackend::none, "none"},
    {RequestedBackend::microvm, "microvm"},
}};

// Bad input from the caller (an option value, a spec): the message says what to change.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A launch the core will not perform (no such backend here, a policy the backend
// cannot fully enforce). Never silently replaced by a weaker launch.
class LaunchRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A backend failed while doing what it was asked.
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses "on"/"off"; anything else is a UsageError naming the accepted values.
CCSANDBOX_API SandboxSwitch parseSandboxSwitch(std::string_view text, std::string_view origin);
CCSANDBOX_API RequestedBackend parseRequestedBackend(std::string_view text);

struct RuntimeOptions {
  // nullopt: CC_SERVER_SANDBOX if set, else on.
  std::optional<SandboxSwitch> sandbox;
  // Plugin directories searched before the install directory. nullopt: CCSANDBOX_PLUGIN_PATH.
  std::optional<std::vector<std::string>> pluginPath;
  // Also search <dir of libccsandbox>/ccsandbox/plugins.
  bool searchInstallDir = true;
  // The terminal's default backend when the client names none (the seed: none).
  SandboxBackend terminalDefaultBackend = SandboxBackend::none;
  // Per-plugin settings handed to the plugin at init, keyed by plugin name.
  boost::json::object pluginSettings;
  // Host environment that launches start from. nullopt: this process's environment.
  std::optional<std::map<std::string, std::string>> hostEnv;
  // Between SIGTERM and SIGKILL when a timeout or kill() ends a command.
  std::chrono::milliseconds killGrace{2000};
  // Keep available probe results in this directory and reuse them in later processes of the
  // same boot and user while the plugin file and the plugin's fingerprint of the host facts are
  // unchanged (plugins of ABI 1.1; defaultProbeCacheDir()). nullopt: probe every plugin afresh
  // and keep nothing, the right choice for a host that lives long and probes once.
  std::optional<std::string> probeCacheDir{};
  // Probe afresh even when a kept result matches, and keep the new one (`ccsandbox probe`).
  bool refreshProbeCache = false;
  // Load and probe a plugin only when something reads its probe (a route, the
  // start-up line, plugins()); with a usable probeCacheDir, a plugin file loaded
  // by an earlier process is not even loaded until then (its name, backend and
  // ABI are kept there, under the file's identity). For a process that launches
  // once (the CLI: `run` loads no none plugin while a native one serves). false:
  // every plugin is loaded and probed at start-up, as a long-lived host wants.
  // A kept plugin that no longer loads when needed shows as unavailable, its
  // probe's hint saying why, instead of being left out of plugins().
  bool loadPluginsAsNeeded = false;
  // Threads of the proxies' network loop, which every restricted session of
  // this runtime shares (at least 1). Two let a host's sessions use two cores;
  // the CLI, which runs one session, takes one (a thread fewer to start).
  unsigned egressThreads = 2;
};

// <XDG_RUNTIME_DIR>/ccsandbox, else <TMPDIR or /tmp>/ccsandbox-<uid>.
CCSANDBOX_API std::string defaultProbeCacheDir();

struct PluginInfo {
  std::string name;
  SandboxBackend backend = SandboxBackend::none;
  std::string file;
  unsigned abiMajor = 0;
  unsigned abiMinor = 0;
  ProbeResult probe;
};

using EventCallback = std::function<void(const SandboxEvent &)>;

// Every member has a default, so designated initializers may name only what they set.
struct ExecOptions {
  std::vector<std::string> argv{};
  // Added to (and overriding) the session's base environment; still sanitised.
  std::map<std::string, std::string> env{};
  std::string cwd{};  // empty: the spec's guestWorkdir, else "/"
  int stdinFd = -1;   // -1: /dev/null. The caller keeps ownership.
  std::optional<std::chrono::milliseconds> timeout{};
};

// One command. Its events go to the session's callback, all from one thread,
// in order; `exit` is the last and comes after every byte of output.
class CCSANDBOX_API Process {
 public:
  virtual ~Process() = default;
  virtual const std::string &execId() const = 0;
  // Delivers `signal` to the command's whole process group.
  virtual void signal(int signal) = 0;
  // Ends the command: `killed` (manual), SIGTERM, then SIGKILL after the grace period.
  virtual void kill() = 0;
  // Blocks until `exit` was delivered; returns the exit code (128+n for signal n).
  virtual int wait() = 0;
  virtual std::optional<int> exitCode() const = 0;
};

class CCSANDBOX_API Session {
 public:
  virtual ~Session() = default;
  virtual SandboxHandle handle() const = 0;
  virtual std::shared_ptr<Process> exec(ExecOptions options) = 0;
  // Ends every process of the session; idempotent. Pending commands get their `exit`.
  // The session's directories (its runtime directory, the sandbox's /tmp) are
  // removed right after, on a thread of the Runtime, whose destruction waits for it.
  virtual void destroy() = 0;
  // The egress allowlist of a restricted session (baseline + GitHub + the spec's
  // entries, as compiled). Replacing it takes effect for the next connection;
  // open tunnels are not cut. Throws UsageError naming a bad entry, or when the
  // session has no proxies (backend `none`, or an open network).
  virtual std::vector<std::string> egressAllowlist() const = 0;
  virtual void setEgressAllowlist(const std::vector<std::string> &allowlist) = 0;
};

// Inputs of the policy compiler that are not SandboxSpec fields.
struct PolicyOptions {
  // Filename globs added to the standard rules (.env, .env.*, *.key, *.pem).
  std::vector<std::string> extraWriteDenyGlobs;
  // false drops the standard filename rules: a weaker, explicit opt-out
  // (bubblewrap alone cannot enforce them; see docs/policy.md).
  bool standardFilenameRules = true;
};

struct LaunchOptions {
  SandboxSpec spec;
  LaunchKind kind = LaunchKind::agentBash;
  RequestedBackend backend = RequestedBackend::automatic;
  // Pick one plugin by name instead of by backend value (still routed and checked).
  std::optional<std::string> plugin;
  EventCallback onEvent;
  PolicyOptions policy;
};

// Which plugin a launch goes to, and why.
struct Route {
  std::string plugin;
  SandboxBackend backend = SandboxBackend::none;
  std::optional<std::string> logLine;  // said once when the route is a fallback
};

class CCSANDBOX_API Runtime {
 public:
  explicit Runtime(RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  // Every plugin found, in discovery order, with its probe. With
  // RuntimeOptions::loadPluginsAsNeeded this first loads and probes those no
  // route has reached yet (route() too loads what it reads); safe to call from
  // several threads, and the entries do not change afterwards.
  const std::vector<PluginInfo> &plugins() const;
  SandboxSwitch sandboxSwitch() const;
  // The one line logged at start-up: agent sandbox ON …, no OS-native …, or DISABLED.
  const std::string &startupLine() const;
  // The routing decision for a launch, without launching. Throws LaunchRefused.
  Route route(LaunchKind kind, RequestedBackend requested,
              const std::optional<std::string> &plugin = std::nullopt) const;
  // The environment a launch of this kind on this backend starts from.
  std::map<std::string, std::string> baseEnvironment(LaunchKind kind, SandboxBackend backend) const;
  // ccsandbox's own files that a later ccsandbox loads or trusts (the core's
  // program or library, the plugin directories, the egress lists, libexec,
  // the kept probes): a launch write-denies those under its write roots.
  const std::vector<std::string> &trustedFiles() const;

  std::shared_ptr<Session> launch(LaunchOptions options);

 private:
  std::shared_ptr<Session> launchSession(LaunchOptions options);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccsandbox
