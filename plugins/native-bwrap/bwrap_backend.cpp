// The Linux native backend: bubblewrap builds the namespaces, our helper runs
// inside as pid 1. Mechanism only: the policy arrives compiled (LaunchRequest.
// policy) and becomes bwrap arguments in mount_plan.cpp; what this backend
// cannot enforce is said through the probe's capabilities, and the core's
// router refuses such launches.
//
// Settings (RuntimeOptions::pluginSettings["native-bwrap"]):
//   bwrapPath   the bwrap binary (default: found on PATH)
//   helperPath  ccsandbox-bwrap-helper (default: <prefix>/libexec/ccsandbox/)
#include "bwrap_probe.hpp"
#include "bwrap_session.hpp"
#include "spawner_thread.hpp"

#include "ccsandbox/backend.hpp"

#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>

namespace ccsandbox::bwrap {

namespace {

std::string setting(const boost::json::object &settings, const char *name) {
  auto it = settings.find(name);
  if (it == settings.end() || it->value().is_null()) return "";
  if (!it->value().is_string())
    throw std::invalid_argument(std::string("native-bwrap setting ") + name + " must be a string");
  return std::string(it->value().get_string());
}

class BwrapBackend final : public sdk::Backend {
 public:
  BwrapBackend(sdk::Host host, sdk::BackendConfig config) : Backend(host, std::move(config)) {
    bwrapSetting_ = setting(this->config().settings, "bwrapPath");
    helperSetting_ = setting(this->config().settings, "helperPath");
  }

  ~BwrapBackend() override {
    std::map<std::string, std::shared_ptr<BwrapSession>> sessions;
    {
      std::lock_guard lock(mutex_);
      sessions.swap(sessions_);
    }
    sessions.clear();  // each destroys its sandbox
  }

  ProbeResult probe() override {
    ProbeOutcome outcome = probeBwrap(bwrapSetting_, helperSetting_, defaultHelper(), spawner_);
    std::lock_guard lock(mutex_);
    probed_ = outcome;
    return outcome.result;
  }

  std::optional<std::string> probeFingerprint() override {
    return bwrapProbeFingerprint(bwrapSetting_, helperSetting_, defaultHelper());
  }

  ProbeResult restoreProbe(const ProbeResult &earlier) override {
    ProbeOutcome outcome =
        restoreBwrapProbe(earlier, bwrapSetting_, helperSetting_, defaultHelper());
    std::lock_guard lock(mutex_);
    probed_ = outcome;
    return outcome.result;
  }

  // Starts a bubblewrap for the coming launch, on the spawner thread, without
  // waiting for it: its start runs while the core compiles the policy.
  void prepareLaunch() override {
    std::lock_guard lock(mutex_);
    if (!probed_ || !probed_->result.available || standby_.valid()) return;
    standby_ = spawner_.start([host = probed_->host] { return BwrapSession::standby(host); });
  }

  boost::json::object launch(const LaunchRequest &request) override {
    BwrapHost bwrapHost;
    std::future<StandbyBwrap> standby;
    {
      std::lock_guard lock(mutex_);
      if (!probed_) throw std::runtime_error("native-bwrap was asked to launch before its probe");
      if (!probed_->result.available)
        throw std::runtime_error("native-bwrap is not available: " + probed_->result.hint);
      if (sessions_.count(request.sessionId))
        throw std::runtime_error("session " + request.sessionId + " is already running");
      bwrapHost = probed_->host;
      standby = std::move(standby_);
    }
    std::optional<StandbyBwrap> started;
    if (standby.valid()) {
      try {
        started.emplace(standby.get());
      } catch (const std::exception &e) {
        // Not started ahead after all: the launch starts its own (and says why if it cannot).
        host().log(sdk::LogLevel::debug, std::string("bubblewrap started ahead: ") + e.what());
      }
    }
    auto session =
        std::make_shared<BwrapSession>(request, bwrapHost, spawner_, host(), std::move(started));
    auto details = session->details();
    std::lock_guard lock(mutex_);
    sessions_[request.sessionId] = std::move(session);
    return details;
  }

  void exec(const ExecRequest &request) override { find(request.sessionId)->exec(request); }

  void signal(const SignalRequest &request) override { find(request.sessionId)->signal(request); }

  void destroy(const std::string &sessionId) override {
    std::shared_ptr<BwrapSession> session;
    {
      std::lock_guard lock(mutex_);
      auto it = sessions_.find(sessionId);
      if (it == sessions_.end()) return;
      session = std::move(it->second);
      sessions_.erase(it);
    }
    session->destroy();
    // Nothing of the sandbox runs now; bubblewrap and the helper exit on
    // their own, and are reaped on the spawner thread instead of the caller's
    // time (the plugin's shutdown waits for them, behind that thread's queue).
    spawner_.start([session] { session->reap(); });
  }

 private:
  // Shared: a destroy racing an exec leaves the exec a live (destroyed) session to refuse it.
  std::shared_ptr<BwrapSession> find(const std::string &sessionId) {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(sessionId);
    if (it == sessions_.end()) throw std::runtime_error("no native-bwrap session " + sessionId);
    return it->second;
  }

  std::string defaultHelper() const {
    std::filesystem::path plugin(config().pluginFile);
    std::error_code ec;
    auto p =
        std::filesystem::weakly_canonical(plugin.parent_path() / CCSANDBOX_HELPER_RELATIVE, ec);
    return ec ? (plugin.parent_path() / CCSANDBOX_HELPER_RELATIVE).string() : p.string();
  }

  std::string bwrapSetting_, helperSetting_;
  SpawnerThread spawner_;
  std::mutex mutex_;
  std::optional<ProbeOutcome> probed_;
  std::map<std::string, std::shared_ptr<BwrapSession>> sessions_;
  // Started by prepareLaunch() for the next launch; one unused when the plugin
  // goes is killed and reaped with its future, before the spawner thread ends.
  std::future<StandbyBwrap> standby_;
};

}  // namespace
}  // namespace ccsandbox::bwrap

CCSANDBOX_EXPORT_BACKEND(ccsandbox::bwrap::BwrapBackend, "native-bwrap", "native");
