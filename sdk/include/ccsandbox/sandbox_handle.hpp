// SandboxHandle and SandboxState: what launch returns and how a session lives.
#pragma once

#include "ccsandbox/sandbox_backend.hpp"

#include <optional>
#include <string>

namespace ccsandbox {

enum class SandboxState { created, warm, active, suspended, destroyed, error };

inline constexpr EnumNames<SandboxState, 6> kSandboxStateNames{{
    {SandboxState::created, "created"},
    {SandboxState::warm, "warm"},
    {SandboxState::active, "active"},
    {SandboxState::suspended, "suspended"},
    {SandboxState::destroyed, "destroyed"},
    {SandboxState::error, "error"},
}};

inline constexpr std::string_view toString(SandboxState s) {
  return enumName(kSandboxStateNames, s);
}

struct SandboxHandle {
  std::string sessionId;
  SandboxBackend backend = SandboxBackend::none;
  SandboxState state = SandboxState::created;
  std::optional<boost::json::object> error;  // set when state is error
  boost::json::object details;               // adapter-internal bookkeeping (pids, dirs, plugin)
};

inline boost::json::value toJson(const SandboxHandle &h) {
  return {{"sessionId", h.sessionId},
          {"backend", toString(h.backend)},
          {"state", toString(h.state)},
          {"error", h.error ? boost::json::value(*h.error) : boost::json::value(nullptr)},
          {"details", h.details}};
}

inline SandboxHandle decodeSandboxHandle(const boost::json::value &v,
                                         const std::string &path = "") {
  json::ObjectReader r(v, path);
  SandboxHandle h;
  h.sessionId = json::readString(r.require("sessionId"), r.pathOf("sessionId"));
  // A stored backend goes through fromName: unknown or null is none, never an upgrade.
  if (auto *b = r.find("backend"))
    h.backend =
        fromName(b->is_string() ? std::optional<std::string_view>(b->get_string()) : std::nullopt);
  h.state = readEnum(kSandboxStateNames, r.require("state"), r.pathOf("state"));
  if (auto *e = r.find("error"); e && !e->is_null()) {
    if (!e->is_object()) json::wrongType(r.pathOf("error"), *e, "an object");
    h.error = e->get_object();
  }
  if (auto *d = r.find("details")) {
    if (!d->is_object()) json::wrongType(r.pathOf("details"), *d, "an object");
    h.details = d->get_object();
  }
  r.finish();
  return h;
}

}  // namespace ccsandbox
