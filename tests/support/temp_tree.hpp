// A temporary directory tree for a test, removed with everything in it.
#pragma once

#include <string>

namespace ccsandbox::test {

class TempTree {
 public:
  TempTree();
  ~TempTree();
  TempTree(const TempTree &) = delete;
  TempTree &operator=(const TempTree &) = delete;

  const std::string &path() const { return path_; }
  // <root>/<relative>, with parent directories created.
  std::string dir(const std::string &relative) const;
  std::string file(const std::string &relative, const std::string &content = "") const;
  std::string symlink(const std::string &relative, const std::string &target) const;

 private:
  std::string path_;
};

std::string readFile(const std::string &path);

}  // namespace ccsandbox::test
