#include "session.hpp"

#include "ccsandbox/logging.hpp"
#include "descriptor_shortage.hpp"
#include "env_sanitizer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace ccsandbox {

namespace {

std::pair<UniqueFd, UniqueFd> makePipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

}  // namespace

SessionImpl::SessionImpl(Setup setup) : setup_(std::move(setup)) {
  setup_.handle.details["runtimeDir"] = setup_.runtimeDir->path();
  setup_.handle.details["plugin"] = setup_.plugin->info().name;
}

SessionImpl::~SessionImpl() {
  destroy();
}

void SessionImpl::deliver(const SandboxEvent &event) {
  if (!setup_.onEvent) return;
  std::lock_guard lock(callbackMutex_);
  try {
    setup_.onEvent(event);
  } catch (const std::exception &e) {
    // The caller's bug must not take down the pump that serves its command.
    logging::write(logging::Level::error, "core", std::string("event callback threw: ") + e.what());
  } catch (...) {
    logging::write(logging::Level::error, "core", "event callback threw a non-standard exception");
  }
}

void SessionImpl::setState(SandboxState state) {
  std::lock_guard lock(mutex_);
  setup_.handle.state = state;
}

SandboxHandle SessionImpl::handle() const {
  std::lock_guard lock(mutex_);
  return setup_.handle;
}

void SessionImpl::launch() {
  SandboxEvent starting;
  starting.type = SandboxEventType::starting;
  starting.sessionId = setup_.handle.sessionId;
  starting.backend = setup_.handle.backend;
  deliver(starting);

  if (setup_.egress) {
    // Refused connections are violations of this session (no execId: the proxy
    // cannot tell which command opened the connection).
    std::weak_ptr<SessionImpl> weak = weak_from_this();
    setup_.egress->onRefusal([weak](const EgressRefusal &refusal) {
      auto self = weak.lock();
      if (!self) return;
      SandboxEvent e;
      e.type = SandboxEventType::violation;
      e.sessionId = self->setup_.handle.sessionId;
      e.violation = SandboxViolation{"network-outbound", refusal.target, refusal.reason};
      self->deliver(e);
    });
  }

  LaunchRequest request;
  request.sessionId = setup_.handle.sessionId;
  request.launchKind = setup_.kind;
  request.spec = setup_.spec;
  request.policy = setup_.policy;
  request.runtimeDir = setup_.runtimeDir->path();
  boost::json::object details;
  auto failed = [&](const std::exception &e) {
    std::lock_guard lock(mutex_);
    setup_.handle.state = SandboxState::error;
    setup_.handle.error = boost::json::object{{"message", e.what()}};
  };
  try {
    details = setup_.plugin->launch(request);
  } catch (const LaunchRefused &e) {
    failed(e);
    throw;  // the request's to fix: the backend refused it as asked
  } catch (const std::exception &e) {
    failed(e);
    throw BackendError(e.what());
  }
  {
    std::lock_guard lock(mutex_);
    for (auto &kv : details) setup_.handle.details[kv.key()] = kv.value();
    setup_.handle.state = SandboxState::warm;
  }
  SandboxEvent ready = starting;
  ready.type = SandboxEventType::ready;
  deliver(ready);
}

std::shared_ptr<Process> SessionImpl::exec(ExecOptions options) {
  try {
    return startCommand(std::move(options));
  } catch (...) {
    rethrowIfOutOfDescriptors("cannot start the command");
    throw;
  }
}

