// A launched session: its handle and state machine, its commands, and the
// routing of backend events to them.
#pragma once

#include "ccsandbox/runtime.hpp"
#include "command_process.hpp"
#include "egress_proxies.hpp"
#include "plugin_loader.hpp"
#include "runtime_dir.hpp"

#include <map>
#include <memory>
#include <mutex>

namespace ccsandbox {

class SessionImpl final : public Session, public std::enable_shared_from_this<SessionImpl> {
 public:
  struct Setup {
    LoadedPlugin *plugin = nullptr;
    SandboxHandle handle;
    LaunchKind kind = LaunchKind::agentBash;
    SandboxSpec spec;
    std::unique_ptr<RuntimeDir> runtimeDir;
    EffectivePolicy policy;
    std::map<std::string, std::string> baseEnv;
    bool sanitise = true;
    std::chrono::milliseconds killGrace{2000};
    EventCallback onEvent;
    std::function<void(const std::string &)> onDestroyed;  // the runtime forgets the session
    // Takes the runtime directory once the sandbox is gone (DeferredRemoval);
    // without it the directory goes with the session object.
    std::function<void(std::unique_ptr<RuntimeDir>)> disposeRuntimeDir;
    // Restricted sessions only: the egress loop (outlives the pair) and the pair.
    std::shared_ptr<EgressService> egressService;
    std::unique_ptr<EgressProxies> egress;
  };

  explicit SessionImpl(Setup setup);
  ~SessionImpl() override;

  // created -> warm, with `starting` and `ready`; on failure state error and BackendError.
  void launch();

  SandboxHandle handle() const override;
  std::shared_ptr<Process> exec(ExecOptions options) override;
  void destroy() override;
  std::vector<std::string> egressAllowlist() const override;
  void setEgressAllowlist(const std::vector<std::string> &allowlist) override;

  // From the runtime: an event the backend emitted for this session.
  void onBackendEvent(SandboxEvent event);
  // The runtime is going away: destroy, and never touch the plugin again.
  void detach();

 private:
  std::shared_ptr<Process> startCommand(ExecOptions options);
  void deliver(const SandboxEvent &event);
  void setState(SandboxState state);
  void commandFinished(const std::string &execId);

  Setup setup_;
  mutable std::mutex mutex_;  // state, handle, commands
  std::mutex callbackMutex_;  // one event at a time to the caller
  std::map<std::string, std::shared_ptr<CommandProcess>> commands_;
  std::size_t running_ = 0;
  std::size_t nextExec_ = 1;
};

}  // namespace ccsandbox
