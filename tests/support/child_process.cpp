#include "support/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

extern char **environ;

namespace ccsandbox::test {

ChildResult runChild(const std::vector<std::string> &argv, const ChildOptions &options) {
  int out[2], err[2], in[2];
  if (::pipe2(out, O_CLOEXEC) || ::pipe2(err, O_CLOEXEC) || ::pipe2(in, O_CLOEXEC))
    throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));

  std::map<std::string, std::string> env;
  for (char **e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto &k : options.unsetEnv) env.erase(k);
  for (const auto &[k, v] : options.setEnv) env[k] = v;
  std::vector<std::string> envStrings;
  for (const auto &[k, v] : env) envStrings.push_back(k + "=" + v);
  std::vector<char *> cenv, cargv;
  for (auto &s : envStrings) cenv.push_back(s.data());
  cenv.push_back(nullptr);
  std::vector<std::string> args = argv;
  for (auto &a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) ::_exit(126);
    ::execvpe(cargv[0], cargv.data(), cenv.data());
    ::_exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  if (!options.stdinData.empty()) {
    [[maybe_unused]] auto n = ::write(in[1], options.stdinData.data(), options.stdinData.size());
  }
  ::close(in[1]);

  ChildResult result;
  auto deadline = std::chrono::steady_clock::now() + options.limit;
  bool outOpen = true, errOpen = true;
  char buf[65536];
  while (outOpen || errOpen) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timedOut = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    pollfd fds[2] = {{outOpen ? out[0] : -1, POLLIN, 0}, {errOpen ? err[0] : -1, POLLIN, 0}};
    if (::poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (!fds[i].revents) continue;
      ssize_t n = ::read(i == 0 ? out[0] : err[0], buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        (i == 0 ? outOpen : errOpen) = false;
      }
    }
  }
  ::close(out[0]);
  ::close(err[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

}  // namespace ccsandbox::test
