// What loading a plugin file taught — its name, backend value and ABI — kept
// beside the probe results (`plugins.json` in the probe cache's directory)
// under the file's identity. A process that routes one launch (the CLI) then
// reads the list instead of loading every plugin to learn it, and loads only
// the plugins its route reaches: the none plugin stays on disk while the native
// one serves (about 0.3 ms of every `ccsandbox run`).
#pragma once

#include "ccsandbox/runtime.hpp"
#include "probe_cache.hpp"

#include <map>
#include <optional>
#include <string>

namespace ccsandbox {

struct PluginDescription {
  std::string name;
  SandboxBackend backend = SandboxBackend::none;
  unsigned abiMajor = 0;
  unsigned abiMinor = 0;
};

class PluginDescriptions {
 public:
  // Reads the kept list once; an unusable cache keeps nothing.
  explicit PluginDescriptions(const ProbeCache &cache);

  // The description of `file`, only while it is the very file that was loaded
  // (same identity: device, inode, size, times) and of this core's ABI major.
  std::optional<PluginDescription> find(const std::string &file) const;
  // After a load that succeeded, or one that did not (forget).
  void remember(const PluginInfo &loaded);
  void forget(const std::string &file);
  // Writes the list when it changed.
  void save();

 private:
  struct Entry {
    std::string fileId;
    PluginDescription description;
  };
  const ProbeCache &cache_;
  std::map<std::string, Entry> entries_;  // by file path, as discovery found it
  bool changed_ = false;
};

}  // namespace ccsandbox
