#include "ccsandbox/logging.hpp"

#include <boost/core/null_deleter.hpp>
#include <boost/log/attributes/constant.hpp>
#include <boost/log/core.hpp>
#include <boost/log/expressions.hpp>
#include <boost/log/sinks/sync_frontend.hpp>
#include <boost/log/sinks/text_ostream_backend.hpp>
#include <boost/log/sources/record_ostream.hpp>
#include <boost/log/sources/severity_logger.hpp>

#include <atomic>
#include <iostream>
#include <mutex>
#include <string>

namespace ccsandbox::logging {

namespace {

BOOST_LOG_ATTRIBUTE_KEYWORD(severity, "Severity", Level)

boost::log::sources::severity_logger_mt<Level> &logger() {
  static boost::log::sources::severity_logger_mt<Level> instance;
  return instance;
}

std::atomic<Level> threshold{Level::debug};

}  // namespace

void setThreshold(Level minimum) {
  threshold.store(minimum, std::memory_order_relaxed);
}

void write(Level level, std::string_view source, std::string_view message) {
  if (level < threshold.load(std::memory_order_relaxed)) return;
  auto &lg = logger();
  boost::log::record rec = lg.open_record((boost::log::keywords::severity = level));
  if (!rec) return;
  rec.attribute_values().insert(
      "Source", boost::log::attributes::make_constant(std::string(source)).get_value());
  boost::log::record_ostream stream(rec);
  stream << message;
  stream.flush();
  lg.push_record(std::move(rec));
}

void enableConsole(Level minimum) {
  static std::mutex mutex;
  static boost::shared_ptr<
      boost::log::sinks::synchronous_sink<boost::log::sinks::text_ostream_backend>>
      sink;
  std::lock_guard lock(mutex);
  auto core = boost::log::core::get();
  if (sink) core->remove_sink(sink);
  auto backend = boost::make_shared<boost::log::sinks::text_ostream_backend>();
  backend->add_stream(boost::shared_ptr<std::ostream>(&std::clog, boost::null_deleter()));
  backend->auto_flush(true);
  sink = boost::make_shared<
      boost::log::sinks::synchronous_sink<boost::log::sinks::text_ostream_backend>>(backend);
  sink->set_filter(severity >= minimum);
  sink->set_formatter(boost::log::expressions::stream << "ccsandbox: "
                                                      << boost::log::expressions::smessage);
  core->add_sink(sink);
}

}  // namespace ccsandbox::logging
