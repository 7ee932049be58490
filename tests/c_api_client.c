/* A C host of the core, compiled as C: proves ccsandbox.h is a C header and
 * drives a whole session through it. */
#include "ccsandbox/ccsandbox.h"

#include <stdio.h>
#include <string.h>

struct collected {
  char text[4096];
};

static void on_event(void *user, const char *event_json) {
  struct collected *c = (struct collected *)user;
  size_t used = strlen(c->text);
  snprintf(c->text + used, sizeof c->text - used, "%s\n", event_json);
}

/* Runs `sh -c script` through the none backend of plugin_dir; returns the
 * exit code, or -1 with the error in `events`. */
int c_client_run(const char *plugin_dir, const char *script, char *events, size_t cap) {
  char options[1024], exec[1024];
  char *error = NULL;
  struct collected c;
  c.text[0] = '\0';
  snprintf(options, sizeof options,
           "{\"pluginPath\": [\"%s\"], \"searchInstallDir\": false, \"sandbox\": \"on\"}",
           plugin_dir);
  ccsandbox_runtime *rt = ccsandbox_runtime_new(options, &error);
  if (!rt) {
    snprintf(events, cap, "%s", error);
    ccsandbox_free(error);
    return -1;
  }
  ccsandbox_session *s = ccsandbox_launch(rt, "{\"backend\": \"none\", \"kind\": \"agent-bash\"}",
                                          on_event, &c, &error);
  if (!s) {
    snprintf(events, cap, "%s", error);
    ccsandbox_free(error);
    ccsandbox_runtime_free(rt);
    return -1;
  }
  snprintf(exec, sizeof exec, "{\"argv\": [\"sh\", \"-c\", \"%s\"]}", script);
  ccsandbox_process *p = ccsandbox_exec(s, exec, &error);
  int status = -1;
  if (p) {
    status = ccsandbox_process_wait(p);
    ccsandbox_process_free(p);
  } else {
    snprintf(c.text, sizeof c.text, "%s", error);
    ccsandbox_free(error);
  }
  ccsandbox_session_destroy(s);
  ccsandbox_runtime_free(rt);
  snprintf(events, cap, "%s", c.text);
  return status;
}

/* The error message the API gives for a bad launch request. */
void c_client_bad_launch(const char *plugin_dir, char *message, size_t cap) {
  char options[1024];
  char *error = NULL;
  snprintf(options, sizeof options, "{\"pluginPath\": [\"%s\"], \"searchInstallDir\": false}",
           plugin_dir);
  ccsandbox_runtime *rt = ccsandbox_runtime_new(options, &error);
  ccsandbox_session *s = ccsandbox_launch(
      rt, "{\"spec\": {\"bindMounts\": [{\"hostPath\": \"rel\"}]}}", NULL, NULL, &error);
  snprintf(message, cap, "%s", s ? "(launched)" : error);
  ccsandbox_free(error);
  error = NULL;
  /* A none session has no proxies: replacing its allowlist is an error, not a no-op. */
  ccsandbox_session *plain = ccsandbox_launch(rt, "{\"backend\": \"none\"}", NULL, NULL, &error);
  if (plain && ccsandbox_session_set_egress_allowlist(plain, "[\"example.com\"]", &error) == 0)
    snprintf(message, cap, "%s", "(allowlist replaced on a none session)");
  if (plain) ccsandbox_session_destroy(plain);
  ccsandbox_free(error);
  if (s) ccsandbox_session_destroy(s);
  ccsandbox_runtime_free(rt);
}

/* The error message for runtime options with a probe cache directory of the
 * wrong type; "" when the runtime was created anyway. */
void c_client_bad_options(char *message, size_t cap) {
  char *error = NULL;
  ccsandbox_runtime *rt =
      ccsandbox_runtime_new("{\"searchInstallDir\": false, \"probeCacheDir\": 5}", &error);
  snprintf(message, cap, "%s", rt ? "" : error);
  ccsandbox_free(error);
  if (rt) ccsandbox_runtime_free(rt);
}
