// The helper's messages, written straight to a descriptor. No iostreams: a
// static binary that includes <iostream> sets up the standard streams and
// their locale before main (~0.06 ms on the development VM), and the helper
// starts on the path of every sandbox launch.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <initializer_list>
#include <string_view>

namespace ccsandbox::bwrap {

// Writes the pieces in order; a reader that went away loses the rest.
inline void writePlain(int fd, std::initializer_list<std::string_view> pieces) noexcept {
  for (std::string_view text : pieces)
    while (!text.empty()) {
      const ssize_t n = ::write(fd, text.data(), text.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      text.remove_prefix(static_cast<std::size_t>(n));
    }
}

}  // namespace ccsandbox::bwrap
