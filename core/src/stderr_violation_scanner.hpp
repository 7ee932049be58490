// Violations read from a command's stderr (the seed's Linux behaviour, for
// backends that cannot observe denials themselves): a line carrying EPERM,
// "Operation not permitted", "Permission denied" or "Read-only file system"
// becomes a `violation` event. The stream itself is never altered; this only
// watches it. A backend whose probe reports `supervisedViolations` reports
// exact denials instead and is not scanned.
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

// Splits a byte stream into lines across reads.
class StderrViolationScanner {
 public:
  // Longer lines are judged on their first kMaxLine bytes (a binary blob on
  // stderr must not grow the buffer without bound).
  static constexpr std::size_t kMaxLine = 4096;

  std::vector<SandboxViolation> feed(std::string_view data);
  // The stream ended: judges an unterminated last line.
  std::vector<SandboxViolation> finish();

 private:
  std::string partial_;
  bool overlong_ = false;  // partial_ was cut; skip to the next newline
};

}  // namespace ccsandbox
