// WritePipeline: lets one database's next write batch be built while the
// previous one is still being written to the KV store.
//
// A batch is built in two stages. Stage A, under the database's writer lock,
// reads the current records, edits revision trees, assigns sequence numbers
// and produces a KVWriteBatch; stage B writes that batch to the store (the
// memory backend's map insertions, LevelDB's log and memtable: most of a
// small write's cost, and serial per database anyway). Holding the writer
// lock across B would serialize A and B of different writers; the pipeline
// lets writer 2's stage A run while writer 1's stage B does, so two writers
// of one database get more done than one.
//
// What keeps that equal to writing the batches one at a time:
//  - B runs in ticket order: a batch takes its ticket in stage A (under the
//    writer lock, so tickets follow the order in which the batches were
//    built) and its B waits for the previous ticket's B (WaitTurn). The
//    store therefore sees the batches in the order they were built: change
//    blocks (the last one carrying the counters) and records end as the
//    last batch left them, and update_seq is published in order.
//  - Stage A reads only what earlier batches have written: before it reads
//    a key an unfinished batch writes, it waits for that batch (BeforeRead
//    compares 64-bit hashes of the keys, so a rare collision costs only a
//    wait). Writers of different documents (the common case) never wait.
//  - A failed B fails every later batch still in flight (they were built on
//    its state), and the next stage A finds the pipeline broken, waits for
//    it to empty and restarts from the last committed state (TakeFailure).
//
// Thread safety: the methods marked "writer lock" REQUIRE the database's
// writer lock held (they share its state with no lock of their own);
// WaitTurn and Finish are called without it, each by the batch's own
// thread, and synchronize through atomics (spinning first: a B takes
// microseconds; sleeping after kSpin, or at once when asked).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

#include "settee/kv.h"
#include "storage/spin_wait.h"

namespace settee {

class WritePipeline {
 public:
  // Which keys a batch being built may read: only those are remembered
  // for BeforeRead (a read of any other key waits for every batch in
  // flight). Null: all keys.
  using KeyFilter = std::function<bool(std::string_view key)>;
  explicit WritePipeline(KeyFilter remembered = nullptr) : remembered_(std::move(remembered)) {}
  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  // Writer lock: takes the next ticket for `batch` and remembers which keys
  // it writes until its Finish.
  uint64_t Enqueue(const KVWriteBatch& batch);
  // Writer lock: before stage A reads `key` from the store, waits until no
  // unfinished batch writes it.
  void BeforeRead(std::string_view key);
  // Writer lock: waits until every batch enqueued so far is finished (before
  // a scan, or work that reads many keys).
  void Drain();
  // Writer lock: true if nothing is in flight (BeforeRead would not wait).
  bool Idle();
  // Writer lock: if a batch failed since the last call, waits until the
  // pipeline is empty and returns true: the caller's in-memory state
  // (counters) includes failed batches and must be restored.
  bool TakeFailure();

  // No lock: waits until every earlier ticket is finished. `sleep_at_once`:
  // the previous B is slow (an fsync), so do not spin. Returns false if an
  // earlier batch failed (this one must not be written then; Finish it with
  // ok = false).
  bool WaitTurn(uint64_t ticket, bool sleep_at_once);
  // No lock: `ticket` (whose turn it is) is done, and every ticket before
  // it; ok = false marks the pipeline broken. A batch whose turn it is may
  // write later ones with it (they are ready and waiting for their turn)
  // and Finish the last: their waits then end with Finished() true.
  void Finish(uint64_t ticket, bool ok);
  // No lock: true once `ticket` is finished (acquire: what its writer wrote
  // before Finish is visible).
  bool Finished(uint64_t ticket) const {
    return finished_.load(std::memory_order_acquire) > ticket;
  }

 private:
  struct InFlight {
    uint64_t ticket;
    std::vector<uint64_t> key_hashes;  // sorted
  };
  // How long a waiter spins before it sleeps: longer than a small batch's
  // write (a few microseconds; LevelDB's log write up to ~20).
  static constexpr std::chrono::microseconds kSpin{50};

  static uint64_t HashKey(std::string_view key);
  // Waits until `finished_` > `ticket` (no lock held but maybe the writer lock).
  void WaitFinished(uint64_t ticket, bool sleep_at_once);
  // Drops the entries of finished batches.
  void Prune();

  const KeyFilter remembered_;

  // Writer lock.
  uint64_t next_ticket_ = 0;
  std::vector<InFlight> in_flight_;  // ascending tickets
  // Key hash vectors of finished entries, reused by Enqueue.
  static constexpr size_t kMaxSpare = 4;
  static constexpr size_t kMaxSpareKeys = 64;
  std::vector<std::vector<uint64_t>> spare_;

  // Tickets below this are finished. Written by the finishing batch's
  // thread (release), read by everyone (acquire).
  // Apart from the writer-lock state above, which the next batch's builder
  // uses while this one's writer finishes.
  alignas(kNoFalseSharing) std::atomic<uint64_t> finished_{0};
  // Set by a failed Finish, cleared by TakeFailure (once the pipeline is empty).
  std::atomic<bool> broken_{false};
  // Sleepers: a waiter past its spin budget registers here, then sleeps on
  // cv_; Finish notifies only if someone registered (seq_cst on both sides:
  // either it sees the waiter or the waiter sees the new finished_).
  std::atomic<int> sleepers_{0};
  std::mutex sleep_mu_;
  std::condition_variable cv_;  // waits use sleep_mu_
};

}  // namespace settee
