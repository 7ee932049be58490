// ccsandbox-connect --socks5 HOST:PORT TARGET_HOST TARGET_PORT
//
// Opens TARGET through a SOCKS5 proxy (no authentication, the name resolved by
// the proxy) and relays stdin/stdout to it: ssh's ProxyCommand contract. EOF on
// stdin is passed on as a half-close; the program ends when the remote closes.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

namespace {

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "ccsandbox-connect: %s\n", message.c_str());
  std::exit(1);
}

const char *replyText(unsigned char code) {
  switch (code) {
    case 0x01: return "general failure";
    case 0x02: return "refused by the session's egress allowlist";
    case 0x03: return "network unreachable";
    case 0x04: return "host unreachable (cannot resolve)";
    case 0x05: return "connection refused";
    case 0x06: return "TTL expired";
    case 0x07: return "command not supported";
    case 0x08: return "address type not supported";
    default: return "unknown reply";
  }
}

bool writeAll(int fd, const char *data, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool readExactly(int fd, unsigned char *out, std::size_t size) {
  while (size > 0) {
    ssize_t n = ::read(fd, out, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    out += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

int connectProxy(const std::string &hostPort) {
  auto colon = hostPort.rfind(':');
  if (colon == std::string::npos) die("--socks5 needs HOST:PORT, got " + hostPort);
  std::string host = hostPort.substr(0, colon), port = hostPort.substr(colon + 1);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo *res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0)
    die("proxy address " + hostPort + ": " + ::gai_strerror(rc));
  int fd = ::socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || ::connect(fd, res->ai_addr, res->ai_addrlen) != 0)
    die("cannot connect to the SOCKS5 proxy " + hostPort + ": " + std::strerror(errno));
  ::freeaddrinfo(res);
  return fd;
}

void handshake(int fd, const std::string &host, unsigned port) {
  if (host.empty() || host.size() > 255) die("target host must be 1 to 255 characters");
  const unsigned char greeting[] = {0x05, 0x01, 0x00};
  unsigned char reply[4];
  if (!writeAll(fd, reinterpret_cast<const char *>(greeting), sizeof greeting) ||
      !readExactly(fd, reply, 2))
    die("the SOCKS5 proxy closed the connection");
  if (reply[0] != 0x05 || reply[1] != 0x00) die("the SOCKS5 proxy refused no-auth");
  std::string req{'\x05', '\x01', '\x00', '\x03', static_cast<char>(host.size())};
  req += host;
  req += static_cast<char>(port >> 8);
  req += static_cast<char>(port & 0xff);
  if (!writeAll(fd, req.data(), req.size()) || !readExactly(fd, reply, 4))
    die("the SOCKS5 proxy closed the connection");
  if (reply[1] != 0x00) die(host + ":" + std::to_string(port) + ": " + replyText(reply[1]));
  unsigned char skip[256 + 2];
  std::size_t rest = reply[3] == 0x01 ? 4 + 2 : reply[3] == 0x04 ? 16 + 2 : 0;
  if (reply[3] == 0x03) {
    if (!readExactly(fd, skip, 1)) die("truncated SOCKS5 reply");
    rest = skip[0] + 2u;
  }
  if (rest == 0 || !readExactly(fd, skip, rest)) die("malformed SOCKS5 reply");
}

void relay(int sock) {
  pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {sock, POLLIN, 0}};
  bool stdinOpen = true;
  char buf[65536];
  for (;;) {
    fds[0].fd = stdinOpen ? STDIN_FILENO : -1;
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      die(std::string("poll: ") + std::strerror(errno));
    }
    if (stdinOpen && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) {
      ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
      if (n > 0) {
        if (!writeAll(sock, buf, static_cast<std::size_t>(n))) return;
      } else if (n == 0 || errno != EINTR) {
        stdinOpen = false;
        ::shutdown(sock, SHUT_WR);  // pass the half-close on
      }
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n = ::read(sock, buf, sizeof buf);
      if (n > 0) {
        if (!writeAll(STDOUT_FILENO, buf, static_cast<std::size_t>(n))) return;
      } else if (n == 0 || errno != EINTR) {
        return;  // the remote closed: we are done
      }
    }
  }
}

}  // namespace

int main(int argc, char **argv) {
  std::string proxy;
  int i = 1;
  if (i + 1 < argc && std::string_view(argv[i]) == "--socks5") {
    proxy = argv[i + 1];
    i += 2;
  }
  if (proxy.empty() || argc - i != 2) {
    std::fprintf(stderr, "usage: ccsandbox-connect --socks5 HOST:PORT TARGET_HOST TARGET_PORT\n");
    return 2;
  }
  std::string host = argv[i];
  char *end = nullptr;
  unsigned long port = std::strtoul(argv[i + 1], &end, 10);
  if (!end || *end || port == 0 || port > 65535) die(std::string("bad port ") + argv[i + 1]);
  int sock = connectProxy(proxy);
  handshake(sock, host, static_cast<unsigned>(port));
  relay(sock);
  ::close(sock);
  return 0;
}
