// Every bubblewrap is started from this one long-lived thread.
//
// --die-with-parent is PR_SET_PDEATHSIG, and the kernel's "parent" there is
// the *thread* that forked: a sandbox started from a caller's short-lived
// thread would be killed when that thread ends. Forking from a thread that
// lives as long as the plugin ties the sandbox to the process instead.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>

namespace ccsandbox::bwrap {

class SpawnerThread {
 public:
  SpawnerThread();
  ~SpawnerThread();
  SpawnerThread(const SpawnerThread &) = delete;
  SpawnerThread &operator=(const SpawnerThread &) = delete;

  // Runs `task` on the spawner thread and waits for it; exceptions propagate.
  template <class F>
  auto run(F &&task) -> decltype(task()) {
    std::packaged_task<decltype(task())()> job(std::forward<F>(task));
    auto result = job.get_future();
    post([&job] { job(); });
    return result.get();
  }

  // Runs `task` on the spawner thread later; its result or exception comes
  // through the future. A task still queued when the thread stops still runs.
  template <class F>
  auto start(F task) -> std::future<decltype(task())> {
    auto job = std::make_shared<std::packaged_task<decltype(task())()>>(std::move(task));
    auto result = job->get_future();
    post([job] { (*job)(); });
    return result;
  }

 private:
  void post(std::function<void()> job);

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ccsandbox::bwrap
