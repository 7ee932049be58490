#include "ccsandbox/runtime.hpp"

#include "ccsandbox/logging.hpp"
#include "deferred_removal.hpp"
#include "descriptor_shortage.hpp"
#include "env_sanitizer.hpp"
#include "plugin_descriptions.hpp"
#include "plugin_loader.hpp"
#include "policy_compiler.hpp"
#include "probe_cache.hpp"
#include "router.hpp"
#include "session.hpp"
#include "trusted_files.hpp"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <future>
#include <mutex>
#include <set>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <tuple>

extern char **environ;

namespace ccsandbox {

using logging::Level;

SandboxSwitch parseSandboxSwitch(std::string_view text, std::string_view origin) {
  if (auto v = enumFromName(kSandboxSwitchNames, text)) return *v;
  throw UsageError(std::string(origin) + ": invalid value \"" + std::string(text) +
                   "\" (accepted: on, off)");
}

RequestedBackend parseRequestedBackend(std::string_view text) {
  if (auto v = enumFromName(kRequestedBackendNames, text)) return *v;
  throw UsageError("--backend: invalid value \"" + std::string(text) +
                   "\" (accepted: " + enumChoices(kRequestedBackendNames) + ")");
}

namespace {

std::map<std::string, std::string> processEnvironment() {
  std::map<std::string, std::string> env;
  for (char **e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

std::string newSessionId() {
  // 48 bits straight from the kernel: std::random_device's set-up asks the CPU
  // what it offers, and in a VM each such question (cpuid) costs about 6 us.
  std::uint64_t bits = 0;
  while (::getrandom(&bits, sizeof bits, 0) != static_cast<ssize_t>(sizeof bits))
    if (errno != EINTR) throw std::system_error(errno, std::generic_category(), "getrandom");
  char buf[32];
  std::snprintf(buf, sizeof buf, "s-%012llx",
                static_cast<unsigned long long>(bits & 0xffffffffffffULL));
  return buf;
}

// One plugin's probe: a kept result when the cache has one for the same host facts and the
// plugin adopts it, else a fresh probe, kept for the next process when available.
ProbeResult probeOnce(LoadedPlugin &plugin, const ProbeCache *cache, bool refresh, bool &restored) {
  restored = false;
  const std::string &name = plugin.info().name;
  std::optional<ProbeKey> key;
  if (cache) {
    try {
      if (auto fingerprint = plugin.probeFingerprint())
        key = ProbeKey{name, plugin.info().file, *fingerprint};
    } catch (const std::exception &e) {
      logging::write(Level::warning, "core", std::string(e.what()) + "; its probe is not kept");
    }
  }
  if (key && !refresh) {
    if (auto kept = cache->find(*key)) {
      try {
        ProbeResult result = plugin.restoreProbe(*kept);
        restored = true;
        logging::write(Level::info, "core",
                       "probe of " + name + ": kept result from " + cache->dir() +
                           " (same boot, user, plugin file and host facts)");
        return result;
      } catch (const std::exception &e) {
        logging::write(Level::debug, "core",
                       std::string("kept probe refused, probing afresh: ") + e.what());
      }
    }
  }
  ProbeResult result = plugin.probe();
  if (key) cache->store(*key, result);
  return result;
}

}  // namespace

std::string defaultProbeCacheDir() {
  return ProbeCache::defaultDir();
}

HostFacts hostFacts() {
  HostFacts facts;
  const char *home = std::getenv("HOME");
  facts.home = home && *home == '/' ? home : "/";
#ifdef __APPLE__
  facts.platform = "macos";
#else
  facts.platform = "linux";
#endif
  return facts;
}

struct Runtime::Impl final : PluginEventSink {
  // First, so destroyed last: it waits for the directories of sessions that
  // ended while the rest of the runtime (plugins, proxies' loop) went.
  DeferredRemoval removal;
  RuntimeOptions options;
  SandboxSwitch sandbox = SandboxSwitch::on;
  std::map<std::string, std::string> hostEnv;
  std::optional<ProbeCache> probeCache;
  std::optional<PluginDescriptions> descriptions;  // loadPluginsAsNeeded with a usable cache
  Discovery discovery;
  // One per discovered plugin, in the same order; each probe is filled in once
  // (probePlugin), under probeMutex, and never changes after.
  std::vector<PluginInfo> infos;
  std::vector<bool> probed;
  std::mutex probeMutex;
  std::string startup;
  std::set<std::string> restoredProbes;   // plugins whose probe result came from the cache
  std::vector<std::string> trustedFiles;  // HostFacts::trustedFiles

  std::mutex sessionsMutex;
  std::map<std::string, std::shared_ptr<SessionImpl>> sessions;

  // The network loop of every restricted session's proxy pair, started on first use.
  std::mutex egressMutex;
  std::shared_ptr<EgressService> egress;
  std::shared_ptr<EgressService> egressService() {
    std::lock_guard lock(egressMutex);
    if (!egress) egress = EgressService::create(std::max(1u, options.egressThreads));
    return egress;
  }

  // Loads discovered plugin `i` when it was only described, and probes it; once.
  // A probe that fails, or a plugin that no longer loads, is an unavailable
  // backend, said why.
  void probePlugin(std::size_t i) {
    std::lock_guard lock(probeMutex);
    if (i >= probed.size() || probed[i]) return;
    probed[i] = true;
    DiscoveredPlugin &d = discovery.plugins[i];
    ProbeResult probe;
    try {
      loadDescribed(d, options.pluginSettings, *this);
    } catch (const std::exception &e) {
      logNotLoaded(d.info.file, e.what());
      if (descriptions) {
        descriptions->forget(d.info.file);
        descriptions->save();
      }
      probe.hint = std::string("cannot be loaded: ") + e.what();
      infos[i].probe = probe;
      return;
    }
    bool restored = false;
    try {
      probe = probeOnce(*d.loaded, probeCache ? &*probeCache : nullptr, options.refreshProbeCache,
                        restored);
    } catch (const std::exception &e) {
      logging::write(Level::warning, "core", e.what());
      probe = ProbeResult{};
      probe.hint = std::string("probe failed: ") + e.what();
    }
    if (restored) restoredProbes.insert(d.info.name);
    probe.state = {};  // the plugin's own business: kept in the cache, not shown
    d.loaded->setProbe(probe);
    infos[i].probe = probe;
  }

  void probeAll() {
    for (std::size_t i = 0; i < infos.size(); ++i) probePlugin(i);
  }

  RouterInput routerInput() {
    RouterInput in{sandbox, options.terminalDefaultBackend, &infos};
    in.probe = [this](const PluginInfo &p) {
      probePlugin(static_cast<std::size_t>(&p - infos.data()));
    };
    return in;
  }

  // A plugin the router chose: probed, so loaded.
  LoadedPlugin *plugin(const std::string &name) {
    for (auto &p : discovery.plugins)
      if (p.info.name == name) return p.loaded.get();
    return nullptr;
  }

  void onPluginEvent(const std::string &pluginName, std::string_view eventJson) override {
    SandboxEvent event;
    try {
      event = decodeSandboxEvent(json::parse(eventJson, "event from " + pluginName));
    } catch (const DecodeError &e) {
      logging::write(Level::error, pluginName, std::string("malformed event dropped: ") + e.what());
      return;
    }
    std::shared_ptr<SessionImpl> session;
    {
      std::lock_guard lock(sessionsMutex);
      if (auto it = sessions.find(event.sessionId); it != sessions.end()) session = it->second;
    }
    if (session) session->onBackendEvent(std::move(event));
  }
};

Runtime::Runtime(RuntimeOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  auto &o = impl_->options;
  if (o.sandbox) {
    impl_->sandbox = *o.sandbox;
  } else if (const char *env = std::getenv("CC_SERVER_SANDBOX"); env && *env) {
    impl_->sandbox = parseSandboxSwitch(env, "CC_SERVER_SANDBOX");
  }
  impl_->hostEnv = o.hostEnv ? *o.hostEnv : processEnvironment();

  if (o.probeCacheDir) {
    impl_->probeCache.emplace(*o.probeCacheDir);
    if (!impl_->probeCache->usable()) {
      // Said, not silent: someone else's or a shared directory is worth knowing about.
      logging::write(Level::warning, "core",
                     "probe cache off: " + impl_->probeCache->unusableReason() +
                         "; every plugin is probed afresh");
      impl_->probeCache.reset();
    }
  }
  if (o.loadPluginsAsNeeded && impl_->probeCache) impl_->descriptions.emplace(*impl_->probeCache);
  impl_->discovery = discoverPlugins(pluginSearchDirs(o), o.pluginSettings, *impl_,
                                     impl_->descriptions ? &*impl_->descriptions : nullptr);
  if (impl_->descriptions) impl_->descriptions->save();
  impl_->trustedFiles = ccsandbox::trustedFiles(o);
  for (const auto &p : impl_->discovery.plugins) impl_->infos.push_back(p.info);
  impl_->probed.assign(impl_->infos.size(), false);

  // Probe once, at start-up (as needed: when a route or plugins() reads one).
  if (!o.loadPluginsAsNeeded) impl_->probeAll();
  impl_->startup = ccsandbox::startupLine(impl_->routerInput(), impl_->discovery.searchedDirs);
  logging::write(Level::info, "core", impl_->startup);
}

Runtime::~Runtime() {
  std::map<std::string, std::shared_ptr<SessionImpl>> sessions;
  {
    std::lock_guard lock(impl_->sessionsMutex);
    sessions = impl_->sessions;
  }
  // Every session ends before the plugins that serve it are unloaded.
  for (auto &[id, s] : sessions) s->detach();
}

const std::vector<PluginInfo> &Runtime::plugins() const {
  impl_->probeAll();
  return impl_->infos;
}
SandboxSwitch Runtime::sandboxSwitch() const {
  return impl_->sandbox;
}
const std::string &Runtime::startupLine() const {
  return impl_->startup;
}

Route Runtime::route(LaunchKind kind, RequestedBackend requested,
                     const std::optional<std::string> &plugin) const {
  return routeLaunch(impl_->routerInput(), kind, requested, plugin);
}

const std::vector<std::string> &Runtime::trustedFiles() const {
  return impl_->trustedFiles;
}

std::map<std::string, std::string> Runtime::baseEnvironment(LaunchKind kind,
                                                            SandboxBackend backend) const {
  if (sanitisesEnvironment(kind, backend)) return sanitiseEnvironment(impl_->hostEnv);
  return impl_->hostEnv;
}

std::shared_ptr<Session> Runtime::launch(LaunchOptions options) {
  try {
    return launchSession(std::move(options));
  } catch (...) {
    rethrowIfOutOfDescriptors("cannot launch the session");
    throw;
  }
}

std::shared_ptr<Session> Runtime::launchSession(LaunchOptions options) {
  Route r = route(options.kind, options.backend, options.plugin);
  if (r.logLine) logging::write(Level::info, "core", *r.logLine);
  LoadedPlugin *plugin = impl_->plugin(r.plugin);
  if (!plugin) throw LaunchRefused("plugin " + r.plugin + " is not loaded");
  // The plugin may start its slow part now, while the policy is compiled.
  plugin->prepareLaunch();

  SessionImpl::Setup setup;
  if (options.spec.sessionId.empty()) options.spec.sessionId = newSessionId();
  setup.plugin = plugin;
  setup.handle.sessionId = options.spec.sessionId;
  setup.handle.backend = r.backend;
  setup.handle.state = SandboxState::created;
  setup.kind = options.kind;
  setup.spec = options.spec;
  setup.runtimeDir = std::make_unique<RuntimeDir>();
  // A restricted session gets its own proxy pair, before the plugin sees the
  // policy. Whether the network is open depends on the launch kind alone, so
  // the pair is bound on another thread while the policy is compiled (its
  // ports and sockets do not depend on the policy; it refuses everything until
  // it has the lists): 0.3-0.5 ms off every launch on a 2-CPU VM. The sockets
  // get a directory of their own: the native backend binds it whole.
  const bool restricted = r.backend != SandboxBackend::none && !networkOpenFor(options.kind);
  using BoundEgress = std::pair<std::shared_ptr<EgressService>, std::unique_ptr<EgressProxies>>;
  // A thread and a promise, not std::async, whose get() would also wait for
  // the thread's exit; the thread is joined when this function returns.
  std::future<BoundEgress> egressAhead;
  std::jthread egressThread;
  if (restricted) {
    std::promise<BoundEgress> bound;
    egressAhead = bound.get_future();
    egressThread = std::jthread([bound = std::move(bound), impl = impl_.get(),
                                 dir = setup.runtimeDir->makeSubdir("proxy")]() mutable {
      try {
        auto service = impl->egressService();
        auto proxies = bindSessionEgress(*service, dir);
        bound.set_value(BoundEgress{std::move(service), std::move(proxies)});
      } catch (...) {
        bound.set_exception(std::current_exception());
      }
    });
  }
  HostFacts facts = hostFacts();
  facts.tempDir = setup.runtimeDir->makeTempDir();
  facts.trustedFiles = impl_->trustedFiles;
  setup.policy = compilePolicy(options.spec, options.kind, facts, options.policy);
  checkEnforceable(plugin->info(), setup.policy);
  if (setup.policy.network.open == restricted && r.backend != SandboxBackend::none)
    throw std::logic_error(
        "the policy compiler and networkOpenFor() disagree on the network of "
        "this launch kind");  // fail closed: never a session without its pair
  if (restricted) {
    std::tie(setup.egressService, setup.egress) = egressAhead.get();
    applySessionEgress(*setup.egress, setup.policy);
  }
  setup.sanitise = sanitisesEnvironment(options.kind, r.backend);
  setup.baseEnv = baseEnvironment(options.kind, r.backend);
  setup.killGrace = impl_->options.killGrace;
  setup.onEvent = std::move(options.onEvent);
  Impl *impl = impl_.get();
  setup.onDestroyed = [impl](const std::string &id) {
    std::lock_guard lock(impl->sessionsMutex);
    impl->sessions.erase(id);
  };
  setup.disposeRuntimeDir = [impl](std::unique_ptr<RuntimeDir> dir) {
    impl->removal.add(std::move(dir));
  };

  std::shared_ptr<SessionImpl> session;
  {
    std::lock_guard lock(impl_->sessionsMutex);
    if (impl_->sessions.count(options.spec.sessionId))
      throw UsageError("session " + options.spec.sessionId + " is already running");
    session = std::make_shared<SessionImpl>(std::move(setup));
    impl_->sessions.emplace(options.spec.sessionId, session);
  }
  try {
    session->launch();
  } catch (const BackendError &e) {
    {
      std::lock_guard lock(impl_->sessionsMutex);
      impl_->sessions.erase(options.spec.sessionId);
    }
    bool restored;
    {
      std::lock_guard lock(impl_->probeMutex);
      restored = impl_->restoredProbes.count(r.plugin) > 0;
    }
    if (impl_->probeCache && restored) {
      // The host may have changed in a way no fingerprint sees: never trust that entry again.
      impl_->probeCache->forget(r.plugin);
      throw BackendError(std::string(e.what()) + " (the probe result of " + r.plugin +
                         " was kept from an earlier run; in case the host changed since, it is "
                         "dropped, and the next start probes afresh)");
    }
    throw;
  } catch (...) {
    std::lock_guard lock(impl_->sessionsMutex);
    impl_->sessions.erase(options.spec.sessionId);
    throw;
  }
  logging::write(Level::debug, "core",
                 "session " + options.spec.sessionId + " launched on " + r.plugin);
  return session;
}

}  // namespace ccsandbox
