#include "git_control_paths.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <deque>
#include <fstream>
#include <memory>

namespace ccsandbox {

namespace {

struct DirCloser {
  void operator()(DIR *d) const { ::closedir(d); }
};

std::string firstLine(const std::string &file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

std::string parentOf(const std::string &path) {
  auto slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

// `relative` read from a file in `dir`: absolute as is, else against `dir`.
std::string against(const std::string &dir, const std::string &relative) {
  if (!relative.empty() && relative[0] == '/') return lexicallyNormal(relative);
  return lexicallyNormal(dir + "/" + relative);
}

void addGitDir(const PathResolver &resolver, const std::string &gitDir,
               std::vector<std::string> &out) {
  out.push_back(gitDir + "/config");
  out.push_back(gitDir + "/hooks");
  // A linked worktree's git dir names the repository's common dir, where the
  // shared config and hooks live; its own config.worktree is read as well.
  std::string common = firstLine(resolver.onHost(gitDir + "/commondir"));
  if (!common.empty()) {
    std::string c = against(gitDir, common);
    out.push_back(c + "/config");
    out.push_back(c + "/hooks");
    out.push_back(gitDir + "/config.worktree");
  }
}

}  // namespace

GitControlPaths findGitControlPaths(const PathResolver &resolver, const std::string &root,
                                    const GitSearchBounds &bounds) {
  GitControlPaths result;
  std::deque<std::pair<std::string, int>> queue{{lexicallyNormal(root), 0}};
  while (!queue.empty()) {
    auto [dir, depth] = queue.front();
    queue.pop_front();
    if (result.searched >= bounds.maxDirectories) {
      result.truncated = true;
      break;
    }
    ++result.searched;
    std::unique_ptr<DIR, DirCloser> d(::opendir(resolver.onHost(dir).c_str()));
    if (!d) continue;  // unreadable: nothing inside can be written through us either
    while (dirent *e = ::readdir(d.get())) {
      std::string name = e->d_name;
      if (name == "." || name == "..") continue;
      std::string path = (dir == "/" ? "" : dir) + "/" + name;
      // d_type saves a stat per entry; only file systems that do not fill it pay one.
      unsigned char type = e->d_type;
      if (type == DT_UNKNOWN) {
        struct stat st {};
        if (::lstat(resolver.onHost(path).c_str(), &st) != 0) continue;
        type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG : DT_LNK;
      }
      if (name == ".git") {
        if (type == DT_DIR) {
          addGitDir(resolver, path, result.paths);
        } else if (type == DT_REG) {
          std::string line = firstLine(resolver.onHost(path));
          if (line.rfind("gitdir:", 0) == 0) {
            std::string target = line.substr(7);
            while (!target.empty() && target.front() == ' ') target.erase(0, 1);
            if (!target.empty()) addGitDir(resolver, against(parentOf(path), target), result.paths);
          }
        }
        continue;
      }
      if (type != DT_DIR || name == "node_modules") continue;
      if (depth + 1 > bounds.maxDepth) continue;  // a documented bound, not an error
      queue.emplace_back(path, depth + 1);
    }
  }
  return result;
}

}  // namespace ccsandbox
