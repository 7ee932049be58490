// The files through which a git repository makes git run programs later,
// outside any sandbox: its hooks directory and its config (core.hooksPath,
// core.fsmonitor, credential helpers, pagers, aliases). The policy compiler
// write-denies them for every repository under a write root.
#pragma once

#include "path_forms.hpp"

#include <string>
#include <vector>

namespace ccsandbox {

struct GitControlPaths {
  std::vector<std::string> paths;  // hooks and config of every repository found
  bool truncated = false;          // stopped at maxDirectories; `searched` says how far
  std::size_t searched = 0;        // directories looked at
};

struct GitSearchBounds {
  int maxDepth = 8;  // directories below the root
  std::size_t maxDirectories = 10000;
};

// Finds the repositories at or below `root` (a resolved path, read through
// `resolver`'s root): a `.git` directory gives .git/hooks and .git/config; a
// `.git` file (a linked worktree or submodule) gives the config and hooks of the
// git directory it names and of that directory's common dir. Symlinks are not
// followed and `.git` and node_modules directories are not searched.
GitControlPaths findGitControlPaths(const PathResolver &resolver, const std::string &root,
                                    const GitSearchBounds &bounds = {});

}  // namespace ccsandbox
