// ProbeResult: what a backend says about this host, once, at start-up.
#pragma once

#include "ccsandbox/json_reader.hpp"

#include <set>
#include <string>

namespace ccsandbox {

// What a backend can enforce. The router compares these with what a compiled
// policy requires and refuses a launch the backend cannot fully honour.
namespace capability {
inline constexpr const char *kReadDeny = "readDeny";            // hides secret paths
inline constexpr const char *kWriteRoots = "writeRoots";        // writes only where allowed
inline constexpr const char *kWriteDeny = "writeDeny";          // protected paths stay read-only
inline constexpr const char *kFilenameRules = "filenameRules";  // refuses new names by glob
inline constexpr const char *kUnlinkRules = "unlinkRules";    // protected paths and their ancestors
                                                              // cannot be renamed or unlinked away
inline constexpr const char *kNetworkProxy = "networkProxy";  // egress only through the proxies
inline constexpr const char *kExecControl = "execControl";    // no exec from writable roots
inline constexpr const char *kKernelBoundary = "kernelBoundary";  // workload not on the host kernel
// Reports exact denials itself; without it the core reads them off stderr.
inline constexpr const char *kSupervisedViolations = "supervisedViolations";
}  // namespace capability

struct ProbeResult {
  bool available = false;
  std::string note;  // shown when available
  std::string hint;  // shown when not: what to do about it
  bool requiresInstall = false;
  std::set<std::string> capabilities;
  // Plugin-private facts the plugin needs back when the host restores this result from its
  // probe cache (ABI 1.1, backend_abi.h). The host stores it and never reads it.
  boost::json::object state;

  bool has(std::string_view cap) const { return capabilities.count(std::string(cap)) != 0; }
};

inline boost::json::value toJson(const ProbeResult &p) {
  boost::json::object o{
      {"available", p.available},
      {"note", p.note},
      {"hint", p.hint},
      {"requiresInstall", p.requiresInstall},
      {"capabilities", boost::json::array(p.capabilities.begin(), p.capabilities.end())}};
  if (!p.state.empty()) o["state"] = p.state;
  return o;
}

inline ProbeResult decodeProbeResult(const boost::json::value &v, const std::string &path = "") {
  json::ObjectReader r(v, path);
  ProbeResult p;
  p.available = json::readBool(r.require("available"), r.pathOf("available"));
  if (auto *f = r.find("note")) p.note = json::readString(*f, r.pathOf("note"));
  if (auto *f = r.find("hint")) p.hint = json::readString(*f, r.pathOf("hint"));
  if (auto *f = r.find("requiresInstall"))
    p.requiresInstall = json::readBool(*f, r.pathOf("requiresInstall"));
  if (auto *f = r.find("capabilities"))
    for (auto &c : json::readStringList(*f, r.pathOf("capabilities"))) p.capabilities.insert(c);
  if (auto *f = r.find("state")) {
    if (!f->is_object()) json::wrongType(r.pathOf("state"), *f, "an object");
    p.state = f->get_object();
  }
  r.finish();
  return p;
}

}  // namespace ccsandbox
