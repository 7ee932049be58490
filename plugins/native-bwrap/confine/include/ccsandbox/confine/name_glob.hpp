// Final-name globs (writeDenyGlobs): fnmatch(3) semantics on the last path
// component only, so `*.pem` matches `a/b/id.pem` through its name `id.pem`,
// and a leading dot must be matched literally (`*.env` does not match `.env`,
// which is why the policy lists `.env` and `.env.*` explicitly).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox::confine {

class NameGlobs {
 public:
  explicit NameGlobs(std::vector<std::string> patterns);

  // The first pattern the final component of `name` matches, or nullptr.
  const std::string *match(std::string_view name) const;

  const std::vector<std::string> &patterns() const { return patterns_; }

 private:
  std::vector<std::string> patterns_;
};

// The last component of a path ("/a/b/" -> "b", "x" -> "x", "/" -> "").
std::string_view finalComponent(std::string_view path);

}  // namespace ccsandbox::confine
