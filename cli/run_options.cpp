#include "run_options.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace ccsandbox::cli {

const char *const kLaunchOptionsHelp = R"(launch options (shared by `run` and `policy`):
  --backend auto|native|none|microvm
                        auto (default) follows agent-dispatch routing: native
                        where a native backend probed available, else none
                        (with a warning). An explicit backend that cannot be
                        used is refused.
  --sandbox on|off      off runs without a sandbox (an explicit opt-out);
                        default: CC_SERVER_SANDBOX, else on
  --plugin NAME         use this plugin (see `ccsandbox plugins`) instead of
                        choosing one by backend value
  --launch-kind agent-bash|acp|claude-code|terminal
                        who is launching (default agent-bash); decides the
                        environment treatment and the terminal routing; a
                        terminal gets the fixed terminal profile
  --mode chat|review|plan|orchestrate
                        overrides the spec's mode (default chat); every mode
                        but chat makes every bind read-only
  --spec FILE           a SandboxSpec as JSON (unknown fields are refused); it
                        replaces the default spec, the options below add to it
  --workdir DIR         the command's working directory and, without --spec,
                        the session's one writable bind (default: the spec's
                        guestWorkdir, else the current directory)
  --bind HOST[:GUEST][:ro]
                        also mount HOST (an absolute path) at GUEST (default:
                        HOST), writable unless :ro or a read-only mode
  --protect PATH        never writable, in any mode (a protectedPaths entry;
                        absolute or ~/...)
  --deny-write-glob GLOB
                        no file whose name matches GLOB (e.g. '*.p12') may be
                        created or written, added to .env, .env.*, *.key, *.pem
  --allow-domain DOMAIN also allow egress to DOMAIN (*.example.com and
                        bedrock.*.amazonaws.com forms accepted)
  --no-network          networkEnabled false: the proxies allow nothing
  --exec-grant PATH     a tree from which exec stays allowed although it is
                        writable (an execGrantRoots entry)
  --no-filename-rules   WEAKER: drop the standard filename rules (.env,
                        .env.*, *.key, *.pem), so new files with those names
                        can be created in writable binds (a task that must
                        write one). An explicit opt-out, never a fallback:
                        protected and secret paths stay denied.
)";

namespace {

template <class E, std::size_t N>
E parseChoice(const EnumNames<E, N> &names, const std::string &option, const std::string &text) {
  if (auto v = enumFromName(names, text)) return *v;
  throw UsageError(option + ": invalid value \"" + text + "\" (accepted: " + enumChoices(names) +
                   ")");
}

void requireAbsolute(const std::string &option, const std::string &path, bool allowTilde) {
  bool tilde = allowTilde && (path == "~" || path.rfind("~/", 0) == 0);
  if (path.empty() || (path[0] != '/' && !tilde))
    throw UsageError(option + ": \"" + path + "\" is not an absolute path" +
                     (path.empty() ? "" : " (use \"$PWD/" + path + "\" for a path here)"));
}

SandboxBindMount parseBind(const std::string &text) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string::npos ? colon : colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  SandboxBindMount m;
  if (parts.size() > 1 && (parts.back() == "ro" || parts.back() == "rw")) {
    m.readOnly = parts.back() == "ro";
    parts.pop_back();
  }
  if (parts.size() > 2) throw UsageError("--bind " + text + ": expected HOST[:GUEST][:ro]");
  m.hostPath = parts[0];
  m.guestPath = parts.size() == 2 ? parts[1] : parts[0];
  requireAbsolute("--bind " + text + ": host path", m.hostPath, false);
  requireAbsolute("--bind " + text + ": guest path", m.guestPath, false);
  return m;
}

std::string readFile(const std::string &path, const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(what + " " + path + ": cannot read: " + std::strerror(errno));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

bool parseLaunchOption(Arguments &args, RunOptions &o) {
  if (auto v = args.option("--backend"))
    o.backend = parseRequestedBackend(*v);
  else if (auto v = args.option("--sandbox"))
    o.sandbox = parseSandboxSwitch(*v, "--sandbox");
  else if (auto v = args.option("--mode"))
    o.mode = parseChoice(kSandboxModeNames, "--mode", *v);
  else if (auto v = args.option("--launch-kind"))
    o.kind = parseChoice(kLaunchKindNames, "--launch-kind", *v);
  else if (auto v = args.option("--spec"))
    o.specFile = *v;
  else if (auto v = args.option("--workdir"))
    o.workdir = *v;
  else if (auto v = args.option("--plugin"))
    o.plugin = *v;
  else if (auto v = args.option("--bind"))
    o.binds.push_back(parseBind(*v));
  else if (auto v = args.option("--protect")) {
    requireAbsolute("--protect", *v, true);
    o.protect.push_back(*v);
  } else if (auto v = args.option("--deny-write-glob"))
    o.denyWriteGlobs.push_back(*v);
  else if (auto v = args.option("--allow-domain"))
    o.allowDomains.push_back(*v);
  else if (auto v = args.option("--exec-grant")) {
    requireAbsolute("--exec-grant", *v, true);
    o.execGrants.push_back(*v);
  } else if (args.flag("--no-network"))
    o.noNetwork = true;
  else if (args.flag("--no-filename-rules"))
    o.noFilenameRules = true;
  else
    return false;
  return true;
}

std::string resolveWorkdir(const std::optional<std::string> &workdir) {
  std::error_code ec;
  std::filesystem::path p =
      workdir ? std::filesystem::path(*workdir) : std::filesystem::current_path(ec);
  if (ec) throw UsageError("cannot determine the current directory: " + ec.message());
  auto canonical = std::filesystem::canonical(p, ec);
  if (ec || !std::filesystem::is_directory(canonical, ec))
    throw UsageError("--workdir " + p.string() + ": not an existing directory");
  return canonical.string();
}

LaunchOptions buildLaunchOptions(const RunOptions &o, const std::string &workdir) {
  SandboxSpec spec;
  if (o.specFile) {
    try {
      spec = decodeSandboxSpec(json::parse(readFile(*o.specFile, "--spec"), *o.specFile));
    } catch (const DecodeError &e) {
      std::string message = e.what();
      if (message.rfind(*o.specFile + ":", 0) != 0) message = *o.specFile + ": " + message;
      throw UsageError("--spec " + message);
    }
    // The spec's working directory, unless --workdir names one.
    if (o.workdir || !spec.guestWorkdir) spec.guestWorkdir = workdir;
  } else {
    if (workdir == "/")
      throw UsageError(
          "the working directory is /: it would be the sandbox's writable bind, "
          "the whole host file system; run from a project directory or pass "
          "--workdir DIR");
    spec.bindMounts.push_back({workdir, workdir, false});
    spec.guestWorkdir = workdir;
  }
  if (o.mode) spec.mode = *o.mode;
  for (const auto &b : o.binds) spec.bindMounts.push_back(b);
  for (const auto &p : o.protect) spec.protectedPaths.push_back(p);
  for (const auto &d : o.allowDomains) spec.egressAllowlist.push_back(d);
  for (const auto &g : o.execGrants) spec.execGrantRoots.push_back(g);
  if (o.noNetwork) spec.networkEnabled = false;

  LaunchOptions launch;
  launch.spec = std::move(spec);
  launch.kind = o.kind;
  launch.backend = o.backend;
  launch.plugin = o.plugin;
  launch.policy.extraWriteDenyGlobs = o.denyWriteGlobs;
  launch.policy.standardFilenameRules = !o.noFilenameRules;
  return launch;
}

}  // namespace ccsandbox::cli
