#include "runtime_dir.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace ccsandbox {

std::string RuntimeDir::baseDir() {
  // XDG_RUNTIME_DIR is per-user and private; otherwise the temp dir, where
  // mkdtemp's fresh 0700 name is what keeps others out.
  for (const char *var : {"XDG_RUNTIME_DIR", "TMPDIR"}) {
    const char *v = std::getenv(var);
    struct stat st {};
    if (v && *v == '/' && ::stat(v, &st) == 0 && S_ISDIR(st.st_mode) &&
        ::access(v, W_OK | X_OK) == 0)
      return v;
  }
  return "/tmp";
}

RuntimeDir::RuntimeDir() {
  // Short on purpose: Unix socket paths inside it must fit in 108 bytes.
  std::string tmpl = baseDir() + "/ccsandbox-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::system_error(errno, std::generic_category(),
                            "cannot create the session's runtime directory under " + baseDir());
  path_ = buf.data();
}

std::string RuntimeDir::makeSubdir(const std::string &name) const {
  std::string sub = path_ + "/" + name;
  if (::mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::system_error(errno, std::generic_category(), "cannot create " + sub);
  return sub;
}

RuntimeDir::~RuntimeDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace ccsandbox
