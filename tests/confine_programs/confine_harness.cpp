#include "confine_harness.hpp"

#include "ccsandbox/confine/child_confinement.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace ccsandbox::test {
namespace {

std::string findProgram(const std::string &name) {
  if (name.find('/') != std::string::npos) return name;
  for (const char *dir : {"/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"}) {
    std::string p = std::string(dir) + "/" + name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  throw std::runtime_error("not installed: " + name);
}

}  // namespace

ConfinedResult runConfined(const confine::ConfineRules &rules, const std::vector<std::string> &argv,
                           const ConfinedOptions &options) {
  // Everything the child needs is built before fork.
  const std::string program = findProgram(argv.at(0));
  std::vector<char *> args;
  for (const auto &a : argv) args.push_back(const_cast<char *>(a.c_str()));
  args.push_back(nullptr);
  std::map<std::string, std::string> envMap = {{"PATH", "/usr/local/bin:/usr/bin:/bin"},
                                               {"HOME", options.cwd.empty() ? "/tmp" : options.cwd},
                                               {"LANG", "C"},
                                               {"GIT_CONFIG_NOSYSTEM", "1"}};
  for (const auto &[k, v] : options.env) envMap[k] = v;
  std::vector<std::string> envStrings;
  for (const auto &[k, v] : envMap) envStrings.push_back(k + "=" + v);
  std::vector<char *> envp;
  for (auto &e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);

  auto confinement = confine::ChildConfinement::prepare(rules);
  auto [parentEnd, childEnd] = confine::ChildConfinement::channel();
  int outPipe[2], errPipe[2], inPipe[2];
  if (::pipe2(outPipe, O_CLOEXEC) != 0 || ::pipe2(errPipe, O_CLOEXEC) != 0 ||
      ::pipe2(inPipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe");

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork");
  if (pid == 0) {
    ::dup2(outPipe[1], 1);
    ::dup2(errPipe[1], 2);
    ::dup2(inPipe[0], 0);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::umask(options.umask);
    if (options.dropToUid != 0) {
      const gid_t g = static_cast<gid_t>(options.dropToUid);
      if (::setgroups(0, nullptr) != 0 || ::setresgid(g, g, g) != 0 ||
          ::setresuid(options.dropToUid, options.dropToUid, options.dropToUid) != 0)
        ::_exit(125);
    }
    parentEnd.reset();
    if (confinement.apply(childEnd.get()) != 0) ::_exit(127);
    childEnd.reset();
    ::execve(program.c_str(), args.data(), envp.data());
    ::_exit(127);
  }
  ::close(outPipe[1]);
  ::close(errPipe[1]);
  ::close(inPipe[0]);
  childEnd.reset();
  ccsandbox::UniqueFd stdinWriter(inPipe[1]);
  if (options.supervisorDiesAfter.empty()) stdinWriter.reset();  // the command sees EOF

  ConfinedResult result;
  std::mutex lock;
  ccsandbox::UniqueFd listener = confine::ChildConfinement::receiveListener(parentEnd.get());
  std::unique_ptr<confine::Supervisor> supervisor;
  std::thread serving;
  std::promise<void> ended;
  auto endedFuture = ended.get_future();
  supervisor = std::make_unique<confine::Supervisor>(rules, std::move(listener),
                                                     [&](const confine::Violation &v) {
                                                       std::lock_guard g(lock);
                                                       result.violations.push_back(v);
                                                     });
  serving = std::thread([&] {
    supervisor->run();
    ended.set_value();
  });
  auto killSupervisor = [&] {
    supervisor->stop();
    serving.join();
    result.stats = supervisor->stats();
    supervisor.reset();  // closes the listener
    const char nl = '\n';
    [[maybe_unused]] auto n = ::write(stdinWriter.get(), &nl, 1);
    stdinWriter.reset();
  };

  // Collect output until both pipes close, with a bound so a hang fails.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string *sinks[2] = {&result.out, &result.err};
  int open = 2;
  bool killed = false;
  while (open > 0) {
    if (::poll(fds, 2, 1000) < 0 && errno != EINTR) break;
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        sinks[i]->append(buf, static_cast<std::size_t>(n));
        if (i == 0 && supervisor && !options.supervisorDiesAfter.empty() &&
            result.out.find(options.supervisorDiesAfter + "\n") != std::string::npos)
          killSupervisor();
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (supervisor) {
    // A bound, not a timing check: the hang-up should come at once.
    result.supervisorEndedOnHangUp =
        endedFuture.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
    supervisor->stop();
    serving.join();
    result.stats = supervisor->stats();
  }
  if (killed) result.err += "\n[killed: the command ran past the test's bound]";
  return result;
}

ConfinedResult shConfined(const confine::ConfineRules &rules, const std::string &script,
                          const ConfinedOptions &options) {
  return runConfined(rules, {"/bin/sh", "-c", script}, options);
}

confine::ConfineRules standardRules(const std::string &writeRoot) {
  confine::ConfineRules r;
  r.writeRoots = {writeRoot};
  r.writeDeny = {writeRoot + "/.git/hooks", writeRoot + "/.git/config"};
  r.writeDenyGlobs = {".env", ".env.*", "*.key", "*.pem"};
  r.execBlockWritableRoots = true;
  return r;
}

ConfinedOptions inDir(const std::string &cwd) {
  ConfinedOptions o;
  o.cwd = cwd;
  return o;
}

bool exists(const std::string &path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

mode_t modeOf(const std::string &path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return static_cast<mode_t>(-1);
  return st.st_mode & 07777;
}

bool unprivilegedRun() {
  return std::getenv("CCSANDBOX_CONFINE_UNPRIVILEGED") != nullptr;
}

std::string describe(const ConfinedResult &r) {
  std::string s =
      "status=" + std::to_string(r.status) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
  for (const auto &v : r.violations)
    s += "\nviolation " + v.action + " " + v.target + " (" + v.reason + ")";
  return s;
}

}  // namespace ccsandbox::test
