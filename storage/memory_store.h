// MemoryStore: the in-memory KVStore backend (NewMemoryStore()).
//
// Design
// ------
//
// An ordered std::map from key to a version chain. Every committed batch gets
// the next sequence number; each op in it prepends a Version {seq, deleted,
// value} to its key's chain (newest first). A read as of sequence S sees, for
// each key, the newest version with seq <= S, and the key is absent if that
// version is a deletion or there is none. Snapshots are just sequence numbers
// registered in a live set; an iterator without a snapshot takes one.
//
// A batch is applied in key order (stably sorted, so of two ops on one key
// the later wins), carrying the node of the previous op and its successor:
// a key that belongs between them (a sorted run of new ids, the counters
// after a database's records) is placed with one comparison instead of a
// descent that compares long shared key prefixes at every level.
//
// Thread safety
// -------------
//
// All KVStore methods may be called concurrently. The map and the chains are
// guarded by lock_, a ShardedRWLock (storage/sharded_rw_lock.h): readers
// (Get, each iterator step) take it shared, which touches only a per-thread
// cache line, so concurrent readers neither block each other nor contend on
// memory. Writers (Write, garbage collection) take it exclusively, one at a
// time. A batch is applied entirely inside one exclusive section and its
// sequence is published (last_seq_) before the section ends, so a reader sees
// all of a batch or none of it.
//
// Iterators do not hold the lock between calls: a long scan never blocks a
// writer. Between calls an iterator keeps a std::map iterator to its current
// node plus a pointer to the Version it shows; both stay valid because of the
// invariants below. KVIterator objects themselves are single-threaded.
//
// Invariants
// ----------
//
// (1) Versions are immutable once linked; only the `older` links of a chain
//     change, and only under the exclusive lock.
// (2) Garbage collection: let M = the oldest live snapshot sequence (or
//     last_seq_ when none is live). A version is freed only if a newer
//     version of the same key has seq <= M. Hence the version visible to any
//     live snapshot S >= M is never freed while S is live.
// (3) A map node is erased only when its chain is a single deletion with
//     seq <= M. Such a node is invisible to every live snapshot, and an
//     iterator only rests on nodes visible to its own (live) snapshot, so no
//     iterator ever holds an erased node.
// (4) An iterator (and the snapshot it was given) keeps its snapshot
//     registered until the iterator is destroyed, so by (2) and (3) the node
//     and Version it rests on outlive it.
// (5) Snapshot registration and the GC's reading of M are serialized by
//     snapshots_mu_, and last_seq_ is published before M is read, so a
//     snapshot is either counted in M or takes a sequence >= the batch that
//     triggered the collection.
//
// Versions that (2) keeps alive only for a snapshot are remembered in
// gc_pending_ and collected by a later write once the oldest snapshot has
// moved on (or by CompactRange).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "settee/kv.h"
#include "storage/sharded_rw_lock.h"

namespace settee {

class MemoryStore final : public KVStore {
 public:
  MemoryStore();
  // REQUIRES: no snapshot or iterator of this store is still alive.
  ~MemoryStore() override;

  Status Get(const KVReadOptions& options, std::string_view key, std::string* value) override;
  // A value over kMaxValueSize (4 GiB) fails the whole batch with kTooLarge.
  Status Write(const KVWriteOptions& options, const KVWriteBatch& batch) override;
  Status WriteOwned(const KVWriteOptions& options, KVWriteBatch&& batch) override;
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& options) override;
  std::shared_ptr<const KVSnapshot> GetSnapshot() override;
  // Sum of key and value bytes of the live entries in [begin, end), exactly.
  // Costs the smaller of the range's entries and the rest of the store's.
  uint64_t ApproximateSize(std::string_view begin, std::string_view end) override;
  // Frees every version no live snapshot can see, in [begin, end).
  void CompactRange(std::string_view begin, std::string_view end) override;
  std::string_view BackendName() const override { return "memory"; }

  // Test hooks: number of Version objects and of map nodes currently held.
  size_t TEST_VersionCount();
  size_t TEST_NodeCount();

