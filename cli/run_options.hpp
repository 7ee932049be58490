// The launch options `ccsandbox run` and `ccsandbox policy` share, parsed once
// and turned into the same LaunchOptions, so `policy` shows exactly what `run`
// compiles.
#pragma once

#include "arguments.hpp"
#include "ccsandbox/runtime.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ccsandbox::cli {

struct RunOptions {
  RequestedBackend backend = RequestedBackend::automatic;
  std::optional<SandboxSwitch> sandbox;
  std::optional<SandboxMode> mode;
  std::optional<std::string> specFile;
  std::optional<std::string> workdir;
  std::optional<std::string> plugin;
  LaunchKind kind = LaunchKind::agentBash;
  std::vector<SandboxBindMount> binds;
  std::vector<std::string> protect;
  std::vector<std::string> denyWriteGlobs;
  std::vector<std::string> allowDomains;
  std::vector<std::string> execGrants;
  bool noNetwork = false;
  bool noFilenameRules = false;
};

// The help text of the shared options.
extern const char *const kLaunchOptionsHelp;

// Consumes the launch option at the cursor; false when the next argument is not one.
bool parseLaunchOption(Arguments &args, RunOptions &options);

// The working directory, made canonical: --workdir, else the current directory.
std::string resolveWorkdir(const std::optional<std::string> &workdir);

// The spec (--spec FILE, else the default agent-bash spec: the working
// directory as the one writable bind, chat, network on) with the options added,
// plus kind, backend, plugin and the compiler options.
LaunchOptions buildLaunchOptions(const RunOptions &options, const std::string &workdir);

}  // namespace ccsandbox::cli
