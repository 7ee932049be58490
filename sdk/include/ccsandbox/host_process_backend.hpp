// A Backend whose commands are host processes (the `none` backend, wrappers
// such as the SDK example): exec, signal and destroy come from the
// ProcessGroupRunner; a subclass gives probe(), and may override launch() and
// commandPrefix() (what every command is run under, e.g. {"nice", "-n", "10"}).
#pragma once

#include "ccsandbox/backend.hpp"
#include "ccsandbox/process_group_runner.hpp"

namespace ccsandbox::sdk {

class HostProcessBackend : public Backend {
 public:
  HostProcessBackend(Host host, BackendConfig config)
      : Backend(host, std::move(config)), runner_(host) {}

  boost::json::object launch(const LaunchRequest &) override { return {}; }
  void exec(const ExecRequest &request) override { runner_.start(request, commandPrefix()); }
  void signal(const SignalRequest &request) override { runner_.signal(request); }
  void destroy(const std::string &sessionId) override { runner_.endSession(sessionId); }

 protected:
  virtual std::vector<std::string> commandPrefix() const { return {}; }

 private:
  ProcessGroupRunner runner_;
};

}  // namespace ccsandbox::sdk
