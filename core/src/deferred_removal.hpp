// Removes ended sessions' directories on a thread of its own.
//
// A session's directories outlive its sandbox only by the time they take to
// remove, and on a disk file system that is most of a session's teardown: the
// sandbox's /tmp lives in the host's temp dir, and two rmdirs on ext4 cost
// 0.3-0.5 ms on the development VM. Handed here, they go while the caller
// goes on (`ccsandbox run`: the proxies' loop is joined and the plugins are
// unloaded meanwhile). The destructor waits for every removal, so a Runtime
// that is gone has left nothing behind; a crash leaves what the next
// Runtime's sweep removes (RuntimeDir::removeAbandoned).
#pragma once

#include "runtime_dir.hpp"

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace ccsandbox {

class DeferredRemoval {
 public:
  DeferredRemoval() = default;
  ~DeferredRemoval();  // waits until every directory handed over is removed
  DeferredRemoval(const DeferredRemoval &) = delete;
  DeferredRemoval &operator=(const DeferredRemoval &) = delete;

  // Removes `dir` (its destructor runs) on the removal thread, which starts
  // on first use; where no thread can start, here and now.
  void add(std::unique_ptr<RuntimeDir> dir) noexcept;

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::unique_ptr<RuntimeDir>> queue_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ccsandbox
