#include "host_filesystem.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <climits>

namespace ccsandbox::bwrap {

PathInfo HostFilesystem::inspect(const std::string &path) const {
  PathInfo info;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return info;
  if (S_ISLNK(st.st_mode)) {
    info.kind = PathInfo::Kind::symlink;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(path.c_str(), buf, sizeof buf);
    if (n > 0) info.target.assign(buf, static_cast<std::size_t>(n));
    return info;
  }
  info.kind = S_ISDIR(st.st_mode) ? PathInfo::Kind::directory : PathInfo::Kind::file;
  return info;
}

}  // namespace ccsandbox::bwrap
