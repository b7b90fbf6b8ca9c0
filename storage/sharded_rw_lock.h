// ShardedRWLock: a reader-writer lock whose readers do not share a cache line.
//
// A std::shared_mutex keeps one reader count, so every reader on every core
// writes the same cache line and reads stop scaling past one thread. Here each
// reader increments a counter in one of kSlots cache-line-padded slots, picked
// by a per-thread index. A writer raises a flag in every slot and waits until
// every slot drains; readers that arrive while their slot's flag is up step
// back and spin until it is lowered (a writer's section is a few map
// insertions), sleeping on the writer mutex only after SpinBackoff's spin is
// spent, so a read during a write storm waits for one write, not for a futex
// wake-up.
//
// The flag lives in the reader's own slot, beside its count, rather than in
// one store-wide word: a reader then touches one cache line, not two. That is
// what a read costs during a write storm on another core: every write moves
// the reader's slot line to the writer's core and back (the writer must look
// at it), and with a shared flag word the reader fetched that one too.
// Readers also sample the flag of their own line, so readers of other slots
// never see each other.
//
// A writer flags only the slots some reader of this lock has used: a slot
// registers (once) the first time a reader takes it. Two writer threads
// taking turns at one lock would otherwise move all kSlots lines between
// their cores at every write, although only the slots of the few threads
// that read this lock ever hold a count.
//
// Protocol (Dekker-style):
//   reader: if !slot.registered (acquire) then {
//             registered |= bit (seq_cst) ; wait while excluding (seq_cst) ;
//             slot.registered = 1 (release) }
//           slot.count++ (seq_cst) ; if slot.writer then { slot.count-- ; wait ; retry }
//   writer: lock writer_mu_ ; excluding = 1 (seq_cst) ; m = registered (seq_cst) ;
//           slot.writer = 1 for the slots in m ; seq_cst fence ;
//           wait slot.count == 0 for the slots in m
// Registration is a Dekker pair too: either the writer's mask has the new
// slot, or the registering reader sees `excluding` and waits for that
// writer to end before it (or any reader sharing its slot) reads. A writer
// that holds LockWriter() only still admits new readers.
// The fence orders the writer's flag stores before its count loads as a
// seq_cst store would each (on x86 one mfence instead of kSlots locked
// stores); either the reader sees its slot's flag or the writer sees the
// reader's count, so a reader and a writer are never inside together. Slot
// collisions (more threads than slots) only cost contention: a slot counts
// any number of readers.
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
    const size_t index = ThisThreadSlot();
    Slot& slot = slots_[index];
    // The same line as the count; set under writer_mu_, after the mask.
    if (!slot.registered.load(std::memory_order_acquire)) Register(index);
    for (;;) {
      slot.count.fetch_add(1, std::memory_order_seq_cst);
      // The same cache line as the count: no second line per read.
      if (slot.writer.load(std::memory_order_seq_cst) == 0) return index;
      // A writer is in (or entering): let it proceed and wait until it is
      // done, spinning first (its section is short), then sleeping.
      slot.count.fetch_sub(1, std::memory_order_release);
      SpinBackoff backoff;
      while (slot.writer.load(std::memory_order_relaxed) != 0 && !backoff.Exhausted()) {
        backoff.Pause();
      }
      if (slot.writer.load(std::memory_order_relaxed) != 0) {
        std::lock_guard<std::mutex> wait(writer_mu_);
      }
    }
  }

  void UnlockShared(size_t slot) { slots_[slot].count.fetch_sub(1, std::memory_order_release); }

  // Lock() in two steps: LockWriter() excludes other writers only (readers
  // go on reading, so a writer may look up where its changes go), then
  // Exclude() excludes readers too. A writer holding LockWriter() must not
  // change what readers see until Exclude() returns.
  void Lock() {
    LockWriter();
    Exclude();
  }

  void LockWriter() {
    // Two writers of one partition meet only briefly: spin, do not sleep.
    LockSpinning(writer_mu_);
  }

  // REQUIRES: LockWriter() held.
  void Exclude() {
    excluding_.store(true, std::memory_order_seq_cst);
    flagged_ = registered_.load(std::memory_order_seq_cst);
    for (uint32_t m = flagged_; m != 0; m &= m - 1) {
      slots_[__builtin_ctz(m)].writer.store(1, std::memory_order_relaxed);
    }
    // Orders the flag stores before the count loads below (see Protocol).
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (uint32_t m = flagged_; m != 0; m &= m - 1) {
      Slot& s = slots_[__builtin_ctz(m)];
      // Readers hold the lock only for a short, non-blocking step, so a brief
      // spin usually suffices; yield so a preempted reader can finish on a
      // busy machine.
      SpinBackoff backoff;
      while (s.count.load(std::memory_order_seq_cst) != 0) backoff.Pause();
    }
  }

  // Ends Lock(), or LockWriter() with or without Exclude().
  void Unlock() {
    for (uint32_t m = flagged_; m != 0; m &= m - 1) {
      slots_[__builtin_ctz(m)].writer.store(0, std::memory_order_release);
    }
    flagged_ = 0;
    excluding_.store(false, std::memory_order_seq_cst);
    writer_mu_.unlock();
  }

 private:
  // 128 bytes: a cache line plus its adjacent-line prefetch partner on x86.
  static constexpr size_t kSlotAlign = 128;
  static constexpr size_t kSlots = 32;

  static_assert(kSlots <= 32, "registered_ is a 32-bit mask");

  struct alignas(kSlotAlign) Slot {
    std::atomic<uint32_t> count{0};   // readers inside (or stepping in)
    std::atomic<uint32_t> writer{0};  // 1 while a writer holds or takes the lock
    std::atomic<bool> registered{false};  // its bit is in registered_
  };

  // A slot's first use: adds it to the slots writers flag, and waits for a
  // writer that may have read the set before (see Protocol).
  void Register(size_t index) {
    registered_.fetch_or(uint32_t{1} << index, std::memory_order_seq_cst);
    if (excluding_.load(std::memory_order_seq_cst)) {
      SpinBackoff backoff;
      while (excluding_.load(std::memory_order_seq_cst) && !backoff.Exhausted()) backoff.Pause();
      if (excluding_.load(std::memory_order_seq_cst)) {
        // Holding writer_mu_, no writer is inside.
        std::lock_guard<std::mutex> wait(writer_mu_);
        slots_[index].registered.store(true, std::memory_order_release);
        return;
      }
    }
    slots_[index].registered.store(true, std::memory_order_release);
  }

  // Threads get consecutive slot numbers in order of first use, so up to
  // kSlots threads never share a slot.
  static size_t ThisThreadSlot() {
    static std::atomic<size_t> next{0};
    thread_local const size_t slot = next.fetch_add(1, std::memory_order_relaxed) % kSlots;
    return slot;
  }

  Slot slots_[kSlots];
  std::mutex writer_mu_;  // held by the writer for its whole critical section
  // Slots that readers have used (only ever grows).
  std::atomic<uint32_t> registered_{0};
  // True from a writer's Exclude() to its Unlock().
  std::atomic<bool> excluding_{false};
  // The slots the writer holding writer_mu_ flagged (GUARDED_BY(writer_mu_)).
  uint32_t flagged_ = 0;
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
