#include "install_layout.hpp"

#include <boost/dll/runtime_symbol_info.hpp>

#include <filesystem>
#include <vector>

namespace ccsandbox {

namespace fs = std::filesystem;

namespace {

// `dir` without its trailing `tail` components, when it ends with them.
bool strip(fs::path &dir, const fs::path &tail) {
  std::vector<fs::path> parts(tail.begin(), tail.end());
  fs::path d = dir;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (d.filename() != *it) return false;
    d = d.parent_path();
  }
  dir = d;
  return true;
}

fs::path installPrefix() {
  fs::path dir = fs::absolute(boost::dll::this_line_location()).lexically_normal().parent_path();
  // A multiarch libdir (lib/x86_64-linux-gnu) is two levels deep.
  for (const char *sub : {CCSANDBOX_LIBDIR, CCSANDBOX_BINDIR})
    if (strip(dir, sub)) return dir;
  return dir.parent_path();  // an unusual layout: <prefix>/<one directory>
}

}  // namespace

std::string coreObjectPath() {
  return fs::absolute(boost::dll::this_line_location()).lexically_normal().string();
}

std::string installedPath(const std::string &subdir) {
  static const fs::path prefix = installPrefix();
  return (prefix / subdir).lexically_normal().string();
}

}  // namespace ccsandbox
