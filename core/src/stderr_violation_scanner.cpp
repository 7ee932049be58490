#include "stderr_violation_scanner.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace ccsandbox {

namespace {

bool contains(std::string_view hay, std::string_view needle) {
  return hay.find(needle) != std::string_view::npos;
}

bool containsAny(std::string_view hay, std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](auto n) { return contains(hay, n); });
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto &c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The first quoted string ('…', "…", ‘…’, `…') or, failing that, the first
// token that starts with '/'.
std::string targetOf(std::string_view line) {
  struct Quote {
    std::string_view open, close;
  };
  static constexpr std::array<Quote, 4> kQuotes{
      {{"'", "'"}, {"\"", "\""}, {"\u2018", "\u2019"}, {"`", "'"}}};
  std::size_t bestAt = std::string_view::npos;
  std::string best;
  for (const auto &q : kQuotes) {
    auto open = line.find(q.open);
    if (open == std::string_view::npos || open >= bestAt) continue;
    auto start = open + q.open.size();
    auto close = line.find(q.close, start);
    if (close == std::string_view::npos || close == start) continue;
    bestAt = open;
    best = std::string(line.substr(start, close - start));
  }
  if (!best.empty()) return best;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '/' || (i > 0 && !std::isspace(static_cast<unsigned char>(line[i - 1])) &&
                           line[i - 1] != '=' && line[i - 1] != '('))
      continue;
    std::size_t end = i;
    while (end < line.size() && !std::isspace(static_cast<unsigned char>(line[end])) &&
           line[end] != ':' && line[end] != ',' && line[end] != ')')
      ++end;
    return std::string(line.substr(i, end - i));
  }
  return "";
}

}  // namespace

std::optional<SandboxViolation> violationFromStderrLine(std::string_view line) {
  bool readOnlyFs = contains(line, "Read-only file system");
  bool denied = readOnlyFs || contains(line, "Operation not permitted") ||
                contains(line, "Permission denied") || contains(line, "EPERM") ||
                contains(line, "EACCES") || contains(line, "EROFS");
  if (!denied) return std::nullopt;
  std::string l = lower(line);
  SandboxViolation v;
  if (readOnlyFs || contains(line, "EROFS") ||
      containsAny(
          l, {"cannot touch", "cannot create", "cannot remove", "cannot move", "cannot overwrite",
              "cannot make", "cannot write", "write", "mkdir", "rmdir", "unlink", "rename",
              "cannot link", "cannot symlink", "truncate", "cannot change", "chmod", "chown"}))
    v.action = "file-write*";
  else if (containsAny(l, {"connect", "socket", "network", "bind("}))
    v.action = "network-outbound";
  else if (containsAny(l, {"cannot open", "cannot access", "cannot read", "cannot stat", "read",
                           "open", "cat:", "ls:", "stat"}))
    v.action = "file-read*";
  else
    v.action = "operation-denied";
  v.target = targetOf(line);
  v.raw = std::string(line);
  return v;
}

std::optional<SandboxViolation> StderrViolationScanner::judge(std::string_view line) const {
  if (scope_ == StderrScan::readOnlyFileSystemOnly && !contains(line, "Read-only file system"))
    return std::nullopt;
  return violationFromStderrLine(line);
}

std::vector<SandboxViolation> StderrViolationScanner::feed(std::string_view data) {
  std::vector<SandboxViolation> out;
  while (!data.empty()) {
    auto nl = data.find('\n');
    std::string_view piece = data.substr(0, nl);
    if (!overlong_) {
      std::size_t room = kMaxLine - partial_.size();
      partial_.append(piece.substr(0, room));
      if (piece.size() > room) overlong_ = true;
    }
    if (nl == std::string_view::npos) {
      if (overlong_ && !partial_.empty()) {
        // Judge the cut line now; the rest of it is skipped.
        if (auto v = judge(partial_)) out.push_back(std::move(*v));
        partial_.clear();
      }
      break;
    }
    if (!partial_.empty() || !overlong_) {
      std::string_view line = partial_;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (auto v = judge(line)) out.push_back(std::move(*v));
    }
    partial_.clear();
    overlong_ = false;
    data.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<SandboxViolation> StderrViolationScanner::finish() {
  std::vector<SandboxViolation> out;
  if (!partial_.empty() && !overlong_)
    if (auto v = judge(partial_)) out.push_back(std::move(*v));
  partial_.clear();
  overlong_ = false;
  return out;
}

}  // namespace ccsandbox
