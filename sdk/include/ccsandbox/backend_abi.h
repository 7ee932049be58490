/* ccsandbox backend ABI, version 1.2.
 *
 * A backend plugin is a shared object that exports one C-linkage symbol,
 * `ccsandbox_backend_v1`, of type `ccsandbox_backend_t`. The table starts with
 * the ABI version so that the host can read it before trusting anything else.
 *
 * Growth rules (the way SQLite's sqlite3_vfs grows):
 *   - fields are only ever appended; a new field comes with a new minor version
 *     and the host reads it only when `abi_minor` says it is there;
 *   - a change that is not an append bumps the major version, and the host
 *     refuses a plugin whose major differs from its own.
 *
 * Data crosses the boundary as UTF-8 JSON text, never as C++ objects, so a
 * plugin built by another compiler or standard library still loads. File
 * descriptors (the command's stdio) cross as plain integers inside the JSON.
 *
 * Plugin authors do not fill this table by hand: derive from
 * ccsandbox::sdk::Backend (backend.hpp) and use CCSANDBOX_EXPORT_BACKEND.
 */
#ifndef CCSANDBOX_BACKEND_ABI_H
#define CCSANDBOX_BACKEND_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CCSANDBOX_ABI_MAJOR 1
#define CCSANDBOX_ABI_MINOR 2

/* The symbol every plugin exports. */
#define CCSANDBOX_BACKEND_SYMBOL "ccsandbox_backend_v1"

/* Return codes of the table's calls. On CCSANDBOX_ERR the reply, if any, is a
 * JSON object {"error": "<message a user can act on>"}; a `launch` whose
 * request cannot be carried out as asked (not a failure of the host or the
 * backend) adds "cause": "request", and the host reports a refused launch.
 * Hosts that predate the field read it as a failure, which is also safe. */
#define CCSANDBOX_OK 0
#define CCSANDBOX_ERR 1

enum ccsandbox_log_level {
  CCSANDBOX_LOG_DEBUG = 0,
  CCSANDBOX_LOG_INFO = 1,
  CCSANDBOX_LOG_WARNING = 2,
  CCSANDBOX_LOG_ERROR = 3
};

/* What the host hands a plugin. Valid from `init` until `shutdown` returns.
 * Both functions are thread-safe and may be called from any plugin thread. */
typedef struct ccsandbox_host {
  uint32_t abi_major;
  uint32_t abi_minor;
  void *ctx;
  /* One event, a JSON object with at least "sessionId" and "type"
   * (see event.hpp for the shapes). The host copies what it needs. */
  void (*emit_event)(void *ctx, const char *event_json);
  /* One log line, attributed by the host to this plugin. */
  void (*log)(void *ctx, int level, const char *message);
} ccsandbox_host_t;

/* The table a plugin exports. Every call that produces a reply stores a
 * NUL-terminated JSON text allocated by the plugin in *reply; the host gives it
 * back through `free_reply`. `instance` is what `init` returned. */
typedef struct ccsandbox_backend {
  uint32_t abi_major;  /* CCSANDBOX_ABI_MAJOR the plugin was built against */
  uint32_t abi_minor;  /* CCSANDBOX_ABI_MINOR the plugin was built against */
  const char *name;    /* unique plugin name, e.g. "native-bwrap" */
  const char *backend; /* "native", "none" or "microvm" */

  /* config_json: {"pluginFile": "...", "settings": {...}} */
  int (*init)(const ccsandbox_host_t *host, const char *config_json, void **instance, char **reply);
  void (*shutdown)(void *instance);

  /* reply: a ProbeResult. Called once, at host start-up. */
  int (*probe)(void *instance, char **reply);
  /* request: a LaunchRequest (sessionId, spec, policy, launchKind, runtimeDir).
   * Returns when the session is warm; reply: {"details": {...}}. */
  int (*launch)(void *instance, const char *request_json, char **reply);
  /* request: an ExecRequest (sessionId, execId, argv, env, cwd, stdio fds).
   * Starts the command and returns; its end is reported by an "exit" event.
   * The stdio fds belong to the host: the plugin duplicates what it keeps. */
  int (*exec)(void *instance, const char *request_json, char **reply);
  /* request: {"sessionId", "execId", "signal": <number>}: signal the command's
   * whole process group. */
  int (*signal)(void *instance, const char *request_json, char **reply);
  /* request: {"sessionId"}: end every process of the session and release it. */
  int (*destroy)(void *instance, const char *request_json, char **reply);

  void (*free_reply)(char *reply);
  /* ABI 1.0 ends here. */

  /* ABI 1.1: a probe the host may keep and reuse in later processes of the same
   * boot and user (a one-shot CLI would otherwise pay for a trial sandbox every
   * time). Both members may be NULL: the plugin is then probed afresh each time.
   *
   * probe_fingerprint: without starting anything, reply {"fingerprint": "<text>"}
   * where the text changes whenever a host fact that the probe's result depends
   * on changes (the binaries it runs, kernel settings, the caller's identity);
   * reply {} when this host's probe must not be kept.
   * probe_restore: request: a ProbeResult this plugin's `probe` returned earlier
   * under the same fingerprint (with its "state"). The plugin adopts it as if it
   * had just probed, and replies the ProbeResult it will act on; on ERR the host
   * probes afresh. The host keeps only available results. */
  int (*probe_fingerprint)(void *instance, char **reply);
  int (*probe_restore)(void *instance, const char *probe_json, char **reply);
  /* ABI 1.1 ends here. */

  /* ABI 1.2: a hint that a `launch` is coming (the host calls it, then compiles
   * the policy and starts the session's proxies). The plugin may start what
   * takes long and depends on nothing in the request (a bubblewrap's own
   * start-up), so that `launch` finds it under way. It must not block and has
   * nothing to fail: `launch` discards what turns out unfit, and what no launch
   * follows is reused by the next one or released at `shutdown`. May be NULL. */
  void (*prepare_launch)(void *instance);
  /* ABI 1.2 ends here. Append new members below, with a new minor version. */
} ccsandbox_backend_t;

#ifdef __cplusplus
}
#endif

#endif /* CCSANDBOX_BACKEND_ABI_H */
