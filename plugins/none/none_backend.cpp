// The `none` backend: no isolation. The command runs directly on the host with
// the host's file system, network and processes. What it still gets from the
// core (the sanitised environment for agent launches) is decided there.
#include "ccsandbox/host_process_backend.hpp"

namespace {

class NoneBackend final : public ccsandbox::sdk::HostProcessBackend {
 public:
  using HostProcessBackend::HostProcessBackend;

  ccsandbox::ProbeResult probe() override {
    ccsandbox::ProbeResult p;
    p.available = true;
    p.note = "no isolation: commands run directly on the host";
    return p;  // no capabilities: it enforces nothing
  }
};

}  // namespace

CCSANDBOX_EXPORT_BACKEND(NoneBackend, "none", "none");
