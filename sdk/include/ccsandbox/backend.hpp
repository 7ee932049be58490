// The C++ side of the backend ABI: derive from ccsandbox::sdk::Backend, then
//
//   CCSANDBOX_EXPORT_BACKEND(MyBackend, "my-backend", "native")
//
// in exactly one source file of the plugin. The macro builds the
// `ccsandbox_backend_v1` table; exceptions never cross the boundary (they
// become an error reply carrying what()).
#pragma once

#include "ccsandbox/backend_abi.h"
#include "ccsandbox/launch_request.hpp"
#include "ccsandbox/probe_result.hpp"
#include "ccsandbox/sandbox_event.hpp"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <optional>
#include <stdexcept>
#include <string>

namespace ccsandbox::sdk {

enum class LogLevel {
  debug = CCSANDBOX_LOG_DEBUG,
  info = CCSANDBOX_LOG_INFO,
  warning = CCSANDBOX_LOG_WARNING,
  error = CCSANDBOX_LOG_ERROR
};

// The host's services, as the plugin sees them. Thread-safe.
class Host {
 public:
  explicit Host(const ccsandbox_host_t *table) : table_(table) {}

  void emit(const SandboxEvent &event) const {
    std::string text = boost::json::serialize(toJson(event));
    table_->emit_event(table_->ctx, text.c_str());
  }
  void log(LogLevel level, const std::string &message) const {
    table_->log(table_->ctx, static_cast<int>(level), message.c_str());
  }

 private:
  const ccsandbox_host_t *table_;
};

// Thrown by a plugin's launch() when the request itself cannot be carried out
// as asked (a bind whose source does not exist), as opposed to a failure of
// the host or the backend. The reply says so ({"error": …, "cause": "request"}): the
// host reports it to the caller as a refused launch, and does not take it as
// a sign that the host changed.
class RequestError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What `init` passes to the plugin's constructor.
struct BackendConfig {
  std::string pluginFile;        // the shared object this plugin was loaded from
  boost::json::object settings;  // host-provided settings, e.g. {"bwrapPath": "/usr/bin/bwrap"}
};

class Backend {
 public:
  Backend(Host host, BackendConfig config) : host_(host), config_(std::move(config)) {}
  virtual ~Backend() = default;
  Backend(const Backend &) = delete;
  Backend &operator=(const Backend &) = delete;

  // Called once, at host start-up. Must not throw for "not available": say so in the result.
  virtual ProbeResult probe() = 0;
  // Optional (ABI 1.1): lets the host keep an available probe result between processes.
  // Cheap, starts nothing: a text that changes whenever a host fact probe() depends on changes
  // (the binaries it runs, kernel settings, the caller). nullopt: never keep this host's probe.
  virtual std::optional<std::string> probeFingerprint() { return std::nullopt; }
  // Adopts `earlier`, a result probe() returned under the same fingerprint, as if it had just
  // probed; returns the result to act on. Throw to refuse it: the host then calls probe().
  virtual ProbeResult restoreProbe(const ProbeResult &earlier) {
    (void)earlier;
    throw std::runtime_error("this backend does not restore a kept probe");
  }
  // Optional (ABI 1.2): a launch is coming. Start what takes long and depends on nothing
  // in the request, without blocking; launch() discards it if it turns out unfit, and it
  // must be released by the destructor if no launch follows. Exceptions are swallowed.
  virtual void prepareLaunch() {}
  // Returns when the session is warm; the result is the handle's `details`.
  virtual boost::json::object launch(const LaunchRequest &request) = 0;
  // Starts the command and returns; its end is an `exit` event through host().
  virtual void exec(const ExecRequest &request) = 0;
  virtual void signal(const SignalRequest &request) = 0;
  // Ends every process of the session. Must be idempotent.
  virtual void destroy(const std::string &sessionId) = 0;

 protected:
  const Host &host() const { return host_; }
  const BackendConfig &config() const { return config_; }

