#include "control_channel.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace ccsandbox::bwrap {

namespace {

void putU32(std::string &out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

std::uint32_t getU32(const char *p) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i)
    v |= static_cast<std::uint32_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  return v;
}

void closeAll(std::vector<int> &fds) {
  for (int fd : fds) ::close(fd);
  fds.clear();
}

// On a non-blocking socket (the helper's, driven by its event loop) a message
// larger than the socket's buffer arrives, or leaves, in pieces: wait for the
// next one rather than take EAGAIN for an error. True when the call should be
// retried.
bool waitedFor(int fd, short events) {
  if (errno == EINTR) return true;
  if (errno != EAGAIN && errno != EWOULDBLOCK) return false;
  pollfd p{fd, events, 0};
  while (::poll(&p, 1, -1) < 0)
    if (errno != EINTR) return false;
  return true;
}

// Reads exactly `size` bytes; false on end of stream before the first byte.
bool readFull(int fd, char *buf, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    ssize_t n = ::read(fd, buf + got, size - got);
    if (n < 0 && waitedFor(fd, POLLIN)) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "control channel read");
    if (n == 0) {
      if (got == 0) return false;
      throw std::runtime_error("control channel: the peer closed in the middle of a message");
    }
    got += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

void sendMessage(int fd, const Message &message) {
  if (message.fds.size() > static_cast<std::size_t>(kMaxFds))
    throw std::invalid_argument("control channel: too many fds in one message");
  std::string payload;
  payload.push_back(static_cast<char>(message.type));
  putU32(payload, static_cast<std::uint32_t>(message.fields.size()));
  for (const auto &f : message.fields) {
    putU32(payload, static_cast<std::uint32_t>(f.size()));
    payload += f;
  }
  if (payload.size() > kMaxFrame)
    throw std::length_error("control channel: message of " + std::to_string(payload.size()) +
                            " bytes is over the " + std::to_string(kMaxFrame) + "-byte limit");
  std::string frame;
  frame.reserve(payload.size() + 4);
  putU32(frame, static_cast<std::uint32_t>(payload.size()));
  frame += payload;

  std::size_t sent = 0;
  bool fdsSent = message.fds.empty();
  while (sent < frame.size()) {
    iovec iov{frame.data() + sent, frame.size() - sent};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    if (!fdsSent) {
      std::memset(control, 0, sizeof control);
      msg.msg_control = control;
      msg.msg_controllen = CMSG_SPACE(sizeof(int) * message.fds.size());
      cmsghdr *c = CMSG_FIRSTHDR(&msg);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * message.fds.size());
      std::memcpy(CMSG_DATA(c), message.fds.data(), sizeof(int) * message.fds.size());
    }
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
    if (n < 0 && waitedFor(fd, POLLOUT)) continue;
    if (n < 0) throw std::system_error(errno, std::generic_category(), "control channel send");
    fdsSent = true;  // the fds travel with the first byte
    sent += static_cast<std::size_t>(n);
  }
}

bool receiveMessage(int fd, Message &message) {
  message = Message{};
  char header[4];
  std::size_t got = 0;
  // The header is read with recvmsg: the fds are attached to the frame's first byte.
  while (got < sizeof header) {
    iovec iov{header + got, sizeof header - got};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n = ::recvmsg(fd, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0 && waitedFor(fd, POLLIN)) continue;
    if (n < 0) {
      closeAll(message.fds);
      throw std::system_error(errno, std::generic_category(), "control channel receive");
    }
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int received;
        std::memcpy(&received, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        message.fds.push_back(received);
      }
    }
    if (msg.msg_flags & MSG_CTRUNC) {
      closeAll(message.fds);
      throw std::runtime_error("control channel: more fds than a message may carry");
    }
    if (n == 0) {
      closeAll(message.fds);
      if (got == 0) return false;
      throw std::runtime_error("control channel: the peer closed in the middle of a message");
    }
    got += static_cast<std::size_t>(n);
  }
  try {
    std::uint32_t length = getU32(header);
    if (length < 5 || length > kMaxFrame)
      throw std::runtime_error("control channel: bad frame length " + std::to_string(length));
    std::string payload(length, '\0');
    if (!readFull(fd, payload.data(), payload.size()))
      throw std::runtime_error("control channel: the peer closed in the middle of a message");
    message.type = static_cast<MessageType>(static_cast<unsigned char>(payload[0]));
    std::uint32_t count = getU32(payload.data() + 1);
    std::size_t pos = 5;
    for (std::uint32_t i = 0; i < count; ++i) {
      if (payload.size() - pos < 4) throw std::runtime_error("control channel: truncated frame");
      std::uint32_t size = getU32(payload.data() + pos);
      pos += 4;
      if (payload.size() - pos < size) throw std::runtime_error("control channel: truncated frame");
      message.fields.emplace_back(payload.data() + pos, size);
      pos += size;
    }
    if (pos != payload.size()) throw std::runtime_error("control channel: trailing bytes in frame");
  } catch (...) {
    closeAll(message.fds);
    throw;
  }
  return true;
}

}  // namespace ccsandbox::bwrap
