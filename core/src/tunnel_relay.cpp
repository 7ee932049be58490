#include "tunnel_relay.hpp"

#include "ccsandbox/unique_fd.hpp"

#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <vector>

namespace ccsandbox {

namespace asio = boost::asio;

namespace {

// The most one splice asks for; the pipe's capacity caps it.
constexpr std::size_t kChunk = 1024 * 1024;
constexpr std::size_t kCopyChunk = 64 * 1024;
// Work done in one handler before yielding, so one busy tunnel cannot starve
// the other connections sharing the thread.
constexpr int kStepsPerTurn = 32;
constexpr std::size_t kBytesPerTurn = 4 * 1024 * 1024;

// Pipes start at the kernel's default size (16 slots: 64 KiB, or less when a
// socket's data sits in small fragments). A direction that moves bulk data
// grows its pipe to kBulkPipe: fewer and larger splices, and fewer window
// updates to the sender, take a quarter to two fifths off the loop threads' CPU
// per MiB (docs/performance.md). Pipe capacity counts against the user's pipe
// quota (fs.pipe-user-pages-soft) whether it holds data or not, and past that
// quota every new pipe of the user gets 2 slots; so growth is granted from a
// process-wide budget (the quota is per user, not per session) and handed back
// when the tunnel closes. Idle tunnels keep the default size.
constexpr std::size_t kBulkPipe = 1024 * 1024;
constexpr std::size_t kGrowthBudget = 16 * 1024 * 1024;
// One splice that moves this much means bulk data (a quarter of a default pipe:
// reachable even when every slot holds one 1.4 KiB fragment from a NIC).
constexpr std::size_t kBulkSplice = 16 * 1024;

std::atomic<std::size_t> pipeGrowthInUse{0};

// The client's leg of a tunnel never leaves the host: the proxies listen on
// 127.0.0.1 and on Unix sockets only. Congestion control there has no shared
// link to protect, but a pacing one (BBR, when it is the host's default) arms a
// timer for most segments the proxy sends the client; with Reno on that leg a
// download through the tunnel arms half as many and costs about 30 % less CPU
// per MiB (docs/performance.md). Reno is always permitted to unprivileged
// processes. The upstream leg keeps the host's choice: it crosses real networks.
void useRenoOnLocalLeg(int fd) {
  static constexpr char kReno[] = "reno";
  // Fails on a Unix socket (no congestion control at all): nothing to do then.
  ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, kReno, sizeof kReno - 1);
}

// Pipe capacity taken from the budget; returned on reset or destruction.
class PipeGrowthGrant {
 public:
  PipeGrowthGrant() = default;
  PipeGrowthGrant(const PipeGrowthGrant &) = delete;
  PipeGrowthGrant &operator=(const PipeGrowthGrant &) = delete;
  ~PipeGrowthGrant() { reset(); }

  // False when the budget cannot spare `bytes` more.
  bool take(std::size_t bytes) {
    std::size_t used = pipeGrowthInUse.load(std::memory_order_relaxed);
    do {
      if (used + bytes > kGrowthBudget) return false;
    } while (!pipeGrowthInUse.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed));
    bytes_ += bytes;
    return true;
  }

  void reset() {
    pipeGrowthInUse.fetch_sub(bytes_, std::memory_order_relaxed);
    bytes_ = 0;
  }

 private:
  std::size_t bytes_ = 0;
};

