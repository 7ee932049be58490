// A private directory per session (mode 0700, a fresh name), for what a
// backend keeps next to the session: control and proxy sockets, profiles.
#pragma once

#include <string>

namespace ccsandbox {

class RuntimeDir {
 public:
  RuntimeDir();  // throws std::system_error
  ~RuntimeDir();
  RuntimeDir(const RuntimeDir &) = delete;
  RuntimeDir &operator=(const RuntimeDir &) = delete;

  // Where session directories are made: XDG_RUNTIME_DIR, else TMPDIR, else /tmp.
  static std::string baseDir();

  const std::string &path() const { return path_; }
  // Creates <path>/<name> (mode 0700) and returns its path.
  std::string makeSubdir(const std::string &name) const;

 private:
  std::string path_;
};

}  // namespace ccsandbox
