#include "egress_dialer.hpp"

#include "address_filter.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace ccsandbox {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

class DialOperation : public std::enable_shared_from_this<DialOperation> {
 public:
  DialOperation(std::shared_ptr<EgressContext> ctx, std::string host, std::uint16_t port,
                asio::any_io_executor ex, DialHandler done)
      : ctx_(std::move(ctx)),
        host_(std::move(host)),
        port_(port),
        ex_(ex),
        timer_(ex),
        socket_(ex),
        done_(std::move(done)) {}

  void start() {
    auto target = DomainPattern::target(host_, port_);
    if (!target) return refuse(formatTarget(host_, port_), "not a valid host name or IP address");
    targetText_ = formatTarget(target->host, port_);
    rules_ = ctx_->rules();
    auto decision = rules_->decide(*target);
    if (!decision.allowed) return refuse(targetText_, decision.reason);
    timer_.expires_after(ctx_->timeouts().connect);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code &ec) {
      if (ec) return;
      self->timedOut_ = true;
      boost::system::error_code ignored;
      self->socket_.close(ignored);
    });
    if (target->isIp) {
      // Only an explicit IP entry matches an IP literal: the user chose it.
      dial({asio::ip::make_address(target->host)});
      return;
    }
    ctx_->resolver().resolve(
        target->host, ex_,
        [self = shared_from_this()](std::error_code ec, std::vector<asio::ip::address> found) {
          self->resolved(ec, std::move(found));
        });
  }

 private:
  void resolved(std::error_code ec, std::vector<asio::ip::address> found) {
    if (timedOut_) return finish(DialResult::Status::unresolved, "name resolution timed out");
    if (ec || found.empty())
      return finish(DialResult::Status::unresolved,
                    "cannot resolve " + host_ + (ec ? ": " + ec.message() : ""));
    auto own = hostInterfaceAddresses();
    std::vector<asio::ip::address> pass;
    std::string firstReason;
    for (const auto &a : found) {
      // An address the allowlist names as an IP literal is an explicit choice
      // (the deny list still wins inside decide()).
      auto literal = DomainPattern::target(a.to_string(), port_);
      if (literal && rules_->decide(*literal).allowed) {
        pass.push_back(a);
        continue;
      }
      if (auto why = forbiddenAddressReason(a, port_, *rules_, own)) {
        if (firstReason.empty()) firstReason = *why;
      } else {
        pass.push_back(a);
      }
    }
    if (pass.empty()) {
      timer_.cancel();
      return refuse(targetText_, firstReason);
    }
    dial(std::move(pass));
  }

  void dial(std::vector<asio::ip::address> addresses) {
    std::vector<tcp::endpoint> endpoints;
    for (const auto &a : addresses) endpoints.emplace_back(a, port_);
    auto self = shared_from_this();
    asio::async_connect(
        socket_, endpoints, [self](const boost::system::error_code &ec, const tcp::endpoint &) {
          self->timer_.cancel();
          if (self->timedOut_)
            return self->finish(DialResult::Status::unreachable,
                                "connect to " + self->targetText_ + " timed out");
          if (ec)
            return self->finish(DialResult::Status::unreachable,
                                "connect to " + self->targetText_ + ": " + ec.message());
          self->finish(DialResult::Status::connected, {});
        });
  }

  void refuse(const std::string &target, const std::string &reason) {
    ctx_->reportRefusal({target, reason});
    finish(DialResult::Status::refused, reason);
  }

  void finish(DialResult::Status status, std::string message) {
    if (!done_) return;
    timer_.cancel();
    DialResult r{status, std::move(message), std::move(socket_)};
    auto done = std::move(done_);
    done_ = nullptr;
    asio::post(ex_, [done = std::move(done), r = std::move(r)]() mutable { done(std::move(r)); });
  }

  std::shared_ptr<EgressContext> ctx_;
  std::string host_;
  std::uint16_t port_;
  asio::any_io_executor ex_;
  asio::steady_timer timer_;
  tcp::socket socket_;
  DialHandler done_;
  std::shared_ptr<const DomainMatcher> rules_;
  std::string targetText_;
  bool timedOut_ = false;
};

}  // namespace

void dialEgress(std::shared_ptr<EgressContext> context, std::string host, std::uint16_t port,
                asio::any_io_executor executor, DialHandler done) {
  std::make_shared<DialOperation>(std::move(context), std::move(host), port, executor,
                                  std::move(done))
      ->start();
}

}  // namespace ccsandbox
