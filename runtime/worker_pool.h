// WorkerPool: a few plain threads for work that must not run on an event-loop
// thread because it can block for long (fsync'd writes, compaction). A fiber
// calls Run(fn); fn runs on a worker while the fiber's loop keeps serving
// other connections; the fiber resumes with fn's result.
//
// Thread safety: Run() may be called from any fiber or thread. Destruction
// waits for queued work to finish.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

#include <boost/fiber/future.hpp>

namespace settee {

class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs `fn` on a worker and returns its result; suspends only the calling
  // fiber. An exception thrown by fn is rethrown here.
  template <typename F>
  auto Run(F&& fn) -> std::invoke_result_t<F> {
    using T = std::invoke_result_t<F>;
    // The task owns the promise, not this frame: the waiting fiber can wake
    // and return (destroying whatever this frame holds) while set_value is
    // still notifying on the worker. `fn` may stay on this frame: the
    // worker is done with it before it sets the value.
    auto promise = std::make_shared<boost::fibers::promise<T>>();
    boost::fibers::future<T> future = promise->get_future();
    Post([promise, &fn] {
      try {
        if constexpr (std::is_void_v<T>) {
          fn();
          promise->set_value();
        } else {
          promise->set_value(fn());
        }
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    });
    return future.get();
  }

  // Queues `task` without waiting for it (fire and forget). It must not throw.
  void Post(std::function<void()> task);

  // The number of worker threads (fixed at construction).
  int size() const { return static_cast<int>(threads_.size()); }

  // True on a thread of any WorkerPool (where Run() must not be called: a
  // worker waiting for a worker can wait forever).
  static bool OnWorkerThread();

 private:
  void WorkerMain();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                     // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace settee
