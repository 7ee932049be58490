#include "bwrap_session.hpp"

#include "control_channel.hpp"
#include "host_filesystem.hpp"
#include "mount_plan.hpp"
#include "unique_pipe.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>

namespace ccsandbox::bwrap {

namespace {

constexpr auto kReadyLimit = std::chrono::seconds(30);
constexpr auto kExitGrace = std::chrono::seconds(2);

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// A bind whose source is missing would fail inside bubblewrap ("Can't find
// source path"); said here, naming the mount, it is the request's problem.
void refuseMissingSources(const std::vector<PlannedBind> &binds) {
  for (const auto &b : binds)
    if (::access(b.source.c_str(), F_OK) != 0 && errno == ENOENT)
      throw sdk::RequestError("cannot mount " + b.source + " at " + b.target +
                              " in the sandbox: " + b.source + " does not exist");
}

}  // namespace

MountPlanInput planInput(const BwrapHost &host, const std::string &emptyDir) {
  MountPlanInput in;
  in.callerIsRoot = host.callerIsRoot;
  in.disableNestedUserns = host.disableNestedUserns;
  in.helperPath = host.helperPath;
  in.toolsDir = std::filesystem::path(host.helperPath).parent_path().string();
  in.emptyDir = emptyDir;
  in.controlFd = kPassedFd;
  return in;
}

StandbyBwrap BwrapSession::standby(const BwrapHost &host) {
  const MountPlanInput in = planInput(host, "");
  // Restricted network: what every agent launch has (an open one does not fit, see fits()).
  return StandbyBwrap(host.bwrapPath, namespaceArgs(in, true), helperCommandLine(in));
}

BwrapSession::BwrapSession(const LaunchRequest &request, const BwrapHost &host,
                           SpawnerThread &spawner, const sdk::Host &events,
                           std::optional<StandbyBwrap> started)
    : sessionId_(request.sessionId), events_(events), bwrapPath_(host.bwrapPath) {
  // The mask for read-denied directories: empty, and read-only where it is used.
  const std::string emptyDir = request.runtimeDir + "/bwrap-empty";
  MountPlan plan = planMounts(request.policy, planInput(host, emptyDir), HostFilesystem());
  // Made only when the plan masks a directory with it (a directory costs an
  // inode on the runtime directory's file system, at every launch).
  if (std::find(plan.args.begin(), plan.args.end(), emptyDir) != plan.args.end() &&
      ::mkdir(emptyDir.c_str(), 0555) != 0 && errno != EEXIST)
    throw std::system_error(errno, std::generic_category(), "cannot create " + emptyDir);
  args_ = plan.args;
  refuseMissingSources(plan.binds);

  // A bubblewrap started ahead for another plan (an open network) is let go.
  if (started && !started->fits(host.bwrapPath, plan.namespaces, plan.command)) started.reset();
  if (!started)
    started.emplace(
        spawner.run([&] { return StandbyBwrap(host.bwrapPath, plan.namespaces, plan.command); }));
  control_ = started->takeControl();
  UniqueFd output = started->takeOutput();
  bwrap_.emplace(started->takeProcess());
  std::string unsent;  // why the bridges or the rules could not be sent
  try {
    started->describe(plan.setup);
    // The rules first, not after `ready`: the helper builds the session's
    // confinement while it opens the bridges, and its first spare child while
    // we wait and return.
    if (host.confine) {
      sendMessage(control_.get(), confineMessage(plan.guestRules));
      confined_ = true;
    }
    Message bridges{MessageType::bridges, {}, {}};
    for (const auto &b : plan.bridges)
      bridges.fields.push_back(b.host + ":" + std::to_string(b.port) + "=" + b.guestSocket);
    sendMessage(control_.get(), bridges);
  } catch (const std::exception &e) {
    // bwrap is gone: its own words say why (waitReady). Kept for the case it is not.
    unsent = e.what();
  }
  waitReady(output.get());
  if (host.confine && !confined_) {
    // Fail closed: a sandbox that did not get its write rules runs nothing.
    bwrap_->kill();
    throw std::runtime_error("cannot hand the write rules to the sandbox: " + unsent);
  }
  output_ = std::move(output);
  reader_ = std::thread([this] { readLoop(); });
}

BwrapSession::~BwrapSession() {
  destroy();
  reap();
}

void BwrapSession::waitReady(int output) {
  auto fail = [&](const std::string &why) {
    std::string said = trimmed(UniquePipe::readAllFrom(output, std::chrono::seconds(2)));
    bwrap_->kill();
    throw std::runtime_error("bubblewrap could not start the sandbox: " +
                             (said.empty() ? why : said));
  };
  pollfd p{control_.get(), POLLIN, 0};
  int rc;
  do {
    rc = ::poll(&p, 1, static_cast<int>(std::chrono::milliseconds(kReadyLimit).count()));
  } while (rc < 0 && errno == EINTR);
  if (rc == 0) fail("its helper did not report ready within 30 s");
  Message m;
  bool got = false;
  try {
    got = receiveMessage(control_.get(), m);
  } catch (const std::exception &e) {
    fail(e.what());
  }
  if (!got) fail("it ended before its helper was ready");
  if (m.type != MessageType::ready) fail("its helper sent an unexpected first message");
}

Message BwrapSession::confineMessage(const GuestWriteRules &rules) {
  Message m;
  m.type = MessageType::confine;
  m.fields.push_back(rules.execBlockWritableRoots ? "1" : "0");
  for (const auto *list :
       {&rules.writeRoots, &rules.writeDeny, &rules.writeDenyGlobs, &rules.execGrantRoots}) {
    m.fields.push_back(std::to_string(list->size()));
    m.fields.insert(m.fields.end(), list->begin(), list->end());
  }
  return m;
}

boost::json::object BwrapSession::details() const {
  boost::json::array args;
  std::size_t mounts = 0;
  for (const auto &a : args_) {
    args.emplace_back(a);
    if (a == "--bind" || a == "--ro-bind") ++mounts;
  }
  // bwrapArgs: the sandbox as one bubblewrap command line (its own shows
  // `--args 4` where the mounts were handed over).
  return {{"bwrapPid", bwrap_ ? bwrap_->pid() : -1},
          {"bwrap", bwrapPath_},
          {"bwrapArgs", std::move(args)},
          {"mounts", mounts},
          {"supervised", confined_}};
}

void BwrapSession::exec(const ExecRequest &request) {
  Message m;
  m.type = MessageType::exec;
  m.fields = {request.execId, request.cwd, std::to_string(request.argv.size())};
  m.fields.insert(m.fields.end(), request.argv.begin(), request.argv.end());
  for (const auto &[k, v] : request.env) m.fields.push_back(k + "=" + v);
  // The fds travel with the message (the kernel duplicates them in flight).
  m.fds = {request.stdio.in, request.stdio.out, request.stdio.err};
  std::lock_guard lock(mutex_);
  if (destroyed_) throw std::runtime_error("session " + sessionId_ + " was destroyed");
  try {
    sendMessage(control_.get(), m);
  } catch (const std::system_error &e) {
    throw std::runtime_error("the sandbox of session " + sessionId_ +
                             " is gone (its helper ended): " + e.what());
  }
  pending_.insert(request.execId);
}

void BwrapSession::signal(const SignalRequest &request) {
  std::lock_guard lock(mutex_);
  if (destroyed_ || !pending_.count(request.execId)) return;  // already ended
  try {
    sendMessage(control_.get(),
                {MessageType::signal, {request.execId, std::to_string(request.signal)}, {}});
  } catch (const std::system_error &) {
    // The helper is gone; the reader reports the command's end.
  }
}

void BwrapSession::emitExit(const std::string &execId, int code, int sig,
                            const std::string &error) {
  SandboxEvent e;
  e.type = SandboxEventType::exit;
  e.sessionId = sessionId_;
  e.execId = execId;
  e.exitCode = code;
  if (sig) e.signal = sig;
  if (!error.empty()) e.error = error;
  events_.emit(e);
}

void BwrapSession::onMessage(const Message &m) {
  switch (m.type) {
    case MessageType::failed:
    case MessageType::exited: {
      if (m.fields.size() != 3) return;
      const std::string &execId = m.fields[0];
      {
        std::lock_guard lock(mutex_);
        if (!pending_.erase(execId)) return;
      }
      int code = std::stoi(m.fields[1]);
      if (m.type == MessageType::failed)
        emitExit(execId, code, 0, m.fields[2]);
      else
        emitExit(execId, code, std::stoi(m.fields[2]), "");
      break;
    }
    case MessageType::violation: {
      // execId, action, target, reason: a fact from the supervisor.
      if (m.fields.size() != 4) return;
      SandboxEvent e;
      e.type = SandboxEventType::violation;
      e.sessionId = sessionId_;
      e.execId = m.fields[0];
      e.violation = SandboxViolation{m.fields[1], m.fields[2], m.fields[3]};
      events_.emit(e);
      break;
    }
    case MessageType::log:
      if (!m.fields.empty())
        events_.log(sdk::LogLevel::warning, "session " + sessionId_ + ": " + m.fields[0]);
      break;
    default: break;
  }
}

void BwrapSession::readLoop() {
  bool controlOpen = true, outputOpen = true;
  std::string partial;
  while (controlOpen) {
    pollfd fds[2] = {{control_.get(), POLLIN, 0}, {outputOpen ? output_.get() : -1, POLLIN, 0}};
    int rc = ::poll(fds, 2, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) break;
    if (fds[1].revents) {
      char buf[4096];
      ssize_t n = ::read(output_.get(), buf, sizeof buf);
      if (n <= 0) {
        outputOpen = false;
      } else {
        partial.append(buf, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = partial.find('\n')) != std::string::npos) {
          events_.log(sdk::LogLevel::warning,
                      "session " + sessionId_ + ": " + partial.substr(0, nl));
          partial.erase(0, nl + 1);
        }
      }
    }
    if (fds[0].revents) {
      Message m;
      try {
        controlOpen = receiveMessage(control_.get(), m);
      } catch (const std::exception &e) {
        events_.log(sdk::LogLevel::error, "session " + sessionId_ + ": " + e.what());
        controlOpen = false;
      }
      // `gone`: nothing of the sandbox runs any more, and the helper exits.
      if (controlOpen && m.type == MessageType::gone) controlOpen = false;
      if (controlOpen) onMessage(m);
      for (int fd : m.fds) ::close(fd);
    }
  }
  // The helper is gone: every command still running ended with it.
  std::set<std::string> orphaned;
  bool destroyed;
  {
    std::lock_guard lock(mutex_);
    orphaned.swap(pending_);
    destroyed = destroyed_;
  }
  // A running command's exit event says it; the log, only when none would.
  if (!destroyed && orphaned.empty())
    events_.log(sdk::LogLevel::error,
                "session " + sessionId_ + ": the sandbox ended unexpectedly (its helper exited)");
  for (const auto &id : orphaned)
    emitExit(id, 128 + SIGKILL, SIGKILL,
             destroyed ? "" : "the sandbox ended unexpectedly (its helper exited)");
  {
    std::lock_guard lock(mutex_);
    readerDone_ = true;
  }
  readerEnded_.notify_all();
}

void BwrapSession::destroy() {
  {
    std::lock_guard lock(mutex_);
    if (destroyed_) return;
    destroyed_ = true;
  }
  // EOF on the channel: the helper kills everything inside, reaps it, says
  // `gone` and exits; when init exits the kernel ends whatever is left.
  ::shutdown(control_.get(), SHUT_WR);
  bool ended;
  {
    std::unique_lock lock(mutex_);
    ended = readerEnded_.wait_for(lock, kExitGrace, [&] { return readerDone_; });
  }
  // A helper that does not answer goes with bubblewrap (--die-with-parent).
  if (!ended && bwrap_) bwrap_->kill();
  if (reader_.joinable()) reader_.join();
}

void BwrapSession::reap() {
  if (bwrap_ && !bwrap_->waitFor(kExitGrace)) bwrap_->kill();
}

}  // namespace ccsandbox::bwrap
