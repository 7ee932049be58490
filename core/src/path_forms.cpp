#include "path_forms.hpp"

#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <deque>

namespace ccsandbox {

namespace {

// Linux's own bound on symlinks followed in one lookup.
constexpr int kMaxSymlinkHops = 40;

std::vector<std::string> components(const std::string &path) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < path.size()) {
    auto end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string join(const std::vector<std::string> &parts) {
  if (parts.empty()) return "/";
  std::string out;
  for (const auto &p : parts) out += "/" + p;
  return out;
}

}  // namespace

bool isGlob(const std::string &path) {
  return path.find_first_of("*?") != std::string::npos;
}

std::string expandHome(const std::string &path, const std::string &home) {
  if (path == "~") return home;
  if (path.rfind("~/", 0) == 0) return (home == "/" ? "" : home) + path.substr(1);
  return path;
}

std::string lexicallyNormal(const std::string &path) {
  std::vector<std::string> parts;
  for (auto &c : components(path))
    if (c != ".") parts.push_back(std::move(c));
  return join(parts);
}

bool isWithin(const std::string &path, const std::string &dir) {
  if (isGlob(dir)) {
    for (std::string p = path;; p = p.substr(0, p.rfind('/'))) {
      if (p.empty()) return false;
      if (::fnmatch(dir.c_str(), p.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0) return true;
    }
  }
  if (dir == "/") return true;
  if (path.size() < dir.size() || path.compare(0, dir.size(), dir) != 0) return false;
  return path.size() == dir.size() || path[dir.size()] == '/';
}

std::vector<std::string> ancestorsOf(const std::string &path) {
  std::vector<std::string> out;
  std::string p = path;
  for (;;) {
    auto slash = p.rfind('/');
    if (slash == 0 || slash == std::string::npos) break;
    p.resize(slash);
    out.push_back(p);
  }
  return out;
}

const PathResolver::Component &PathResolver::lookup(const std::string &hostPath) const {
  if (auto it = seen_.find(hostPath); it != seen_.end()) return it->second;
  Component c;
  struct stat st {};
  if (::lstat(hostPath.c_str(), &st) != 0) {
    c.error = errno;
  } else if (S_ISLNK(st.st_mode)) {
    c.link = true;
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    ssize_t n = ::readlink(hostPath.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<std::size_t>(n) >= target.size()) {
      c.error = n < 0 ? errno : ENAMETOOLONG;
    } else {
      target.resize(static_cast<std::size_t>(n));
      c.target = std::move(target);
    }
  }
  return seen_.emplace(hostPath, std::move(c)).first->second;
}

std::optional<std::string> PathResolver::resolve(const std::string &path) const {
  std::vector<std::string> done;  // resolved components so far, from the root
  auto todo = components(path);
  std::deque<std::string> queue(todo.begin(), todo.end());
  int hops = 0;
  bool missing = false;  // once a component is missing, the rest is appended as written
  while (!queue.empty()) {
    std::string c = std::move(queue.front());
    queue.pop_front();
    if (c == ".") continue;
    if (c == "..") {
      if (!done.empty()) done.pop_back();
      continue;
    }
    done.push_back(c);
    if (missing) continue;
    const Component &here = lookup(root_ + join(done));
    if (here.error != 0 && !here.link) {
      if (here.error == ENOENT || here.error == ENOTDIR) {
        missing = true;
        continue;
      }
      return std::nullopt;
    }
    if (!here.link) continue;
    if (here.error != 0 || ++hops > kMaxSymlinkHops) return std::nullopt;
    const std::string target = here.target;  // `done` changes below
    done.pop_back();
    if (!target.empty() && target[0] == '/') done.clear();
    auto next = components(target);
    queue.insert(queue.begin(), next.begin(), next.end());
  }
  return join(done);
}

std::vector<std::string> PathResolver::forms(const std::string &path) const {
  std::string literal = lexicallyNormal(path);
  std::vector<std::string> out{literal};
  std::optional<std::string> resolved;
  if (isGlob(literal)) {
    // Resolve the directories before the first glob component only.
    auto parts = components(literal);
    std::size_t firstGlob = 0;
    while (firstGlob < parts.size() && !isGlob(parts[firstGlob])) ++firstGlob;
    std::vector<std::string> head(parts.begin(), parts.begin() + static_cast<long>(firstGlob));
    if (auto dir = resolve(join(head))) {
      std::string r = *dir == "/" ? "" : *dir;
      for (std::size_t i = firstGlob; i < parts.size(); ++i) r += "/" + parts[i];
      resolved = r;
    }
  } else {
    resolved = resolve(literal);
  }
  if (resolved && *resolved != literal) out.push_back(*resolved);
  return out;
}

}  // namespace ccsandbox
