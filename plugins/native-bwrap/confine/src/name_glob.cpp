#include "ccsandbox/confine/name_glob.hpp"

#include <fnmatch.h>

namespace ccsandbox::confine {

NameGlobs::NameGlobs(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}

const std::string *NameGlobs::match(std::string_view name) const {
  const std::string last(finalComponent(name));
  if (last.empty() || last == "." || last == "..") return nullptr;
  // FNM_PERIOD: a leading dot is matched only by a literal dot, as in a shell.
  for (const auto &p : patterns_)
    if (::fnmatch(p.c_str(), last.c_str(), FNM_PERIOD) == 0) return &p;
  return nullptr;
}

std::string_view finalComponent(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  if (path == "/") return {};
  const auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace ccsandbox::confine
