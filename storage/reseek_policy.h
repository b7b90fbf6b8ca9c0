// ReseekPolicy: when a forward scan of an LSM store should seek past the key
// it stands on instead of stepping to the next one.
//
// A LevelDB iterator's Next() walks over every older version of the current
// key that the memtable and the table files still hold: a document record
// rewritten 100 times since its last compaction is 100 entries, and a scan of
// 100 such documents (`_all_docs` with `include_docs`, the write path's
// ordered record prefetch) walks thousands of them, most of them cache misses
// in the memtable's skip list. RocksDB bounds this inside its iterator (after
// max_sequential_skip_in_iterations = 8 versions of one key it seeks to the
// next key); LevelDB has no such bound and does not say how many versions a
// step skipped. A seek to the key's successor costs a search in the memtable
// and in each table file instead, independent of the versions in between, but
// ten times a plain step on a freshly written range. So the policy measures:
// it times the steps in windows of kWindow, and when a window's steps cost
// more than kSlowStepNs each (beyond 1 ns per kBytesPerNs bytes they returned, so
// that large values read from disk do not count as skipping) the iterator
// seeks instead. While seeking it tries stepping again after kFirstProbe
// seeks, then after twice as many each time stepping is still slow, so a
// range compacted meanwhile goes back to stepping.
//
// A store's iterators share their last verdict (`shared`): a new iterator
// over a range its predecessors found slow to step starts seeking, as long
// as they last did before probing, since a short scan (100 rows) would
// otherwise spend its first window and every probe stepping.
//
// Timing costs one clock read per kWindow steps. A preemption inside a
// window can switch an iterator to seeking for a while: a slower scan, never
// a wrong one (both moves land on the same next key).
//
// Thread safety: none; one per iterator.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>

namespace settee {

class ReseekPolicy {
 public:
  using NowFn = int64_t (*)();  // nanoseconds on a monotonic clock

  static constexpr int kWindow = 16;
  static constexpr int64_t kSlowStepNs = 2000;
  static constexpr int64_t kBytesPerNs = 4;  // a block read from the page cache and decompressed
  static constexpr int kFirstProbe = 64;
  static constexpr int kMaxProbe = 4096;

  static int64_t SteadyNowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  // `shared`, if given, outlives the policy: the verdict of the last window
  // timed by any policy sharing it (0: stepping was fast; else the seeks
  // that verdict prescribed, where a new policy starts).
  explicit ReseekPolicy(std::atomic<int>* shared = nullptr, NowFn now = SteadyNowNs)
      : now_(now), shared_(shared) {
    const int inherited = shared_ != nullptr ? shared_->load(std::memory_order_relaxed) : 0;
    if (inherited > 0) seeks_left_ = probe_ = inherited;
  }

  // True when the next forward move should seek past the current key.
  bool Seeking() const { return seeks_left_ > 0; }

  // Call right before a forward move.
  void BeforeMove() {
    if (!Seeking() && steps_ == 0) window_start_ = now_();
  }

  // Call right after a forward move that returned `bytes` of key and value.
  void AfterMove(size_t bytes) {
    if (Seeking()) {
      --seeks_left_;  // at 0 the next moves step again: a probe
      return;
    }
    bytes_ += bytes;
    if (++steps_ < kWindow) return;
    const int64_t spent = now_() - window_start_;
    const bool slow = spent > kWindow * kSlowStepNs + static_cast<int64_t>(bytes_) / kBytesPerNs;
    steps_ = 0;
    bytes_ = 0;
    if (slow) {
      seeks_left_ = probe_;
      if (probe_ < kMaxProbe) probe_ *= 2;
    } else {
      probe_ = kFirstProbe;
    }
    const int verdict = slow ? seeks_left_ : 0;
    if (shared_ != nullptr && shared_->load(std::memory_order_relaxed) != verdict) {
      shared_->store(verdict, std::memory_order_relaxed);
    }
  }

  // A seek or a backward move: the window being timed no longer measures steps.
  void Reset() {
    steps_ = 0;
    bytes_ = 0;
  }

 private:
  const NowFn now_;
  std::atomic<int>* const shared_;
  int steps_ = 0;          // steps in the current window
  size_t bytes_ = 0;       // bytes those steps returned
  int64_t window_start_ = 0;
  int seeks_left_ = 0;     // > 0: seeking for this many more moves
  int probe_ = kFirstProbe;
};

}  // namespace settee
