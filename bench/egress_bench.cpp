// Egress proxy benchmark, every figure against a direct loopback connection in
// the same run:
//   1. bulk throughput through a CONNECT tunnel and through SOCKS5 vs direct,
//      client to server (upload) and server to client (download), interleaved
//      rounds, best of each; with the CPU time each path costs per MiB: the
//      whole process (client, server, proxy; the kernel's TCP work included)
//      and the proxies' loop threads alone. CPU per MiB moves much less than
//      throughput with the machine's load, so it is the figure to compare
//      changes by; pinned to one CPU, the throughput ratio is its inverse.
//   2. added latency per connection over 1 000 sequential connects
//   3. 1 000 concurrent tunnels, each echoing 64 KiB
// Targets (docs/performance.md): >= 90 % of direct throughput, < 1 ms added latency.
//
//   egress_bench [--bytes MiB] [--rounds N] [--connects N] [--tunnels N] [--threads N]
//                (0 connects or tunnels skips that part; --threads: the proxies' loop threads)
//   egress_bench --only direct|connect|socks [--flow upload|download] [--bytes MiB] [--rounds N]
//                (one path and direction alone, to profile)
#include "ccsandbox/unique_fd.hpp"
#include "egress_proxies.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace ccsandbox;
namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

namespace {

UniqueFd listenLoopback(std::uint16_t &port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
      ::listen(fd.get(), 4096) != 0)
    throw std::runtime_error("listen");
  socklen_t len = sizeof a;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&a), &len);
  port = ntohs(a.sin_port);
  return fd;
}

