#include "probe_cache.hpp"

#include "ccsandbox/backend_abi.h"
#include "ccsandbox/file_identity.hpp"
#include "ccsandbox/json_reader.hpp"
#include "ccsandbox/logging.hpp"
#include "ccsandbox/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace ccsandbox {

namespace {

using logging::Level;

std::string bootId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(in, id);
  return id;
}

boost::json::object keyJson(const ProbeKey &key) {
  return {{"plugin", key.plugin},
          {"pluginFile", key.pluginFile},
          // A rebuilt or replaced plugin is a new key.
          {"pluginFileId", fileIdentity(key.pluginFile)},
          {"abi", std::to_string(CCSANDBOX_ABI_MAJOR) + "." + std::to_string(CCSANDBOX_ABI_MINOR)},
          {"bootId", bootId()},
          {"uid", ::geteuid()},
          {"fingerprint", key.fingerprint}};
}

// Plugin names become file names: anything unusual is simply not kept.
bool safeName(const std::string &name) {
  if (name.empty() || name.size() > 100 || name[0] == '.') return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.'))
      return false;
  return true;
}

std::string trustProblem(const struct stat &st, const std::string &what) {
  if (st.st_uid != ::geteuid())
    return what + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return what + " is writable by others";
  return "";
}

}  // namespace

ProbeCache::ProbeCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty() || dir_[0] != '/') {
    reason_ = "the probe cache directory must be an absolute path";
    return;
  }
  struct stat st {};
  // Looked at before it is made: it exists at every start but the first, and a
  // refused mkdir costs as much as a real one on a disk file system.
  bool found = ::lstat(dir_.c_str(), &st) == 0;
  if (!found && errno == ENOENT) {
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
      reason_ = "cannot create " + dir_ + ": " + std::strerror(errno);
      return;
    }
    found = ::lstat(dir_.c_str(), &st) == 0;
  }
  if (!found || !S_ISDIR(st.st_mode)) {
    reason_ = dir_ + " is not a directory";
    return;
  }
  reason_ = trustProblem(st, dir_);
  usable_ = reason_.empty();
}

std::string ProbeCache::defaultDir() {
  const char *xdg = std::getenv("XDG_RUNTIME_DIR");
  if (xdg && *xdg == '/') {
    struct stat st {};
    if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == ::geteuid())
      return std::string(xdg) + "/ccsandbox";
  }
  const char *tmp = std::getenv("TMPDIR");
  std::string base = tmp && *tmp == '/' ? tmp : "/tmp";
  return base + "/ccsandbox-" + std::to_string(::geteuid());
}

std::string ProbeCache::entryName(const std::string &plugin) {
  return "probe-" + plugin + ".json";
}

std::optional<boost::json::value> ProbeCache::readDocument(const std::string &name) const {
  if (!usable_ || !safeName(name)) return std::nullopt;
  std::string path = dir_ + "/" + name;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return std::nullopt;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (1 << 20)) return {};
  if (auto problem = trustProblem(st, path); !problem.empty()) {
    logging::write(Level::warning, "core", "probe cache entry ignored: " + problem);
    return std::nullopt;
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<std::size_t>(n);
  }
  try {
    return json::parse(text, path);
  } catch (const DecodeError &e) {
    logging::write(Level::debug, "core", std::string("probe cache entry ignored: ") + e.what());
    return std::nullopt;
  }
}

void ProbeCache::writeDocument(const std::string &name, const boost::json::value &doc) const {
  if (!usable_ || !safeName(name)) return;
  std::string text = boost::json::serialize(doc);
  std::string path = dir_ + "/" + name;
  std::string tmpl = path + ".XXXXXX";
  UniqueFd fd(::mkostemp(tmpl.data(), O_CLOEXEC));
  if (!fd) {
    logging::write(Level::debug, "core",
                   "probe cache: cannot write in " + dir_ + ": " + std::strerror(errno));
    return;
  }
  bool ok = true;
  std::size_t done = 0;
  while (ok && done < text.size()) {
    ssize_t n = ::write(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  // Readers see the old document or the new one, never half of one.
  if (!ok || ::rename(tmpl.c_str(), path.c_str()) != 0) ::unlink(tmpl.c_str());
}

std::optional<ProbeResult> ProbeCache::find(const ProbeKey &key) const {
  if (!safeName(key.plugin)) return std::nullopt;
  auto doc = readDocument(entryName(key.plugin));
  if (!doc) return std::nullopt;
  try {
    json::ObjectReader r(*doc, "");
    const auto &storedKey = r.require("key");
    if (storedKey != boost::json::value(keyJson(key))) return std::nullopt;
    ProbeResult result = decodeProbeResult(r.require("probe"), "probe");
    r.finish();
    if (!result.available) return std::nullopt;
    return result;
  } catch (const DecodeError &e) {
    logging::write(Level::debug, "core", std::string("probe cache entry ignored: ") + e.what());
    return std::nullopt;
  }
}

void ProbeCache::store(const ProbeKey &key, const ProbeResult &result) const {
  if (!usable_ || !safeName(key.plugin)) return;
  if (!result.available) {
    forget(key.plugin);
    return;
  }
  writeDocument(entryName(key.plugin),
                boost::json::object{{"key", keyJson(key)}, {"probe", toJson(result)}});
}

void ProbeCache::forget(const std::string &plugin) const {
  if (!usable_ || !safeName(plugin)) return;
  ::unlink((dir_ + "/" + entryName(plugin)).c_str());
}

}  // namespace ccsandbox
