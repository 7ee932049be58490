#include "egress_proxies.hpp"

#include "ccsandbox/effective_policy.hpp"
#include "ccsandbox/logging.hpp"
#include "ccsandbox/unique_fd.hpp"
#include "http_proxy.hpp"
#include "socks5_proxy.hpp"

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include "install_layout.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <system_error>

namespace ccsandbox {

namespace asio = boost::asio;
using Acceptor = asio::basic_socket_acceptor<asio::generic::stream_protocol>;

namespace {

void raiseFileLimit() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
}

using WorkGuard = asio::executor_work_guard<asio::io_context::executor_type>;

}  // namespace

EgressService::EgressService(unsigned threads)
    : work_(new WorkGuard(io_.get_executor()),
            [](void *p) { delete static_cast<WorkGuard *>(p); }) {
  raiseFileLimit();
  if (threads == 0) threads = 1;
  for (unsigned i = 0; i < threads; ++i)
    threads_.emplace_back([this] {
      for (;;) {
        try {
          io_.run();
          return;
        } catch (const std::exception &e) {
          // A handler must never take the loop (and every session's proxies) down.
          logging::write(logging::Level::error, "egress",
                         std::string("network handler failed: ") + e.what());
        }
      }
    });
}

std::shared_ptr<EgressService> EgressService::create(unsigned threads) {
  return std::shared_ptr<EgressService>(new EgressService(threads), [](EgressService *s) {
    if (s->onLoopThread())
      std::thread([s] { delete s; }).detach();
    else
      delete s;
  });
}

bool EgressService::onLoopThread() const {
  for (const auto &t : threads_)
    if (t.get_id() == std::this_thread::get_id()) return true;
  return false;
}

EgressService::~EgressService() {
  work_.reset();
  io_.stop();
  for (auto &t : threads_) t.join();
}

// Accepts on one endpoint and hands each client, on its own strand, to `serve`.
// When the process is out of fds the accept is retried after a pause instead of
// spinning or giving up: the proxy keeps serving once fds are free again.
class EgressProxies::Listener : public std::enable_shared_from_this<Listener> {
 public:
  using Serve = void (*)(std::shared_ptr<EgressContext>, StreamSocket);

  Listener(asio::io_context &io, const asio::generic::stream_protocol::endpoint &ep,
           std::shared_ptr<EgressContext> ctx, Serve serve)
      : io_(io),
        strand_(asio::make_strand(io)),
        acceptor_(strand_),
        retry_(strand_),
        ctx_(std::move(ctx)),
        serve_(serve) {
    acceptor_.open(ep.protocol());
    acceptor_.bind(ep);
    acceptor_.listen(asio::socket_base::max_listen_connections);
  }

  asio::generic::stream_protocol::endpoint localEndpoint() const {
    return acceptor_.local_endpoint();
  }

  void start() {
    asio::post(strand_, [self = shared_from_this()] { self->accept(); });
  }

  // Asynchronous, so it is safe from any thread (even a network thread); the
  // pending accept ends with operation_aborted and releases the listener.
  void stop() {
    asio::post(strand_, [self = shared_from_this()] {
      self->stopped_ = true;
      boost::system::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_.cancel();
    });
  }

 private:
  void accept() {
    if (stopped_) return;
    acceptor_.async_accept(
        asio::make_strand(io_),
        [self = shared_from_this()](const boost::system::error_code &ec, StreamSocket client) {
          if (self->stopped_ || ec == asio::error::operation_aborted) return;
          if (ec) {
            if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space ||
                ec == asio::error::no_memory) {
              self->retry_.expires_after(std::chrono::milliseconds(50));
              self->retry_.async_wait([self](const boost::system::error_code &e) {
                if (!e) self->accept();
              });
              return;
            }
            self->accept();  // e.g. a client that reset before accept
            return;
          }
          self->serve_(self->ctx_, std::move(client));
          self->accept();
        });
  }

  asio::io_context &io_;
  asio::strand<asio::io_context::executor_type> strand_;
  Acceptor acceptor_;
  asio::steady_timer retry_;
  std::shared_ptr<EgressContext> ctx_;
  Serve serve_;
  bool stopped_ = false;
};

