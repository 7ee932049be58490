// A private directory per session (mode 0700, a fresh name), for what a
// backend keeps next to the session: control and proxy sockets, the sandbox's
// /tmp, profiles. The session holds a lock in it for as long as it lives, so
// a directory whose owner was killed (kill -9 leaves no destructor to run)
// can be told from a live one and is removed by the next session of the user.
#pragma once

#include "ccsandbox/unique_fd.hpp"

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

  // Removes this user's session directories under `base` whose session is gone
  // (their lock is free); returns how many. Live sessions, other users'
  // directories and anything not named like a session directory are left alone.
  static int removeAbandoned(const std::string &base);

 private:
  std::string path_;
  UniqueFd lock_;  // flock(LOCK_EX) while the session lives
};

}  // namespace ccsandbox
