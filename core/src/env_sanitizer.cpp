#include "env_sanitizer.hpp"

namespace ccsandbox {

namespace {

// The one table of variables an agent launch never inherits. Each one lets
// whoever sets it run code inside the next process that starts.
constexpr std::string_view kInjectionVariables[] = {
    // shells: files and commands run at start-up or at every prompt
    "BASH_ENV",
    "ENV",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    "BASHOPTS",
    "ZDOTDIR",
    "CDPATH",
    // interpreters and runtimes
    "NODE_OPTIONS",
    "NODE_PATH",
    "PYTHONSTARTUP",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONINSPECT",
    "PERL5OPT",
    "PERL5LIB",
    "PERLLIB",
    "PERL5DB",
    "RUBYOPT",
    "RUBYLIB",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "LUA_INIT",
    // glibc: loaded modules and tunables
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "LOCPATH",
    "NLSPATH",
    "HOSTALIASES",
    "MALLOC_CHECK_",
    // git: commands it runs for us, and configuration injected from the environment
    "GIT_SSH_COMMAND",
    "GIT_SSH",
    "GIT_EXEC_PATH",
    "GIT_CONFIG_PARAMETERS",
    "GIT_ASKPASS",
    "GIT_PROXY_COMMAND",
    // a channel to the user's keys: pushes go through cc_server's gateway, not the agent
    "SSH_AUTH_SOCK",
};

// Whole families: the dynamic linkers (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH,
// DYLD_INSERT_LIBRARIES, …), bash's exported functions, git's numbered config.
constexpr std::string_view kInjectionPrefixes[] = {"LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG_"};

}  // namespace

bool isInjectionVariable(std::string_view name) {
  for (auto v : kInjectionVariables)
    if (name == v) return true;
  for (auto p : kInjectionPrefixes)
    if (name.substr(0, p.size()) == p) return true;
  return false;
}

bool sanitisesEnvironment(LaunchKind kind, SandboxBackend backend) {
  switch (kind) {
    case LaunchKind::agentBash:
    case LaunchKind::acp: return true;
    case LaunchKind::claudeCode:
    case LaunchKind::terminal: return backend != SandboxBackend::none;
  }
  return true;
}

std::map<std::string, std::string> sanitiseEnvironment(std::map<std::string, std::string> env) {
  std::erase_if(env, [](const auto &kv) { return isInjectionVariable(kv.first); });
  return env;
}

}  // namespace ccsandbox
