// What the host asks of a backend: launch a session, exec in it, signal, destroy.
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/sandbox_backend.hpp"
#include "ccsandbox/sandbox_spec.hpp"

#include <map>
#include <string>
#include <vector>

namespace ccsandbox {

// Who is launching: decides the environment treatment and, for terminals, the routing.
enum class LaunchKind { agentBash, acp, claudeCode, terminal };

inline constexpr EnumNames<LaunchKind, 4> kLaunchKindNames{{
    {LaunchKind::agentBash, "agent-bash"},
    {LaunchKind::acp, "acp"},
    {LaunchKind::claudeCode, "claude-code"},
    {LaunchKind::terminal, "terminal"},
}};

inline constexpr std::string_view toString(LaunchKind k) {
  return enumName(kLaunchKindNames, k);
}

struct LaunchRequest {
  std::string sessionId;
  LaunchKind launchKind = LaunchKind::agentBash;
  SandboxSpec spec;
  // The compiled policy. Plugins translate it; they never re-derive it from the spec.
  EffectivePolicy policy;
  // Private, per-session directory the host created for the backend's small
  // pieces (often on a RAM-backed file system; commands write to policy.tempDir).
  std::string runtimeDir;
};

struct StdioFds {
  int in = -1;
  int out = -1;
  int err = -1;
};

struct ExecRequest {
  std::string sessionId;
  std::string execId;
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // the complete environment of the command
  std::string cwd;
  StdioFds stdio;  // valid during the exec call only: the backend dups what it keeps
};

struct SignalRequest {
  std::string sessionId;
  std::string execId;
  int signal = 0;
};

inline boost::json::value toJson(const LaunchRequest &r) {
  return {{"sessionId", r.sessionId},
          {"launchKind", toString(r.launchKind)},
          {"spec", toJson(r.spec)},
          {"policy", toJson(r.policy)},
          {"runtimeDir", r.runtimeDir}};
}

inline LaunchRequest decodeLaunchRequest(const boost::json::value &v) {
  json::ObjectReader r(v, "");
  LaunchRequest out;
  out.sessionId = json::readString(r.require("sessionId"), "sessionId");
  out.launchKind = readEnum(kLaunchKindNames, r.require("launchKind"), "launchKind");
  out.spec = decodeSandboxSpec(r.require("spec"), "spec");
  out.policy = decodeEffectivePolicy(r.require("policy"), "policy");
  out.runtimeDir = json::readString(r.require("runtimeDir"), "runtimeDir");
  r.finish();
  return out;
}

inline boost::json::value toJson(const ExecRequest &r) {
  boost::json::object env;
  for (const auto &[k, val] : r.env) env[k] = val;
  return {{"sessionId", r.sessionId},
          {"execId", r.execId},
          {"argv", boost::json::array(r.argv.begin(), r.argv.end())},
          {"env", std::move(env)},
          {"cwd", r.cwd},
          {"stdio", {{"stdin", r.stdio.in}, {"stdout", r.stdio.out}, {"stderr", r.stdio.err}}}};
}

inline ExecRequest decodeExecRequest(const boost::json::value &v) {
  json::ObjectReader r(v, "");
  ExecRequest out;
  out.sessionId = json::readString(r.require("sessionId"), "sessionId");
  out.execId = json::readString(r.require("execId"), "execId");
  out.argv = json::readStringList(r.require("argv"), "argv");
  if (out.argv.empty()) json::fail("argv", "must name a command");
  const auto &env = r.require("env");
  if (!env.is_object()) json::wrongType("env", env, "an object");
  for (const auto &kv : env.get_object())
    out.env[std::string(kv.key())] = json::readString(kv.value(), json::joinPath("env", kv.key()));
  out.cwd = json::readString(r.require("cwd"), "cwd");
  json::ObjectReader io(r.require("stdio"), "stdio");
  out.stdio.in = static_cast<int>(json::readInt(io.require("stdin"), "stdio.stdin"));
  out.stdio.out = static_cast<int>(json::readInt(io.require("stdout"), "stdio.stdout"));
  out.stdio.err = static_cast<int>(json::readInt(io.require("stderr"), "stdio.stderr"));
  io.finish();
  r.finish();
  return out;
}

inline boost::json::value toJson(const SignalRequest &r) {
  return {{"sessionId", r.sessionId}, {"execId", r.execId}, {"signal", r.signal}};
}

inline SignalRequest decodeSignalRequest(const boost::json::value &v) {
  json::ObjectReader r(v, "");
  SignalRequest out;
  out.sessionId = json::readString(r.require("sessionId"), "sessionId");
  out.execId = json::readString(r.require("execId"), "execId");
  out.signal = static_cast<int>(json::readInt(r.require("signal"), "signal"));
  r.finish();
  return out;
}

}  // namespace ccsandbox