 private:
  Host host_;
  BackendConfig config_;
};

namespace detail {

inline char *copyReply(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// Runs `body`, turning any exception into CCSANDBOX_ERR with {"error": what()}
// (and "cause": "request" for a RequestError).
template <class F>
int guarded(char **reply, F &&body) noexcept {
  try {
    boost::json::value result = body();
    if (reply) *reply = copyReply(boost::json::serialize(result));
    return CCSANDBOX_OK;
  } catch (const RequestError &e) {
    if (reply)
      *reply = copyReply(
          boost::json::serialize(boost::json::object{{"error", e.what()}, {"cause", "request"}}));
  } catch (const std::exception &e) {
    if (reply) *reply = copyReply(boost::json::serialize(boost::json::object{{"error", e.what()}}));
  } catch (...) {
    if (reply) *reply = copyReply(R"({"error":"unknown exception in backend plugin"})");
  }
  return CCSANDBOX_ERR;
}

inline BackendConfig decodeConfig(const char *configJson) {
  BackendConfig config;
  auto doc = json::parse(configJson ? configJson : "{}", "plugin config");
  json::ObjectReader r(doc, "");
  if (auto *f = r.find("pluginFile")) config.pluginFile = json::readString(*f, "pluginFile");
  if (auto *f = r.find("settings")) {
    if (!f->is_object()) json::wrongType("settings", *f, "an object");
    config.settings = f->get_object();
  }
  r.finish();
  return config;
}

template <class B>
struct Adapter {
  static B &self(void *instance) { return *static_cast<B *>(instance); }
  static boost::json::value request(const char *text) {
    return json::parse(text ? text : "", "request");
  }

  static int init(const ccsandbox_host_t *host, const char *config, void **instance, char **reply) {
    return guarded(reply, [&] {
      *instance = new B(Host(host), decodeConfig(config));
      return boost::json::value(boost::json::object{});
    });
  }
  static void shutdown(void *instance) { delete static_cast<B *>(instance); }
  static int probe(void *instance, char **reply) {
    return guarded(reply, [&] { return toJson(self(instance).probe()); });
  }
  static int probeFingerprint(void *instance, char **reply) {
    return guarded(reply, [&] {
      boost::json::object out;
      if (auto f = self(instance).probeFingerprint()) out["fingerprint"] = *f;
      return boost::json::value(std::move(out));
    });
  }
  static int probeRestore(void *instance, const char *req, char **reply) {
    return guarded(reply, [&] {
      return toJson(self(instance).restoreProbe(decodeProbeResult(request(req))));
    });
  }
  static void prepareLaunch(void *instance) noexcept {
    try {
      self(instance).prepareLaunch();
    } catch (...) {
      // Only a hint: launch() starts from nothing.
    }
  }
  static int launch(void *instance, const char *req, char **reply) {
    return guarded(reply, [&] {
      auto details = self(instance).launch(decodeLaunchRequest(request(req)));
      return boost::json::value({{"details", std::move(details)}});
    });
  }
  static int exec(void *instance, const char *req, char **reply) {
    return guarded(reply, [&] {
      self(instance).exec(decodeExecRequest(request(req)));
      return boost::json::value(boost::json::object{});
    });
  }
  static int signal(void *instance, const char *req, char **reply) {
    return guarded(reply, [&] {
      self(instance).signal(decodeSignalRequest(request(req)));
      return boost::json::value(boost::json::object{});
    });
  }
  static int destroy(void *instance, const char *req, char **reply) {
    return guarded(reply, [&] {
      auto doc = request(req);
      json::ObjectReader r(doc, "");
      self(instance).destroy(json::readString(r.require("sessionId"), "sessionId"));
      r.finish();
      return boost::json::value(boost::json::object{});
    });
  }
  static void freeReply(char *reply) { std::free(reply); }
};

template <class B>
constexpr ccsandbox_backend_t makeTable(const char *name, const char *backend) {
  return ccsandbox_backend_t{CCSANDBOX_ABI_MAJOR,
                             CCSANDBOX_ABI_MINOR,
                             name,
                             backend,
                             &Adapter<B>::init,
                             &Adapter<B>::shutdown,
                             &Adapter<B>::probe,
                             &Adapter<B>::launch,
                             &Adapter<B>::exec,
                             &Adapter<B>::signal,
                             &Adapter<B>::destroy,
                             &Adapter<B>::freeReply,
                             &Adapter<B>::probeFingerprint,
                             &Adapter<B>::probeRestore,
                             &Adapter<B>::prepareLaunch};
}

}  // namespace detail
}  // namespace ccsandbox::sdk

// Exports `BackendClass` as this plugin's table. `BackendValue` is "native", "none" or "microvm".
#define CCSANDBOX_EXPORT_BACKEND(BackendClass, Name, BackendValue) \
  extern "C" __attribute__((visibility("default")))                \
  const ccsandbox_backend_t ccsandbox_backend_v1 =                 \
      ::ccsandbox::sdk::detail::makeTable<BackendClass>(Name, BackendValue)