class TunnelRelay final : public EgressConnection,
                          public std::enable_shared_from_this<TunnelRelay> {
 public:
  TunnelRelay(std::shared_ptr<EgressContext> ctx, StreamSocket client, StreamSocket upstream,
              std::string toUpstream)
      : ctx_(std::move(ctx)), client_(std::move(client)), upstream_(std::move(upstream)) {
    dirs_[0].src = &client_;
    dirs_[0].dst = &upstream_;
    dirs_[0].pending = std::move(toUpstream);
    dirs_[1].src = &upstream_;
    dirs_[1].dst = &client_;
  }

  ~TunnelRelay() override { ctx_->remove(this); }

  void start() {
    if (!ctx_->add(shared_from_this())) return closeNow();
    boost::system::error_code ec;
    client_.native_non_blocking(true, ec);
    if (!ec) upstream_.native_non_blocking(true, ec);
    if (ec) return closeNow();
    useRenoOnLocalLeg(client_.native_handle());
    for (auto &d : dirs_) {
      int fds[2];
      if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
        d.copyMode = true;  // out of fds for a pipe: still relay, by copying
      } else {
        d.pipeR.reset(fds[0]);
        d.pipeW.reset(fds[1]);
        int size = ::fcntl(fds[1], F_GETPIPE_SZ);
        d.pipeSize = size > 0 ? static_cast<std::size_t>(size) : 4096;
      }
    }
    pump(0);
    pump(1);
  }

  void close() override {
    asio::post(client_.get_executor(), [self = shared_from_this()] { self->closeNow(); });
  }

 private:
  struct Direction {
    StreamSocket *src = nullptr;
    StreamSocket *dst = nullptr;
    UniqueFd pipeR, pipeW;
    std::size_t pipeSize = 0;
    std::size_t inPipe = 0;
    PipeGrowthGrant growth;
    bool growthTried = false;
    std::size_t moved = 0;  // spliced in during the current turn
    std::string pending;    // user-space bytes still to write to dst
    std::size_t pendingOff = 0;
    bool copyMode = false;
    bool done = false;
  };

  enum class Step { progress, waitRead, waitWrite, eof, failed };

  Step writePending(Direction &d) {
    ssize_t n = ::send(d.dst->native_handle(), d.pending.data() + d.pendingOff,
                       d.pending.size() - d.pendingOff, MSG_NOSIGNAL);
    if (n < 0) return errno == EAGAIN || errno == EINTR ? Step::waitWrite : Step::failed;
    d.pendingOff += static_cast<std::size_t>(n);
    if (d.pendingOff == d.pending.size()) {
      d.pending.clear();
      d.pendingOff = 0;
    }
    return Step::progress;
  }

  Step step(Direction &d) {
    if (!d.pending.empty()) return writePending(d);
    int src = d.src->native_handle(), dst = d.dst->native_handle();
    if (d.copyMode) {
      d.pending.resize(kCopyChunk);
      ssize_t n = ::recv(src, d.pending.data(), kCopyChunk, 0);
      if (n <= 0) d.pending.clear();
      if (n == 0) return Step::eof;
      if (n < 0) return errno == EAGAIN || errno == EINTR ? Step::waitRead : Step::failed;
      d.pending.resize(static_cast<std::size_t>(n));
      return Step::progress;
    }
    if (d.inPipe > 0) {
      ssize_t n = ::splice(d.pipeR.get(), nullptr, dst, nullptr, d.inPipe,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
      if (n < 0) return errno == EAGAIN || errno == EINTR ? Step::waitWrite : Step::failed;
      d.inPipe -= static_cast<std::size_t>(n);
      return Step::progress;
    }
    ssize_t n =
        ::splice(src, nullptr, d.pipeW.get(), nullptr, kChunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n == 0) return Step::eof;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) return Step::waitRead;
      if (errno == EINVAL) {  // this socket type does not splice: copy instead
        d.copyMode = true;
        return Step::progress;
      }
      return Step::failed;
    }
    d.inPipe += static_cast<std::size_t>(n);
    if (!d.growthTried && d.inPipe >= std::min(kBulkSplice, d.pipeSize)) grow(d);
    d.moved += static_cast<std::size_t>(n);
    return Step::progress;
  }

  // Once per direction, on its first bulk splice. A pipe that cannot grow (the
  // budget is spent, or the quota or fs.pipe-max-size refuses) keeps relaying
  // at its current size.
  void grow(Direction &d) {
    d.growthTried = true;
    if (d.pipeSize >= kBulkPipe || !d.growth.take(kBulkPipe - d.pipeSize)) return;
    int size = ::fcntl(d.pipeW.get(), F_SETPIPE_SZ, static_cast<int>(kBulkPipe));
    if (size < static_cast<int>(kBulkPipe)) {
      d.growth.reset();
      return;
    }
    d.pipeSize = static_cast<std::size_t>(size);
  }

  void pump(int i) {
    Direction &d = dirs_[i];
    if (closed_ || d.done) return;
    d.moved = 0;
    for (int turn = 0; turn < kStepsPerTurn && d.moved < kBytesPerTurn; ++turn) {
      switch (step(d)) {
        case Step::progress: continue;
        case Step::waitRead:
          d.src->async_wait(StreamSocket::wait_read, [self = shared_from_this(), i](auto ec) {
            if (!ec) self->pump(i);
          });
          return;
        case Step::waitWrite:
          d.dst->async_wait(StreamSocket::wait_write, [self = shared_from_this(), i](auto ec) {
            if (!ec) self->pump(i);
          });
          return;
        case Step::eof: {
          // Everything read from src was written: pass the half-close on.
          d.done = true;
          ::shutdown(d.dst->native_handle(), SHUT_WR);
          if (dirs_[0].done && dirs_[1].done) closeNow();
          return;
        }
        case Step::failed: closeNow(); return;
      }
    }
    asio::post(client_.get_executor(), [self = shared_from_this(), i] { self->pump(i); });
  }

  void closeNow() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    client_.close(ignored);
    upstream_.close(ignored);
    for (auto &d : dirs_) {
      d.pipeR.reset();
      d.pipeW.reset();
      d.growth.reset();
    }
  }

  std::shared_ptr<EgressContext> ctx_;
  StreamSocket client_;
  StreamSocket upstream_;
  std::array<Direction, 2> dirs_;
  bool closed_ = false;
};

}  // namespace

void startTunnelRelay(std::shared_ptr<EgressContext> context, StreamSocket client,
                      StreamSocket upstream, std::string toUpstream) {
  std::make_shared<TunnelRelay>(std::move(context), std::move(client), std::move(upstream),
                                std::move(toUpstream))
      ->start();
}

}  // namespace ccsandbox
