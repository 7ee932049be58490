#include "ccsandbox/logging.hpp"
#include "ccsandbox/runtime.hpp"
#include "commands.hpp"

#include <cstdlib>
#include <string>

namespace ccsandbox::cli {

void configureLogging(bool verbose) {
  using logging::Level;
  Level level = verbose ? Level::info : Level::warning;
  if (const char *env = std::getenv("CCSANDBOX_LOG"); env && *env && !verbose) {
    std::string v(env);
    if (v == "debug")
      level = Level::debug;
    else if (v == "info")
      level = Level::info;
    else if (v == "warning")
      level = Level::warning;
    else if (v == "error")
      level = Level::error;
    else
      throw UsageError("CCSANDBOX_LOG: invalid value \"" + v +
                       "\" (accepted: debug, info, warning, error)");
  }
  logging::enableConsole(level);
  // The console is the CLI's only sink: records below it are not even built.
  logging::setThreshold(level);
}

}  // namespace ccsandbox::cli
