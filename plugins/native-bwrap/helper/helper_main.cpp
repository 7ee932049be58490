// ccsandbox-bwrap-helper: pid 1 inside a native-bwrap sandbox.
//
//   ccsandbox-bwrap-helper --control-fd N
//
// The plugin's first message names the loopback bridges to open (each
// "HOST:PORT=SOCKET"); the helper answers `ready` once they listen. They come
// this way because bubblewrap's command line, ours included, is fixed before
// the session's proxies have ports (a bubblewrap started ahead of the launch).
//
// As init of the sandbox's pid namespace it cannot be killed from inside (the
// kernel drops signals to init that it has no handler for, SIGKILL included);
// it reaps every orphan, starts the commands the plugin sends over the control
// channel (in a child confined ahead when one waits: command_launcher.hpp),
// reports how each ended, and relays loopback to the proxies. When the
// control channel closes (destroy, or the core died) it ends everything,
// reaps it and answers `gone`; when init exits, the kernel kills whatever is
// left in the namespace.
#include "command_confinement.hpp"
#include "command_launcher.hpp"
#include "control_channel.hpp"
#include "loopback_bridge.hpp"
#include "plain_output.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

extern "C" char **environ;

namespace asio = boost::asio;
using namespace ccsandbox::bwrap;

namespace {

// How long after a command starts the next spare child is made.
constexpr auto kSpareDelay = std::chrono::milliseconds(20);

// Whether the child `pid` has ended and waits to be reaped: its SIGCHLD may
// not have been handled yet when the next message is.
bool childEnded(pid_t pid) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == pid;
}

