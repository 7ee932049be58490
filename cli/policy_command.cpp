// `ccsandbox policy`: what a launch with these options would get, without
// launching. The same options and the same compilation as `ccsandbox run`.
#include "arguments.hpp"
#include "ccsandbox/policy_preview.hpp"
#include "commands.hpp"
#include "run_options.hpp"
#include "runtime_settings.hpp"

#include <iostream>

namespace ccsandbox::cli {

namespace {

constexpr const char *kPolicyUsage = R"(usage: ccsandbox policy [launch options] [--json]

Prints the policy `ccsandbox run` with the same options would compile, the
backend the launch would be routed to, and whether that backend can enforce
it. Nothing is launched. The sandbox's /tmp is shown as
<temp dir>/ccsandbox-tmp-XXXXXX (<temp dir>/ccsandbox-XXXXXX/tmp where the
session directories are made in the temp dir too); a launch creates it with a
fresh name.

)";

constexpr const char *kPolicyHelp = R"(
policy options:
  --json                the exact EffectivePolicy every backend receives, as
                        JSON (sorted and de-duplicated, so it can be diffed)
  -v, --verbose         log discovery and routing on stderr
  -h, --help            this text

exit status: 0 when the policy was compiled (a launch that would be refused
says so); 125 when the options or the spec are refused.
)";

void list(std::ostream &out, const std::string &title, const std::vector<std::string> &items,
          const std::string &empty = "none") {
  out << title << (items.empty() ? ": " + empty + "\n" : ":\n");
  for (const auto &i : items) out << "  " << i << "\n";
}

void printHuman(std::ostream &out, const PolicyPreview &preview) {
  const EffectivePolicy &p = preview.policy;
  bool terminal = p.launchKind == "terminal";
  out << "launch: " << p.launchKind
      << (terminal ? " (the fixed terminal profile; the spec cannot widen it)" : ", mode " + p.mode)
      << ", home " << p.home << "\n";
  if (preview.route)
    out << "route: " << toString(preview.route->backend) << " backend, plugin "
        << preview.route->plugin << "\n";
  if (preview.refusal)
    out << "REFUSED: " << *preview.refusal << "\n";
  else if (preview.route && preview.route->backend == SandboxBackend::none)
    out << "note: the none backend enforces nothing below; the command would run on the host\n";
  if (preview.refusedOnlyForFilenameRules)
    out << "hint: only the filename rules stand in the way; --no-filename-rules drops them "
           "(weaker: new .env, *.key, *.pem files become possible in writable binds)\n";
  out << "environment: ";
  if (!preview.environmentSanitised)
    out << "inherited from the host\n";
  else {
    out << "sanitised (injection variables removed";
    if (!preview.environmentRemoved.empty()) {
      out << "; here:";
      for (const auto &n : preview.environmentRemoved) out << " " << n;
    }
    out << ")\n";
  }
  out << "\nvisible (what a namespace backend mounts):\n";
  for (const auto &b : p.visible.binds) {
    out << "  " << (b.readOnly ? "ro " : "rw ") << b.guestPath;
    if (b.hostPath != b.guestPath) out << "  <- " << b.hostPath;
    out << "\n";
  }
  for (const auto &s : p.visible.systemReadOnly) out << "  ro " << s << "  (system)\n";
  out << "  " << (p.visible.privateTmp ? "private /tmp, " : "")
      << (p.visible.procfs ? "fresh /proc, " : "") << (p.visible.minimalDev ? "minimal /dev" : "")
      << "\n\n";
  list(out, "write roots (the only places writes may happen)", p.writeRoots);
  out << "  (session temp dir: " << p.tempDir << ")\n\n";
  list(out, "write denied, in every mode, even inside a write root", p.writeDeny);
  out << "\n";
  list(out, "filename rules (no file with these names may be created or written)", p.writeDenyGlobs,
       terminal ? "none (the terminal profile has none)" : "none (--no-filename-rules: weaker)");
  out << "\n";
  list(out, "read denied", p.readDeny);
  out << "\nno unlink or rename: " << p.unlinkDeny.size()
      << " paths (every write-denied path and its ancestors; see --json)\n\n";
  out << "exec: "
      << (p.exec.blockWritableRoots ? "blocked from write roots" : "allowed from write roots")
      << "\n";
  if (p.exec.blockWritableRoots) list(out, "  reopened beneath", p.exec.grantRoots);
  out << "\nnetwork: ";
  if (p.network.open)
    out << "open (no proxy, as the host)\n";
  else if (!p.network.enabled)
    out << "off (the session's proxies start with an empty allowlist and refuse everything)\n";
  else
    out << "through the session's proxies, " << p.network.allowlist.size() << " allowed\n";
  if (!p.network.open) {
    list(out, "  allowed domains", p.network.allowlist);
    list(out, "  denied domains (win over every allow)", p.network.denylist);
  }
  out << "\nenv set in every command:";
  if (p.env.empty()) out << " none";
  out << "\n";
  for (const auto &[k, v] : p.env) out << "  " << k << "=" << v << "\n";
}

}  // namespace

int policyCommand(const std::vector<std::string> &argv) {
  Arguments args(argv);
  RunOptions o;
  bool json = false;
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << kPolicyUsage << kLaunchOptionsHelp << kPolicyHelp;
      return 0;
    }
    if (args.flag("-v") || args.flag("--verbose"))
      configureLogging(true);
    else if (args.flag("--json"))
      json = true;
    else if (parseLaunchOption(args, o))
      continue;
    else
      args.unknown();
  }
  std::string workdir = resolveWorkdir(o.workdir);
  LaunchOptions launch = buildLaunchOptions(o, workdir);
  RuntimeOptions runtimeOptions = cliRuntimeOptions(ProbeFreshness::kept);
  runtimeOptions.sandbox = o.sandbox;
  if (json) {
    // Only the policy: what every backend receives, nothing about this host's plugins.
    std::cout << boost::json::serialize(toJson(compileLaunchPolicy(launch, runtimeOptions)))
              << "\n";
    return 0;
  }
  Runtime runtime(runtimeOptions);
  printHuman(std::cout, previewLaunch(runtime, launch));
  return 0;
}

}  // namespace ccsandbox::cli
