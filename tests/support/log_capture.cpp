#include "support/log_capture.hpp"

#include <boost/log/core.hpp>
#include <boost/log/sinks/basic_sink_backend.hpp>
#include <boost/log/sinks/sync_frontend.hpp>

#include <mutex>

namespace ccsandbox::test {

namespace {

class Collector
    : public boost::log::sinks::basic_sink_backend<boost::log::sinks::synchronized_feeding> {
 public:
  void consume(const boost::log::record_view &rec) {
    std::string line;
    if (auto message =
            rec[boost::log::aux::default_attribute_names::message()].extract<std::string>())
      line = *message;
    std::lock_guard lock(mutex);
    lines.push_back(line);
  }
  std::mutex mutex;
  std::vector<std::string> lines;
};

}  // namespace

struct LogCapture::Impl {
  boost::shared_ptr<Collector> collector = boost::make_shared<Collector>();
  boost::shared_ptr<boost::log::sinks::synchronous_sink<Collector>> sink =
      boost::make_shared<boost::log::sinks::synchronous_sink<Collector>>(collector);
};

LogCapture::LogCapture() : impl_(std::make_unique<Impl>()) {
  boost::log::core::get()->add_sink(impl_->sink);
}

LogCapture::~LogCapture() {
  boost::log::core::get()->remove_sink(impl_->sink);
}

std::vector<std::string> LogCapture::lines() const {
  std::lock_guard lock(impl_->collector->mutex);
  return impl_->collector->lines;
}

std::size_t LogCapture::count(const std::vector<std::string> &parts) const {
  std::size_t n = 0;
  for (const auto &line : lines()) {
    bool all = true;
    for (const auto &p : parts)
      if (line.find(p) == std::string::npos) all = false;
    if (all) ++n;
  }
  return n;
}

}  // namespace ccsandbox::test
