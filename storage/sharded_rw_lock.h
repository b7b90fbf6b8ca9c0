// ShardedRWLock: a reader-writer lock whose readers do not share a cache line.
//
// A std::shared_mutex keeps one reader count, so every reader on every core
// writes the same cache line and reads stop scaling past one thread. Here each
// reader increments a counter in one of kSlots cache-line-padded slots, picked
// by a per-thread index, and only reads the shared `writer_` flag (which stays
// in every core's cache in the shared state while no writer runs). A writer
// raises the flag and waits until every slot drains; readers that arrive while
// the flag is up step back and spin until it is lowered (a writer's section is
// a few map insertions), sleeping on the writer mutex only after SpinBackoff's
// spin is spent, so a read during a write storm waits for one write, not for a
// futex wake-up.
//
// Protocol (Dekker-style, all flag/counter accesses seq_cst on the lock side):
//   reader: slot.count++ ; if writer_ then { slot.count-- ; wait ; retry }
//   writer: lock writer_mu_ ; writer_ = true ; wait every slot.count == 0
// Either the reader sees the flag, or the writer sees the reader's count, so a
// reader and a writer are never inside together. Slot collisions (more threads
// than slots) only cost contention: a slot counts any number of readers.
//
// Thread safety: all methods may be called from any thread. The lock is not
// recursive: a thread holding a read lock must not take the write lock (it
// would wait for itself), and read locks must not be held across calls that
// may write. Writers are fair among themselves as far as std::mutex is;
// readers cannot starve a writer because new readers back off once the flag
// is raised.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>

#include "storage/spin_wait.h"

namespace settee {

class ShardedRWLock {
 public:
  ShardedRWLock() = default;
  ShardedRWLock(const ShardedRWLock&) = delete;
  ShardedRWLock& operator=(const ShardedRWLock&) = delete;

  // Returns the slot to pass to UnlockShared.
  size_t LockShared() {
    const size_t slot = ThisThreadSlot();
    std::atomic<uint32_t>& count = slots_[slot].count;
    for (;;) {
      count.fetch_add(1, std::memory_order_seq_cst);
      if (!writer_.load(std::memory_order_seq_cst)) return slot;
      // A writer is in (or entering): let it proceed and wait until it is
      // done, spinning first (its section is short), then sleeping.
      count.fetch_sub(1, std::memory_order_release);
      SpinBackoff backoff;
      while (writer_.load(std::memory_order_relaxed) && !backoff.Exhausted()) backoff.Pause();
      if (writer_.load(std::memory_order_relaxed)) std::lock_guard<std::mutex> wait(writer_mu_);
    }
  }

  void UnlockShared(size_t slot) { slots_[slot].count.fetch_sub(1, std::memory_order_release); }

  void Lock() {
    // Two writers of one partition meet only briefly: spin, do not sleep.
    LockSpinning(writer_mu_);
    writer_.store(true, std::memory_order_seq_cst);
    for (Slot& s : slots_) {
      // Readers hold the lock only for a short, non-blocking step, so a brief
      // spin usually suffices; yield so a preempted reader can finish on a
      // busy machine.
      SpinBackoff backoff;
      while (s.count.load(std::memory_order_seq_cst) != 0) backoff.Pause();
    }
  }

  void Unlock() {
    writer_.store(false, std::memory_order_release);
    writer_mu_.unlock();
  }

 private:
  // 128 bytes: a cache line plus its adjacent-line prefetch partner on x86.
  static constexpr size_t kSlotAlign = 128;
  static constexpr size_t kSlots = 32;

  struct alignas(kSlotAlign) Slot {
    std::atomic<uint32_t> count{0};
  };

  // Threads get consecutive slot numbers in order of first use, so up to
  // kSlots threads never share a slot.
  static size_t ThisThreadSlot() {
    static std::atomic<size_t> next{0};
    thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return slot;
  }

  Slot slots_[kSlots];
  alignas(kSlotAlign) std::atomic<bool> writer_{false};
  std::mutex writer_mu_;  // held by the writer for its whole critical section
};

// RAII guards.
class SharedLockGuard {
 public:
  explicit SharedLockGuard(ShardedRWLock* lock) : lock_(lock), slot_(lock->LockShared()) {}
  ~SharedLockGuard() { lock_->UnlockShared(slot_); }
  SharedLockGuard(const SharedLockGuard&) = delete;
  SharedLockGuard& operator=(const SharedLockGuard&) = delete;

 private:
  ShardedRWLock* const lock_;
  const size_t slot_;
};

class ExclusiveLockGuard {
 public:
  explicit ExclusiveLockGuard(ShardedRWLock* lock) : lock_(lock) { lock_->Lock(); }
  ~ExclusiveLockGuard() { lock_->Unlock(); }
  ExclusiveLockGuard(const ExclusiveLockGuard&) = delete;
  ExclusiveLockGuard& operator=(const ExclusiveLockGuard&) = delete;

 private:
  ShardedRWLock* const lock_;
};

}  // namespace settee
