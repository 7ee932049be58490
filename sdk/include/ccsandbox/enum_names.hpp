// One name table per enum: the spelling used in JSON and on the command line.
#pragma once

#include "ccsandbox/json_reader.hpp"

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ccsandbox {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
constexpr std::string_view enumName(const EnumNames<E, N> &names, E value) {
  for (const auto &[e, name] : names)
    if (e == value) return name;
  return "?";
}

template <class E, std::size_t N>
constexpr std::optional<E> enumFromName(const EnumNames<E, N> &names, std::string_view text) {
  for (const auto &[e, name] : names)
    if (name == text) return e;
  return std::nullopt;
}

template <class E, std::size_t N>
std::string enumChoices(const EnumNames<E, N> &names) {
  std::string out;
  for (const auto &[e, name] : names) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

// Strict decoding of an enum value: anything not in the table is an error naming the choices.
template <class E, std::size_t N>
E readEnum(const EnumNames<E, N> &names, const boost::json::value &v, std::string_view path) {
  std::string text = json::readString(v, path);
  if (auto e = enumFromName(names, text)) return *e;
  json::fail(path, "unknown value \"" + text + "\" (expected one of: " + enumChoices(names) + ")");
}

}  // namespace ccsandbox
