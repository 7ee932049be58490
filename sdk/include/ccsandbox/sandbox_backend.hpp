// SandboxBackend: which kind of isolation a session really has.
#pragma once

#include "ccsandbox/enum_names.hpp"

#include <optional>
#include <string_view>

namespace ccsandbox {

enum class SandboxBackend { native, none, microvm };

inline constexpr EnumNames<SandboxBackend, 3> kSandboxBackendNames{{
    {SandboxBackend::native, "native"},
    {SandboxBackend::none, "none"},
    {SandboxBackend::microvm, "microvm"},
}};

inline constexpr std::string_view toString(SandboxBackend b) {
  return enumName(kSandboxBackendNames, b);
}

// The seed's SandboxBackend.fromName, for *stored* values: null or unknown
// means none (never a silent upgrade), and the legacy "docker" means native.
inline constexpr SandboxBackend fromName(std::optional<std::string_view> name) {
  if (!name) return SandboxBackend::none;
  if (*name == "docker") return SandboxBackend::native;
  return enumFromName(kSandboxBackendNames, *name).value_or(SandboxBackend::none);
}

}  // namespace ccsandbox
