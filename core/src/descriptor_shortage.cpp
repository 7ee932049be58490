#include "descriptor_shortage.hpp"

#include "ccsandbox/runtime.hpp"

#include <sys/resource.h>

#include <boost/system/system_error.hpp>

#include <cerrno>
#include <string>
#include <system_error>

namespace ccsandbox {

namespace {

// The errno an exception carries, 0 when it carries none. This runs with no
// descriptor left, and UBSan's vptr check probes memory through a pipe of
// its own on the first call it sees for a type: off for the calls made here
// (sanitizer builds only; the inline library code it calls keeps its checks).
__attribute__((no_sanitize("vptr"))) int errnoOf(const std::exception_ptr &error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::system_error &e) {
    const auto &c = e.code().category();
    if (c == std::generic_category() || c == std::system_category()) return e.code().value();
  } catch (const boost::system::system_error &e) {
    const auto &c = e.code().category();
    if (c == boost::system::generic_category() || c == boost::system::system_category())
      return e.code().value();
  } catch (...) {
  }
  return 0;
}

}  // namespace

void rethrowIfOutOfDescriptors(std::string_view doing) {
  const int err = errnoOf(std::current_exception());
  if (err == ENFILE)
    throw BackendError(std::string(doing) +
                       ": the system is out of file descriptors (ENFILE): raise fs.file-max or "
                       "end processes that hold many");
  if (err != EMFILE) return;
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  const std::string soft =
      limit.rlim_cur == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit.rlim_cur);
  const std::string hard =
      limit.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(limit.rlim_max);
  throw BackendError(std::string(doing) + ": this process is out of file descriptors (limit " +
                     soft + ", hard limit " + hard + "; a warm native session holds about " +
                     std::to_string(kDescriptorsPerSession) + ", a running command " +
                     std::to_string(kDescriptorsPerCommand) +
                     " more): raise the limit (ulimit -n, or LimitNOFILE= for a service) or "
                     "destroy idle sessions");
}

}  // namespace ccsandbox
