// A bubblewrap started before its sandbox is described. Its command line
// holds what is fixed for the host — the namespace and privilege options and
// our helper's command — and `--args 4`, on which it waits for the rest (the
// environment, /proc, /dev, the mounts) already exec'd and initialised.
//
// Every launch starts bubblewrap this way. When the core announces a launch
// (ABI 1.2 prepare_launch) the plugin starts one at once, so that its start —
// exec, the dynamic loader, bubblewrap's own set-up, about 0.8 ms here — runs
// while the core compiles the policy and starts the proxies.
//
// If we die before handing it the rest, bubblewrap dies with us (its
// --die-with-parent, where it holds already), or reads end-of-file, builds an
// empty sandbox with the namespaces of its command line, finds no helper in it
// and exits: nothing ever runs outside a sandbox. Our pieces come last in
// the mount plan for the same reason: a cut-off description never holds them.
#pragma once

#include "bwrap_process.hpp"
#include "ccsandbox/unique_fd.hpp"

#include <string>
#include <vector>

namespace ccsandbox::bwrap {

class StandbyBwrap {
 public:
  // On the spawner thread (--die-with-parent follows the thread that forks).
  // `namespaces` and `command` as the mount plan gives them. Throws
  // std::system_error when bubblewrap cannot be started.
  StandbyBwrap(const std::string &bwrapPath, std::vector<std::string> namespaces,
               std::vector<std::string> command);
  StandbyBwrap(StandbyBwrap &&) noexcept = default;
  StandbyBwrap &operator=(StandbyBwrap &&) = delete;

  // Whether it was started for this plan.
  bool fits(const std::string &bwrapPath, const std::vector<std::string> &namespaces,
            const std::vector<std::string> &command) const {
    return bwrapPath == bwrapPath_ && namespaces == namespaces_ && command == command_;
  }

  // Hands bubblewrap the rest of its arguments and closes the socket; it goes
  // on. Throws std::runtime_error when it is gone.
  void describe(const std::vector<std::string> &setup);

  BwrapProcess takeProcess() { return std::move(process_); }
  UniqueFd takeControl() { return std::move(control_); }  // our end of the helper's channel
  UniqueFd takeOutput() { return std::move(output_); }    // bwrap's and the helper's stderr

 private:
  std::string bwrapPath_;
  std::vector<std::string> namespaces_, command_;
  UniqueFd control_, output_, args_;
  BwrapProcess process_;
};

}  // namespace ccsandbox::bwrap
