// What a launch would be given, without launching: the compiled policy, the
// plugin the launch would be routed to, whether that plugin can enforce the
// policy, and the environment treatment. `ccsandbox policy` prints this; a
// launch with the same options compiles the same policy (only the session's
// temp dir, created at launch, gets its real name then).
#pragma once

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/export.hpp"
#include "ccsandbox/runtime.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ccsandbox {

struct PolicyPreview {
  EffectivePolicy policy;
  std::optional<Route> route;          // unset when routing refuses
  std::optional<std::string> refusal;  // why the launch would be refused, if it would
  // The refusal is only about the filename rules: --no-filename-rules (weaker) would run.
  bool refusedOnlyForFilenameRules = false;
  bool environmentSanitised = false;            // the launch drops the injection variables
  std::vector<std::string> environmentRemoved;  // of this process's variables, the ones dropped
};

// The policy `options` compiles to on this host, with the session's temp dir
// shown as `<runtime base>/ccsandbox-XXXXXX/tmp`, for a Runtime made with
// `runtimeOptions` (its plugin directories and kept probes are ccsandbox's own
// files, write-denied under a write root). Throws UsageError for input the
// compiler refuses (a relative host path, a write root inside a secret).
CCSANDBOX_API EffectivePolicy compileLaunchPolicy(const LaunchOptions &options,
                                                  const RuntimeOptions &runtimeOptions = {});

// What `runtime.launch(options)` would compile, plus routing, enforceability
// and the environment.
CCSANDBOX_API PolicyPreview previewLaunch(const Runtime &runtime, const LaunchOptions &options);

// The temp-dir placeholder compileLaunchPolicy uses.
CCSANDBOX_API std::string previewTempDir();

}  // namespace ccsandbox
