#include "bwrap_standby.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <system_error>
#include <utility>

namespace ccsandbox::bwrap {

namespace {

// Both ends close-on-exec and numbered above the fds the child gets (3, 4),
// so that dup2 onto them in the child always clears close-on-exec.
std::pair<UniqueFd, UniqueFd> socketPair(const char *what) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::system_error(errno, std::generic_category(), what);
  UniqueFd a(fds[0]), b(fds[1]);
  for (UniqueFd *f : {&a, &b})
    if (f->get() <= kArgsFd) f->reset(::fcntl(f->get(), F_DUPFD_CLOEXEC, 10));
  return {std::move(a), std::move(b)};
}

std::vector<std::string> commandLine(const std::string &bwrapPath,
                                     const std::vector<std::string> &namespaces,
                                     const std::vector<std::string> &command) {
  std::vector<std::string> argv{bwrapPath};
  argv.insert(argv.end(), namespaces.begin(), namespaces.end());
  argv.insert(argv.end(), {"--args", std::to_string(kArgsFd), "--"});
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

BwrapProcess spawn(const std::string &bwrapPath, const std::vector<std::string> &namespaces,
                   const std::vector<std::string> &command, UniqueFd &control, UniqueFd &output,
                   UniqueFd &args) {
  auto [ours, helpers] = socketPair("socketpair for the helper's control channel");
  auto [argsOurs, argsTheirs] = socketPair("socketpair for bubblewrap's arguments");
  int pipe[2];
  if (::pipe2(pipe, O_CLOEXEC) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  UniqueFd readEnd(pipe[0]), writeEnd(pipe[1]);
  BwrapProcess process(commandLine(bwrapPath, namespaces, command), writeEnd.get(), helpers.get(),
                       argsTheirs.get());
  control = std::move(ours);
  output = std::move(readEnd);
  args = std::move(argsOurs);
  return process;
}

}  // namespace

StandbyBwrap::StandbyBwrap(const std::string &bwrapPath, std::vector<std::string> namespaces,
                           std::vector<std::string> command)
    : bwrapPath_(bwrapPath),
      namespaces_(std::move(namespaces)),
      command_(std::move(command)),
      process_(spawn(bwrapPath, namespaces_, command_, control_, output_, args_)) {}

void StandbyBwrap::describe(const std::vector<std::string> &setup) {
  std::string text;
  for (const auto &a : setup) {
    text += a;
    text += '\0';
  }
  // Blocking: bwrap reads as we write, whatever the length. MSG_NOSIGNAL: a
  // bwrap that is gone is an error here, not a SIGPIPE for the whole process.
  for (std::size_t at = 0; at < text.size();) {
    const ssize_t n = ::send(args_.get(), text.data() + at, text.size() - at, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(std::string("cannot hand bubblewrap its arguments: ") +
                               std::system_category().message(errno));
    at += static_cast<std::size_t>(n);
  }
  args_.reset();  // end of file: bubblewrap goes on
}

}  // namespace ccsandbox::bwrap
