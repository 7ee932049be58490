// The files a later ccsandbox, outside any sandbox, loads or trusts: the
// program and library the core runs in, the plugin directories, the egress
// lists, our private programs, the kept probe results. A launch write-denies
// those that lie under one of its write roots (a build of ccsandbox inside the
// working copy): a plugin planted there would run unsandboxed next time, and
// an edited probe result or allowlist would quietly weaken later sessions.
#pragma once

#include "ccsandbox/runtime.hpp"

#include <string>
#include <vector>

namespace ccsandbox {

// The directories discovery searches for these options, in order.
std::vector<std::string> pluginSearchDirs(const RuntimeOptions &options);

std::vector<std::string> trustedFiles(const RuntimeOptions &options);

// The directory of the core's object when that is a shared library rather than
// the running program: whoever loaded it found it there through a search path
// (ours is $ORIGIN/../lib, which also serves the library's own dependencies),
// so a library planted in it would be loaded by the next program that loads
// the core. Empty for a core linked into the program.
std::string sharedCoreDirectory(const std::string &coreObject, const std::string &program);

}  // namespace ccsandbox
