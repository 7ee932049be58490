// The forms a policy path is emitted in. A deny rule is matched by the kernel
// (and by Seatbelt) against the symlink-resolved path, so a rule written for
// /tmp/x never fires when /tmp is a link to /private/tmp: every rule is emitted
// literally and resolved. Globs stay as written; what cannot be resolved is
// kept as written.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ccsandbox {

// True when `path` is a glob: it contains `*` or `?`.
bool isGlob(const std::string &path);

// `~` and `~/…` become the home; anything else is returned unchanged.
std::string expandHome(const std::string &path, const std::string &home);

// Collapses `//`, `.` and a trailing `/`; keeps `..` (only the file system can
// say where `..` leads when a symlink is involved). `path` must be absolute.
std::string lexicallyNormal(const std::string &path);

// True when `path` is `dir` or lies beneath it, compared by whole components
// (/a/bc is not inside /a/b). A glob `dir` matches by fnmatch on `path` and on
// each of its ancestors.
bool isWithin(const std::string &path, const std::string &dir);

// The ancestors of an absolute path, nearest first, without `/` itself.
std::vector<std::string> ancestorsOf(const std::string &path);

// Resolves paths against the file system under `root` ("" is the real root; a
// test passes a temp tree and the tree is then treated like a chroot).
//
// What it learns about each component (a directory, a link and its target,
// missing) is kept for the resolver's life: one policy compiles hundreds of
// paths under the same few directories (the home, its dot-directories), and
// looking each prefix up once instead of per path is most of the compile's
// system calls. A resolver is meant for one compile, on one thread; make a new
// one to see later changes to the file system.
class PathResolver {
 public:
  explicit PathResolver(std::string root = "") : root_(std::move(root)) {}

  const std::string &root() const { return root_; }

  // The physical path: every existing component's symlinks followed (a dangling
  // link resolves to its target), the missing tail appended as written.
  // nullopt when the path cannot be resolved (a loop, a component we may not
  // search): the caller keeps it as written.
  std::optional<std::string> resolve(const std::string &path) const;

  // The literal (lexically normal) form, then the resolved form when it
  // differs. For a glob, the directories before the first glob component are
  // resolved and the glob components kept as written.
  std::vector<std::string> forms(const std::string &path) const;

  // Host path of `path` for file-system access (root + path).
  std::string onHost(const std::string &path) const { return root_ + path; }

 private:
  struct Component {
    int error = 0;       // lstat's errno; 0 when it exists
    bool link = false;   // a symlink, whose target follows
    std::string target;  // empty with `error` set: readlink failed
  };
  const Component &lookup(const std::string &hostPath) const;

  std::string root_;
  mutable std::unordered_map<std::string, Component> seen_;
};

}  // namespace ccsandbox
