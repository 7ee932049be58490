// EffectivePolicy: a SandboxSpec compiled by the core into concrete, absolute
// rules. Every backend receives the same compiled policy and translates it
// (bwrap arguments, a Seatbelt profile, a VM configuration) or refuses; no
// backend re-derives policy from the spec.
#pragma once

#include "ccsandbox/json_reader.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ccsandbox {

// One path a namespace backend makes visible inside the sandbox.
struct PolicyMount {
  std::string hostPath;
  std::string guestPath;
  bool readOnly = true;

  bool operator==(const PolicyMount &) const = default;
};

struct PolicyVisible {
  std::vector<PolicyMount> binds;           // the spec's binds (after mode and runner dirs)
  std::vector<std::string> systemReadOnly;  // /usr, /bin, /sbin, /lib*, /etc, /opt where present
  bool privateTmp = true;                   // a fresh /tmp
  bool procfs = true;                       // a fresh /proc
  bool minimalDev = true;                   // a minimal /dev

  bool operator==(const PolicyVisible &) const = default;
};

struct PolicyExec {
  bool blockWritableRoots = true;       // no exec from a write root…
  std::vector<std::string> grantRoots;  // …unless beneath one of these

  bool operator==(const PolicyExec &) const = default;
};

// A proxy endpoint the session's traffic must go through (filled at launch).
struct ProxyEndpoint {
  std::string host;  // 127.0.0.1
  int port = 0;
  std::string unixSocket;  // the same proxy on a Unix socket in the session's runtime dir

  bool operator==(const ProxyEndpoint &) const = default;
};

struct PolicyNetwork {
  bool enabled = true;
  // No proxy and no allowlist: the command reaches the network as the host does
  // (the fixed terminal profile's "network open"). Never set for agent launches.
  bool open = false;
  std::vector<std::string> allowlist;  // resolved: baseline + GitHub + spec.egressAllowlist
  std::vector<std::string> denylist;   // fixed; wins over every allow
  std::optional<ProxyEndpoint> httpProxy;
  std::optional<ProxyEndpoint> socksProxy;

  bool operator==(const PolicyNetwork &) const = default;
};

struct EffectivePolicy {
  std::string launchKind;  // agent-bash, acp, claude-code, terminal
  std::string mode;        // chat, review, plan, orchestrate
  std::string home;        // the host home `~` expanded to
  std::string tempDir;     // the session's private, writable temp dir
  PolicyVisible visible;
  std::vector<std::string> readDeny;        // literal and symlink-resolved forms
  std::vector<std::string> writeRoots;      // the only places writes may happen
  std::vector<std::string> writeDeny;       // never writable, even beneath a write root
  std::vector<std::string> writeDenyGlobs;  // names that may never be created (.env, *.pem, …)
  // May not be unlinked or renamed (each writeDeny entry and its ancestors), so
  // a rename cannot move a denied path out from under its rule. Exact paths:
  // unlike writeDeny, an entry does not cover what lies beneath it.
  std::vector<std::string> unlinkDeny;
  PolicyExec exec;
  PolicyNetwork network;
  std::map<std::string, std::string> env;  // variables the policy sets in every command

  bool operator==(const EffectivePolicy &) const = default;
};

inline boost::json::value toJson(const PolicyMount &m) {
  return {{"hostPath", m.hostPath}, {"guestPath", m.guestPath}, {"readOnly", m.readOnly}};
}

inline boost::json::value toJson(const ProxyEndpoint &p) {
  return {{"host", p.host}, {"port", p.port}, {"unixSocket", p.unixSocket}};
}

namespace detail {
inline boost::json::array strings(const std::vector<std::string> &v) {
  return boost::json::array(v.begin(), v.end());
}
}  // namespace detail

inline boost::json::value toJson(const EffectivePolicy &p) {
  boost::json::array binds;
  for (const auto &m : p.visible.binds) binds.push_back(toJson(m));
  boost::json::object env;
  for (const auto &[k, v] : p.env) env[k] = v;
  auto proxy = [](const std::optional<ProxyEndpoint> &e) {
    return e ? toJson(*e) : boost::json::value(nullptr);
  };
  return {
      {"launchKind", p.launchKind},
      {"mode", p.mode},
      {"home", p.home},
      {"tempDir", p.tempDir},
      {"visible",
       {{"binds", std::move(binds)},
        {"systemReadOnly", detail::strings(p.visible.systemReadOnly)},
        {"privateTmp", p.visible.privateTmp},
        {"procfs", p.visible.procfs},
        {"minimalDev", p.visible.minimalDev}}},
      {"readDeny", detail::strings(p.readDeny)},
      {"writeRoots", detail::strings(p.writeRoots)},
      {"writeDeny", detail::strings(p.writeDeny)},
      {"writeDenyGlobs", detail::strings(p.writeDenyGlobs)},
      {"unlinkDeny", detail::strings(p.unlinkDeny)},
      {"exec",
       {{"blockWritableRoots", p.exec.blockWritableRoots},
        {"grantRoots", detail::strings(p.exec.grantRoots)}}},
      {"network",
       {{"enabled", p.network.enabled},
        {"open", p.network.open},
        {"allowlist", detail::strings(p.network.allowlist)},
        {"denylist", detail::strings(p.network.denylist)},
        {"httpProxy", proxy(p.network.httpProxy)},
        {"socksProxy", proxy(p.network.socksProxy)}}},
      {"env", std::move(env)},
  };
}

