// The log of tests/fixtures/kept_probe_backend.cpp: one word per call it
// recorded (init, probe, restore).
#pragma once

#include "support/temp_tree.hpp"

#include <filesystem>
#include <string>

namespace ccsandbox::test {

// What the fixture recorded in `log` since the last call, as "word word ";
// empties the log.
inline std::string takeKeptProbeCalls(const std::string &log) {
  std::string all = std::filesystem::exists(log) ? readFile(log) : "";
  std::filesystem::remove(log);
  std::string out;
  for (char c : all) out += c == '\n' ? ' ' : c;
  return out;
}

}  // namespace ccsandbox::test
