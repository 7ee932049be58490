// Where the rest of an installation is, found from the object the core is
// compiled into: libccsandbox in <prefix>/<libdir>, or a program that links
// the core's objects (the CLI) in <prefix>/<bindir>. The build tree mirrors
// the install tree, so both find the plugins, the data and our private
// programs the same way.
#pragma once

#include <string>

namespace ccsandbox {

// <prefix>/<subdir>, absolute and lexically normal (a process may chdir, and
// some of these paths are handed to commands). `subdir` is relative to the
// prefix, as CMake's install directories are (lib/ccsandbox/plugins).
std::string installedPath(const std::string &subdir);

// The file the core runs from: libccsandbox, or the program linking it.
std::string coreObjectPath();

}  // namespace ccsandbox
