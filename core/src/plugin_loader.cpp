#include "plugin_loader.hpp"

#include "ccsandbox/logging.hpp"

#include "install_layout.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <system_error>

namespace ccsandbox {

namespace fs = std::filesystem;
using logging::Level;

LoadedPlugin::LoadedPlugin(boost::dll::shared_library library, const ccsandbox_backend_t *table,
                           PluginInfo info, PluginEventSink &sink)
    : library_(std::move(library)), table_(table), info_(std::move(info)), sink_(sink) {
  host_.abi_major = CCSANDBOX_ABI_MAJOR;
  host_.abi_minor = CCSANDBOX_ABI_MINOR;
  host_.ctx = this;
  host_.emit_event = &LoadedPlugin::emitEvent;
  host_.log = &LoadedPlugin::log;
}

LoadedPlugin::~LoadedPlugin() {
  // The plugin joins its own threads in shutdown, before its code is unmapped.
  if (instance_) table_->shutdown(instance_);
}

void LoadedPlugin::init(const boost::json::object &settings) {
  // The real file, not a link to it: a plugin finds its companions (helpers,
  // data) relative to where it is installed.
  std::error_code ec;
  auto real = fs::canonical(info_.file, ec);
  boost::json::object config{{"pluginFile", ec ? info_.file : real.string()},
                             {"settings", settings}};
  std::string text = boost::json::serialize(config);
  char *reply = nullptr;
  int rc = table_->init(&host_, text.c_str(), &instance_, &reply);
  takeReply(rc, reply, "init");
}

boost::json::value LoadedPlugin::takeReply(int rc, char *reply, std::string_view what) {
  std::string text = reply ? reply : "";
  if (reply) table_->free_reply(reply);
  boost::json::value value;
  try {
    value = text.empty() ? boost::json::value(boost::json::object{})
                         : json::parse(text, "reply of " + info_.name + " to " + std::string(what));
  } catch (const DecodeError &e) {
    throw BackendError(e.what());
  }
  if (rc != CCSANDBOX_OK) {
    std::string message = "unknown error";
    bool request = false;
    if (value.is_object()) {
      if (auto *m = value.get_object().if_contains("error"); m && m->is_string())
        message = std::string(m->get_string());
      if (auto *c = value.get_object().if_contains("cause"); c && c->is_string())
        request = c->get_string() == "request";
    }
    // A launch that could not be carried out as asked: the caller's to fix.
    if (request && what == "launch") throw LaunchRefused(info_.name + ": " + message);
    throw BackendError(info_.name + ": " + std::string(what) + " failed: " + message);
  }
  return value;
}

boost::json::value LoadedPlugin::call(Call fn, const boost::json::value &request,
                                      std::string_view what) {
  std::string text = boost::json::serialize(request);
  char *reply = nullptr;
  int rc = fn(instance_, text.c_str(), &reply);
  return takeReply(rc, reply, what);
}

ProbeResult LoadedPlugin::probe() {
  char *reply = nullptr;
  int rc = table_->probe(instance_, &reply);
  auto value = takeReply(rc, reply, "probe");
  try {
    return decodeProbeResult(value);
  } catch (const DecodeError &e) {
    throw BackendError(info_.name + ": probe result: " + e.what());
  }
}

namespace {

bool hasProbeCacheMembers(const ccsandbox_backend_t &t) {
  // A 1.0 table ends before these members: they are read only when the minor says so.
  return t.abi_minor >= 1 && t.probe_fingerprint && t.probe_restore;
}

}  // namespace

std::optional<std::string> LoadedPlugin::probeFingerprint() {
  if (!hasProbeCacheMembers(*table_)) return std::nullopt;
  char *reply = nullptr;
  int rc = table_->probe_fingerprint(instance_, &reply);
  auto value = takeReply(rc, reply, "probe_fingerprint");
  const auto *f = value.is_object() ? value.get_object().if_contains("fingerprint") : nullptr;
  if (!f) return std::nullopt;
  if (!f->is_string() || f->get_string().empty())
    throw BackendError(info_.name +
                       ": probe_fingerprint: \"fingerprint\" must be a non-empty string");
  return std::string(f->get_string());
}

void LoadedPlugin::prepareLaunch() {
  // Read only when the plugin's table is long enough to have the member.
  if (table_->abi_minor >= 2 && table_->prepare_launch) table_->prepare_launch(instance_);
}

ProbeResult LoadedPlugin::restoreProbe(const ProbeResult &earlier) {
  if (!hasProbeCacheMembers(*table_))
    throw BackendError(info_.name + ": restores no kept probe (plugin ABI " +
                       std::to_string(table_->abi_major) + "." + std::to_string(table_->abi_minor) +
                       ")");
  auto value = call(table_->probe_restore, toJson(earlier), "probe_restore");
  try {
    return decodeProbeResult(value);
  } catch (const DecodeError &e) {
    throw BackendError(info_.name + ": probe_restore result: " + e.what());
  }
}

boost::json::object LoadedPlugin::launch(const LaunchRequest &request) {
  auto value = call(table_->launch, toJson(request), "launch");
  if (auto *d = value.is_object() ? value.get_object().if_contains("details") : nullptr;
      d && d->is_object())
    return d->get_object();
  return {};
}

void LoadedPlugin::exec(const ExecRequest &request) {
  call(table_->exec, toJson(request), "exec");
}

void LoadedPlugin::signal(const SignalRequest &request) {
  call(table_->signal, toJson(request), "signal");
}

void LoadedPlugin::destroy(const std::string &sessionId) {
  call(table_->destroy, boost::json::object{{"sessionId", sessionId}}, "destroy");
}

void LoadedPlugin::emitEvent(void *ctx, const char *eventJson) noexcept {
  auto *self = static_cast<LoadedPlugin *>(ctx);
  try {
    if (eventJson) self->sink_.onPluginEvent(self->info_.name, eventJson);
  } catch (const std::exception &e) {
    // An event handler's failure (the embedding program's callback) loses
    // that event for that handler; it must not take the plugin down.
    try {
      log(ctx, CCSANDBOX_LOG_ERROR, (std::string("an event handler failed: ") + e.what()).c_str());
    } catch (...) {
    }
  } catch (...) {
    log(ctx, CCSANDBOX_LOG_ERROR, "an event handler failed");
  }
}

void LoadedPlugin::log(void *ctx, int level, const char *message) noexcept {
  auto *self = static_cast<LoadedPlugin *>(ctx);
  Level l = level <= CCSANDBOX_LOG_DEBUG     ? Level::debug
            : level == CCSANDBOX_LOG_INFO    ? Level::info
            : level == CCSANDBOX_LOG_WARNING ? Level::warning
                                             : Level::error;
  try {
    logging::write(l, self->info_.name, message ? message : "");
  } catch (...) {
    // Nowhere left to say it.
  }
}

namespace {

bool validFunctions(const ccsandbox_backend_t &t) {
  return t.init && t.shutdown && t.probe && t.launch && t.exec && t.signal && t.destroy &&
         t.free_reply;
}

// Why a file is not loaded.
struct Rejected : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The plugin in `file`, loaded and initialised; throws Rejected. `known`: the
// plugins found before it, whose names it may not repeat (nullptr: not checked).
std::unique_ptr<LoadedPlugin> load(const fs::path &file, const boost::json::object &settings,
                                   const std::vector<DiscoveredPlugin> *known,
                                   PluginEventSink &sink) {
  boost::dll::shared_library library;
  try {
    // rtld_now: a plugin with unresolved symbols fails here, not in the middle of a launch.
    // RTLD_NODELETE: a plugin stays mapped until the process ends. A plugin carrying its own
    // C++ runtime allocates at load what it never frees (its exception pool, 71 KiB), lost
    // if the file were unmapped; whether glibc kept one mapped anyway depended on the order
    // plugins were loaded in (it keeps a library that first defines a unique symbol).
    constexpr auto nodelete = static_cast<boost::dll::load_mode::type>(RTLD_NODELETE);
    library.load(file,
                 boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local | nodelete);
  } catch (const std::exception &e) {
    throw Rejected(e.what());
  }
  if (!library.has(CCSANDBOX_BACKEND_SYMBOL))
    throw Rejected(std::string("no ") + CCSANDBOX_BACKEND_SYMBOL +
                   " symbol (not a ccsandbox backend plugin)");
  const auto &table = library.get<const ccsandbox_backend_t>(CCSANDBOX_BACKEND_SYMBOL);
  // The version comes first and is read before anything else in the table.
  if (table.abi_major != CCSANDBOX_ABI_MAJOR)
    throw Rejected("plugin ABI " + std::to_string(table.abi_major) + "." +
                   std::to_string(table.abi_minor) + ", core ABI " +
                   std::to_string(CCSANDBOX_ABI_MAJOR) + "." + std::to_string(CCSANDBOX_ABI_MINOR) +
                   ": major versions differ");
  if (!table.name || !*table.name || !table.backend || !validFunctions(table))
    throw Rejected("incomplete backend table (missing name, backend or function)");
  auto backend = enumFromName(kSandboxBackendNames, table.backend);
  if (!backend)
    throw Rejected(std::string("unknown backend value \"") + table.backend +
                   "\" (expected native, none or microvm)");
  if (known)
    for (const auto &p : *known)
      if (p.info.name == table.name)
        throw Rejected(std::string("plugin name \"") + table.name + "\" is already provided by " +
                       p.info.file);
  PluginInfo info;
  info.name = table.name;
  info.backend = *backend;
  info.file = file.string();
  info.abiMajor = table.abi_major;
  info.abiMinor = table.abi_minor;
  auto plugin = std::make_unique<LoadedPlugin>(std::move(library), &table, info, sink);
  boost::json::object pluginSettings;
  if (auto *s = settings.if_contains(info.name); s && s->is_object())
    pluginSettings = s->get_object();
  try {
    plugin->init(pluginSettings);
  } catch (const std::exception &e) {
    throw Rejected(e.what());
  }
  return plugin;
}

}  // namespace

Discovery discoverPlugins(const std::vector<std::string> &dirs, const boost::json::object &settings,
                          PluginEventSink &sink, PluginDescriptions *described) {
  Discovery out;
  std::set<fs::path> seenDirs;
  for (const auto &dirText : dirs) {
    if (dirText.empty()) continue;
    fs::path dir(dirText);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      logging::write(Level::warning, "core",
                     "plugin directory " + dirText + ": skipped: not a directory or not found");
      continue;
    }
    fs::path canonical = fs::canonical(dir, ec);
    if (ec || !seenDirs.insert(canonical).second) continue;  // searched already
    out.searchedDirs.push_back(dirText);
    std::vector<fs::path> files;
    for (const auto &entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".so" && entry.is_regular_file(ec))
        files.push_back(entry.path());
    std::sort(files.begin(), files.end());  // a stable order makes "first wins" predictable
    for (const auto &file : files) {
      if (described) {
        // Taken as it was when loaded; a name already found sends it to a real load,
        // which says why it is skipped.
        auto d = described->find(file.string());
        if (d && std::none_of(out.plugins.begin(), out.plugins.end(),
                              [&](const DiscoveredPlugin &p) { return p.info.name == d->name; })) {
          DiscoveredPlugin plugin;
          plugin.info =
              PluginInfo{d->name, d->backend, file.string(), d->abiMajor, d->abiMinor, {}};
          out.plugins.push_back(std::move(plugin));
          continue;
        }
      }
      try {
        DiscoveredPlugin plugin;
        plugin.loaded = load(file, settings, &out.plugins, sink);
        plugin.info = plugin.loaded->info();
        if (described) described->remember(plugin.info);
        out.plugins.push_back(std::move(plugin));
      } catch (const Rejected &e) {
        if (described) described->forget(file.string());
        logNotLoaded(file.string(), e.what());
      }
    }
  }
  return out;
}

void loadDescribed(DiscoveredPlugin &plugin, const boost::json::object &settings,
                   PluginEventSink &sink) {
  if (plugin.loaded) return;
  auto loaded = load(plugin.info.file, settings, nullptr, sink);
  const PluginInfo &real = loaded->info();
  if (real.name != plugin.info.name || real.backend != plugin.info.backend ||
      real.abiMinor != plugin.info.abiMinor)
    throw std::runtime_error("the file is no longer the plugin it was (" + real.name + ", " +
                             std::string(toString(real.backend)) + " backend) when described as " +
                             plugin.info.name + ", " + std::string(toString(plugin.info.backend)) +
                             " backend");
  plugin.loaded = std::move(loaded);
}

void logNotLoaded(const std::string &file, const std::string &reason) {
  logging::write(Level::warning, "core", "plugin " + file + ": not loaded: " + reason);
}

std::string installedPluginDir() {
  return installedPath(CCSANDBOX_PLUGIN_SUBDIR);
}

}  // namespace ccsandbox
