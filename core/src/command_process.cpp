#include "command_process.hpp"

#include "ccsandbox/logging.hpp"
#include "stderr_violation_scanner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>

#include <cerrno>
#include <system_error>

namespace ccsandbox {

namespace {

// After `exit`, output still buffered in the pipes is read to the end; a
// writer that escaped the command's process group cannot hold it up longer.
constexpr std::chrono::milliseconds kDrainAfterExit{2000};
constexpr std::size_t kChunk = 64 * 1024;

void setNonBlocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

}  // namespace

CommandProcess::CommandProcess(std::string sessionId, std::string execId, UniqueFd stdoutRead,
                               UniqueFd stderrRead, Hooks hooks,
                               std::optional<std::chrono::milliseconds> timeout,
                               std::chrono::milliseconds killGrace)
    : sessionId_(std::move(sessionId)),
      execId_(std::move(execId)),
      out_(std::move(stdoutRead)),
      err_(std::move(stderrRead)),
      hooks_(std::move(hooks)),
      timeout_(timeout),
      killGrace_(killGrace) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::system_error(errno, std::generic_category(), "pipe2");
  wakeRead_.reset(fds[0]);
  wakeWrite_.reset(fds[1]);
  setNonBlocking(out_.get());
  setNonBlocking(err_.get());
}

CommandProcess::~CommandProcess() {
  if (pump_.joinable()) {
    if (pump_.get_id() == std::this_thread::get_id())
      pump_.detach();
    else
      pump_.join();
  }
}

void CommandProcess::start() {
  pump_ = std::thread([this] { run(); });
}

void CommandProcess::join() {
  if (pump_.joinable() && pump_.get_id() != std::this_thread::get_id()) pump_.join();
}

void CommandProcess::wake() {
  char b = 1;
  [[maybe_unused]] auto n = ::write(wakeWrite_.get(), &b, 1);  // full pipe: already awake
}

void CommandProcess::post(SandboxEvent event) {
  {
    std::lock_guard lock(mutex_);
    inbox_.push_back(std::move(event));
  }
  wake();
}

void CommandProcess::sessionEnded() {
  {
    std::lock_guard lock(mutex_);
    sessionEnded_ = true;
  }
  wake();
}

void CommandProcess::signal(int sig) {
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
  }
  hooks_.signal(sig);
}

void CommandProcess::kill() {
  {
    std::lock_guard lock(mutex_);
    if (done_ || killRequested_) return;
    killRequested_ = true;
  }
  wake();
}

int CommandProcess::wait() {
  std::unique_lock lock(mutex_);
  doneCv_.wait(lock, [&] { return done_; });
  return exitCode_.value_or(-1);
}

std::optional<int> CommandProcess::exitCode() const {
  std::lock_guard lock(mutex_);
  return exitCode_;
}

SandboxEvent CommandProcess::event(SandboxEventType type) const {
  SandboxEvent e;
  e.type = type;
  e.sessionId = sessionId_;
  e.execId = execId_;
  return e;
}

