#include "secret_paths.hpp"

namespace ccsandbox {

const std::vector<std::string> &secretPaths() {
  static const std::vector<std::string> paths = {
      // The seed's five.
      "~/.ssh",
      "~/.aws",
      "~/.gnupg",
      "~/.config/gh",
      "~/Library/Keychains",
      // Cloud and cluster credentials.
      "~/.kube",
      "~/.config/gcloud",
      "~/.azure",
      "~/.docker/config.json",
      "~/.vault-token",
      "~/.terraform.d/credentials.tfrc.json",
      // Stored git and forge credentials.
      "~/.netrc",
      "~/.git-credentials",
      "~/.config/git/credentials",
      "~/.config/hub",
      // Package registry tokens.
      "~/.npmrc",
      "~/.pypirc",
      "~/.cargo/credentials*",
      "~/.gem/credentials",
      // Password stores and desktop keyrings.
      "~/.password-store",
      "~/.local/share/keyrings",
      // Host secrets: password hashes and the SSH host keys (not the .pub halves).
      "/etc/shadow",
      "/etc/gshadow",
      "/etc/ssh/ssh_host_*_key",
  };
  return paths;
}

const std::vector<std::string> &terminalSecretPaths() {
  static const std::vector<std::string> paths = {
      "~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gh", "~/Library/Keychains",
  };
  return paths;
}

const std::vector<std::string> &protectedHomePaths() {
  static const std::vector<std::string> paths = {
      // Shell start-up files: whatever is written here runs in the user's next shell.
      "~/.bashrc",
      "~/.bash_profile",
      "~/.bash_login",
      "~/.bash_logout",
      "~/.profile",
      "~/.zshrc",
      "~/.zshenv",
      "~/.zprofile",
      "~/.zlogin",
      "~/.zlogout",
      "~/.config/fish",
      // Git's global configuration can name programs git runs later (hooks
      // path, fsmonitor, credential helpers, pagers, aliases).
      "~/.gitconfig",
      "~/.config/git/config",
      "~/.config/git/attributes",
      // Things started at login, outside any sandbox.
      "~/Library/LaunchAgents",
      "~/.config/autostart",
      "~/.config/systemd/user",
      // MCP servers the next agent session would start.
      "~/.mcp.json",
  };
  return paths;
}

const std::vector<std::string> &agentConfigEntries() {
  static const std::vector<std::string> entries = {
      "settings.json", "settings.local.json", "commands", "agents", "hooks",
  };
  return entries;
}

const std::vector<std::string> &standardFilenameRules() {
  static const std::vector<std::string> globs = {".env", ".env.*", "*.key", "*.pem"};
  return globs;
}

}  // namespace ccsandbox
