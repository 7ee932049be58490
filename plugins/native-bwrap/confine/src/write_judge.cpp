#include "ccsandbox/confine/write_judge.hpp"

#include <linux/limits.h>
#include <stdlib.h>

#include <algorithm>

namespace ccsandbox::confine {
namespace {

// Device files a shell writes to (no name is ever created there).
constexpr std::string_view kDeviceFiles[] = {"/dev/null",   "/dev/zero",    "/dev/full", "/dev/tty",
                                             "/dev/random", "/dev/urandom", "/dev/ptmx"};
constexpr std::string_view kDeviceDirs[] = {"/dev/pts"};

std::string trimmed(std::string p) {
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  return p;
}

std::vector<std::string> withResolvedForms(const std::vector<std::string> &paths) {
  std::vector<std::string> out;
  for (const auto &p : paths) {
    out.push_back(trimmed(p));
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf)) out.emplace_back(buf);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool pathBeneathOrEqual(std::string_view path, std::string_view root) {
  while (root.size() > 1 && root.back() == '/') root.remove_suffix(1);
  if (root == "/") return !path.empty() && path[0] == '/';
  if (path.substr(0, root.size()) != root) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

WriteJudge::WriteJudge(const ConfineRules &rules)
    : globs_(rules.writeDenyGlobs),
      writeRoots_(withResolvedForms(rules.writeRoots)),
      writeDeny_(withResolvedForms(rules.writeDeny)) {}

Verdict WriteJudge::judge(std::string_view absolute, NameChange change) const {
  if (absolute.empty() || absolute[0] != '/') return {};
  std::string_view path = absolute;
  // A magic link to an unlinked file reads "/dir/name (deleted)".
  if (constexpr std::string_view del = " (deleted)";
      path.size() > del.size() && path.ends_with(del))
    path.remove_suffix(del.size());

  if (const std::string *g = globs_.match(path)) return {false, "writeDenyGlobs " + *g};
  for (const auto &d : writeDeny_) {
    if (pathBeneathOrEqual(path, d)) return {false, "writeDeny " + d};
    // Removing or renaming an ancestor would move the protected path aside;
    // a symlink, or a directory renamed in, standing where a missing ancestor
    // belongs would give the protected path content of the command's choosing
    // (`ln -s ~/evil ~/.config` while ~/.config/git/config is denied). Only a
    // new, empty directory may appear there: what is then made beneath it is
    // judged by its own name.
    if (change != NameChange::write && change != NameChange::createDirectory &&
        pathBeneathOrEqual(d, path))
      return {false, "writeDeny " + d + " (ancestor)"};
  }
  for (const auto &r : writeRoots_) {
    if (!pathBeneathOrEqual(path, r)) continue;
    // A root itself may be written, never created or removed.
    if (path.size() > r.size() || change == NameChange::write || r == "/") return {};
  }
  if (change == NameChange::write) {
    for (auto dev : kDeviceFiles)
      if (path == dev) return {};
    for (auto dir : kDeviceDirs)
      if (pathBeneathOrEqual(path, dir) && path != dir) return {};
  }
  return {false, "outside the write roots"};
}

}  // namespace ccsandbox::confine