void CommandProcess::run() {
  std::optional<Clock::time_point> deadline, killAt, drainUntil, sessionEndedAt;
  if (timeout_) deadline = Clock::now() + *timeout_;
  std::optional<SandboxEvent> exit;
  bool outOpen = true, errOpen = true;
  bool killing = false;
  // Not zeroed: only what read() fills is touched (a zeroed 64 KiB is 16 page faults per command).
  const auto buffer = std::make_unique_for_overwrite<char[]>(kChunk);
  std::optional<StderrViolationScanner> scanner;
  if (hooks_.scanStderr) scanner.emplace(*hooks_.scanStderr);
  auto report = [&](std::vector<SandboxViolation> found) {
    for (auto &v : found) {
      auto e = event(SandboxEventType::violation);
      e.violation = std::move(v);
      hooks_.deliver(e);
    }
  };

  auto startKill = [&](KillReason reason) {
    auto killed = event(SandboxEventType::killed);
    killed.reason = reason;
    hooks_.deliver(killed);
    hooks_.signal(SIGTERM);
    killAt = Clock::now() + killGrace_;
    killing = true;
  };

  for (;;) {
    // Events the backend sent: exit is held back until the output is complete.
    std::deque<SandboxEvent> inbox;
    bool killNow = false, ended = false;
    {
      std::lock_guard lock(mutex_);
      inbox.swap(inbox_);
      killNow = killRequested_ && !killing;
      ended = sessionEnded_;
    }
    for (auto &e : inbox) {
      if (e.type == SandboxEventType::exit) {
        if (!exit) exit = std::move(e);
      } else {
        hooks_.deliver(e);
      }
    }
    if (killNow && !exit) startKill(KillReason::manual);

    auto now = Clock::now();
    if (!exit && deadline && now >= *deadline) {
      deadline.reset();
      if (!killing) startKill(KillReason::timeout);
    }
    if (!exit && killAt && now >= *killAt) {
      killAt.reset();
      hooks_.signal(SIGKILL);
    }
    if (ended && !exit) {
      if (!sessionEndedAt) sessionEndedAt = now;
      if (now - *sessionEndedAt >= kDrainAfterExit) {
        // The backend tore the session down without reporting this command.
        auto e = event(SandboxEventType::exit);
        e.exitCode = 128 + SIGKILL;
        e.signal = SIGKILL;
        exit = e;
      }
    }
    if (exit && !outOpen && !errOpen) break;
    if (exit) {
      if (!drainUntil) drainUntil = now + kDrainAfterExit;
      if (now >= *drainUntil) {
        logging::write(logging::Level::warning, "core",
                       "command " + execId_ + " of session " + sessionId_ +
                           " exited but something it started still holds its output open; "
                           "output after this point is not read");
        break;
      }
    }

    std::optional<Clock::time_point> next;
    for (auto &t : {deadline, killAt, drainUntil})
      if (t && (!next || *t < *next)) next = t;
    if (ended && !exit) next = now + std::chrono::milliseconds(100);
    int waitMs = -1;
    if (next)
      waitMs = static_cast<int>(std::max<long long>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(*next - now).count() + 1));

    pollfd fds[3] = {{outOpen ? out_.get() : -1, POLLIN, 0},
                     {errOpen ? err_.get() : -1, POLLIN, 0},
                     {wakeRead_.get(), POLLIN, 0}};
    int rc = ::poll(fds, 3, waitMs);
    if (rc < 0 && errno != EINTR) break;
    if (rc <= 0) continue;
    if (fds[2].revents) {
      char drain[64];
      while (::read(wakeRead_.get(), drain, sizeof drain) > 0) {
      }
    }
    struct Stream {
      pollfd &p;
      UniqueFd &fd;
      bool &open;
      SandboxEventType type;
    };
    for (Stream s : {Stream{fds[0], out_, outOpen, SandboxEventType::stdoutData},
                     Stream{fds[1], err_, errOpen, SandboxEventType::stderrData}}) {
      if (!s.open || !s.p.revents) continue;
      // Read what is there now (bounded, so one busy stream cannot starve the other).
      for (int i = 0; i < 16; ++i) {
        ssize_t n = ::read(s.fd.get(), buffer.get(), kChunk);
        if (n > 0) {
          auto e = event(s.type);
          e.data.assign(buffer.get(), static_cast<std::size_t>(n));
          hooks_.deliver(e);
          if (scanner && s.type == SandboxEventType::stderrData) report(scanner->feed(e.data));
          continue;
        }
        if (n < 0 && (errno == EINTR)) continue;
        if (n < 0 && errno == EAGAIN) break;
        s.open = false;  // EOF or error
        s.fd.reset();
        if (scanner && s.type == SandboxEventType::stderrData) report(scanner->finish());
        break;
      }
    }
  }

  hooks_.finished();
  {
    std::lock_guard lock(mutex_);
    exitCode_ = exit ? exit->exitCode : std::optional<int>(-1);
  }
  if (exit) hooks_.deliver(*exit);
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  doneCv_.notify_all();
}

}  // namespace ccsandbox
