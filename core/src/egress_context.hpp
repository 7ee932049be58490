// What one session's two proxies share: the current rules (replaceable while
// the session runs), the resolver, the violation sink, the timeouts, and the
// live connections (so stopping the pair closes every one of them).
#pragma once

#include "domain_matcher.hpp"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/address.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <unordered_map>
#include <vector>

namespace ccsandbox {

// Name resolution, injectable so tests can map test names to loopback servers.
class EgressResolver {
 public:
  using Handler = std::function<void(std::error_code, std::vector<boost::asio::ip::address>)>;
  virtual ~EgressResolver() = default;
  // Calls `done` once, through `executor`.
  virtual void resolve(const std::string &host, boost::asio::any_io_executor executor,
                       Handler done) = 0;
};

// getaddrinfo through Boost.Asio's asynchronous resolver.
std::shared_ptr<EgressResolver> systemResolver();

// A refused connection, as the session reports it (a `network-outbound` violation).
struct EgressRefusal {
  std::string target;  // host:port
  std::string reason;
};

// Something the pair can close when the session goes away.
class EgressConnection {
 public:
  virtual ~EgressConnection() = default;
  virtual void close() = 0;  // thread-safe: posts to the connection's strand
};

struct EgressTimeouts {
  // A client has this long to finish its request / handshake.
  std::chrono::milliseconds handshake{30000};
  // Resolution plus dialling of the upstream.
  std::chrono::milliseconds connect{30000};
};

class EgressContext {
 public:
  EgressContext(std::shared_ptr<const DomainMatcher> rules,
                std::shared_ptr<EgressResolver> resolver, EgressTimeouts timeouts);

  std::shared_ptr<const DomainMatcher> rules() const;
  void setRules(std::shared_ptr<const DomainMatcher> rules);

  using ViolationSink = std::function<void(const EgressRefusal &)>;
  void setViolationSink(ViolationSink sink);
  void reportRefusal(const EgressRefusal &refusal);

  EgressResolver &resolver() { return *resolver_; }
  const EgressTimeouts &timeouts() const { return timeouts_; }

  // Registry of live connections. add() returns false once the pair stopped.
  bool add(const std::shared_ptr<EgressConnection> &c);
  void remove(const EgressConnection *c);
  void closeAll();  // and refuse further add()
  std::size_t liveConnections() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const DomainMatcher> rules_;
  std::shared_ptr<EgressResolver> resolver_;
  EgressTimeouts timeouts_;
  std::mutex sinkMutex_;
  ViolationSink sink_;
  std::unordered_map<const EgressConnection *, std::weak_ptr<EgressConnection>> live_;
  bool stopped_ = false;
};

}  // namespace ccsandbox
