// Probe results kept between processes (backend ABI 1.1). A long-lived host
// probes once and is done; a one-shot CLI would otherwise start a trial sandbox
// on every run. An entry is used only when everything it was probed under is
// unchanged: this boot, this user, the same plugin file, and the plugin's own
// fingerprint of the host facts its probe depends on. Only available results
// are kept (a refusal is re-checked every time, so a fix shows at once), and a
// launch that fails on a kept result drops it.
#pragma once

#include "ccsandbox/probe_result.hpp"

#include <boost/json/value.hpp>

#include <optional>
#include <string>

namespace ccsandbox {

// What an entry is keyed on besides the plugin's fingerprint.
struct ProbeKey {
  std::string plugin;       // the plugin's name
  std::string pluginFile;   // the file it was loaded from
  std::string fingerprint;  // the plugin's fingerprint of the host facts
};

class ProbeCache {
 public:
  // `dir` is created (0700) when missing. It must be a directory of this user's
  // that nobody else can write; otherwise the cache is off and probes run afresh.
  explicit ProbeCache(std::string dir);

  bool usable() const { return usable_; }
  const std::string &dir() const { return dir_; }
  // Why the cache is off, when it is.
  const std::string &unusableReason() const { return reason_; }

  // The kept result for `key`, when one matches exactly.
  std::optional<ProbeResult> find(const ProbeKey &key) const;
  // Keeps `result` for `key` (available results only); replaces any earlier entry.
  void store(const ProbeKey &key, const ProbeResult &result) const;
  // Drops the entry of `plugin`, if any.
  void forget(const std::string &plugin) const;

  // A JSON document of the cache's own, by file name in the directory (a plain
  // name): read only when it is a regular file of this user that nobody else
  // could have written; written whole, by rename. nullopt / nothing done when
  // the cache is off, the name is not plain, or the document is unreadable.
  std::optional<boost::json::value> readDocument(const std::string &name) const;
  void writeDocument(const std::string &name, const boost::json::value &doc) const;

  // Where the CLI keeps them: <XDG_RUNTIME_DIR>/ccsandbox, else <TMPDIR or
  // /tmp>/ccsandbox-<uid>; both vanish with the boot or the login.
  static std::string defaultDir();

 private:
  static std::string entryName(const std::string &plugin);

  std::string dir_;
  bool usable_ = false;
  std::string reason_;
};

}  // namespace ccsandbox