namespace detail {

inline PolicyMount decodePolicyMount(const boost::json::value &v, const std::string &path) {
  json::ObjectReader r(v, path);
  PolicyMount m;
  m.hostPath = json::readString(r.require("hostPath"), r.pathOf("hostPath"));
  m.guestPath = json::readString(r.require("guestPath"), r.pathOf("guestPath"));
  m.readOnly = json::readBool(r.require("readOnly"), r.pathOf("readOnly"));
  r.finish();
  return m;
}

inline std::optional<ProxyEndpoint> decodeProxy(const boost::json::value &v,
                                                const std::string &path) {
  if (v.is_null()) return std::nullopt;
  json::ObjectReader r(v, path);
  ProxyEndpoint p;
  p.host = json::readString(r.require("host"), r.pathOf("host"));
  p.port = static_cast<int>(json::readInt(r.require("port"), r.pathOf("port")));
  p.unixSocket = json::readString(r.require("unixSocket"), r.pathOf("unixSocket"));
  r.finish();
  return p;
}

}  // namespace detail

inline EffectivePolicy decodeEffectivePolicy(const boost::json::value &v,
                                             const std::string &path = "") {
  json::ObjectReader r(v, path);
  EffectivePolicy p;
  p.launchKind = json::readString(r.require("launchKind"), r.pathOf("launchKind"));
  p.mode = json::readString(r.require("mode"), r.pathOf("mode"));
  p.home = json::readString(r.require("home"), r.pathOf("home"));
  p.tempDir = json::readString(r.require("tempDir"), r.pathOf("tempDir"));
  {
    json::ObjectReader vis(r.require("visible"), r.pathOf("visible"));
    const auto &binds = json::readArray(vis.require("binds"), vis.pathOf("binds"));
    for (std::size_t i = 0; i < binds.size(); ++i)
      p.visible.binds.push_back(
          detail::decodePolicyMount(binds[i], json::indexPath(vis.pathOf("binds"), i)));
    p.visible.systemReadOnly =
        json::readStringList(vis.require("systemReadOnly"), vis.pathOf("systemReadOnly"));
    p.visible.privateTmp = json::readBool(vis.require("privateTmp"), vis.pathOf("privateTmp"));
    p.visible.procfs = json::readBool(vis.require("procfs"), vis.pathOf("procfs"));
    p.visible.minimalDev = json::readBool(vis.require("minimalDev"), vis.pathOf("minimalDev"));
    vis.finish();
  }
  p.readDeny = json::readStringList(r.require("readDeny"), r.pathOf("readDeny"));
  p.writeRoots = json::readStringList(r.require("writeRoots"), r.pathOf("writeRoots"));
  p.writeDeny = json::readStringList(r.require("writeDeny"), r.pathOf("writeDeny"));
  p.writeDenyGlobs = json::readStringList(r.require("writeDenyGlobs"), r.pathOf("writeDenyGlobs"));
  // Fields added after the first release are optional, so older producers still decode.
  if (auto *f = r.find("unlinkDeny"))
    p.unlinkDeny = json::readStringList(*f, r.pathOf("unlinkDeny"));
  {
    json::ObjectReader ex(r.require("exec"), r.pathOf("exec"));
    p.exec.blockWritableRoots =
        json::readBool(ex.require("blockWritableRoots"), ex.pathOf("blockWritableRoots"));
    p.exec.grantRoots = json::readStringList(ex.require("grantRoots"), ex.pathOf("grantRoots"));
    ex.finish();
  }
  {
    json::ObjectReader net(r.require("network"), r.pathOf("network"));
    p.network.enabled = json::readBool(net.require("enabled"), net.pathOf("enabled"));
    if (auto *f = net.find("open")) p.network.open = json::readBool(*f, net.pathOf("open"));
    p.network.allowlist = json::readStringList(net.require("allowlist"), net.pathOf("allowlist"));
    p.network.denylist = json::readStringList(net.require("denylist"), net.pathOf("denylist"));
    p.network.httpProxy = detail::decodeProxy(net.require("httpProxy"), net.pathOf("httpProxy"));
    p.network.socksProxy = detail::decodeProxy(net.require("socksProxy"), net.pathOf("socksProxy"));
    net.finish();
  }
  {
    const auto &env = r.require("env");
    if (!env.is_object()) json::wrongType(r.pathOf("env"), env, "an object");
    for (const auto &kv : env.get_object())
      p.env[std::string(kv.key())] =
          json::readString(kv.value(), json::joinPath(r.pathOf("env"), kv.key()));
  }
  r.finish();
  return p;
}

}  // namespace ccsandbox