UniqueFd connectTo(std::uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr *>(&a), sizeof a) != 0)
    throw std::runtime_error(std::string("connect: ") + std::strerror(errno));
  int one = 1;
  ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void sendAll(int fd, const char *p, std::size_t n) {
  while (n) {
    ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
    if (w <= 0) throw std::runtime_error("send");
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void recvExactly(int fd, char *p, std::size_t n) {
  while (n) {
    ssize_t r = ::recv(fd, p, n, 0);
    if (r <= 0) throw std::runtime_error("recv");
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

// How a client reaches the target: directly, via CONNECT, or via SOCKS5.
enum class Path { direct, connect, socks };
const char *name(Path p) {
  return p == Path::direct ? "direct" : p == Path::connect ? "CONNECT" : "SOCKS5";
}

UniqueFd open(Path path, const EgressProxies &proxies, std::uint16_t target) {
  if (path == Path::direct) return connectTo(target);
  if (path == Path::connect) {
    auto fd = connectTo(proxies.httpPort());
    std::string req = "CONNECT 127.0.0.1:" + std::to_string(target) + " HTTP/1.1\r\n\r\n";
    sendAll(fd.get(), req.data(), req.size());
    const std::string ok = "HTTP/1.1 200 Connection Established\r\n\r\n";
    std::string got(ok.size(), '\0');
    recvExactly(fd.get(), got.data(), got.size());
    if (got != ok) throw std::runtime_error("CONNECT refused: " + got);
    return fd;
  }
  auto fd = connectTo(proxies.socksPort());
  char req[13] = {5,
                  1,
                  0,
                  5,
                  1,
                  0,
                  1,
                  127,
                  0,
                  0,
                  1,
                  static_cast<char>(target >> 8),
                  static_cast<char>(target & 0xff)};
  sendAll(fd.get(), req, sizeof req);
  char reply[12];
  recvExactly(fd.get(), reply, sizeof reply);
  if (reply[3] != 0) throw std::runtime_error("SOCKS5 refused");
  return fd;
}

// A sink: reads each connection to EOF, then closes (the client's proof of delivery).
struct Sink {
  std::uint16_t port = 0;
  UniqueFd listen = listenLoopback(port);
  std::thread thread{[this] {
    std::vector<char> buf(1 << 20);
    for (;;) {
      UniqueFd c(::accept4(listen.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) return;
      while (::recv(c.get(), buf.data(), buf.size(), 0) > 0) {
      }
    }
  }};
  ~Sink() {
    ::shutdown(listen.get(), SHUT_RDWR);
    thread.join();
  }
};

// A source: reads an 8-byte count, sends that many bytes in the same 1 MiB
// writes as the client of an upload, then closes.
struct Source {
  std::uint16_t port = 0;
  UniqueFd listen = listenLoopback(port);
  std::thread thread{[this] {
    std::vector<char> chunk(1 << 20, 'y');
    for (;;) {
      UniqueFd c(::accept4(listen.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) return;
      std::uint64_t bytes = 0;
      try {
        recvExactly(c.get(), reinterpret_cast<char *>(&bytes), sizeof bytes);
        for (std::uint64_t sent = 0; sent < bytes; sent += chunk.size())
          sendAll(c.get(), chunk.data(), std::min<std::uint64_t>(chunk.size(), bytes - sent));
      } catch (const std::exception &) {
      }
    }
  }};
  ~Source() {
    ::shutdown(listen.get(), SHUT_RDWR);
    thread.join();
  }
};

// Echoes one byte per connection, then closes (latency probe).
struct Pinger {
  std::uint16_t port = 0;
  UniqueFd listen = listenLoopback(port);
  std::thread thread{[this] {
    for (;;) {
      UniqueFd c(::accept4(listen.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!c) return;
      char b;
      if (::recv(c.get(), &b, 1, 0) == 1) ::send(c.get(), &b, 1, MSG_NOSIGNAL);
    }
  }};
  ~Pinger() {
    ::shutdown(listen.get(), SHUT_RDWR);
    thread.join();
  }
};

// Kernel thread ids of this process (the proxies' loop threads are the ones that
// appear when the EgressService starts).
std::set<pid_t> threadIds() {
  std::set<pid_t> ids;
  if (DIR *d = ::opendir("/proc/self/task")) {
    while (dirent *e = ::readdir(d))
      if (e->d_name[0] != '.') ids.insert(static_cast<pid_t>(std::atoi(e->d_name)));
    ::closedir(d);
  }
  return ids;
}

double cpuSeconds(clockid_t clock) {
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// CPU time (user + system, softirq work included when it ran in the thread) of one
// thread of this process, by kernel thread id: the per-thread clock id that
// pthread_getcpuclockid builds (CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED).
double threadCpuSeconds(pid_t tid) {
  return cpuSeconds(static_cast<clockid_t>((~tid << 3) | 6));
}

struct CpuMeter {
  std::vector<pid_t> proxyThreads;
  double process() const { return cpuSeconds(CLOCK_PROCESS_CPUTIME_ID); }
  double proxy() const {
    double s = 0;
    for (pid_t t : proxyThreads) s += threadCpuSeconds(t);
    return s;
  }
};

struct RunFigures {
  double mibPerS = 0;
  double cpuUsPerMiB = 0;    // the whole process: client, server and proxy
  double proxyUsPerMiB = 0;  // the proxies' loop threads only
};

enum class Flow { upload, download };

// The client of every path: same code, same 1 MiB writes and reads, same servers.
RunFigures throughput(Path path, Flow flow, const EgressProxies &proxies, std::uint16_t sink,
                      std::uint16_t source, std::size_t bytes, const CpuMeter &cpu) {
  static std::vector<char> chunk(1 << 20, 'x');
  auto fd = open(path, proxies, flow == Flow::upload ? sink : source);
  double cpu0 = cpu.process(), proxy0 = cpu.proxy();
  auto start = Clock::now();
  if (flow == Flow::upload) {
    for (std::size_t sent = 0; sent < bytes; sent += chunk.size())
      sendAll(fd.get(), chunk.data(), std::min(chunk.size(), bytes - sent));
    ::shutdown(fd.get(), SHUT_WR);
    char b;
    while (::recv(fd.get(), &b, 1, 0) > 0) {
    }  // the sink closes after reading everything
  } else {
    std::uint64_t want = bytes;
    sendAll(fd.get(), reinterpret_cast<const char *>(&want), sizeof want);
    std::size_t got = 0;
    for (ssize_t n; (n = ::recv(fd.get(), chunk.data(), chunk.size(), 0)) > 0;)
      got += static_cast<std::size_t>(n);
    if (got != bytes) throw std::runtime_error("download cut short");
  }
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  double mib = static_cast<double>(bytes) / (1 << 20);
  return {mib / s, (cpu.process() - cpu0) * 1e6 / mib, (cpu.proxy() - proxy0) * 1e6 / mib};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double connectMicros(Path path, const EgressProxies &proxies, std::uint16_t pinger, int n) {
  std::vector<double> us;
  for (int i = 0; i < n; ++i) {
    auto start = Clock::now();
    auto fd = open(path, proxies, pinger);
    char b = 'p';
    sendAll(fd.get(), &b, 1);
    recvExactly(fd.get(), &b, 1);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

// n tunnels open at once through `path`, each echoing `size` bytes.
double concurrentSeconds(Path path, const EgressProxies &proxies, int n, std::size_t size,
                         int &ok) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
  acceptor.listen(4096);
  std::uint16_t echoPort = acceptor.local_endpoint().port();
  std::function<void()> accept = [&] {
    acceptor.async_accept([&](boost::system::error_code ec, asio::ip::tcp::socket s) {
      if (ec) return;
      auto sock = std::make_shared<asio::ip::tcp::socket>(std::move(s));
      auto buf = std::make_shared<std::vector<char>>(size);
      asio::async_read(*sock, asio::buffer(*buf), [sock, buf](auto ec, std::size_t) {
        if (!ec) asio::async_write(*sock, asio::buffer(*buf), [sock, buf](auto, std::size_t) {});
      });
      accept();
    });
  };
  accept();
  std::thread server([&] { io.run(); });
  std::vector<UniqueFd> fds;
  auto start = Clock::now();
  for (int i = 0; i < n; ++i) fds.push_back(open(path, proxies, echoPort));
  std::vector<char> payload(size, 'e'), back(size);
  for (auto &fd : fds) sendAll(fd.get(), payload.data(), size);
  ok = 0;
  for (auto &fd : fds) {
    recvExactly(fd.get(), back.data(), size);
    ok += back == payload;
  }
  double s = std::chrono::duration<double>(Clock::now() - start).count();
  fds.clear();
  io.stop();
  server.join();
  return s;
}

// TCP congestion control of new sockets: it decides what a second TCP connection
// costs (BBR paces every connection with timers, so a relay pays that twice).
std::string congestionControl() {
  std::string cc;
  if (FILE *f = std::fopen("/proc/sys/net/ipv4/tcp_congestion_control", "r")) {
    char buf[64] = {};
    if (std::fgets(buf, sizeof buf, f)) cc = buf;
    std::fclose(f);
  }
  while (!cc.empty() && (cc.back() == '\n' || cc.back() == ' ')) cc.pop_back();
  return cc.empty() ? "unknown" : cc;
}

long rssKiB(const char *field) {
  FILE *f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, field, std::strlen(field)) == 0)
      v = std::atol(line + std::strlen(field));
  std::fclose(f);
  return v;
}

}  // namespace

int main(int argc, char **argv) {
  std::size_t mib = 512;
  int connects = 1000, tunnels = 1000, rounds = 5;
  unsigned threads = 2;  // the proxies' loop threads, as the Runtime starts them
  std::string only;      // one path's bulk runs alone, for profiling (perf, strace)
  std::string onlyFlow = "upload";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--bytes")
      mib = std::stoul(argv[i + 1]);
    else if (a == "--connects")
      connects = std::stoi(argv[i + 1]);
    else if (a == "--tunnels")
      tunnels = std::stoi(argv[i + 1]);
    else if (a == "--rounds")
      rounds = std::max(1, std::stoi(argv[i + 1]));
    else if (a == "--threads")
      threads = static_cast<unsigned>(std::max(1, std::stoi(argv[i + 1])));
    else if (a == "--only")
      only = argv[i + 1];
    else if (a == "--flow")
      onlyFlow = argv[i + 1];
  }
  Sink sink;
  Source source;
  Pinger pinger;
  auto before = threadIds();
  auto service = EgressService::create(threads);
  CpuMeter cpu;
  for (pid_t t : threadIds())
    if (!before.count(t)) cpu.proxyThreads.push_back(t);
  EgressProxyOptions o;
  o.allowlist = {"127.0.0.1"};  // the literal: an explicit choice, so loopback is reachable
  EgressProxies proxies(service->context(), o);
  const Flow flows[] = {Flow::upload, Flow::download};
  auto flowName = [](Flow f) { return f == Flow::upload ? "upload" : "download"; };

  if (!only.empty()) {
    Path p = only == "direct" ? Path::direct : only == "socks" ? Path::socks : Path::connect;
    Flow f = onlyFlow == "download" ? Flow::download : Flow::upload;
    for (int r = 0; r < rounds; ++r) {
      auto run = throughput(p, f, proxies, sink.port, source.port, mib << 20, cpu);
      std::printf("%-8s %-8s %6.0f MiB/s  CPU %4.0f us/MiB (proxy %4.0f)\n", name(p), flowName(f),
                  run.mibPerS, run.cpuUsPerMiB, run.proxyUsPerMiB);
    }
    return 0;
  }
  std::printf(
      "egress_bench: %zu MiB per throughput run, %d sequential connects, %d concurrent "
      "tunnels; %u CPUs; %u proxy loop threads; TCP congestion control %s\n",
      mib, connects, tunnels, std::thread::hardware_concurrency(), threads,
      congestionControl().c_str());
  if (mib > 0) {
    // Rounds interleave the paths and directions, so a load change on a shared
    // machine hits all of them alike; each keeps its best round for throughput
    // and the median of its rounds for CPU time.
    std::printf(
        "\n1. bulk throughput, best of %d interleaved rounds; CPU time per MiB, median\n"
        "   (process: client + server + proxy; proxy: its loop threads alone)\n",
        rounds);
    const Path paths[] = {Path::direct, Path::connect, Path::socks};
    double best[2][3] = {};
    std::vector<double> cpuPerMiB[2][3], proxyPerMiB[2][3];
    for (int r = 0; r < rounds; ++r)
      for (int f = 0; f < 2; ++f)
        for (int i = 0; i < 3; ++i) {
          auto run =
              throughput(paths[i], flows[f], proxies, sink.port, source.port, mib << 20, cpu);
          best[f][i] = std::max(best[f][i], run.mibPerS);
          cpuPerMiB[f][i].push_back(run.cpuUsPerMiB);
          proxyPerMiB[f][i].push_back(run.proxyUsPerMiB);
        }
    for (int f = 0; f < 2; ++f) {
      std::printf("   %s\n", flowName(flows[f]));
      for (int i = 0; i < 3; ++i) {
        double ratio = best[f][i] / best[f][0];
        double cpuUs = median(cpuPerMiB[f][i]), cpuDirect = median(cpuPerMiB[f][0]);
        if (i == 0) {
          std::printf("     %-8s %6.0f MiB/s              CPU %4.0f us/MiB\n", name(paths[i]),
                      best[f][i], cpuUs);
          continue;
        }
        std::printf(
            "     %-8s %6.0f MiB/s  ratio %.2f  CPU %4.0f us/MiB = %.2fx direct (proxy %3.0f)  "
            "%s\n",
            name(paths[i]), best[f][i], ratio, cpuUs, cpuUs / cpuDirect, median(proxyPerMiB[f][i]),
            ratio >= 0.90 ? "(target >= 0.90: met)" : "(target >= 0.90: MISSED)");
      }
    }
  }
  if (connects > 0) {
    std::printf("\n2. connect + 1-byte round trip, median of %d sequential\n", connects);
    double base = connectMicros(Path::direct, proxies, pinger.port, connects);
    std::printf("   %-8s %9.1f us\n", "direct", base);
    for (Path p : {Path::connect, Path::socks}) {
      double us = connectMicros(p, proxies, pinger.port, connects);
      std::printf("   %-8s %9.1f us   added %.1f us  ratio %.2f  %s\n", name(p), us, us - base,
                  us / base, us - base < 1000 ? "(target < 1 ms: met)" : "(target < 1 ms: MISSED)");
    }
  }
  if (tunnels > 0) {
    std::printf("\n3. %d concurrent tunnels, 64 KiB echoed through each\n", tunnels);
    int ok = 0;
    double d = concurrentSeconds(Path::direct, proxies, tunnels, 64 << 10, ok);
    std::printf("   %-8s %7.3f s  %d/%d intact\n", "direct", d, ok, tunnels);
    for (Path p : {Path::connect, Path::socks}) {
      double s = concurrentSeconds(p, proxies, tunnels, 64 << 10, ok);
      std::printf("   %-8s %7.3f s  %d/%d intact  ratio %.2f\n", name(p), s, ok, tunnels, s / d);
    }
  }
  std::printf("\n4. memory: 100 more session pairs on the same loop\n");
  long rssBefore = rssKiB("VmRSS:");
  {
    std::vector<std::unique_ptr<EgressProxies>> pairs;
    for (int i = 0; i < 100; ++i)
      pairs.push_back(std::make_unique<EgressProxies>(service->context(), o));
    long after = rssKiB("VmRSS:");
    std::printf("   RSS %ld KiB -> %ld KiB: %.1f KiB per idle pair; process peak %ld KiB\n",
                rssBefore, after, (after - rssBefore) / 100.0, rssKiB("VmHWM:"));
    for (auto &p : pairs) p->stop();
  }
  proxies.stop();
  return 0;
}
