// The C API over the C++ one: JSON in, JSON out, no exception crosses it.
#include "ccsandbox/ccsandbox.h"

#include "ccsandbox/runtime.hpp"

#include <cstdlib>
#include <cstring>

struct ccsandbox_runtime {
  std::unique_ptr<ccsandbox::Runtime> runtime;
};
struct ccsandbox_session {
  std::shared_ptr<ccsandbox::Session> session;
};
struct ccsandbox_process {
  std::shared_ptr<ccsandbox::Process> process;
};

namespace {

using namespace ccsandbox;

char *copy(const std::string &text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (out) std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

// Runs `body`; an exception becomes *error and `fallback`.
template <class T, class F>
T guarded(char **error, T fallback, F &&body) noexcept {
  try {
    return body();
  } catch (const std::exception &e) {
    if (error) *error = copy(e.what());
  } catch (...) {
    if (error) *error = copy("unknown error");
  }
  return fallback;
}

boost::json::value parseOrEmpty(const char *text, const char *what) {
  return json::parse(text && *text ? text : "{}", what);
}

template <class E, std::size_t N>
E readChoice(const EnumNames<E, N> &names, json::ObjectReader &r, std::string_view key, E dflt) {
  const auto *v = r.find(key);
  return v && !v->is_null() ? readEnum(names, *v, r.pathOf(key)) : dflt;
}

RuntimeOptions decodeRuntimeOptions(const boost::json::value &v) {
  json::ObjectReader r(v, "");
  RuntimeOptions o;
  if (auto *f = r.find("sandbox"))
    o.sandbox = readEnum(kSandboxSwitchNames, *f, r.pathOf("sandbox"));
  if (auto *f = r.find("pluginPath"))
    o.pluginPath = json::readStringList(*f, r.pathOf("pluginPath"));
  if (auto *f = r.find("searchInstallDir"))
    o.searchInstallDir = json::readBool(*f, r.pathOf("searchInstallDir"));
  o.terminalDefaultBackend =
      readChoice(kSandboxBackendNames, r, "terminalDefaultBackend", SandboxBackend::none);
  if (auto *f = r.find("pluginSettings")) {
    if (!f->is_object()) json::wrongType(r.pathOf("pluginSettings"), *f, "an object");
    o.pluginSettings = f->get_object();
  }
  if (auto *f = r.find("probeCacheDir"); f && !f->is_null())
    o.probeCacheDir = json::readString(*f, r.pathOf("probeCacheDir"));
  if (auto *f = r.find("refreshProbeCache"))
    o.refreshProbeCache = json::readBool(*f, r.pathOf("refreshProbeCache"));
  if (auto *f = r.find("killGraceMs"))
    o.killGrace = std::chrono::milliseconds(json::readInt(*f, r.pathOf("killGraceMs")));
  r.finish();
  return o;
}

}  // namespace

extern "C" {

ccsandbox_runtime *ccsandbox_runtime_new(const char *options_json, char **error) {
  return guarded<ccsandbox_runtime *>(error, nullptr, [&] {
    auto doc = parseOrEmpty(options_json, "runtime options");
    auto options = decodeRuntimeOptions(doc);
    return new ccsandbox_runtime{std::make_unique<Runtime>(std::move(options))};
  });
}

void ccsandbox_runtime_free(ccsandbox_runtime *runtime) {
  delete runtime;
}

char *ccsandbox_runtime_probe(ccsandbox_runtime *runtime) {
  return guarded<char *>(nullptr, nullptr, [&] {
    boost::json::array plugins;
    for (const auto &p : runtime->runtime->plugins()) {
      boost::json::object o = toJson(p.probe).as_object();
      o["name"] = p.name;
      o["backend"] = toString(p.backend);
      o["file"] = p.file;
      plugins.push_back(std::move(o));
    }
    boost::json::object doc{
        {"plugins", std::move(plugins)},
        {"sandbox", enumName(kSandboxSwitchNames, runtime->runtime->sandboxSwitch())},
        {"startupLine", runtime->runtime->startupLine()}};
    return copy(boost::json::serialize(doc));
  });
}

ccsandbox_session *ccsandbox_launch(ccsandbox_runtime *runtime, const char *launch_json,
                                    ccsandbox_event_fn on_event, void *user, char **error) {
  return guarded<ccsandbox_session *>(error, nullptr, [&] {
    auto doc = parseOrEmpty(launch_json, "launch request");
    json::ObjectReader r(doc, "");
    LaunchOptions launch;
    if (auto *f = r.find("spec")) launch.spec = decodeSandboxSpec(*f, "spec");
    launch.kind = readChoice(kLaunchKindNames, r, "kind", LaunchKind::agentBash);
    launch.backend = readChoice(kRequestedBackendNames, r, "backend", RequestedBackend::automatic);
    if (auto *f = r.find("plugin")) {
      if (auto name = json::readOptionalString(*f, "plugin")) launch.plugin = *name;
    }
    r.finish();
    if (on_event)
      launch.onEvent = [on_event, user](const SandboxEvent &e) {
        std::string text = boost::json::serialize(toJson(e));
        on_event(user, text.c_str());
      };
    return new ccsandbox_session{runtime->runtime->launch(std::move(launch))};
  });
}

char *ccsandbox_session_handle(ccsandbox_session *session) {
  return guarded<char *>(nullptr, nullptr, [&] {
    return copy(boost::json::serialize(toJson(session->session->handle())));
  });
}

int ccsandbox_session_set_egress_allowlist(ccsandbox_session *session, const char *allowlist_json,
                                           char **error) {
  return guarded<int>(error, -1, [&] {
    auto doc = json::parse(allowlist_json ? allowlist_json : "", "egress allowlist");
    session->session->setEgressAllowlist(json::readStringList(doc, "allowlist"));
    return 0;
  });
}

void ccsandbox_session_destroy(ccsandbox_session *session) {
  if (!session) return;
  guarded<int>(nullptr, 0, [&] {
    session->session->destroy();
    return 0;
  });
  delete session;
}

ccsandbox_process *ccsandbox_exec(ccsandbox_session *session, const char *exec_json, char **error) {
  return guarded<ccsandbox_process *>(error, nullptr, [&] {
    auto doc = parseOrEmpty(exec_json, "exec request");
    json::ObjectReader r(doc, "");
    ExecOptions o;
    o.argv = json::readStringList(r.require("argv"), "argv");
    if (auto *f = r.find("env")) {
      if (!f->is_object()) json::wrongType("env", *f, "an object");
      for (const auto &kv : f->get_object())
        o.env[std::string(kv.key())] =
            json::readString(kv.value(), json::joinPath("env", kv.key()));
    }
    if (auto *f = r.find("cwd")) o.cwd = json::readString(*f, "cwd");
    if (auto *f = r.find("stdinFd")) o.stdinFd = static_cast<int>(json::readInt(*f, "stdinFd"));
    if (auto *f = r.find("timeoutMs"); f && !f->is_null()) {
      auto ms = json::readInt(*f, "timeoutMs");
      if (ms <= 0) json::fail("timeoutMs", "must be a positive number of milliseconds");
      o.timeout = std::chrono::milliseconds(ms);
    }
    r.finish();
    return new ccsandbox_process{session->session->exec(std::move(o))};
  });
}

int ccsandbox_process_wait(ccsandbox_process *process) {
  return guarded<int>(nullptr, -1, [&] { return process->process->wait(); });
}

void ccsandbox_process_signal(ccsandbox_process *process, int signal) {
  guarded<int>(nullptr, 0, [&] {
    process->process->signal(signal);
    return 0;
  });
}

void ccsandbox_process_kill(ccsandbox_process *process) {
  guarded<int>(nullptr, 0, [&] {
    process->process->kill();
    return 0;
  });
}

void ccsandbox_process_free(ccsandbox_process *process) {
  delete process;
}

void ccsandbox_free(char *text) {
  std::free(text);
}

}  // extern "C"
