// `ccsandbox run`: launch a session, exec one command in it, destroy it.
#include "arguments.hpp"
#include "commands.hpp"
#include "run_options.hpp"
#include "runtime_settings.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

namespace ccsandbox::cli {

namespace {

constexpr const char *kRunUsage = R"(usage: ccsandbox run [options] -- CMD [ARGS...]

Launches a sandbox session, runs CMD in it, and destroys the session. The
command's stdout and stderr stay apart; its exit status is ccsandbox's.
Without --spec the session is an agent-bash launch in chat mode with the
working directory as its one writable bind, the standard dispatch policy and
the network on; `ccsandbox policy` with the same options shows what it gets.

)";

constexpr const char *kRunHelp = R"(
run options:
  --events FILE|-       write every event as one JSON object per line; with -
                        the events go to stdout and carry the command's
                        output, which is then not copied raw
  --timeout SECONDS     end the command (SIGTERM, then SIGKILL) after SECONDS
  -v, --verbose         log routing and the start-up line on stderr
  -h, --help            this text

exit status: the command's (128+N when signal N ended it); 125 when the
sandbox could not be started or the launch was refused (one line on stderr,
starting with `ccsandbox:`); 126 when CMD cannot be executed; 127 when CMD is
not found.
)";

struct RunCommandOptions {
  RunOptions launch;
  std::optional<std::string> eventsFile;
  std::optional<std::chrono::milliseconds> timeout;
  std::vector<std::string> command;
};

std::chrono::milliseconds parseTimeout(const std::string &text) {
  double seconds = 0;
  std::size_t used = 0;
  try {
    seconds = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(seconds) || seconds <= 0 || seconds > 1e9)
    throw UsageError("--timeout: invalid value \"" + text +
                     "\" (a number of seconds above 0 and at most 1e9, e.g. 30 or 0.5)");
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(seconds * 1000)));
}

RunCommandOptions parseRunOptions(const std::vector<std::string> &argv, bool &help) {
  Arguments args(argv);
  RunCommandOptions o;
  while (!args.done()) {
    if (args.flag("--")) {
      o.command = args.rest();
      break;
    }
    if (args.flag("--help") || args.flag("-h")) {
      help = true;
      return o;
    }
    if (args.flag("-v") || args.flag("--verbose"))
      configureLogging(true);
    else if (parseLaunchOption(args, o.launch))
      continue;
    else if (auto v = args.option("--events"))
      o.eventsFile = *v;
    else if (auto v = args.option("--timeout"))
      o.timeout = parseTimeout(*v);
    else if (!args.peek().empty() && args.peek()[0] != '-') {
      o.command = args.rest();  // like env(1): the command starts at the first operand
      break;
    } else
      args.unknown();
  }
  if (o.command.empty())
    throw UsageError("run: no command given (usage: ccsandbox run [options] -- CMD [ARGS...])");
  return o;
}

// Writes all of `data` to `fd`; false when the reader went away (EPIPE).
bool writeAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

// Forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command, as a shell
// would, and takes part in job control: the command runs in a session of its
// own inside the sandbox, so a terminal's Ctrl-Z (SIGTSTP) and `fg` (SIGCONT)
// reach it only through us.
class SignalForwarder {
 public:
  SignalForwarder() {
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGCONT, SIGUSR1}) sigaddset(&set_, s);
    // Blocked before any thread exists, so every thread inherits the mask and
    // only sigwait below sees these signals. Commands start with an empty mask.
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      for (;;) {
        int sig = 0;
        if (sigwait(&set_, &sig) != 0) continue;
        if (sig == SIGUSR1 && stopping_) return;
        if (sig == SIGTSTP || sig == SIGCONT) {
          jobControl(sig);
          continue;
        }
        std::lock_guard lock(mutex_);
        if (process_)
          process_->signal(sig);
        else
          pending_ = sig;
      }
    });
  }
  ~SignalForwarder() {
    stop();
    thread_.join();
  }
  // The first signal that came before there was a command to forward it to.
  int attach(std::shared_ptr<Process> process) {
    std::lock_guard lock(mutex_);
    process_ = std::move(process);
    if (pending_) process_->signal(pending_);
    return pending_;
  }
  int pending() {
    std::lock_guard lock(mutex_);
    return pending_;
  }
  // The command has ended: nothing is forwarded any more, and the thread ends
  // while the session is torn down rather than after it.
  void detach() {
    {
      std::lock_guard lock(mutex_);
      process_.reset();
    }
    stop();
  }

 private:
  // Ctrl-Z: the command first (it may handle SIGTSTP), then this process,
  // which SIGCONT resumes (its continuing needs no handler); SIGCONT then
  // resumes the command. Neither ends a launch still in progress.
  void jobControl(int sig) {
    {
      std::lock_guard lock(mutex_);
      if (process_) process_->signal(sig);
    }
    if (sig == SIGTSTP) ::kill(::getpid(), SIGSTOP);
  }

  void stop() {
    if (!stopping_.exchange(true)) pthread_kill(thread_.native_handle(), SIGUSR1);
  }

  sigset_t set_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::mutex mutex_;
  std::shared_ptr<Process> process_;
  int pending_ = 0;
};

}  // namespace

