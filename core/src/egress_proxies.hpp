// One restricted session's proxy pair: an HTTP/HTTPS proxy and a SOCKS5 proxy,
// each on 127.0.0.1 (ephemeral port) and on a Unix socket in the session's
// runtime directory. Two sessions never share a pair; all pairs of a Runtime
// share one io_context served by a small thread pool (EgressService).
#pragma once

#include "egress_context.hpp"

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace ccsandbox {

// The Runtime's network event loop: one io_context, a few threads, never a thread
// per connection. Raises RLIMIT_NOFILE to its hard limit (tunnels hold 6 fds each).
class EgressService {
 public:
  // Shared by the Runtime and its sessions' pairs, so the loop outlives every
  // pair. If the last owner lets go on one of the loop's own threads, the
  // shutdown (stop, join) moves to a short-lived thread instead of self-joining.
  static std::shared_ptr<EgressService> create(unsigned threads = 2);

  explicit EgressService(unsigned threads = 2);
  ~EgressService();  // stops the loop and joins
  bool onLoopThread() const;
  EgressService(const EgressService &) = delete;
  EgressService &operator=(const EgressService &) = delete;

  boost::asio::io_context &context() { return io_; }

 private:
  boost::asio::io_context io_;
  std::unique_ptr<void, void (*)(void *)> work_;
  std::vector<std::thread> threads_;
};

struct EgressProxyOptions {
  std::vector<std::string> allowlist;        // resolved; empty when the network is disabled
  std::vector<std::string> denylist;         // wins over every allow
  std::string socketDir;                     // where http.sock and socks.sock go
  std::shared_ptr<EgressResolver> resolver;  // null: the system resolver
  EgressTimeouts timeouts;
};

class EgressProxies {
 public:
  // Binds and starts accepting. Throws DomainPatternError for a bad list entry,
  // std::system_error when a socket cannot be bound.
  EgressProxies(boost::asio::io_context &io, EgressProxyOptions options);
  ~EgressProxies();  // stop()
  EgressProxies(const EgressProxies &) = delete;
  EgressProxies &operator=(const EgressProxies &) = delete;

  std::uint16_t httpPort() const { return httpPort_; }
  std::uint16_t socksPort() const { return socksPort_; }
  const std::string &httpSocket() const { return httpSocket_; }
  const std::string &socksSocket() const { return socksSocket_; }

  // Replaces the allowlist; the next connection is judged by it. Throws
  // DomainPatternError naming a bad entry (the old list stays).
  void setAllowlist(const std::vector<std::string> &allowlist);
  // Replaces both lists (a pair bound before its session's policy was compiled).
  void setRules(const std::vector<std::string> &allowlist,
                const std::vector<std::string> &denylist);
  std::vector<std::string> allowlist() const;

  // Called (from a network thread) for every refused connection.
  void onRefusal(EgressContext::ViolationSink sink);

  // Stops accepting and closes every connection of the pair. Idempotent.
  void stop();

  std::size_t liveConnections() const { return context_->liveConnections(); }

 private:
  class Listener;
  std::shared_ptr<EgressContext> context_;
  std::vector<std::shared_ptr<Listener>> listeners_;
  std::vector<std::string> denylist_;
  std::uint16_t httpPort_ = 0;
  std::uint16_t socksPort_ = 0;
  std::string httpSocket_;
  std::string socksSocket_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ccsandbox

namespace ccsandbox {

struct EffectivePolicy;

// Path of the ccsandbox-connect helper (GIT_SSH_COMMAND's ProxyCommand), found
// next to the core: <prefix>/libexec/ccsandbox/ccsandbox-connect.
std::string connectHelperPath();

// Binds the pair of a restricted session, sockets in `socketDir`, refusing
// every connection until applySessionEgress() gives it the policy's lists.
// Nothing in it depends on the policy, so a launch binds it while the policy
// is compiled.
std::unique_ptr<EgressProxies> bindSessionEgress(EgressService &service,
                                                 const std::string &socketDir);

// Gives the pair the policy's lists and fills `policy`: network.httpProxy /
// socksProxy and the env (HTTP_PROXY, HTTPS_PROXY and lower-case forms,
// ALL_PROXY / all_proxy as socks5h://, NO_PROXY emptied, GIT_SSH_COMMAND
// through ccsandbox-connect).
void applySessionEgress(EgressProxies &proxies, EffectivePolicy &policy);

}  // namespace ccsandbox
