// The `none` backend: no isolation. The command runs directly on the host with
// the host's file system, network and processes. What it still gets from the
// core (the sanitised environment for agent launches) is decided there.
#include "ccsandbox/backend.hpp"
#include "ccsandbox/process_group_runner.hpp"

namespace {

class NoneBackend final : public ccsandbox::sdk::Backend {
 public:
  NoneBackend(ccsandbox::sdk::Host host, ccsandbox::sdk::BackendConfig config)
      : Backend(host, std::move(config)), runner_(host) {}

  ccsandbox::ProbeResult probe() override {
    ccsandbox::ProbeResult p;
    p.available = true;
    p.note = "no isolation: commands run directly on the host";
    return p;  // no capabilities: it enforces nothing
  }

  boost::json::object launch(const ccsandbox::LaunchRequest &) override { return {}; }

  void exec(const ccsandbox::ExecRequest &request) override { runner_.start(request); }

  void signal(const ccsandbox::SignalRequest &request) override { runner_.signal(request); }

  void destroy(const std::string &sessionId) override { runner_.endSession(sessionId); }

 private:
  ccsandbox::sdk::ProcessGroupRunner runner_;
};

}  // namespace

CCSANDBOX_EXPORT_BACKEND(NoneBackend, "none", "none");
