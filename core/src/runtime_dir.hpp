// A private directory per session (mode 0700, a fresh name), for what a
// backend keeps next to the session: control and proxy sockets, masks,
// profiles. The session holds a lock in it for as long as it lives, so a
// directory whose owner was killed (kill -9 leaves no destructor to run) can be
// told from a live one and is removed by the next session of the user.
//
// The sandbox's own /tmp is kept apart, in the host's temp dir: it holds what a
// command writes to /tmp, as much as the host's /tmp would hold, while the
// session directory prefers a RAM-backed file system (XDG_RUNTIME_DIR and
// /dev/shm are small; a disk file system pays a journal entry for every inode
// made and removed at each launch).
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

  // Where session directories are made, the first that is usable:
  // XDG_RUNTIME_DIR, /run/user/<uid>, /dev/shm (a sticky tmpfs), TMPDIR, /tmp.
  static std::string baseDir();
  // Where the sandbox's /tmp is made: TMPDIR, else /tmp.
  static std::string tempBaseDir();
  // The sandbox's /tmp as `policy` shows it before a launch names it.
  static std::string tempDirPlaceholder();

  const std::string &path() const { return path_; }
  // Creates <path>/<name> (mode 0700) and returns its path.
  std::string makeSubdir(const std::string &name) const;
  // Creates the sandbox's private /tmp (mode 0700) and returns its path:
  // <path>/tmp when both bases are one directory, else a fresh
  // <tempBaseDir>/ccsandbox-tmp-XXXXXX that <path>/tmp links to, so that a
  // sweep of this directory finds it.
  std::string makeTempDir();

  // Removes this user's session directories under `base` whose session is gone
  // (their lock is free), with the temp dirs they link to; returns how many.
  // Live sessions, other users' directories and anything not named like a
  // session directory are left alone.
  static int removeAbandoned(const std::string &base);

 private:
  std::string path_;
  std::string outsideTemp_;  // the sandbox's /tmp when it is not under path_
  UniqueFd lock_;            // flock(LOCK_EX) while the session lives
};

}  // namespace ccsandbox
