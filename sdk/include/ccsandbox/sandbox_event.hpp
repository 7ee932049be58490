// Session events and SandboxViolation, with their JSON shapes.
//
//   {"type":"starting"|"ready", "sessionId", "backend"}      the badge: the real backend
//   {"type":"stdout"|"stderr", "sessionId", "execId", "data"|"dataBase64"}
//   {"type":"exit", "sessionId", "execId", "exitCode", "signal"?, "error"?}
//   {"type":"killed", "sessionId", "execId"?, "reason": "timeout"|"oom"|"manual"}
//   {"type":"violation", "sessionId", "execId"?, "violation": {"action","target","raw"}}
#pragma once

#include "ccsandbox/sandbox_backend.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ccsandbox {

struct SandboxViolation {
  std::string action;  // the refused verb, e.g. file-write-create, network-outbound
  std::string target;  // the path or host:port it was refused on
  std::optional<std::string> raw;

  bool operator==(const SandboxViolation &) const = default;
};

enum class SandboxEventType { stdoutData, stderrData, exit, starting, ready, killed, violation };

inline constexpr EnumNames<SandboxEventType, 7> kSandboxEventTypeNames{{
    {SandboxEventType::stdoutData, "stdout"},
    {SandboxEventType::stderrData, "stderr"},
    {SandboxEventType::exit, "exit"},
    {SandboxEventType::starting, "starting"},
    {SandboxEventType::ready, "ready"},
    {SandboxEventType::killed, "killed"},
    {SandboxEventType::violation, "violation"},
}};

enum class KillReason { timeout, oom, manual };

inline constexpr EnumNames<KillReason, 3> kKillReasonNames{{
    {KillReason::timeout, "timeout"},
    {KillReason::oom, "oom"},
    {KillReason::manual, "manual"},
}};

inline constexpr std::string_view toString(SandboxEventType t) {
  return enumName(kSandboxEventTypeNames, t);
}
inline constexpr std::string_view toString(KillReason k) {
  return enumName(kKillReasonNames, k);
}

struct SandboxEvent {
  SandboxEventType type = SandboxEventType::stdoutData;
  std::string sessionId;
  std::optional<std::string> execId;
  std::string data;                       // stdout / stderr bytes, unmodified
  std::optional<int> exitCode;            // exit
  std::optional<int> signal;              // exit: the signal that ended the command
  std::optional<std::string> error;       // exit: why the command could not start
  std::optional<SandboxBackend> backend;  // starting / ready
  std::optional<KillReason> reason;       // killed
  std::optional<SandboxViolation> violation;
};

inline boost::json::value toJson(const SandboxViolation &v) {
  return {{"action", v.action},
          {"target", v.target},
          {"raw", v.raw ? boost::json::value(*v.raw) : boost::json::value(nullptr)}};
}

inline SandboxViolation decodeSandboxViolation(const boost::json::value &v,
                                               const std::string &path) {
  json::ObjectReader r(v, path);
  SandboxViolation out;
  out.action = json::readString(r.require("action"), r.pathOf("action"));
  out.target = json::readString(r.require("target"), r.pathOf("target"));
  if (auto *f = r.find("raw")) out.raw = json::readOptionalString(*f, r.pathOf("raw"));
  r.finish();
  return out;
}

namespace detail {

inline bool isValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t extra;
    std::uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3, cp = c & 0x07;
    } else {
      return false;
    }
    if (s.size() - i <= extra) return false;
    for (std::size_t k = 1; k <= extra; ++k) {
      auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((extra == 2 && cp < 0x800) || (extra == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += extra + 1;
  }
  return true;
}

inline std::string base64Encode(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v =
        (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    if (i + 1 < in.size()) v |= (unsigned char)in[i + 1] << 8;
    out += kAlphabet[v >> 18];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

}  // namespace detail

inline boost::json::value toJson(const SandboxEvent &e) {
  boost::json::object o{{"type", toString(e.type)}, {"sessionId", e.sessionId}};
  if (e.execId) o["execId"] = *e.execId;
  switch (e.type) {
    case SandboxEventType::stdoutData:
    case SandboxEventType::stderrData:
      // JSON carries text; output that is not UTF-8 travels as base64 so no byte is lost.
      if (detail::isValidUtf8(e.data))
        o["data"] = e.data;
      else
        o["dataBase64"] = detail::base64Encode(e.data);
      break;
    case SandboxEventType::exit:
      o["exitCode"] = e.exitCode.value_or(-1);
      if (e.signal) o["signal"] = *e.signal;
      if (e.error) o["error"] = *e.error;
      break;
    case SandboxEventType::starting:
    case SandboxEventType::ready:
      o["backend"] = toString(e.backend.value_or(SandboxBackend::none));
      break;
    case SandboxEventType::killed:
      o["reason"] = toString(e.reason.value_or(KillReason::manual));
      break;
    case SandboxEventType::violation:
      o["violation"] = e.violation ? toJson(*e.violation) : boost::json::value(nullptr);
      break;
  }
  return o;
}

// Decodes the events a plugin emits (exit, killed, violation, and the lifecycle
// ones); stdout/stderr never cross the ABI, the host reads them from pipes.
inline SandboxEvent decodeSandboxEvent(const boost::json::value &v, const std::string &path = "") {
  json::ObjectReader r(v, path);
  SandboxEvent e;
  e.type = readEnum(kSandboxEventTypeNames, r.require("type"), r.pathOf("type"));
  e.sessionId = json::readString(r.require("sessionId"), r.pathOf("sessionId"));
  if (auto *f = r.find("execId")) e.execId = json::readOptionalString(*f, r.pathOf("execId"));
  if (auto *f = r.find("data")) e.data = json::readString(*f, r.pathOf("data"));
  if (auto *f = r.find("exitCode"))
    e.exitCode = static_cast<int>(json::readInt(*f, r.pathOf("exitCode")));
  if (auto *f = r.find("signal"))
    e.signal = static_cast<int>(json::readInt(*f, r.pathOf("signal")));
  if (auto *f = r.find("error")) e.error = json::readOptionalString(*f, r.pathOf("error"));
  if (auto *f = r.find("backend"))
    e.backend = readEnum(kSandboxBackendNames, *f, r.pathOf("backend"));
  if (auto *f = r.find("reason")) e.reason = readEnum(kKillReasonNames, *f, r.pathOf("reason"));
  if (auto *f = r.find("violation"))
    e.violation = decodeSandboxViolation(*f, r.pathOf("violation"));
  r.finish();
  if (e.type == SandboxEventType::exit && !e.exitCode)
    json::fail(r.pathOf("exitCode"), "required for an exit event");
  if (e.type == SandboxEventType::violation && !e.violation)
    json::fail(r.pathOf("violation"), "required for a violation event");
  return e;
}

}  // namespace ccsandbox
