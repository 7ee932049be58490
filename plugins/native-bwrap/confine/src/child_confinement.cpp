#include "ccsandbox/confine/child_confinement.hpp"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

namespace ccsandbox::confine {
namespace {

// What the child reports over the channel; on success the listener fd rides
// along as SCM_RIGHTS.
enum class Step : std::int32_t { done = 0, noNewPrivs = 1, landlock = 2, seccomp = 3 };
struct Report {
  Step step;
  std::int32_t error;
};

const char *stepName(Step s) {
  switch (s) {
    case Step::done: return "done";
    case Step::noNewPrivs: return "prctl(PR_SET_NO_NEW_PRIVS)";
    case Step::landlock: return "landlock_restrict_self";
    case Step::seccomp: return "seccomp(SECCOMP_SET_MODE_FILTER)";
  }
  return "?";
}

// Async-signal-safe: no allocation, no stdio.
void writeStderr(const char *a, const char *b) {
  auto put = [](const char *s) {
    const std::size_t n = std::strlen(s);
    [[maybe_unused]] auto r = ::write(STDERR_FILENO, s, n);
  };
  put("ccsandbox: cannot confine the command: ");
  put(a);
  put(": ");
  put(b);
  put("\n");
}

int sendReport(int channel, Report report, int fd) {
  iovec iov{&report, sizeof report};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  }
  ssize_t n;
  do n = ::sendmsg(channel, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof report) ? 0 : errno;
}

int fail(int channel, Step step, int error) {
  writeStderr(stepName(step), ::strerrordesc_np(error));
  sendReport(channel, Report{step, error}, -1);
  return error == 0 ? EINVAL : error;
}

}  // namespace

ChildConfinement ChildConfinement::prepare(const ConfineRules &rules) {
  ChildConfinement c;
  c.landlock_ = LandlockRuleset::prepare(rules);
  return c;
}

std::pair<UniqueFd, UniqueFd> ChildConfinement::channel() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    throw std::system_error(errno, std::generic_category(), "socketpair for the seccomp listener");
  return {UniqueFd(sv[0]), UniqueFd(sv[1])};
}

int ChildConfinement::apply(int channelFd) const noexcept {
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return fail(channelFd, Step::noNewPrivs, errno);
  // Landlock first: the seccomp filter would otherwise see its own setup.
  if (const int e = landlock_.restrictSelf(); e != 0) return fail(channelFd, Step::landlock, e);
  const int listener = filter_.install();
  if (listener < 0) return fail(channelFd, Step::seccomp, -listener);
  const int e = sendReport(channelFd, Report{Step::done, 0}, listener);
  ::close(listener);  // the command must never hold its own listener
  if (e != 0) {
    writeStderr("sending the seccomp listener", ::strerrordesc_np(e));
    return e;
  }
  return 0;
}

UniqueFd ChildConfinement::receiveListener(int channelFd) {
  Report report{Step::done, 0};
  iovec iov{&report, sizeof report};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do n = ::recvmsg(channelFd, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    throw std::system_error(errno, std::generic_category(), "receiving the seccomp listener");
  UniqueFd listener;
  for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
      listener.reset(fd);
    }
  if (n == 0) throw ChildEnded();
  if (n != static_cast<ssize_t>(sizeof report))
    throw std::runtime_error("a malformed report came from the command being confined");
  if (report.step != Step::done)
    throw std::runtime_error(std::string("the command could not be confined: ") +
                             stepName(report.step) + " failed: " + ::strerrordesc_np(report.error));
  if (!listener) throw std::runtime_error("the command sent no seccomp listener");
  return listener;
}

}  // namespace ccsandbox::confine
