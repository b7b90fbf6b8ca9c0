// Short waits without a sleep: for critical sections of well under a
// microsecond, where a futex sleep and wake-up (several microseconds and a
// cross-core handoff) would cost more than the wait itself.
//
// Every wait spins with a pause for a while, then yields, so a thread that
// waits for one descheduled on a busy machine gives its core away instead of
// burning its time slice.
#pragma once

#include <atomic>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace settee {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// One step of a bounded spin: pauses for the first kSpins calls, then yields.
class SpinBackoff {
 public:
  // About 2-5 us of pauses on current x86 before the first yield: longer
  // than the sections these waits are for, shorter than a futex round trip.
  static constexpr int kSpins = 256;

  void Pause() {
    if (spins_ < kSpins) {
      ++spins_;
      CpuRelax();
    } else {
      std::this_thread::yield();
    }
  }
  // True once the spin is spent (the caller may fall back to sleeping).
  bool Exhausted() const { return spins_ >= kSpins; }

 private:
  int spins_ = 0;
};

}  // namespace settee
