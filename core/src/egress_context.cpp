#include "egress_context.hpp"

#include "ccsandbox/logging.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>

namespace ccsandbox {

namespace asio = boost::asio;

namespace {

class SystemResolver final : public EgressResolver {
 public:
  void resolve(const std::string &host, asio::any_io_executor executor, Handler done) override {
    auto resolver = std::make_shared<asio::ip::tcp::resolver>(executor);
    resolver->async_resolve(
        host, "0", asio::ip::resolver_base::numeric_service,
        [resolver, done = std::move(done)](const boost::system::error_code &ec,
                                           asio::ip::tcp::resolver::results_type results) {
          std::vector<asio::ip::address> out;
          for (const auto &r : results) out.push_back(r.endpoint().address());
          // Converted with its category: a resolver's codes are not errno
          // values (host_not_found is 1, which errno would call EPERM).
          done(static_cast<std::error_code>(ec), std::move(out));
        });
  }
};

}  // namespace

std::shared_ptr<EgressResolver> systemResolver() {
  return std::make_shared<SystemResolver>();
}

EgressContext::EgressContext(std::shared_ptr<const DomainMatcher> rules,
                             std::shared_ptr<EgressResolver> resolver, EgressTimeouts timeouts)
    : rules_(std::move(rules)), resolver_(std::move(resolver)), timeouts_(timeouts) {}

std::shared_ptr<const DomainMatcher> EgressContext::rules() const {
  std::lock_guard lock(mutex_);
  return rules_;
}

void EgressContext::setRules(std::shared_ptr<const DomainMatcher> rules) {
  std::lock_guard lock(mutex_);
  rules_ = std::move(rules);
}

void EgressContext::setViolationSink(ViolationSink sink) {
  std::lock_guard lock(sinkMutex_);
  sink_ = std::move(sink);
}

void EgressContext::reportRefusal(const EgressRefusal &refusal) {
  logging::write(logging::Level::debug, "egress",
                 "refused " + refusal.target + ": " + refusal.reason);
  ViolationSink sink;
  {
    std::lock_guard lock(sinkMutex_);
    sink = sink_;
  }
  // Called unlocked: the sink may stop this very pair (a session destroyed from
  // its own event callback).
  if (sink) sink(refusal);
}

bool EgressContext::add(const std::shared_ptr<EgressConnection> &c) {
  std::lock_guard lock(mutex_);
  if (stopped_) return false;
  live_.emplace(c.get(), c);
  return true;
}

void EgressContext::remove(const EgressConnection *c) {
  std::lock_guard lock(mutex_);
  live_.erase(c);
}

void EgressContext::closeAll() {
  std::vector<std::shared_ptr<EgressConnection>> open;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    for (auto &[key, weak] : live_)
      if (auto c = weak.lock()) open.push_back(std::move(c));
  }
  for (auto &c : open) c->close();
}

std::size_t EgressContext::liveConnections() const {
  std::lock_guard lock(mutex_);
  return live_.size();
}

}  // namespace ccsandbox
