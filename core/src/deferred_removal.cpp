#include "deferred_removal.hpp"

#include <new>
#include <system_error>
#include <utility>

namespace ccsandbox {

DeferredRemoval::~DeferredRemoval() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void DeferredRemoval::add(std::unique_ptr<RuntimeDir> dir) noexcept {
  if (!dir) return;
  std::unique_lock lock(mutex_);
  if (!thread_.joinable() && !stopping_) {
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error &) {
      lock.unlock();
      dir.reset();  // no thread to be had: removed on the caller's time
      return;
    }
  }
  if (stopping_) {
    lock.unlock();
    dir.reset();
    return;
  }
  try {
    queue_.push_back(std::move(dir));
  } catch (const std::bad_alloc &) {
    lock.unlock();
    dir.reset();
    return;
  }
  lock.unlock();
  wake_.notify_one();
}

void DeferredRemoval::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing is left
    std::unique_ptr<RuntimeDir> dir = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    dir.reset();  // the removal itself, outside the lock
    lock.lock();
  }
}

}  // namespace ccsandbox
