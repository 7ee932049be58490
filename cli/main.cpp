// ccsandbox: run commands in OS-level sandboxes. A thin layer over the core's
// public API; every failure to sandbox exits 125 with one `ccsandbox:` line.
#include "ccsandbox/backend_abi.h"
#include "ccsandbox/logging.hpp"
#include "ccsandbox/runtime.hpp"
#include "commands.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace {

constexpr const char *kUsage = R"(usage: ccsandbox <command> [options]

Run an AI agent's commands inside OS-level sandboxes, through backend plugins.

commands:
  run       run a command in a sandbox session (launch, exec, destroy)
  policy    show the policy `run` with the same options would compile, and
            where it would run, without launching (--json: the exact policy)
  probe     show every installed backend plugin, what it found on this host,
            and the start-up line
  plugins   list the installed backend plugins and their files
  conformance PLUGIN_FILE
            check a backend plugin against the backend contract
  help CMD  the options of one command

environment:
  CCSANDBOX_PLUGIN_PATH  colon-separated plugin directories, searched before
                         the install directory (<libdir>/ccsandbox/plugins)
  CC_SERVER_SANDBOX      on (default) or off, when --sandbox is not given
  CCSANDBOX_LOG          log level on stderr: debug, info, warning (default), error
  CCSANDBOX_EGRESS_LISTS another egress lists file instead of the shipped one
                         (docs/egress.md)
  CCSANDBOX_PROBE_CACHE  on (default), off, or a directory: where run, policy
                         and plugins reuse a probe result kept by an earlier
                         run of the same boot and user, while the plugin and
                         the host facts it probed are unchanged, and what
                         each plugin file holds (so run loads only the
                         plugins its route reaches); `probe` always probes
                         afresh and refreshes it

exit status of `run`: the command's; 125 when the sandbox could not be started
or the launch was refused; 126 when the command cannot be executed; 127 when
it is not found.
)";

// A standard stream the caller closed would take the number of our next open
// (a lock file, a socket): the command would read from it, or its output land
// in it. Such a stream is /dev/null instead, as for a daemon.
void openClosedStandardStreams() {
  for (int fd = 0; fd < 3; ++fd)
    if (::fcntl(fd, F_GETFD) < 0 && errno == EBADF)
      ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);  // the lowest free number: fd
}

// The command's exit status. Every object that owns something (a session, its
// sandbox and directories, the runtime's threads and plugins) is a local of the
// command and is gone when this returns.
int dispatch(const std::vector<std::string> &args) {
  try {
    ccsandbox::cli::configureLogging();
    if (args.empty() || args[0] == "--help" || args[0] == "-h") {
      std::cout << kUsage;
      return args.empty() ? 125 : 0;
    }
    if (args[0] == "--version") {
      std::cout << "ccsandbox " << CCSANDBOX_VERSION << " (backend ABI " << CCSANDBOX_ABI_MAJOR
                << "." << CCSANDBOX_ABI_MINOR << ")\n";
      return 0;
    }
    std::string command = args[0];
    std::vector<std::string> rest(args.begin() + 1, args.end());
    if (command == "help") {
      if (rest.empty()) {
        std::cout << kUsage;
        return 0;
      }
      command = rest[0];
      rest = {"--help"};
    }
    if (command == "run") return ccsandbox::cli::runCommand(rest);
    if (command == "probe") return ccsandbox::cli::probeCommand(rest);
    if (command == "plugins") return ccsandbox::cli::pluginsCommand(rest);
    if (command == "policy") return ccsandbox::cli::policyCommand(rest);
    if (command == "conformance") return ccsandbox::cli::conformanceCommand(rest);
    throw ccsandbox::UsageError("unknown command \"" + command +
                                "\" (commands: run, policy, probe, plugins, conformance)");
  } catch (const std::exception &e) {
    std::cerr << "ccsandbox: " << e.what() << "\n";
    return 125;
  }
}

}  // namespace

int main(int argc, char **argv) {
  openClosedStandardStreams();
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A reader that goes away is an EPIPE each command handles, never our death.
  ::signal(SIGPIPE, SIG_IGN);
  const int status = dispatch(args);
  // What is left are process-wide singletons (Boost.Log's core, the streams,
  // the locale) whose destructors only free what the exit frees: skipping them
  // takes 0.2-0.5 ms off every `ccsandbox run` on the development VM.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#ifdef __SANITIZE_ADDRESS__
  return status;  // a sanitizer build exits normally: LeakSanitizer checks at exit
#else
  ::_exit(status);
#endif
}
