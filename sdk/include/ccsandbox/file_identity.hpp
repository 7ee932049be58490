// Which file a path names right now, as text: a replaced, rebuilt or touched
// file gets another one. For caches keyed on the binaries behind a result
// (the probe cache, a plugin's probe fingerprint).
#pragma once

#include <sys/stat.h>

#include <string>

namespace ccsandbox {

// "dev:ino:size:mtime:ctime" (times to the nanosecond) of what `path` resolves
// to; "" when it cannot be stat'ed.
inline std::string fileIdentity(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino) + ':' +
         std::to_string(st.st_size) + ':' + std::to_string(st.st_mtim.tv_sec) + '.' +
         std::to_string(st.st_mtim.tv_nsec) + ':' + std::to_string(st.st_ctim.tv_sec) + '.' +
         std::to_string(st.st_ctim.tv_nsec);
}

}  // namespace ccsandbox