int runCommand(const std::vector<std::string> &argv) {
  bool help = false;
  RunCommandOptions o = parseRunOptions(argv, help);
  if (help) {
    std::cout << kRunUsage << kLaunchOptionsHelp << kRunHelp;
    return 0;
  }
  std::string workdir = resolveWorkdir(o.launch.workdir);
  LaunchOptions launch = buildLaunchOptions(o.launch, workdir);

  std::ofstream eventsOut;
  bool eventsToStdout = o.eventsFile && *o.eventsFile == "-";
  if (o.eventsFile && !eventsToStdout) {
    eventsOut.open(*o.eventsFile, std::ios::binary | std::ios::trunc);
    if (!eventsOut)
      throw UsageError("--events " + *o.eventsFile + ": cannot open: " + std::strerror(errno));
  }

  SignalForwarder forwarder;

  RuntimeOptions runtimeOptions = cliRuntimeOptions(ProbeFreshness::kept);
  runtimeOptions.sandbox = o.launch.sandbox;
  Runtime runtime(runtimeOptions);

  std::optional<std::string> startError;
  bool timedOut = false;
  std::atomic<bool> stdoutClosed{false};
  std::shared_ptr<Process> process;
  std::mutex processMutex;

  launch.onEvent = [&](const SandboxEvent &e) {
    if (o.eventsFile) {
      std::string line = boost::json::serialize(toJson(e)) + "\n";
      if (eventsToStdout) {
        if (!writeAll(STDOUT_FILENO, line)) stdoutClosed = true;
      } else {
        eventsOut << line << std::flush;
      }
    }
    if (e.type == SandboxEventType::exit && e.error) startError = *e.error;
    if (e.type == SandboxEventType::killed && e.reason == KillReason::timeout) timedOut = true;
    if (eventsToStdout) return;
    if (e.type == SandboxEventType::stdoutData && !stdoutClosed) {
      if (!writeAll(STDOUT_FILENO, e.data)) {
        // Our reader is gone: the command gets the SIGPIPE it would have had.
        stdoutClosed = true;
        std::lock_guard lock(processMutex);
        if (process) process->signal(SIGPIPE);
      }
    } else if (e.type == SandboxEventType::stderrData) {
      writeAll(STDERR_FILENO, e.data);
    }
  };

  // The seed's fallback for agent launches: no native backend, no sandbox.
  // Never silently: the user asked for none, turned the sandbox off, or is
  // told here. (A terminal runs unsandboxed by default by its own rules.)
  const bool fellBack = o.launch.backend == RequestedBackend::automatic && !o.launch.plugin &&
                        o.launch.kind != LaunchKind::terminal &&
                        runtime.sandboxSwitch() == SandboxSwitch::on;
  auto session = runtime.launch(std::move(launch));
  if (fellBack && session->handle().backend == SandboxBackend::none)
    std::cerr << "ccsandbox: warning: " << runtime.startupLine()
              << "; the command runs WITHOUT isolation (--backend native refuses instead)\n";
  if (int sig = forwarder.pending()) {
    session->destroy();
    return 128 + sig;
  }
  ExecOptions exec;
  exec.argv = o.command;
  exec.cwd = {};  // the session's guestWorkdir: --workdir, the spec's, or the current directory
  exec.stdinFd = STDIN_FILENO;
  exec.timeout = o.timeout;
  {
    auto p = session->exec(std::move(exec));
    std::lock_guard lock(processMutex);
    process = p;
  }
  forwarder.attach(process);
  int status = process->wait();
  forwarder.detach();
  session->destroy();

  if (startError) std::cerr << "ccsandbox: " << *startError << "\n";
  if (timedOut)
    std::cerr << "ccsandbox: the command timed out after " << o.timeout->count() / 1000.0
              << " s and was ended\n";
  if (status < 0) throw BackendError("the backend did not report how the command ended");
  return status;
}

}  // namespace ccsandbox::cli
