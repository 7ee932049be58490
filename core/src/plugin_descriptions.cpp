#include "plugin_descriptions.hpp"

#include "ccsandbox/backend_abi.h"
#include "ccsandbox/file_identity.hpp"
#include "ccsandbox/json_reader.hpp"
#include "ccsandbox/logging.hpp"

namespace ccsandbox {

namespace {

constexpr const char *kDocument = "plugins.json";

// A core of another ABI major reads none of it (it loads nothing of that ABI either).
std::string coreAbi() {
  return std::to_string(CCSANDBOX_ABI_MAJOR);
}

}  // namespace

PluginDescriptions::PluginDescriptions(const ProbeCache &cache) : cache_(cache) {
  auto doc = cache_.readDocument(kDocument);
  if (!doc) return;
  try {
    json::ObjectReader r(*doc, "");
    if (json::readString(r.require("coreAbiMajor"), "coreAbiMajor") != coreAbi()) return;
    const auto &plugins = r.require("plugins");
    r.finish();
    if (!plugins.is_object()) throw DecodeError("plugins: expected an object");
    for (const auto &[file, value] : plugins.get_object()) {
      json::ObjectReader e(value, json::joinPath("plugins", file));
      auto text = [&](const char *key) { return json::readString(e.require(key), e.pathOf(key)); };
      auto number = [&](const char *key) {
        auto n = json::readInt(e.require(key), e.pathOf(key));
        if (n < 0 || n > 0xffff) throw DecodeError(e.pathOf(key) + ": out of range");
        return static_cast<unsigned>(n);
      };
      Entry entry;
      entry.fileId = text("fileId");
      entry.description.name = text("name");
      auto backend = enumFromName(kSandboxBackendNames, text("backend"));
      if (!backend) throw DecodeError(e.pathOf("backend") + ": unknown backend value");
      entry.description.backend = *backend;
      entry.description.abiMajor = number("abiMajor");
      entry.description.abiMinor = number("abiMinor");
      e.finish();
      entries_.emplace(std::string(file), std::move(entry));
    }
  } catch (const DecodeError &e) {
    // Rewritten from what this process loads.
    logging::write(logging::Level::debug, "core",
                   std::string("kept plugin list ignored: ") + e.what());
    entries_.clear();
    changed_ = true;
  }
}

std::optional<PluginDescription> PluginDescriptions::find(const std::string &file) const {
  auto it = entries_.find(file);
  if (it == entries_.end() || it->second.description.abiMajor != CCSANDBOX_ABI_MAJOR)
    return std::nullopt;
  const std::string id = fileIdentity(file);
  if (id.empty() || id != it->second.fileId) return std::nullopt;
  return it->second.description;
}

void PluginDescriptions::remember(const PluginInfo &loaded) {
  Entry entry{fileIdentity(loaded.file),
              PluginDescription{loaded.name, loaded.backend, loaded.abiMajor, loaded.abiMinor}};
  if (entry.fileId.empty()) return forget(loaded.file);
  auto it = entries_.find(loaded.file);
  if (it != entries_.end() && it->second.fileId == entry.fileId &&
      it->second.description.name == entry.description.name &&
      it->second.description.backend == entry.description.backend &&
      it->second.description.abiMinor == entry.description.abiMinor)
    return;
  entries_[loaded.file] = std::move(entry);
  changed_ = true;
}

void PluginDescriptions::forget(const std::string &file) {
  changed_ |= entries_.erase(file) > 0;
}

void PluginDescriptions::save() {
  if (!changed_) return;
  boost::json::object plugins;
  for (const auto &[file, e] : entries_)
    plugins[file] = boost::json::object{{"fileId", e.fileId},
                                        {"name", e.description.name},
                                        {"backend", toString(e.description.backend)},
                                        {"abiMajor", e.description.abiMajor},
                                        {"abiMinor", e.description.abiMinor}};
  cache_.writeDocument(kDocument,
                       boost::json::object{{"coreAbiMajor", coreAbi()}, {"plugins", plugins}});
  changed_ = false;
}

}  // namespace ccsandbox