class Helper {
 public:
  explicit Helper(int controlFd)
      : controlFd_(controlFd), control_(io_, controlFd), children_(io_, SIGCHLD) {
    for (char **e = environ; e && *e; ++e) {
      std::string kv(*e);
      auto eq = kv.find('=');
      if (eq != std::string::npos) policyEnv_[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    policyEnv_.erase("PWD");  // bwrap's --chdir sets it; it is not the policy's
  }

  // `ready` goes out once the plugin's `bridges` message is served.
  int run() {
    waitForChildren();
    waitForControl();
    io_.run();
    return 0;
  }

 private:
  // From the helper's thread and from supervisor threads (violations).
  void send(const Message &m) {
    try {
      std::lock_guard lock(sendMutex_);
      sendMessage(controlFd_, m);
    } catch (const std::exception &) {
      shutdown();  // the plugin is gone
    }
  }

  void waitForControl() {
    control_.async_wait(asio::posix::descriptor_base::wait_read,
                        [this](boost::system::error_code ec) {
                          if (ec) return shutdown();
                          Message m;
                          bool more = false;
                          try {
                            more = receiveMessage(controlFd_, m);
                          } catch (const std::exception &e) {
                            writePlain(STDERR_FILENO, {"ccsandbox-bwrap-helper: ", e.what(), "\n"});
                          }
                          if (!more) return endSession();
                          handle(m);
                          for (int fd : m.fds) ::close(fd);
                          waitForControl();
                        });
  }

  void handle(const Message &m) {
    switch (m.type) {
      case MessageType::bridges: openBridges(m); break;
      case MessageType::exec: exec(m); break;
      case MessageType::confine: confine(m); break;
      case MessageType::signal:
        if (m.fields.size() == 2) {
          auto it = running_.find(m.fields[0]);
          if (it != running_.end()) ::kill(-it->second, std::stoi(m.fields[1]));
        }
        break;
      default: break;
    }
  }

  void exec(const Message &m) {
    commandSeen_ = true;
    // execId, cwd, argc, argv..., env...
    if (m.fields.size() < 3 || m.fds.size() != 3) return;
    const std::string &execId = m.fields[0];
    LaunchSpec spec;
    spec.cwd = m.fields[1];
    std::size_t argc = std::stoul(m.fields[2]);
    if (m.fields.size() < 3 + argc) return;
    spec.argv.assign(m.fields.begin() + 3, m.fields.begin() + 3 + static_cast<long>(argc));
    for (std::size_t i = 3 + argc; i < m.fields.size(); ++i) {
      auto eq = m.fields[i].find('=');
      if (eq != std::string::npos) spec.env[m.fields[i].substr(0, eq)] = m.fields[i].substr(eq + 1);
    }
    // The policy's variables (the proxies) win over what the caller sent.
    for (const auto &[k, v] : policyEnv_) spec.env[k] = v;
    if (!spec.cwd.empty() && spec.env.count("PWD")) spec.env["PWD"] = spec.cwd;
    for (int i = 0; i < 3; ++i) spec.stdio[i] = m.fds[static_cast<std::size_t>(i)];
    LaunchResult r;
    // A spare killed before its command came (a command's `kill -9 -1`, the
    // OOM killer) is dropped here; reap() collects it. The command then starts
    // the ordinary way instead of being reported killed without having run.
    if (spare_ && childEnded(spare_->pid)) spare_.reset();
    if (spare_) {
      // A child confined ahead is waiting: the command only crosses a socket.
      spareHooks_.name(execId);
      if (spareHooks_.settle) spareHooks_.settle();  // served before the launcher waits
      const ConfinementHooks hooks = spareHooks_.hooks;
      SpareChild spare = std::move(*spare_);
      spare_.reset();
      r = launchInSpare(std::move(spare), spec, hooks);
    } else {
      ConfinementHooks hooks;
      if (confinement_) {
        try {
          hooks = confinement_->prepareLaunch(execId);
        } catch (const std::exception &e) {
          // Fail closed: without its kernel layers the command does not run.
          send({MessageType::failed,
                {execId, "126", spec.argv[0] + ": cannot confine the command: " + e.what()},
                {}});
          return;
        }
      }
      r = launchCommand(spec, hooks);
    }
    prepareSpareLater();
    if (r.pid <= 0) {
      send({MessageType::failed, {execId, std::to_string(r.exitCode), r.error}, {}});
      return;
    }
    running_[execId] = r.pid;
    leaders_[r.pid] = execId;
    send({MessageType::started, {execId}, {}});
  }

  void openBridges(const Message &m) {
    if (bridgesOpen_) return;  // once per sandbox
    bridgesOpen_ = true;
    try {
      for (const auto &spec : m.fields) {
        const BridgeSpec b = parseBridgeSpec(spec);
        bridges_.push_back(std::make_unique<LoopbackBridge>(io_, b.host, b.port, b.unixSocket));
        bridges_.back()->start();
      }
    } catch (const std::exception &e) {
      // A sandbox whose network path is not what the plugin asked for never reports ready.
      writePlain(STDERR_FILENO,
                 {"ccsandbox-bwrap-helper: cannot open the loopback bridges: ", e.what(), "\n"});
      shutdown();
    }
    send({MessageType::ready, {}, {}});
  }

  // The plugin's write rules: from now on every command is confined.
  void confine(const Message &m) {
    if (confinement_) return;  // once per sandbox
    ccsandbox::confine::ConfineRules rules;
    std::size_t i = 0;
    auto next = [&]() -> const std::string & {
      if (i >= m.fields.size()) throw std::runtime_error("truncated confine message");
      return m.fields[i++];
    };
    auto list = [&](std::vector<std::string> &out) {
      std::size_t n = std::stoul(next());
      for (std::size_t k = 0; k < n; ++k) out.push_back(next());
    };
    try {
      rules.execBlockWritableRoots = next() == "1";
      list(rules.writeRoots);
      list(rules.writeDeny);
      list(rules.writeDenyGlobs);
      list(rules.execGrantRoots);
    } catch (const std::exception &e) {
      // A plugin that cannot describe its rules gets no commands run at all.
      writePlain(STDERR_FILENO, {"ccsandbox-bwrap-helper: bad confine message: ", e.what(), "\n"});
      shutdown();
    }
    confinement_.emplace(
        io_, std::move(rules),
        [this](const std::string &execId, const ccsandbox::confine::Violation &v) {
          send({MessageType::violation, {execId, v.action, v.target, v.reason}, {}});
        },
        [this](const std::string &message) {
          send({MessageType::log, {message}, {}});
        });
    // Built while the bridges open (the plugin sends the rules first); then a
    // spare for the first command, which the plugin is composing by then.
    confinement_->prepareInBackground([this] {
      try {
        confinement_->prepare();
      } catch (const std::exception &) {
        // Not now: the first command tries again and reports why it cannot run.
        return;
      }
      if (!commandSeen_) prepareSpare();  // else prepareSpareLater() has it
    });
  }

  // A child forked and confined ahead of the next command (command_launcher.hpp).
  void prepareSpare() {
    if (!confinement_ || spare_) return;
    try {
      spareHooks_ = confinement_->prepareSpare();
      spare_ = startSpare(spareHooks_.hooks);
    } catch (const std::exception &) {
      // None then: the next command is started the ordinary way, and says why it cannot.
    }
  }

  // The next spare, once the command just started has had the CPU a while: a
  // session that runs one command and ends (`ccsandbox run`) never pays for it.
  void prepareSpareLater() {
    if (!confinement_) return;
    spareTimer_.expires_after(kSpareDelay);
    spareTimer_.async_wait([this](boost::system::error_code ec) {
      if (!ec) prepareSpare();
    });
  }

  void waitForChildren() {
    children_.async_wait([this](boost::system::error_code ec, int) {
      if (ec) return;
      reap();
      waitForChildren();
    });
  }

  void reap() {
    for (;;) {
      siginfo_t info{};
      // Look before reaping: while a leader is a zombie its group id cannot be
      // reused, so ending what is left of its group is safe.
      if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return;
      pid_t pid = info.si_pid;
      if (spare_ && pid == spare_->pid) spare_.reset();  // ended before its command came
      auto leader = leaders_.find(pid);
      if (leader != leaders_.end()) ::kill(-pid, SIGKILL);  // nothing outlives its command
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (leader == leaders_.end()) continue;  // an orphan: reaped, nothing to say
      std::string execId = leader->second;
      leaders_.erase(leader);
      running_.erase(execId);
      int code = 0, sig = 0;
      if (WIFSIGNALED(status)) {
        sig = WTERMSIG(status);
        code = 128 + sig;
      } else {
        code = WEXITSTATUS(status);
      }
      send({MessageType::exited, {execId, std::to_string(code), std::to_string(sig)}, {}});
    }
  }

  [[noreturn]] void shutdown() {
    // Every process of the namespace but us; then our exit takes the rest.
    ::kill(-1, SIGKILL);
    ::_exit(0);
  }

  // The plugin closed its end (destroy): end every process, reap them all, so
  // that `gone` tells it nothing of the sandbox runs any more. It need not wait
  // for our own exit and bubblewrap's (the namespaces going), which follow.
  [[noreturn]] void endSession() {
    ::kill(-1, SIGKILL);
    for (;;) {
      int status = 0;
      if (::waitpid(-1, &status, __WALL) < 0 && errno != EINTR) break;  // ECHILD: none left
    }
    try {
      std::lock_guard lock(sendMutex_);
      sendMessage(controlFd_, {MessageType::gone, {}, {}});
    } catch (const std::exception &) {
      // The plugin is gone too: nobody to tell.
    }
    ::_exit(0);
  }

  int controlFd_;
  asio::io_context io_;
  asio::posix::stream_descriptor control_;
  asio::signal_set children_;
  std::map<std::string, std::string> policyEnv_;
  std::vector<std::unique_ptr<LoopbackBridge>> bridges_;
  std::map<std::string, pid_t> running_;  // execId -> process group
  std::map<pid_t, std::string> leaders_;
  std::mutex sendMutex_;
  std::optional<CommandConfinement> confinement_;  // set by the plugin's confine message
  std::optional<SpareChild> spare_;                // confined, waiting for the next command
  CommandConfinement::SpareHooks spareHooks_;      // spare_'s
  asio::steady_timer spareTimer_{io_};
  bool bridgesOpen_ = false;
  bool commandSeen_ = false;  // an exec came: spares are made after commands from then on
};

int usage(const std::string &why) {
  writePlain(STDERR_FILENO,
             {"ccsandbox-bwrap-helper: ", why,
              "\nusage: ccsandbox-bwrap-helper --control-fd N\n"
              "It runs as pid 1 inside a sandbox started by the native-bwrap plugin; it is not "
              "meant to be run by hand.\n"});
  return 2;
}

}  // namespace

int main(int argc, char **argv) {
  int controlFd = -1;
  try {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a == "--version") {
        // The probe's trial: the helper starts inside a sandbox built like a real one.
        writePlain(STDOUT_FILENO, {"ccsandbox-bwrap-helper 1\n"});
        return 0;
      }
      if (a == "--check-confinement") return checkConfinement();  // the probe's trial
      if (a == "--control-fd" && i + 1 < argc)
        controlFd = std::stoi(argv[++i]);
      else
        return usage("unknown argument " + a);
    }
  } catch (const std::exception &e) {
    return usage(e.what());
  }
  if (controlFd < 3) return usage("--control-fd is required");
  // Nothing the host left open crosses into the commands: only stdio and the channel.
  ::syscall(SYS_close_range, 3, controlFd - 1, 0);
  ::syscall(SYS_close_range, controlFd + 1, ~0U, 0);
  ::fcntl(controlFd, F_SETFD, FD_CLOEXEC);
  ::signal(SIGPIPE, SIG_IGN);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  try {
    Helper helper(controlFd);
    return helper.run();
  } catch (const std::exception &e) {
    writePlain(STDERR_FILENO, {"ccsandbox-bwrap-helper: ", e.what(), "\n"});
    return 1;
  }
}
