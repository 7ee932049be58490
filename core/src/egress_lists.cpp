#include "egress_lists.hpp"

#include "ccsandbox/domain_pattern.hpp"
#include "ccsandbox/json_reader.hpp"

#include "install_layout.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ccsandbox {

namespace fs = std::filesystem;

std::string egressListsPath() {
  if (const char *env = std::getenv("CCSANDBOX_EGRESS_LISTS"); env && *env) return env;
  return installedPath(std::string(CCSANDBOX_DATA_SUBDIR) + "/egress.json");
}

EgressLists loadEgressLists(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("egress lists: cannot read " + path +
                             " (installed with the core as share/ccsandbox/egress.json; "
                             "CCSANDBOX_EGRESS_LISTS overrides the path)");
  std::stringstream text;
  text << in.rdbuf();
  try {
    auto doc = json::parse(text.str(), path);
    json::ObjectReader r(doc, "");
    EgressLists lists;
    auto list = [&](const char *key) {
      auto v = json::readStringList(r.require(key), r.pathOf(key));
      for (const auto &entry : v) DomainPattern::parse(entry);  // throws naming the entry
      return v;
    };
    lists.baseline = list("baseline");
    lists.github = list("github");
    lists.denied = list("denied");
    r.find("comment");
    r.finish();
    return lists;
  } catch (const std::exception &e) {
    throw std::runtime_error("egress lists " + path + ": " + e.what());
  }
}

const EgressLists &shippedEgressLists() {
  static const EgressLists lists = loadEgressLists(egressListsPath());
  return lists;
}

}  // namespace ccsandbox
