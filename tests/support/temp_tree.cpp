#include "support/temp_tree.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace ccsandbox::test {

namespace fs = std::filesystem;

TempTree::TempTree() {
  std::string tmpl = (fs::temp_directory_path() / "ccsandbox-test-XXXXXX").string();
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data()))
    throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
  path_ = buf.data();
}

TempTree::~TempTree() {
  std::error_code ec;
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

std::string TempTree::dir(const std::string &relative) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p);
  return p.string();
}

std::string TempTree::file(const std::string &relative, const std::string &content) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

std::string TempTree::symlink(const std::string &relative, const std::string &target) const {
  fs::path p = fs::path(path_) / relative;
  fs::create_directories(p.parent_path());
  fs::create_symlink(target, p);
  return p.string();
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace ccsandbox::test
