// The egress lists shipped with the core (share/ccsandbox/egress.json): the
// curated baseline (LLM providers, git hosting, package registries), the
// GitHub domains, and the fixed deny list that wins over every allow.
#pragma once

#include <string>
#include <vector>

namespace ccsandbox {

struct EgressLists {
  std::vector<std::string> baseline;
  std::vector<std::string> github;
  std::vector<std::string> denied;
};

// Loaded once (thread-safe) from CCSANDBOX_EGRESS_LISTS if set, else from the
// data file installed next to the core (<prefix>/share/ccsandbox/egress.json;
// the build tree mirrors that layout). Throws std::runtime_error naming the
// file when it is missing or malformed, or when an entry is not a valid pattern.
const EgressLists &shippedEgressLists();

// Parses one lists file; used by shippedEgressLists() and by tests.
EgressLists loadEgressLists(const std::string &path);

// Where shippedEgressLists() reads from.
std::string egressListsPath();

}  // namespace ccsandbox
