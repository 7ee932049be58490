#include "tunnel_relay.hpp"

#include "ccsandbox/unique_fd.hpp"

#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <vector>

namespace ccsandbox {

namespace asio = boost::asio;

namespace {

// The most one splice asks for; the pipe's capacity (64 KiB by default) caps it.
// Pipes are left at their default size: a larger one counts against the
// user's pipe-buffer quota for every open tunnel, even when idle.
constexpr std::size_t kChunk = 1024 * 1024;
constexpr std::size_t kCopyChunk = 64 * 1024;
// Work done in one handler before yielding, so one busy tunnel cannot starve
// the other connections sharing the thread.
constexpr int kStepsPerTurn = 32;

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
    for (auto &d : dirs_) {
      int fds[2];
      if (::pipe2(fds, O_NONBLOCK | O_CLOEXEC) != 0) {
        d.copyMode = true;  // out of fds for a pipe: still relay, by copying
      } else {
        d.pipeR.reset(fds[0]);
        d.pipeW.reset(fds[1]);
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
    std::size_t inPipe = 0;
    std::string pending;  // user-space bytes still to write to dst
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
    return Step::progress;
  }

  void pump(int i) {
    Direction &d = dirs_[i];
    if (closed_ || d.done) return;
    for (int turn = 0; turn < kStepsPerTurn; ++turn) {
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
