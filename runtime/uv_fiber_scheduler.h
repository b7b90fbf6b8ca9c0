// UvFiberScheduler: a Boost.Fiber scheduling algorithm that lets fibers and a
// libuv loop share one thread.
//
// Design
// ------
// Fibers on an event-loop thread run round-robin. When none is ready, Boost
// calls suspend_until(); instead of sleeping on a condition variable (as the
// stock round_robin does), we run the uv loop once (UV_RUN_ONCE), which blocks
// in epoll until a socket, timer or async handle fires. uv callbacks then make
// fibers ready (by notifying fiber condition variables) and suspend_until()
// returns, so the scheduler resumes them. A deadline (a fiber sleeping or
// waiting with a timeout) arms a uv timer so epoll wakes in time.
//
// A fiber made ready from ANOTHER thread (a database change listener waking a
// longpoll) goes to Boost's remote-ready queue and Boost calls notify(), which
// does uv_async_send so the blocked epoll returns.
//
// Rules for code on a loop thread:
//  - uv callbacks run inside the dispatcher; they may notify fiber condition
//    variables, but must never block, lock a fiber mutex or call uv_run.
//  - fibers never call uv_run either; they wait on fiber primitives.
//  - a fiber that never suspends starves the loop: keep work per step short.
//
// Thread safety: constructed and used on its loop thread only, except notify(),
// which Boost calls from any thread.
#pragma once

#include <atomic>
#include <chrono>

#include <boost/fiber/algo/algorithm.hpp>
#include <boost/fiber/context.hpp>
#include <boost/fiber/scheduler.hpp>
#include <uv.h>

namespace settee::http {

class UvFiberScheduler final : public boost::fibers::algo::algorithm {
 public:
  // `loop` must outlive the fibers of this thread. `wakeup` is an initialized,
  // active async handle of `loop` (its callback may do nothing); `timer` an
  // initialized timer of `loop`. Both are owned by the caller.
  UvFiberScheduler(uv_loop_t* loop, uv_async_t* wakeup, uv_timer_t* timer);

  UvFiberScheduler(const UvFiberScheduler&) = delete;
  UvFiberScheduler& operator=(const UvFiberScheduler&) = delete;

  void awakened(boost::fibers::context* ctx) noexcept override;
  boost::fibers::context* pick_next() noexcept override;
  bool has_ready_fibers() const noexcept override;
  void suspend_until(std::chrono::steady_clock::time_point const& deadline) noexcept override;
  void notify() noexcept override;

  // Called on the loop thread before its uv handles are closed: from then on
  // the scheduler neither runs the loop nor signals the async handle (Boost
  // still calls notify() while it tears the thread's scheduler down).
  void Detach() noexcept { detached_.store(true); }

 private:
  std::atomic<bool> detached_{false};
  boost::fibers::scheduler::ready_queue_type ready_;
  uv_loop_t* const loop_;
  uv_async_t* const wakeup_;
  uv_timer_t* const timer_;
};

}  // namespace settee::http
