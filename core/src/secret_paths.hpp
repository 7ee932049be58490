// The secret set and the protected set: the one table of host paths the
// policy compiler denies. `~` stands for the host home; entries with `*` or
// `?` are globs. Kept in one place so every backend hides the same things.
#pragma once

#include <string>
#include <vector>

namespace ccsandbox {

// Read-denied in every agent policy (and, so a read-denied directory never
// becomes writable, write-denied too): credentials and keys.
const std::vector<std::string> &secretPaths();

// The five the seed names: the only reads the fixed terminal profile denies.
const std::vector<std::string> &terminalSecretPaths();

// Write-denied in every mode, even beneath a write root: files that make a
// later, unsandboxed program run something (shell start-up files, git's
// global config, login agents) and the agent's own configuration.
const std::vector<std::string> &protectedHomePaths();

// The agent's own configuration, relative to a config directory (`~/.claude`,
// or a runner state dir such as a managed CLAUDE_CONFIG_DIR).
const std::vector<std::string> &agentConfigEntries();

// The standard dispatch policy's filename rules: names no command may create
// or write, wherever they are.
const std::vector<std::string> &standardFilenameRules();

}  // namespace ccsandbox