std::shared_ptr<Process> SessionImpl::startCommand(ExecOptions options) {
  if (options.argv.empty()) throw UsageError("exec needs a command to run");
  std::string execId;
  {
    std::lock_guard lock(mutex_);
    auto state = setup_.handle.state;
    if (state != SandboxState::warm && state != SandboxState::active)
      throw UsageError("session " + setup_.handle.sessionId + " is " +
                       std::string(toString(state)) + ", not ready for commands");
    execId = "e" + std::to_string(nextExec_++);
  }

  ExecRequest request;
  request.sessionId = setup_.handle.sessionId;
  request.execId = execId;
  request.argv = std::move(options.argv);
  request.env = setup_.baseEnv;
  for (auto &[k, v] : options.env) request.env[k] = v;
  if (setup_.sanitise) request.env = sanitiseEnvironment(std::move(request.env));
  // What the policy sets (TMPDIR, the proxy variables) comes last: no caller
  // overlay and no host variable replaces it.
  for (const auto &[k, v] : setup_.policy.env) request.env[k] = v;
  request.cwd = !options.cwd.empty() ? options.cwd : setup_.spec.guestWorkdir.value_or("/");

  auto [outRead, outWrite] = makePipe();
  auto [errRead, errWrite] = makePipe();
  UniqueFd devNull;
  int in = options.stdinFd;
  if (in < 0) {
    devNull.reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    in = devNull.get();
  }
  request.stdio = {in, outWrite.get(), errWrite.get()};

  std::weak_ptr<SessionImpl> weak = weak_from_this();
  CommandProcess::Hooks hooks;
  hooks.deliver = [weak](const SandboxEvent &e) {
    if (auto s = weak.lock()) s->deliver(e);
  };
  hooks.signal = [weak, execId](int sig) {
    auto s = weak.lock();
    if (!s) return;
    std::lock_guard lock(s->mutex_);
    if (!s->setup_.plugin) return;
    try {
      s->setup_.plugin->signal({s->setup_.handle.sessionId, execId, sig});
    } catch (const std::exception &e) {
      logging::write(logging::Level::warning, "core", e.what());
    }
  };
  hooks.finished = [weak, execId] {
    if (auto s = weak.lock()) s->commandFinished(execId);
  };
  // A sandbox that cannot report its denials gets the seed's stderr reading; a
  // supervised one only for what its supervisor does not see (read-only
  // mounts). `none` enforces nothing: nothing on its stderr is a violation.
  if (setup_.handle.backend != SandboxBackend::none)
    hooks.scanStderr = setup_.plugin->info().probe.has(capability::kSupervisedViolations)
                           ? StderrScan::readOnlyFileSystemOnly
                           : StderrScan::all;
  auto command = std::make_shared<CommandProcess>(request.sessionId, execId, std::move(outRead),
                                                  std::move(errRead), std::move(hooks),
                                                  options.timeout, setup_.killGrace);
  {
    std::lock_guard lock(mutex_);
    commands_[execId] = command;  // registered first: the backend may report at once
    ++running_;
    setup_.handle.state = SandboxState::active;
  }
  try {
    setup_.plugin->exec(request);
  } catch (...) {
    std::lock_guard lock(mutex_);
    commands_.erase(execId);
    if (--running_ == 0 && setup_.handle.state == SandboxState::active)
      setup_.handle.state = SandboxState::warm;
    throw;
  }
  // Our copies of the write ends close here, so EOF means the command's side is done.
  outWrite.reset();
  errWrite.reset();
  command->start();
  return command;
}

void SessionImpl::commandFinished(const std::string &) {
  std::lock_guard lock(mutex_);
  if (running_ > 0 && --running_ == 0 && setup_.handle.state == SandboxState::active)
    setup_.handle.state = SandboxState::warm;
}

void SessionImpl::onBackendEvent(SandboxEvent event) {
  std::shared_ptr<CommandProcess> command;
  if (event.execId) {
    std::lock_guard lock(mutex_);
    if (auto it = commands_.find(*event.execId); it != commands_.end()) command = it->second;
  }
  if (command)
    command->post(std::move(event));
  else
    deliver(event);
}

void SessionImpl::destroy() {
  std::map<std::string, std::shared_ptr<CommandProcess>> commands;
  LoadedPlugin *plugin = nullptr;
  {
    std::lock_guard lock(mutex_);
    if (setup_.handle.state == SandboxState::destroyed) return;
    commands = commands_;
    plugin = setup_.plugin;
  }
  if (setup_.egress) setup_.egress->stop();
  if (plugin) {
    try {
      plugin->destroy(setup_.handle.sessionId);
    } catch (const std::exception &e) {
      logging::write(logging::Level::error, "core", e.what());
    }
  }
  for (auto &[id, c] : commands) c->sessionEnded();
  for (auto &[id, c] : commands) c->join();
  {
    std::lock_guard lock(mutex_);
    commands_.clear();
    setup_.handle.state = SandboxState::destroyed;
  }
  if (setup_.onDestroyed) setup_.onDestroyed(setup_.handle.sessionId);
  // Nothing of the sandbox runs any more: its directories can go.
  std::function<void(std::unique_ptr<RuntimeDir>)> dispose;
  std::unique_ptr<RuntimeDir> dir;
  {
    std::lock_guard lock(mutex_);
    dispose = std::move(setup_.disposeRuntimeDir);
    setup_.disposeRuntimeDir = nullptr;
    if (dispose) dir = std::move(setup_.runtimeDir);
  }
  if (dispose) dispose(std::move(dir));
}

void SessionImpl::detach() {
  destroy();
  std::lock_guard lock(mutex_);
  setup_.plugin = nullptr;
  setup_.disposeRuntimeDir = nullptr;  // the runtime that would take it is going
}

std::vector<std::string> SessionImpl::egressAllowlist() const {
  if (!setup_.egress)
    throw UsageError("session " + setup_.handle.sessionId +
                     " has no egress proxies (backend none or an open network)");
  return setup_.egress->allowlist();
}

void SessionImpl::setEgressAllowlist(const std::vector<std::string> &allowlist) {
  if (!setup_.egress)
    throw UsageError("session " + setup_.handle.sessionId +
                     " has no egress proxies (backend none or an open network)");
  try {
    setup_.egress->setAllowlist(allowlist);
  } catch (const DomainPatternError &e) {
    throw UsageError(e.what());
  }
}

}  // namespace ccsandbox
