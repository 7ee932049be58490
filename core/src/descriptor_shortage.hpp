// What the core says when the process, or the system, has run out of file
// descriptors: the limit, what a session costs, and what to change. Without
// it a caller sees "open: Too many open files" from deep inside Asio.
#pragma once

#include <string_view>

namespace ccsandbox {

// Descriptors a warm native session keeps open in the core (its proxies'
// listeners, control and output channels), and a running command on top
// (its stdout and stderr pipes, the stdin it was given): measured by
// bench/sessions_bench.cpp, said in the message.
inline constexpr int kDescriptorsPerSession = 7;
inline constexpr int kDescriptorsPerCommand = 3;

// Call from a catch handler. When the exception in flight is EMFILE or ENFILE
// (std::system_error or boost::system::system_error), throws BackendError
// "<doing>: ..." naming the limit and the remedy; otherwise returns, and the
// caller rethrows.
void rethrowIfOutOfDescriptors(std::string_view doing);

}  // namespace ccsandbox
