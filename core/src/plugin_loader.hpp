// Plugin discovery (Boost.DLL) and the host's side of one loaded plugin.
#pragma once

#include "ccsandbox/backend_abi.h"
#include "ccsandbox/runtime.hpp"
#include "plugin_descriptions.hpp"

#include <boost/dll/shared_library.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox {

// Where plugin events go (the runtime); called from plugin threads.
class PluginEventSink {
 public:
  virtual ~PluginEventSink() = default;
  virtual void onPluginEvent(const std::string &plugin, std::string_view eventJson) = 0;
};

// One plugin, loaded and initialised. Every call crosses the ABI as JSON; an
// error reply becomes a BackendError naming the plugin.
class LoadedPlugin {
 public:
  LoadedPlugin(boost::dll::shared_library library, const ccsandbox_backend_t *table,
               PluginInfo info, PluginEventSink &sink);
  ~LoadedPlugin();
  LoadedPlugin(const LoadedPlugin &) = delete;
  LoadedPlugin &operator=(const LoadedPlugin &) = delete;

  // Runs the plugin's init; throws BackendError.
  void init(const boost::json::object &settings);
  const PluginInfo &info() const { return info_; }
  void setProbe(ProbeResult probe) { info_.probe = std::move(probe); }

  ProbeResult probe();
  // ABI 1.1 (nullopt / throws BackendError for a 1.0 plugin or one that keeps nothing):
  // the plugin's fingerprint of the host facts its probe depends on, and the adoption
  // of a result it returned earlier under that fingerprint.
  std::optional<std::string> probeFingerprint();
  ProbeResult restoreProbe(const ProbeResult &earlier);
  // ABI 1.2 (nothing for an older plugin): a launch is coming.
  void prepareLaunch();
  boost::json::object launch(const LaunchRequest &request);
  void exec(const ExecRequest &request);
  void signal(const SignalRequest &request);
  void destroy(const std::string &sessionId);

 private:
  using Call = int (*)(void *, const char *, char **);
  boost::json::value call(Call fn, const boost::json::value &request, std::string_view what);
  boost::json::value takeReply(int rc, char *reply, std::string_view what);

  // Called from the plugin's C code: nothing may unwind into it (a plugin may
  // even carry its own C++ runtime), so both catch everything.
  static void emitEvent(void *ctx, const char *eventJson) noexcept;
  static void log(void *ctx, int level, const char *message) noexcept;

  boost::dll::shared_library library_;  // unloaded last
  const ccsandbox_backend_t *table_;
  PluginInfo info_;
  PluginEventSink &sink_;
  ccsandbox_host_t host_{};
  void *instance_ = nullptr;
};

// A plugin discovery found: loaded, or only described — a kept description of
// the very same file (PluginDescriptions) stood in for loading it, until a
// route needs it (loadDescribed).
struct DiscoveredPlugin {
  PluginInfo info;  // without its probe
  std::unique_ptr<LoadedPlugin> loaded;
};

struct Discovery {
  std::vector<DiscoveredPlugin> plugins;  // in discovery order
  std::vector<std::string> searchedDirs;
};

// Loads every plugin found in `dirs`, in order. A file that is not a plugin,
// has another ABI major, fails to initialise or repeats a name is skipped with
// one log line naming the file and the reason; discovery always carries on.
// With `described`, a file described there is taken as described, unloaded;
// every file loaded is described there, every one refused forgotten.
Discovery discoverPlugins(const std::vector<std::string> &dirs, const boost::json::object &settings,
                          PluginEventSink &sink, PluginDescriptions *described = nullptr);

// Loads and initialises a plugin discovery only described (nothing for one
// already loaded). Throws std::runtime_error saying why it cannot be loaded,
// or that it is no longer the plugin it was described as.
void loadDescribed(DiscoveredPlugin &plugin, const boost::json::object &settings,
                   PluginEventSink &sink);

// The one warning line for a plugin file that is not loaded, and why.
void logNotLoaded(const std::string &file, const std::string &reason);

// <directory of libccsandbox>/ccsandbox/plugins
std::string installedPluginDir();

}  // namespace ccsandbox
