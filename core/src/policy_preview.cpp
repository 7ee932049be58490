#include "ccsandbox/policy_preview.hpp"

#include "env_sanitizer.hpp"
#include "policy_compiler.hpp"
#include "router.hpp"
#include "runtime_dir.hpp"
#include "trusted_files.hpp"

#include <algorithm>

extern char **environ;

namespace ccsandbox {

std::string previewTempDir() {
  return RuntimeDir::tempDirPlaceholder();
}

namespace {

EffectivePolicy compileWith(const LaunchOptions &options, std::vector<std::string> trusted) {
  HostFacts facts = hostFacts();
  facts.tempDir = previewTempDir();
  facts.trustedFiles = std::move(trusted);
  return compilePolicy(options.spec, options.kind, facts, options.policy);
}

}  // namespace

EffectivePolicy compileLaunchPolicy(const LaunchOptions &options,
                                    const RuntimeOptions &runtimeOptions) {
  return compileWith(options, trustedFiles(runtimeOptions));
}

PolicyPreview previewLaunch(const Runtime &runtime, const LaunchOptions &options) {
  PolicyPreview preview;
  preview.policy = compileWith(options, runtime.trustedFiles());
  try {
    preview.route = runtime.route(options.kind, options.backend, options.plugin);
  } catch (const LaunchRefused &e) {
    preview.refusal = e.what();
  }
  for (const auto &info : runtime.plugins()) {
    if (!preview.route || info.name != preview.route->plugin) continue;
    try {
      checkEnforceable(info, preview.policy);
    } catch (const LaunchRefused &e) {
      preview.refusal = e.what();
      EffectivePolicy weaker = preview.policy;
      weaker.writeDenyGlobs.clear();
      try {
        checkEnforceable(info, weaker);
        preview.refusedOnlyForFilenameRules = !preview.policy.writeDenyGlobs.empty();
      } catch (const LaunchRefused &) {
        // Refused for more than the filename rules: no hint.
      }
    }
  }
  SandboxBackend backend = preview.route ? preview.route->backend : SandboxBackend::none;
  preview.environmentSanitised = sanitisesEnvironment(options.kind, backend);
  if (preview.environmentSanitised) {
    for (char **e = environ; e && *e; ++e) {
      std::string_view kv(*e);
      std::string name(kv.substr(0, kv.find('=')));
      if (!name.empty() && isInjectionVariable(name)) preview.environmentRemoved.push_back(name);
    }
    std::sort(preview.environmentRemoved.begin(), preview.environmentRemoved.end());
  }
  return preview;
}

}  // namespace ccsandbox
