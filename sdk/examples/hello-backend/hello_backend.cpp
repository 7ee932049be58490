// A complete backend in one file: every command runs on the host at a lower
// CPU priority (under `nice -n 10`). It isolates nothing, so it says it is a
// `none` backend and reports no capabilities: the core will never route a
// launch that needs confinement to it.
#include <ccsandbox/backend.hpp>
#include <ccsandbox/process_group_runner.hpp>

namespace {

class HelloBackend final : public ccsandbox::sdk::Backend {
 public:
  HelloBackend(ccsandbox::sdk::Host host, ccsandbox::sdk::BackendConfig config)
      : Backend(host, std::move(config)), runner_(host) {}

  ccsandbox::ProbeResult probe() override {
    ccsandbox::ProbeResult p;
    int err = 0;
    p.available = !ccsandbox::sdk::resolveCommand("nice", {{"PATH", "/usr/bin:/bin"}}, err).empty();
    p.note = "hello: commands run on the host under nice -n 10 (no isolation)";
    p.hint = "hello: nice(1) not found in /usr/bin or /bin";
    return p;
  }

  boost::json::object launch(const ccsandbox::LaunchRequest &request) override {
    host().log(ccsandbox::sdk::LogLevel::info, "hello: session " + request.sessionId);
    return {{"niceness", 10}};
  }

  void exec(const ccsandbox::ExecRequest &request) override {
    runner_.start(request, {"nice", "-n", "10"});
  }
  void signal(const ccsandbox::SignalRequest &request) override { runner_.signal(request); }
  void destroy(const std::string &sessionId) override { runner_.endSession(sessionId); }

 private:
  ccsandbox::sdk::ProcessGroupRunner runner_;
};

}  // namespace

CCSANDBOX_EXPORT_BACKEND(HelloBackend, "hello", "none");
