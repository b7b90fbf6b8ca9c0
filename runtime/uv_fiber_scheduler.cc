#include "runtime/uv_fiber_scheduler.h"

#include <thread>

namespace settee::http {

UvFiberScheduler::UvFiberScheduler(uv_loop_t* loop, uv_async_t* wakeup, uv_timer_t* timer)
    : loop_(loop), wakeup_(wakeup), timer_(timer) {}

void UvFiberScheduler::awakened(boost::fibers::context* ctx) noexcept { ctx->ready_link(ready_); }

boost::fibers::context* UvFiberScheduler::pick_next() noexcept {
  if (ready_.empty()) return nullptr;
  boost::fibers::context* ctx = &ready_.front();
  ready_.pop_front();
  return ctx;
}

bool UvFiberScheduler::has_ready_fibers() const noexcept { return !ready_.empty(); }

void UvFiberScheduler::suspend_until(
    std::chrono::steady_clock::time_point const& deadline) noexcept {
  if (detached_.load(std::memory_order_relaxed)) {
    // Only thread teardown remains; nothing can wake us through the loop.
    std::this_thread::yield();
    return;
  }
  uv_run_mode mode = UV_RUN_ONCE;
  if (deadline != std::chrono::steady_clock::time_point::max()) {
    auto now = std::chrono::steady_clock::now();
    if (deadline <= now) {
      mode = UV_RUN_NOWAIT;
    } else {
      // Round up: waking a millisecond late is fine, waking early spins.
      uv_update_time(loop_);  // the cached loop time may be stale after running fibers
      auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
      uv_timer_start(timer_, [](uv_timer_t*) {}, static_cast<uint64_t>(ms), 0);
    }
  }
  uv_run(loop_, mode);
  uv_timer_stop(timer_);
}

void UvFiberScheduler::notify() noexcept {
  if (!detached_.load(std::memory_order_acquire)) uv_async_send(wakeup_);
}

}  // namespace settee::http
