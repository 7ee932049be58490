#pragma once

#include <string>
#include <vector>

namespace ccsandbox::cli {

// Each returns the process exit status; errors are thrown (exit 125 in main).
int runCommand(const std::vector<std::string> &args);
int probeCommand(const std::vector<std::string> &args);
int pluginsCommand(const std::vector<std::string> &args);
int policyCommand(const std::vector<std::string> &args);
int conformanceCommand(const std::vector<std::string> &args);

// Console logging at CCSANDBOX_LOG's level (warning by default).
void configureLogging(bool verbose = false);

}  // namespace ccsandbox::cli
