// `ccsandbox probe` and `ccsandbox plugins`.
#include "arguments.hpp"
#include "commands.hpp"
#include "runtime_settings.hpp"

#include <iomanip>
#include <iostream>

namespace ccsandbox::cli {

namespace {

constexpr const char *kProbeHelp = R"(usage: ccsandbox probe [--json] [--sandbox on|off] [-v]

Discovers the backend plugins, probes each afresh (as at start-up), prints a
row per plugin (name, backend, available, note or hint, requires install,
plugin file), then the start-up line. The results are kept for later `run`,
`policy` and `plugins` commands (CCSANDBOX_PROBE_CACHE), so this is also how to
make them re-check the host.

  --json            one JSON document instead of the table
  --sandbox on|off  the switch the start-up line reports (default: CC_SERVER_SANDBOX, else on)
  -v, --verbose     log discovery and probing on stderr
)";

constexpr const char *kPluginsHelp = R"(usage: ccsandbox plugins [--json] [-v]

Lists the loaded backend plugins: name, backend value, ABI version, file.
Files that were skipped (not a plugin, another ABI major, a duplicate name)
are reported on stderr, one line each.

  --json         one JSON document instead of the table
  -v, --verbose  log discovery on stderr
)";

boost::json::object pluginJson(const PluginInfo &p) {
  boost::json::object o = toJson(p.probe).as_object();
  o["name"] = p.name;
  o["backend"] = toString(p.backend);
  o["file"] = p.file;
  o["abi"] = std::to_string(p.abiMajor) + "." + std::to_string(p.abiMinor);
  return o;
}

std::size_t widest(const std::vector<PluginInfo> &plugins, std::size_t floor) {
  for (const auto &p : plugins) floor = std::max(floor, p.name.size());
  return floor;
}

}  // namespace

int probeCommand(const std::vector<std::string> &argv) {
  Arguments args(argv);
  bool asJson = false;
  RuntimeOptions options = cliRuntimeOptions(ProbeFreshness::fresh);
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << kProbeHelp;
      return 0;
    }
    if (args.flag("--json"))
      asJson = true;
    else if (args.flag("-v") || args.flag("--verbose"))
      configureLogging(true);
    else if (auto v = args.option("--sandbox"))
      options.sandbox = parseSandboxSwitch(*v, "--sandbox");
    else
      args.unknown();
  }
  Runtime runtime(options);
  if (asJson) {
    boost::json::array rows;
    for (const auto &p : runtime.plugins()) rows.push_back(pluginJson(p));
    boost::json::object doc{{"plugins", std::move(rows)},
                            {"sandbox", enumName(kSandboxSwitchNames, runtime.sandboxSwitch())},
                            {"startupLine", runtime.startupLine()}};
    std::cout << boost::json::serialize(doc) << "\n";
    return 0;
  }
  std::size_t w = widest(runtime.plugins(), 6);
  for (const auto &p : runtime.plugins()) {
    std::cout << std::left << std::setw(static_cast<int>(w) + 2) << p.name << std::setw(9)
              << toString(p.backend) << std::setw(13)
              << (p.probe.available ? "available" : "unavailable")
              << (p.probe.available ? p.probe.note : p.probe.hint)
              << (p.probe.requiresInstall ? "  [requires install]" : "") << "  (" << p.file
              << ")\n";
  }
  if (runtime.plugins().empty()) std::cout << "no backend plugin installed\n";
  std::cout << runtime.startupLine() << "\n";
  return 0;
}

int pluginsCommand(const std::vector<std::string> &argv) {
  Arguments args(argv);
  bool asJson = false;
  while (!args.done()) {
    if (args.flag("--help") || args.flag("-h")) {
      std::cout << kPluginsHelp;
      return 0;
    }
    if (args.flag("--json"))
      asJson = true;
    else if (args.flag("-v") || args.flag("--verbose"))
      configureLogging(true);
    else
      args.unknown();
  }
  Runtime runtime(cliRuntimeOptions(ProbeFreshness::kept));
  if (asJson) {
    boost::json::array rows;
    for (const auto &p : runtime.plugins()) {
      auto o = pluginJson(p);
      rows.push_back(
          {{"name", o["name"]}, {"backend", o["backend"]}, {"abi", o["abi"]}, {"file", o["file"]}});
    }
    std::cout << boost::json::serialize(boost::json::object{{"plugins", std::move(rows)}}) << "\n";
    return 0;
  }
  std::size_t w = widest(runtime.plugins(), 6);
  for (const auto &p : runtime.plugins())
    std::cout << std::left << std::setw(static_cast<int>(w) + 2) << p.name << std::setw(9)
              << toString(p.backend) << "ABI " << p.abiMajor << "." << p.abiMinor << "  " << p.file
              << "\n";
  return 0;
}

}  // namespace ccsandbox::cli
