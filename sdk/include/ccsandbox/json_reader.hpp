// Strict JSON decoding: every error names the field path it is about
// (`bindMounts[2].hostPath: must be absolute`), unknown fields are refused.
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ccsandbox {

// Thrown for input that does not decode; what() is a message a user can act on.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace json {

inline std::string joinPath(std::string_view parent, std::string_view key) {
  if (parent.empty()) return std::string(key);
  std::string out(parent);
  out += '.';
  out += key;
  return out;
}

inline std::string indexPath(std::string_view parent, std::size_t index) {
  return std::string(parent) + "[" + std::to_string(index) + "]";
}

[[noreturn]] inline void fail(std::string_view path, std::string_view message) {
  std::string text(path.empty() ? std::string_view("(document)") : path);
  text += ": ";
  text += message;
  throw DecodeError(text);
}

inline const char *kindName(const boost::json::value &v) {
  switch (v.kind()) {
    case boost::json::kind::null: return "null";
    case boost::json::kind::bool_: return "a boolean";
    case boost::json::kind::int64:
    case boost::json::kind::uint64:
    case boost::json::kind::double_: return "a number";
    case boost::json::kind::string: return "a string";
    case boost::json::kind::array: return "an array";
    case boost::json::kind::object: return "an object";
  }
  return "a value";
}

[[noreturn]] inline void wrongType(std::string_view path, const boost::json::value &v,
                                   std::string_view expected) {
  fail(path, "must be " + std::string(expected) + ", not " + kindName(v));
}

inline std::string readString(const boost::json::value &v, std::string_view path) {
  if (!v.is_string()) wrongType(path, v, "a string");
  return std::string(v.get_string());
}

inline bool readBool(const boost::json::value &v, std::string_view path) {
  if (!v.is_bool()) wrongType(path, v, "a boolean");
  return v.get_bool();
}

inline std::int64_t readInt(const boost::json::value &v, std::string_view path) {
  if (v.is_int64()) return v.get_int64();
  if (v.is_uint64() && v.get_uint64() <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(v.get_uint64());
  if (v.is_double()) {
    double d = v.get_double();
    if (d == static_cast<double>(static_cast<std::int64_t>(d))) return static_cast<std::int64_t>(d);
  }
  wrongType(path, v, "an integer");
}

inline std::optional<std::string> readOptionalString(const boost::json::value &v,
                                                     std::string_view path) {
  if (v.is_null()) return std::nullopt;
  return readString(v, path);
}

inline const boost::json::array &readArray(const boost::json::value &v, std::string_view path) {
  if (!v.is_array()) wrongType(path, v, "an array");
  return v.get_array();
}

inline std::vector<std::string> readStringList(const boost::json::value &v, std::string_view path) {
  const auto &arr = readArray(v, path);
  std::vector<std::string> out;
  out.reserve(arr.size());
  for (std::size_t i = 0; i < arr.size(); ++i)
    out.push_back(readString(arr[i], indexPath(path, i)));
  return out;
}

// Walks one JSON object: each field read through it is marked as known, and
// finish() refuses whatever is left.
class ObjectReader {
 public:
  ObjectReader(const boost::json::value &v, std::string path) : path_(std::move(path)) {
    if (!v.is_object()) wrongType(path_, v, "an object");
    object_ = &v.get_object();
  }

  // The reader points into the value: a temporary would dangle.
  ObjectReader(boost::json::value &&, std::string) = delete;

  const std::string &path() const { return path_; }
  std::string pathOf(std::string_view key) const { return joinPath(path_, key); }

  // The field's value, or nullptr when absent.
  const boost::json::value *find(std::string_view key) {
    known_.emplace_back(key);
    auto it = object_->find(key);
    return it == object_->end() ? nullptr : &it->value();
  }

  const boost::json::value &require(std::string_view key) {
    const auto *v = find(key);
    if (!v) fail(pathOf(key), "required field is missing");
    return *v;
  }

  void finish() const {
    for (const auto &kv : *object_) {
      bool isKnown = false;
      for (const auto &k : known_)
        if (k == kv.key()) isKnown = true;
      if (!isKnown) {
        std::string expected;
        for (const auto &k : known_) expected += (expected.empty() ? "" : ", ") + k;
        fail(pathOf(kv.key()), "unknown field (expected one of: " + expected + ")");
      }
    }
  }

 private:
  const boost::json::object *object_ = nullptr;
  std::string path_;
  std::vector<std::string> known_;
};

// Parses a whole document; a syntax error names the place (line:column) it was found.
inline boost::json::value parse(std::string_view text, std::string_view what) {
  boost::json::stream_parser parser;
  boost::system::error_code ec;
  std::size_t used = parser.write_some(text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = boost::json::error::extra_data;
  if (!ec) parser.finish(ec);
  if (ec) {
    std::size_t line = 1, column = 1;
    for (std::size_t i = 0; i < used && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw DecodeError(std::string(what) + ": invalid JSON at line " + std::to_string(line) +
                      ", column " + std::to_string(column) + ": " + ec.message());
  }
  return parser.release();
}

}  // namespace json
}  // namespace ccsandbox
