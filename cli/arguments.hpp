// A cursor over argv for the subcommands: options in `--name value` or
// `--name=value` form; every mistake is a UsageError naming the option.
#pragma once

#include "ccsandbox/runtime.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ccsandbox::cli {

class Arguments {
 public:
  Arguments(std::vector<std::string> args) : args_(std::move(args)) {}

  bool done() const { return pos_ >= args_.size(); }
  const std::string &peek() const { return args_[pos_]; }

  // True (and consumed) when the next argument is the flag `name`.
  bool flag(const std::string &name) {
    if (done() || args_[pos_] != name) return false;
    ++pos_;
    return true;
  }

  // The value of option `name` when it comes next (`--name v` or `--name=v`).
  std::optional<std::string> option(const std::string &name) {
    if (done()) return std::nullopt;
    const std::string &a = args_[pos_];
    if (a == name) {
      if (pos_ + 1 >= args_.size()) throw UsageError(name + ": needs a value");
      pos_ += 2;
      return args_[pos_ - 1];
    }
    if (a.rfind(name + "=", 0) == 0) {
      ++pos_;
      return a.substr(name.size() + 1);
    }
    return std::nullopt;
  }

  // The next argument, consumed.
  std::string next() { return args_[pos_++]; }

  // Everything after a `--`.
  std::vector<std::string> rest() {
    std::vector<std::string> out(args_.begin() + static_cast<long>(pos_), args_.end());
    pos_ = args_.size();
    return out;
  }

  [[noreturn]] void unknown() const {
    const std::string &a = args_[pos_];
    if (!a.empty() && a[0] == '-') throw UsageError("unknown option " + a + " (see --help)");
    throw UsageError("unexpected argument \"" + a + "\" (see --help)");
  }

 private:
  std::vector<std::string> args_;
  std::size_t pos_ = 0;
};

}  // namespace ccsandbox::cli
