// Runs a program to completion for a test: separate stdout and stderr, an
// optional environment overlay, a bound on how long it may take.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ccsandbox::test {

struct ChildResult {
  int status = -1;  // exit code, or 128+N when signal N ended it
  std::string out;
  std::string err;
  bool timedOut = false;  // the bound was hit and the child was killed
};

struct ChildOptions {
  std::map<std::string, std::string> setEnv;  // added or replaced
  std::vector<std::string> unsetEnv;
  std::string cwd;
  std::string stdinData;
  std::chrono::seconds limit{120};  // a hang fails the test instead of the whole run
};

ChildResult runChild(const std::vector<std::string> &argv, const ChildOptions &options = {});

}  // namespace ccsandbox::test
