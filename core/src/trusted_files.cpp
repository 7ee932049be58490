#include "trusted_files.hpp"

#include "egress_lists.hpp"
#include "install_layout.hpp"
#include "plugin_loader.hpp"

#include <cstdlib>
#include <filesystem>

namespace ccsandbox {

namespace {

std::vector<std::string> splitPath(const char *text) {
  std::vector<std::string> out;
  if (!text) return out;
  std::string s(text);
  std::size_t start = 0;
  while (start <= s.size()) {
    auto end = s.find(':', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> pluginSearchDirs(const RuntimeOptions &options) {
  std::vector<std::string> dirs =
      options.pluginPath ? *options.pluginPath : splitPath(std::getenv("CCSANDBOX_PLUGIN_PATH"));
  if (options.searchInstallDir) dirs.push_back(installedPluginDir());
  return dirs;
}

std::vector<std::string> trustedFiles(const RuntimeOptions &options) {
  std::vector<std::string> files{coreObjectPath(), installedPath(CCSANDBOX_DATA_SUBDIR),
                                 installedPath(CCSANDBOX_LIBEXEC_SUBDIR), egressListsPath()};
  std::error_code ec;
  if (auto exe = std::filesystem::read_symlink("/proc/self/exe", ec); !ec) {
    files.push_back(exe.string());
    if (auto dir = sharedCoreDirectory(coreObjectPath(), exe.string()); !dir.empty())
      files.push_back(std::move(dir));
  }
  for (const auto &dir : pluginSearchDirs(options))
    files.push_back(std::filesystem::absolute(dir, ec).lexically_normal().string());
  if (options.probeCacheDir) files.push_back(*options.probeCacheDir);
  return files;
}

std::string sharedCoreDirectory(const std::string &coreObject, const std::string &program) {
  std::error_code ec;
  // When it cannot be told (a deleted program), protect the directory.
  if (std::filesystem::equivalent(coreObject, program, ec) && !ec) return {};
  return std::filesystem::path(coreObject).parent_path().string();
}

}  // namespace ccsandbox
