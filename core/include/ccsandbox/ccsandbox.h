/* The core's C API, for hosts that are not C++ (an FFI). The same runtime as
 * runtime.hpp: requests and results are UTF-8 JSON with the C++ API's field
 * names. Every char* returned is owned by the caller: release it with
 * ccsandbox_free. On failure a function returns NULL (or -1) and, when
 * `error` is not NULL, stores a message a user can act on in *error. */
#ifndef CCSANDBOX_CCSANDBOX_H
#define CCSANDBOX_CCSANDBOX_H

#ifdef __cplusplus
extern "C" {
#endif

#define CCSANDBOX_C_API __attribute__((visibility("default")))

typedef struct ccsandbox_runtime ccsandbox_runtime;
typedef struct ccsandbox_session ccsandbox_session;
typedef struct ccsandbox_process ccsandbox_process;

/* One event (see sandbox_event.hpp for the shapes). Called from a runtime
 * thread, one event at a time per session; event_json is valid during the call. */
typedef void (*ccsandbox_event_fn)(void *user, const char *event_json);

/* options_json: NULL for the defaults, or {"sandbox": "on"|"off",
 * "pluginPath": [dirs], "searchInstallDir": bool, "terminalDefaultBackend":
 * "none"|"native"|"microvm", "pluginSettings": {name: {...}}, "killGraceMs": n,
 * "probeCacheDir": dir or null, "refreshProbeCache": bool} (RuntimeOptions).
 * Discovers and probes the plugins and logs the start-up line. */
CCSANDBOX_C_API ccsandbox_runtime *ccsandbox_runtime_new(const char *options_json, char **error);
CCSANDBOX_C_API void ccsandbox_runtime_free(ccsandbox_runtime *runtime);

/* {"plugins": [...], "sandbox": "on"|"off", "startupLine": "..."} */
CCSANDBOX_C_API char *ccsandbox_runtime_probe(ccsandbox_runtime *runtime);

/* launch_json: {"spec": SandboxSpec, "kind": "agent-bash"|"acp"|"claude-code"|"terminal",
 * "backend": "auto"|"native"|"none"|"microvm", "plugin": name or null}. */
CCSANDBOX_C_API ccsandbox_session *ccsandbox_launch(ccsandbox_runtime *runtime,
                                                    const char *launch_json,
                                                    ccsandbox_event_fn on_event, void *user,
                                                    char **error);
/* The SandboxHandle as JSON. */
CCSANDBOX_C_API char *ccsandbox_session_handle(ccsandbox_session *session);
/* Replaces the session's egress allowlist while it runs (a JSON array of
 * patterns); the proxies consult it for every new connection. 0 or -1. */
CCSANDBOX_C_API int ccsandbox_session_set_egress_allowlist(ccsandbox_session *session,
                                                           const char *allowlist_json,
                                                           char **error);
/* Ends every process of the session and releases it. */
CCSANDBOX_C_API void ccsandbox_session_destroy(ccsandbox_session *session);

/* exec_json: {"argv": [...], "env": {...}, "cwd": "...", "stdinFd": -1, "timeoutMs": n}. */
CCSANDBOX_C_API ccsandbox_process *ccsandbox_exec(ccsandbox_session *session, const char *exec_json,
                                                  char **error);
/* Blocks until the command's exit event was delivered; its exit code. */
CCSANDBOX_C_API int ccsandbox_process_wait(ccsandbox_process *process);
CCSANDBOX_C_API void ccsandbox_process_signal(ccsandbox_process *process, int signal);
CCSANDBOX_C_API void ccsandbox_process_kill(ccsandbox_process *process);
CCSANDBOX_C_API void ccsandbox_process_free(ccsandbox_process *process);

CCSANDBOX_C_API void ccsandbox_free(char *text);

#ifdef __cplusplus
}
#endif

#endif /* CCSANDBOX_CCSANDBOX_H */
