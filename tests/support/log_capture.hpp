// Collects the core's log records while it lives, for assertions on log lines.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace ccsandbox::test {

class LogCapture {
 public:
  LogCapture();
  ~LogCapture();
  LogCapture(const LogCapture &) = delete;
  LogCapture &operator=(const LogCapture &) = delete;

  std::vector<std::string> lines() const;
  // How many captured lines contain every one of `parts`.
  std::size_t count(const std::vector<std::string> &parts) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ccsandbox::test