 private:
  // Write() and WriteOwned(): applies the ops as one batch.
  template <typename Ops>
  Status Apply(Ops&& ops);
  class Snapshot;
  class Iter;
  friend class Snapshot;
  friend class Iter;

  // One allocation: this header, then the value's bytes. Keeping the bytes
  // inline halves the allocations a write retains, and so the memory (and
  // page faults) a growing store costs per entry.
  struct Version {
    uint64_t seq;
    Version* older;  // next older version, or nullptr
    uint32_t size;   // of the value
    bool deleted;

    std::string_view value() const { return {reinterpret_cast<const char*>(this + 1), size}; }
    // REQUIRES: value.size() <= kMaxValueSize.
    static Version* New(bool deleted, std::string_view value);
    static void Free(Version* v) { ::operator delete(v); }
  };
  static constexpr size_t kMaxValueSize = UINT32_MAX;

  // A map key that keeps up to kInlineBytes in the map node itself. Document
  // keys (10 bytes of database prefix and kind, then the id: 42 for a 32-hex
  // uuid) mostly fit, so a descent compares bytes already on the node's
  // cache lines instead of following a heap pointer at every level, and the
  // node needs no second allocation. Immutable.
  class NodeKey {
   public:
    // REQUIRES: bytes.size() <= kMaxKeySize.
    explicit NodeKey(std::string_view bytes);
    ~NodeKey();
    NodeKey(const NodeKey&) = delete;
    NodeKey& operator=(const NodeKey&) = delete;

    std::string_view view() const { return {size_ <= kInlineBytes ? inline_ : heap_, size_}; }
    operator std::string_view() const { return view(); }

   private:
    static constexpr size_t kInlineBytes = 44;
    uint32_t size_;
    union {
      char inline_[kInlineBytes];
      char* heap_;
    };
  };
  static constexpr size_t kMaxKeySize = UINT32_MAX;
  // Orders NodeKeys and string_views alike (a transparent comparator).
  struct KeyLess {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const { return a < b; }
  };
  using Map = std::map<NodeKey, Version*, KeyLess>;

  // Newest version of `chain` with seq <= `seq` that is not a deletion, or
  // nullptr if the key is absent as of `seq`.
  // REQUIRES: lock_ held (shared or exclusive).
  static const Version* Visible(const Version* chain, uint64_t seq);

  // Registers / unregisters a live snapshot sequence.
  uint64_t AcquireSnapshotSeq();
  void ReleaseSnapshotSeq(uint64_t seq);
  // The oldest sequence any live snapshot may read (M in the comment above).
  uint64_t OldestLiveSeq();

  // Frees the versions of node `it` that no snapshot as of >= `oldest` can
  // see, and erases the node if nothing visible remains. Returns true if the
  // node still holds versions kept only for a snapshot.
  // REQUIRES: lock_ held exclusively.
  bool Collect(Map::iterator it, uint64_t oldest);
  // Collects the keys in gc_pending_ if the oldest snapshot has advanced.
  // REQUIRES: lock_ held exclusively.
  void CollectPending(uint64_t oldest);

  // Serializes writers; readers take it shared (see ShardedRWLock).
  ShardedRWLock lock_;

  // State below is protected by lock_.
  Map map_;
  // Keys whose chains hold versions that a snapshot still needed when last
  // collected, and the oldest live sequence at that time.
  std::set<std::string, std::less<>> gc_pending_;
  uint64_t gc_pending_oldest_ = 0;
  // Key and value bytes of every live entry (as of last_seq_).
  uint64_t live_bytes_ = 0;
  size_t writes_since_pending_gc_ = 0;  // ops written since the last pass
  // Sequence of the last committed batch. Written only under the exclusive
  // lock; atomic so GetSnapshot can read it without lock_.
  std::atomic<uint64_t> last_seq_{0};

  // Live snapshot sequences (a multiset: several snapshots may share one).
  std::mutex snapshots_mu_;
  std::multiset<uint64_t> live_snapshots_;  // guarded by snapshots_mu_
};

}  // namespace settee
