// A complete backend in one file: every command runs on the host at a lower
// CPU priority (under `nice -n 10`). It isolates nothing, so it says it is a
// `none` backend and reports no capabilities: the core will never route a
// launch that needs confinement to it.
#include <ccsandbox/host_process_backend.hpp>

namespace {

class HelloBackend final : public ccsandbox::sdk::HostProcessBackend {
 public:
  using HostProcessBackend::HostProcessBackend;

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

 protected:
  std::vector<std::string> commandPrefix() const override { return {"nice", "-n", "10"}; }
};

}  // namespace

CCSANDBOX_EXPORT_BACKEND(HelloBackend, "hello", "none");
