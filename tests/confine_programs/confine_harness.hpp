// The confine suites' stand-in for the bwrap helper: forks a command,
// confines it with the library and supervises it from the test process.
#pragma once

#include "ccsandbox/confine/confine_rules.hpp"
#include "ccsandbox/confine/supervisor.hpp"

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

namespace ccsandbox::test {

struct ConfinedOptions {
  std::string cwd;
  mode_t umask = 022;
  std::map<std::string, std::string> env;  // added to a small fixed environment
  // When the command prints this line, the supervisor is stopped and its
  // listener closed (a dead helper); then a line is written to the command's
  // stdin so that it can go on.
  std::string supervisorDiesAfter;
  uid_t dropToUid = 0;  // nonzero: the command runs as this uid/gid (root tests only)
};

struct ConfinedResult {
  int status = -1;  // exit code, or 128+signal
  std::string out;
  std::string err;
  std::vector<confine::Violation> violations;
  confine::SupervisorStats stats;
  // Supervisor::run() returned by itself once the command was reaped (the
  // listener hung up), without stop().
  bool supervisorEndedOnHangUp = false;
};

ConfinedResult runConfined(const confine::ConfineRules &rules, const std::vector<std::string> &argv,
                           const ConfinedOptions &options = {});

// A shell command line under confinement: /bin/sh -c <script>.
ConfinedResult shConfined(const confine::ConfineRules &rules, const std::string &script,
                          const ConfinedOptions &options = {});

// The rules the suites use: one write root, the standard deny globs.
confine::ConfineRules standardRules(const std::string &writeRoot);

// Options that only set the working directory (designated initializers
// would trip -Wmissing-field-initializers).
ConfinedOptions inDir(const std::string &cwd);

bool exists(const std::string &path);
mode_t modeOf(const std::string &path);
bool unprivilegedRun();                         // the suite was started by run_unprivileged.sh
std::string describe(const ConfinedResult &r);  // for failure messages

}  // namespace ccsandbox::test
