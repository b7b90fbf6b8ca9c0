// Short waits without a sleep: for waits on another core's work of a few
// microseconds (a group commit's leader, a writer's map insertions), where a
// futex sleep and wake-up costs more than the wait itself. On a virtual
// machine the wake-up is an inter-processor interrupt through the
// hypervisor: tens of microseconds, and the woken thread's cache is cold.
//
// A wait is bounded in time, not in iterations (a pause instruction takes
// from a few to a few hundred cycles depending on the CPU, and a hypervisor
// may trap it): it pauses for up to kSpinNs, then yields for up to
// kYieldNs (so a waiter whose awaited thread was descheduled on a busy
// machine gives it the core), and only then may the caller sleep.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace settee {

// Alignment that keeps data written by one core off the cache lines others
// read or write: a line plus its adjacent-line prefetch partner. Fields
// that different threads write at every write (a lock word, a published
// counter) each start such a block, so that a write on one core does not
// take away the lines another core is reading.
inline constexpr size_t kNoFalseSharing = 128;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// One step of a bounded wait: Pause() pauses, then yields once the spin
// time is spent; Exhausted() says when the caller should sleep instead.
class SpinBackoff {
 public:
  // Longer than a leader's commit of a few documents (1-10 us, a write()
  // on LevelDB), shorter than the scheduler's time slice.
  static constexpr int64_t kSpinNs = 30'000;
  // Yielding lets a descheduled lock holder run on a busy machine.
  static constexpr int64_t kYieldNs = 200'000;

  void Pause() {
    // The clock is read every kCheckEvery steps (a vDSO call, ~20 ns).
    if ((++steps_ & (kCheckEvery - 1)) == 0) Tick();
    if (phase_ == kSpinning) {
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  // True once the whole budget is spent (the caller may fall back to
  // sleeping).
  bool Exhausted() const { return phase_ == kDone; }

 private:
  static constexpr uint32_t kCheckEvery = 32;
  enum Phase { kSpinning, kYielding, kDone };

  void Tick() {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    if (start_ns_ == 0) {
      start_ns_ = now;
      return;
    }
    const int64_t waited = now - start_ns_;
    if (waited >= kSpinNs + kYieldNs) {
      phase_ = kDone;
    } else if (waited >= kSpinNs) {
      phase_ = kYielding;
    }
  }

  uint32_t steps_ = 0;
  int64_t start_ns_ = 0;  // set at the first clock read
  Phase phase_ = kSpinning;
};

// Locks `mu` by spinning on try_lock first (SpinBackoff's budget), then
// blocking. For mutexes held only for short sections (a queue push, a map
// insertion): a plain lock() sleeps in the kernel at the first contention,
// and the unlock then pays a futex wake-up, a sleep and a wake-up per
// contended acquisition instead of a cache-line transfer.
template <typename Mutex>
void LockSpinning(Mutex& mu) {
  if (mu.try_lock()) return;
  SpinBackoff backoff;
  while (!backoff.Exhausted()) {
    backoff.Pause();
    if (mu.try_lock()) return;
  }
  mu.lock();
}

// Locks `lock` again (it must own nothing) through LockSpinning.
inline void RelockSpinning(std::unique_lock<std::mutex>& lock) {
  LockSpinning(*lock.mutex());
  lock = std::unique_lock<std::mutex>(*lock.mutex(), std::adopt_lock);
}

}  // namespace settee
