// SandboxSpec and SandboxBindMount: what a caller asks a session to be.
// Field names and defaults are the seed's; decoding is strict.
#pragma once

#include "ccsandbox/domain_pattern.hpp"
#include "ccsandbox/enum_names.hpp"
#include "ccsandbox/json_reader.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ccsandbox {

// Shapes the file-system write rules: chat keeps binds writable, the others are read-only.
enum class SandboxMode { chat, review, plan, orchestrate };

inline constexpr EnumNames<SandboxMode, 4> kSandboxModeNames{{
    {SandboxMode::chat, "chat"},
    {SandboxMode::review, "review"},
    {SandboxMode::plan, "plan"},
    {SandboxMode::orchestrate, "orchestrate"},
}};

inline constexpr std::string_view toString(SandboxMode m) {
  return enumName(kSandboxModeNames, m);
}

struct SandboxBindMount {
  std::string hostPath;   // absolute path on the host
  std::string guestPath;  // path inside the sandbox; defaults to hostPath
  bool readOnly = false;

  bool operator==(const SandboxBindMount &) const = default;
};

struct SandboxSpec {
  std::string sessionId;  // empty: the runtime assigns one
  std::string workspaceId;
  std::optional<std::string> agentId;
  std::vector<SandboxBindMount> bindMounts;
  bool networkEnabled = true;
  std::vector<std::string> egressAllowlist;
  std::optional<std::string> guestWorkdir;
  SandboxMode mode = SandboxMode::chat;
  std::vector<std::string> protectedPaths;
  std::vector<std::string> runnerStateDirs;
  std::vector<std::string> execGrantRoots;

  bool operator==(const SandboxSpec &) const = default;
};

namespace json {

// An absolute path; `~` and `~/…` are accepted where the host home is meant
// (the policy compiler expands them), relative paths never are.
inline std::string readHostPath(const boost::json::value &v, std::string_view path,
                                bool allowTilde) {
  std::string p = readString(v, path);
  if (p.empty()) fail(path, "must be an absolute path, not empty");
  if (p.find('\0') != std::string::npos) fail(path, "must not contain a NUL byte");
  bool tilde = allowTilde && (p == "~" || p.rfind("~/", 0) == 0);
  if (p[0] != '/' && !tilde) fail(path, "must be absolute (\"" + p + "\" is relative)");
  return p;
}

inline std::vector<std::string> readHostPathList(const boost::json::value &v,
                                                 std::string_view path) {
  const auto &arr = readArray(v, path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(readHostPath(arr[i], indexPath(path, i), true));
  return out;
}

}  // namespace json

inline SandboxBindMount decodeBindMount(const boost::json::value &v, const std::string &path) {
  json::ObjectReader r(v, path);
  SandboxBindMount m;
  m.hostPath = json::readHostPath(r.require("hostPath"), r.pathOf("hostPath"), false);
  if (auto *g = r.find("guestPath"); g && !g->is_null())
    m.guestPath = json::readHostPath(*g, r.pathOf("guestPath"), false);
  else
    m.guestPath = m.hostPath;
  if (auto *ro = r.find("readOnly")) m.readOnly = json::readBool(*ro, r.pathOf("readOnly"));
  r.finish();
  return m;
}

inline boost::json::value toJson(const SandboxBindMount &m) {
  return {{"hostPath", m.hostPath}, {"guestPath", m.guestPath}, {"readOnly", m.readOnly}};
}

inline SandboxSpec decodeSandboxSpec(const boost::json::value &v, const std::string &path = "") {
  json::ObjectReader r(v, path);
  SandboxSpec s;
  if (auto *f = r.find("sessionId")) s.sessionId = json::readString(*f, r.pathOf("sessionId"));
  if (auto *f = r.find("workspaceId"))
    s.workspaceId = json::readString(*f, r.pathOf("workspaceId"));
  if (auto *f = r.find("agentId")) s.agentId = json::readOptionalString(*f, r.pathOf("agentId"));
  if (auto *f = r.find("bindMounts")) {
    const auto &arr = json::readArray(*f, r.pathOf("bindMounts"));
    for (std::size_t i = 0; i < arr.size(); ++i)
      s.bindMounts.push_back(decodeBindMount(arr[i], json::indexPath(r.pathOf("bindMounts"), i)));
  }
  if (auto *f = r.find("networkEnabled"))
    s.networkEnabled = json::readBool(*f, r.pathOf("networkEnabled"));
  if (auto *f = r.find("egressAllowlist")) {
    s.egressAllowlist = json::readStringList(*f, r.pathOf("egressAllowlist"));
    for (std::size_t i = 0; i < s.egressAllowlist.size(); ++i) {
      try {
        DomainPattern::parse(s.egressAllowlist[i]);
      } catch (const DomainPatternError &e) {
        json::fail(json::indexPath(r.pathOf("egressAllowlist"), i), e.what());
      }
    }
  }
  if (auto *f = r.find("guestWorkdir"); f && !f->is_null())
    s.guestWorkdir = json::readHostPath(*f, r.pathOf("guestWorkdir"), false);
  if (auto *f = r.find("mode")) s.mode = readEnum(kSandboxModeNames, *f, r.pathOf("mode"));
  if (auto *f = r.find("protectedPaths"))
    s.protectedPaths = json::readHostPathList(*f, r.pathOf("protectedPaths"));
  if (auto *f = r.find("runnerStateDirs"))
    s.runnerStateDirs = json::readHostPathList(*f, r.pathOf("runnerStateDirs"));
  if (auto *f = r.find("execGrantRoots"))
    s.execGrantRoots = json::readHostPathList(*f, r.pathOf("execGrantRoots"));
  r.finish();
  return s;
}

inline boost::json::value toJson(const SandboxSpec &s) {
  boost::json::array binds;
  for (const auto &m : s.bindMounts) binds.push_back(toJson(m));
  auto strings = [](const std::vector<std::string> &v) {
    return boost::json::array(v.begin(), v.end());
  };
  boost::json::object o{
      {"sessionId", s.sessionId},
      {"workspaceId", s.workspaceId},
      {"agentId", s.agentId ? boost::json::value(*s.agentId) : boost::json::value(nullptr)},
      {"bindMounts", std::move(binds)},
      {"networkEnabled", s.networkEnabled},
      {"egressAllowlist", strings(s.egressAllowlist)},
      {"guestWorkdir",
       s.guestWorkdir ? boost::json::value(*s.guestWorkdir) : boost::json::value(nullptr)},
      {"mode", toString(s.mode)},
      {"protectedPaths", strings(s.protectedPaths)},
      {"runnerStateDirs", strings(s.runnerStateDirs)},
      {"execGrantRoots", strings(s.execGrantRoots)},
  };
  return o;
}

}  // namespace ccsandbox