EgressProxies::EgressProxies(asio::io_context &io, EgressProxyOptions options)
    : denylist_(options.denylist) {
  auto rules = std::make_shared<const DomainMatcher>(options.allowlist, options.denylist);
  context_ = std::make_shared<EgressContext>(
      std::move(rules), options.resolver ? options.resolver : systemResolver(), options.timeouts);
  auto loopback = [](std::uint16_t port) {
    return asio::generic::stream_protocol::endpoint(
        asio::ip::tcp::endpoint(asio::ip::address_v4::loopback(), port));
  };
  // A path longer than sockaddr_un allows (a long TMPDIR) is bound through its
  // directory's descriptor: /proc/self/fd/N/<name> is short and names the same
  // place. The descriptors stay open until the sockets are bound.
  std::vector<UniqueFd> dirs;
  auto unixAt = [&dirs](const std::string &path) {
    ::unlink(path.c_str());
    std::string name = path;
    if (path.size() >= sizeof(sockaddr_un::sun_path)) {
      const std::string dir = path.substr(0, path.rfind('/'));
      UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
      if (!fd) throw std::system_error(errno, std::generic_category(), "cannot open " + dir);
      name = "/proc/self/fd/" + std::to_string(fd.get()) + path.substr(dir.size());
      dirs.push_back(std::move(fd));
    }
    return asio::generic::stream_protocol::endpoint(asio::local::stream_protocol::endpoint(name));
  };
  auto add = [&](const asio::generic::stream_protocol::endpoint &ep, Listener::Serve serve) {
    listeners_.push_back(std::make_shared<Listener>(io, ep, context_, serve));
    return listeners_.back();
  };
  auto portOf = [](const std::shared_ptr<Listener> &l) {
    auto ep = l->localEndpoint();
    return ntohs(reinterpret_cast<const sockaddr_in *>(ep.data())->sin_port);
  };
  httpPort_ = portOf(add(loopback(0), &serveHttpProxyClient));
  socksPort_ = portOf(add(loopback(0), &serveSocks5Client));
  if (!options.socketDir.empty()) {
    httpSocket_ = options.socketDir + "/http-proxy.sock";
    socksSocket_ = options.socketDir + "/socks-proxy.sock";
    add(unixAt(httpSocket_), &serveHttpProxyClient);
    add(unixAt(socksSocket_), &serveSocks5Client);
  }
  for (auto &l : listeners_) l->start();
}

EgressProxies::~EgressProxies() {
  stop();
}

void EgressProxies::setAllowlist(const std::vector<std::string> &allowlist) {
  context_->setRules(std::make_shared<const DomainMatcher>(allowlist, denylist_));
}

void EgressProxies::setRules(const std::vector<std::string> &allowlist,
                             const std::vector<std::string> &denylist) {
  context_->setRules(std::make_shared<const DomainMatcher>(allowlist, denylist));
  denylist_ = denylist;
}

std::vector<std::string> EgressProxies::allowlist() const {
  return context_->rules()->allowEntries();
}

void EgressProxies::onRefusal(EgressContext::ViolationSink sink) {
  context_->setViolationSink(std::move(sink));
}

void EgressProxies::stop() {
  if (stopped_.exchange(true)) return;
  context_->setViolationSink(nullptr);
  for (auto &l : listeners_) l->stop();
  context_->closeAll();
  if (!httpSocket_.empty()) ::unlink(httpSocket_.c_str());
  if (!socksSocket_.empty()) ::unlink(socksSocket_.c_str());
}

std::string connectHelperPath() {
  if (const char *env = std::getenv("CCSANDBOX_CONNECT_HELPER"); env && *env) return env;
  return installedPath(std::string(CCSANDBOX_LIBEXEC_SUBDIR) + "/ccsandbox-connect");
}

namespace {

// For a POSIX shell: GIT_SSH_COMMAND is run through `sh -c`.
std::string shellQuote(const std::string &s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::unique_ptr<EgressProxies> bindSessionEgress(EgressService &service,
                                                 const std::string &socketDir) {
  EgressProxyOptions o;  // no lists: everything refused until applySessionEgress
  o.socketDir = socketDir;
  return std::make_unique<EgressProxies>(service.context(), std::move(o));
}

void applySessionEgress(EgressProxies &proxies, EffectivePolicy &policy) {
  proxies.setRules(policy.network.enabled ? policy.network.allowlist : std::vector<std::string>{},
                   policy.network.denylist);
  policy.network.httpProxy = ProxyEndpoint{"127.0.0.1", proxies.httpPort(), proxies.httpSocket()};
  policy.network.socksProxy =
      ProxyEndpoint{"127.0.0.1", proxies.socksPort(), proxies.socksSocket()};
  const std::string http = "http://127.0.0.1:" + std::to_string(proxies.httpPort());
  const std::string socks = "socks5h://127.0.0.1:" + std::to_string(proxies.socksPort());
  for (const char *k : {"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"})
    policy.env[k] = http;
  for (const char *k : {"ALL_PROXY", "all_proxy"}) policy.env[k] = socks;
  // Nothing bypasses the proxies (an inherited NO_PROXY=localhost,… would).
  policy.env["NO_PROXY"] = "";
  policy.env["no_proxy"] = "";
  // ssh runs ProxyCommand through the user's shell; %h %p are ssh's tokens.
  const std::string proxyCommand = shellQuote(connectHelperPath()) +
                                   " --socks5 127.0.0.1:" + std::to_string(proxies.socksPort()) +
                                   " %h %p";
  policy.env["GIT_SSH_COMMAND"] = "ssh -o " + shellQuote("ProxyCommand=" + proxyCommand);
}

}  // namespace ccsandbox
