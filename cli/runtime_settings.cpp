#include "runtime_settings.hpp"

#include <cstdlib>
#include <string>

namespace ccsandbox::cli {

RuntimeOptions cliRuntimeOptions(ProbeFreshness freshness) {
  RuntimeOptions options;
  const char *env = std::getenv("CCSANDBOX_PROBE_CACHE");
  std::string setting = env ? env : "";
  if (setting.empty() || setting == "on")
    options.probeCacheDir = defaultProbeCacheDir();
  else if (setting[0] == '/')
    options.probeCacheDir = setting;
  else if (setting != "off")
    throw UsageError("CCSANDBOX_PROBE_CACHE: invalid value \"" + setting +
                     "\" (accepted: on, off, or an absolute directory)");
  options.refreshProbeCache = freshness == ProbeFreshness::fresh;
  options.egressThreads = 1;  // one session per process
  // One launch per process: a plugin its route does not reach is not loaded.
  options.loadPluginsAsNeeded = true;
  return options;
}

}  // namespace ccsandbox::cli
