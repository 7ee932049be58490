// Violations read from a command's stderr (the seed's Linux behaviour, for
// backends that cannot observe denials themselves): a line carrying EPERM,
// "Operation not permitted", "Permission denied" or "Read-only file system"
// becomes a `violation` event. The stream itself is never altered; this only
// watches it. A backend whose probe reports `supervisedViolations` reports
// exact denials itself; for it only what it does not supervise is read here:
// "Read-only file system", which comes from the mounts (attribute changes on
// read-only binds), never from the supervisor.
#pragma once

#include "ccsandbox/sandbox_event.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox {

// The violation one stderr line describes, if any: `action` from the wording
// (file-write*, file-read*, network-outbound, or operation-denied), `target`
// the first quoted or absolute path in the line, `raw` the line.
std::optional<SandboxViolation> violationFromStderrLine(std::string_view line);

enum class StderrScan { all, readOnlyFileSystemOnly };

// Splits a byte stream into lines across reads.
class StderrViolationScanner {
 public:
  explicit StderrViolationScanner(StderrScan scope = StderrScan::all) : scope_(scope) {}

  // Longer lines are judged on their first kMaxLine bytes (a binary blob on
  // stderr must not grow the buffer without bound).
  static constexpr std::size_t kMaxLine = 4096;

  std::vector<SandboxViolation> feed(std::string_view data);
  // The stream ended: judges an unterminated last line.
  std::vector<SandboxViolation> finish();

 private:
  std::optional<SandboxViolation> judge(std::string_view line) const;

  StderrScan scope_;
  std::string partial_;
  bool overlong_ = false;  // partial_ was cut; skip to the next newline
};

}  // namespace ccsandbox
