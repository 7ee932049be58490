// A building block for backends that start commands as host processes (the
// `none` backend, wrappers around another launcher): each command runs as the
// leader of its own process group, so that a signal, a timeout or destroy ends
// everything it started; its end is reported as an `exit` event.
#pragma once

#include "ccsandbox/backend.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace ccsandbox::sdk {

// execvp's lookup, but against the command's own PATH rather than the host's.
// Returns the path to run, or "" with `err` set (ENOENT, EACCES).
inline std::string resolveCommand(const std::string &name,
                                  const std::map<std::string, std::string> &env, int &err) {
  err = 0;
  if (name.find('/') != std::string::npos) return name;
  auto it = env.find("PATH");
  std::string path = it != env.end() ? it->second : "/usr/local/bin:/usr/bin:/bin";
  bool sawDenied = false;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      sawDenied = true;
    }
    start = end + 1;
  }
  err = sawDenied ? EACCES : ENOENT;
  return {};
}

class ProcessGroupRunner {
 public:
  explicit ProcessGroupRunner(const Host &host) : host_(host) {}
  ~ProcessGroupRunner() { endAll(); }
  ProcessGroupRunner(const ProcessGroupRunner &) = delete;
  ProcessGroupRunner &operator=(const ProcessGroupRunner &) = delete;

  // Starts request.argv as a new process group. A command that cannot start is
  // reported like a shell does: an `exit` event with 127 (not found) or 126.
  void start(const ExecRequest &request, const std::vector<std::string> &argvPrefix = {}) {
    std::vector<std::string> argv = argvPrefix;
    argv.insert(argv.end(), request.argv.begin(), request.argv.end());
    int lookupError = 0;
    std::string program = resolveCommand(argv[0], request.env, lookupError);
    pid_t pid = -1;
    int spawnError = lookupError ? lookupError : spawn(program, argv, request, pid);
    if (spawnError) {
      SandboxEvent exit;
      exit.type = SandboxEventType::exit;
      exit.sessionId = request.sessionId;
      exit.execId = request.execId;
      exit.exitCode = spawnError == ENOENT ? 127 : 126;
      exit.error = argv[0] + (spawnError == ENOENT ? std::string(": command not found")
                                                   : ": " + std::string(std::strerror(spawnError)));
      host_.emit(exit);
      return;
    }
    auto child = std::make_shared<Child>();
    child->sessionId = request.sessionId;
    child->pid = pid;
    std::lock_guard lock(mutex_);
    sweepFinished();
    children_[request.execId] = child;
    child->reaper = std::thread([this, child, execId = request.execId] { reap(*child, execId); });
  }

  void signal(const SignalRequest &request) {
    std::lock_guard lock(mutex_);
    auto it = children_.find(request.execId);
    if (it == children_.end() || it->second->sessionId != request.sessionId)
      throw std::runtime_error("no command " + request.execId + " in session " + request.sessionId);
    if (!it->second->exited) ::killpg(it->second->pid, request.signal);
  }

  // Ends every process group of the session and waits for the reapers.
  void endSession(const std::string &sessionId) {
    std::vector<std::shared_ptr<Child>> ending;
    {
      std::lock_guard lock(mutex_);
      for (auto it = children_.begin(); it != children_.end();) {
        if (it->second->sessionId == sessionId) {
          if (!it->second->exited) ::killpg(it->second->pid, SIGKILL);
          ending.push_back(it->second);
          it = children_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto &c : ending)
      if (c->reaper.joinable()) c->reaper.join();
  }

  void endAll() {
    std::vector<std::string> sessions;
    {
      std::lock_guard lock(mutex_);
      for (auto &[id, c] : children_) sessions.push_back(c->sessionId);
    }
    for (auto &s : sessions) endSession(s);
  }

 private:
  struct Child {
    std::string sessionId;
    pid_t pid = -1;
    bool exited = false;    // guarded by mutex_: the group leader has ended
    bool reported = false;  // guarded by mutex_: the reaper is done
    std::thread reaper;
  };

  // Joins the reapers of commands that have ended, so a long-lived session
  // does not accumulate finished threads. Called with mutex_ held.
  void sweepFinished() {
    for (auto it = children_.begin(); it != children_.end();) {
      if (it->second->reported) {
        it->second->reaper.join();
        it = children_.erase(it);
      } else {
        ++it;
      }
    }
  }

  static int spawn(const std::string &program, const std::vector<std::string> &argv,
                   const ExecRequest &request, pid_t &pid) {
    std::vector<char *> cargv;
    for (auto &a : argv) cargv.push_back(const_cast<char *>(a.c_str()));
    cargv.push_back(nullptr);
    std::vector<std::string> envStrings;
    for (auto &[k, v] : request.env) envStrings.push_back(k + "=" + v);
    std::vector<char *> cenv;
    for (auto &e : envStrings) cenv.push_back(const_cast<char *>(e.c_str()));
    cenv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_adddup2(&actions, request.stdio.in, 0);
    posix_spawn_file_actions_adddup2(&actions, request.stdio.out, 1);
    posix_spawn_file_actions_adddup2(&actions, request.stdio.err, 2);
    if (!request.cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, request.cwd.c_str());
    // A fresh process group, default signal dispositions (the host may ignore
    // SIGPIPE) and an empty mask, as a command started from a shell would have.
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(
        &attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    int rc = posix_spawn(&pid, program.c_str(), &actions, &attr, cargv.data(), cenv.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return rc;
  }

  void reap(Child &child, const std::string &execId) {
    // Wait without reaping: while the leader is a zombie its pid, and so the
    // group id, cannot be reused, which makes the killpg below safe.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT) < 0 &&
           errno == EINTR) {
    }
    {
      std::lock_guard lock(mutex_);
      // What the leader left running in its group ends with it: nothing a
      // command started outlives the command (nor holds its output open).
      ::killpg(child.pid, SIGKILL);
      child.exited = true;
    }
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    SandboxEvent exit;
    exit.type = SandboxEventType::exit;
    exit.sessionId = child.sessionId;
    exit.execId = execId;
    if (WIFSIGNALED(status)) {
      exit.signal = WTERMSIG(status);
      exit.exitCode = 128 + WTERMSIG(status);
    } else {
      exit.exitCode = WEXITSTATUS(status);
    }
    host_.emit(exit);
    std::lock_guard lock(mutex_);
    child.reported = true;
  }

  Host host_;
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<Child>> children_;
};

}  // namespace ccsandbox::sdk
