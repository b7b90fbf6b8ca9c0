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
// Partitions
// ----------
//
// The map may be split into partitions, each with its own map, lock and
// garbage collection state (Options says how keys map to them; the document
// store does not split: it gives each database a MemoryStore of its own,
// store_impl.h), so writers to different partitions never wait for each
// other and a reader waits only for writers of its own partition. A batch
// that spans partitions locks them all, in index order.
//
// Sequence numbers stay global, so a snapshot is one consistent cut of the
// whole store. A batch is applied with its versions unstamped (kUnstamped);
// then, still holding its partitions, it takes and publishes the next
// sequence in one atomic step (last_seq_) and stamps its versions with it.
// A snapshot taken meanwhile may read as of that sequence before the stamps
// are written, but it can only look into the batch's partitions through
// their locks, which the batch releases after stamping: so it sees the batch
// whole, and a snapshot older than the sequence sees none of it. Because a
// partition's next writer takes its sequence after the lock, sequences
// within a partition ascend in commit order. No writer ever waits for
// another partition's writer, not even one descheduled mid-batch. Readers
// never see an unstamped version.
//
// An iterator whose bounds lie in one partition reads only it; others merge
// the partitions' iterators (MergeIter), all as of one snapshot.
//
// Thread safety
// -------------
//
// All KVStore methods may be called concurrently. A partition's map and
// chains are guarded by its lock, a ShardedRWLock (storage/sharded_rw_lock.h):
// readers (Get, each iterator step) take it shared, which touches only a
// per-thread cache line, so concurrent readers neither block each other nor
// contend on memory. Writers (Write, garbage collection) take it exclusively,
// one at a time per partition. A batch is applied entirely inside one
// exclusive section of each partition it touches and its sequence is
// published before the sections end, so a reader sees all of a batch or none
// of it.
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
// (5) A snapshot registers by raising snapshot_count_ and then reading
//     last_seq_; a writer publishes its sequence (fetch_add on last_seq_)
//     and then reads snapshot_count_ (all seq_cst). So either the writer
//     sees the count and reads M from live_snapshots_ under snapshots_mu_
//     (which the registration holds until the sequence is in the set), or
//     the snapshot takes a sequence >= the batch that triggered the
//     collection; and while the batch's partitions are locked nothing newer
//     than it exists in them, so collecting them as of the batch's own
//     sequence is exact.
//
// Versions that (2) keeps alive only for a snapshot are remembered in their
// partition's gc_pending and collected by a later write to that partition
// once the oldest snapshot has moved on (or by CompactRange).
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

#include <boost/container/small_vector.hpp>

#include "settee/kv.h"
#include "storage/sharded_rw_lock.h"

namespace settee {

class MemoryStore final : public KVStore {
 public:
  // How keys map to partitions. With `partitions` = 1 (the default) there is
  // one map and one lock. Otherwise a key that starts with `lead` and has at
  // least `id_bytes` more bytes goes to partition 1 + (those bytes read as a
  // big-endian number) % (partitions - 1), and every other key to partition
  // 0: with the document store's layout ("D", then a fixed64 database id)
  // databases created one after another never share a partition until
  // `partitions` - 1 of them exist. Any rule is correct; it only decides
  // which writers can run at once.
  struct Options {
    size_t partitions = 1;
    std::string lead;
    size_t id_bytes = 0;
  };

  MemoryStore();
  explicit MemoryStore(const Options& options);
  // REQUIRES: no snapshot or iterator of this store is still alive.
  ~MemoryStore() override;

  Status Get(const KVReadOptions& options, std::string_view key, std::string* value) override;
  // A value over kMaxValueSize (4 GiB) fails the whole batch with kTooLarge.
  Status Write(const KVWriteOptions& options, const KVWriteBatch& batch) override;
  Status WriteOwned(const KVWriteOptions& options, KVWriteBatch&& batch) override;
  // Prepare: the values copied into versions and the map nodes of new keys
  // allocated, outside every lock; Commit: only the partitions' locked
  // pointer surgery and the sequence.
  std::unique_ptr<KVPreparedWrite> Prepare(KVWriteBatch&& batch) override;
  Status Commit(const KVWriteOptions& options, std::unique_ptr<KVPreparedWrite> prepared) override;
  // Each write applied atomically in turn (a reader may see the first
  // without the later ones); all are applied or, on an error, none.
  Status CommitAll(const KVWriteOptions& options,
                   std::vector<std::unique_ptr<KVPreparedWrite>> prepared) override;
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& options) override;
  std::shared_ptr<const KVSnapshot> GetSnapshot() override;
  // Sum of key and value bytes of the live entries in [begin, end), exactly.
  // Costs the smaller of the range's entries and the rest of the store's.
  uint64_t ApproximateSize(std::string_view begin, std::string_view end) override;
  // Frees every version no live snapshot can see, in [begin, end).
  void CompactRange(std::string_view begin, std::string_view end) override;
  std::string_view BackendName() const override { return "memory"; }

  // Test hooks: number of Version objects and of map nodes currently held,
  // and how many batch keys were placed by a finger (Place) since the start.
  size_t TEST_VersionCount();
  size_t TEST_NodeCount();
  uint64_t TEST_FingerHits();
  // True if every finger is on a node of its partition and every successor
  // a finger knows is its node's successor.
  bool TEST_FingersConsistent();

 private:
  struct Prepared;
  // The first step of every write: fills `prepared` (its ops set) with the
  // batch's versions and nodes and the order to apply them in. `kOwned`:
  // values are taken from prepared->owned. Takes no lock.
  template <bool kOwned>
  void PrepareOps(Prepared* prepared);
  // The second: applies a prepared batch atomically.
  Status CommitPrepared(Prepared& prepared);
  class Snapshot;
  class Iter;
  class MergeIter;
  friend class Snapshot;
  friend class Iter;
  friend class MergeIter;

  // One allocation: this header, then the value's bytes. Keeping the bytes
  // inline halves the allocations a write retains, and so the memory (and
  // page faults) a growing store costs per entry. Values from kCompressBytes
  // up are kept Snappy-compressed when that saves at least an eighth (JSON
  // bodies of that size mostly shrink severalfold): a big body then costs
  // its compressed size in memory, and fresh memory is what big writes
  // paid for most (page faults), far more than Snappy's compression. One
  // that does not compress is adopted from an owned batch rather than
  // copied: the header is followed by the batch's std::string, whose
  // buffer the version takes over.
  struct Version {
    enum class Form : uint8_t {
      kInline,    // the bytes follow the header
      kSnappy,    // a u32 of the compressed length, then Snappy's bytes
      kAdopted,   // a std::string holding the bytes follows the header
    };
    uint64_t seq;
    Version* older;  // next older version, or nullptr
    uint32_t size;   // of the value (uncompressed)
    bool deleted;
    Form form;

    // The value's bytes: in place, or uncompressed into *scratch.
    std::string_view Value(std::string* scratch) const;
    // REQUIRES: value.size() <= kMaxValueSize.
    static Version* New(bool deleted, std::string_view value);
    // New(), taking a big value's buffer instead of copying it when it is
    // not worth compressing; `value` is left empty either way.
    static Version* Adopt(bool deleted, std::string&& value);
    static void Free(Version* v);

   private:
    const char* payload() const { return reinterpret_cast<const char*>(this + 1); }
    static Version* Compressed(bool deleted, std::string_view value);
  };
  // Values from this size up are compressed or adopted (see Version).
  static constexpr size_t kCompressBytes = 16 << 10;
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

  // The seq of a version whose batch is still being applied (see Partitions).
  static constexpr uint64_t kUnstamped = UINT64_MAX;
  // Reads without a snapshot read as of this: a partition's newest versions
  // are always whole while its lock is held shared.
  static constexpr uint64_t kLatest = UINT64_MAX - 1;

  struct Partition {
    // Serializes writers; readers take it shared (see ShardedRWLock).
    ShardedRWLock lock;

    // State below is protected by lock.
    Map map;
    // Keys whose chains hold versions that a snapshot still needed when last
    // collected, and the oldest live sequence at that time.
    std::set<std::string, std::less<>> gc_pending;
    uint64_t gc_pending_oldest = 0;
    // Key and value bytes of every live entry.
    uint64_t live_bytes = 0;
    size_t writes_since_pending_gc = 0;  // ops written since the last pass
    // Fingers: nodes recent batches wrote, least recently used replaced
    // first. A document write's keys mostly land just after one (the next
    // sequence, whose change block carries the counters, and the next id of
    // an ascending run: one run per writer), so Place finds them with a comparison or
    // two instead of a descent from the root, which compares long shared
    // key prefixes on cold nodes at every level and was most of a small
    // batch's time in the map. A finger also keeps its node's successor
    // once known (a node inserted before another knows it; an insertion
    // between the two updates it): finding the successor anew is a walk up
    // the tree, a chain of dependent loads as long as a descent. Guarded by
    // the writer side of `lock`; a node is dropped from here before it is
    // erased, and a successor erased is forgotten (Collect).
    struct Finger {
      Map::iterator it;
      Map::iterator next;     // std::next(it), if next_known
      bool next_known = false;
      uint64_t used = 0;
    };
    static constexpr size_t kFingers = 8;
    Finger fingers[kFingers];
    size_t finger_count = 0;
    uint64_t finger_clock = 0;
    uint64_t finger_hits = 0;  // keys Place found by a finger (a test hook)
  };

  // Newest version of `chain` with seq <= `seq` that is not a deletion, or
  // nullptr if the key is absent as of `seq`.
  // REQUIRES: the chain's partition lock held (shared or exclusive).
  static const Version* Visible(const Version* chain, uint64_t seq);

  size_t PartitionOf(std::string_view key) const;
  // The partitions that may hold keys in [lower, upper) (upper empty: no
  // bound), ascending.
  std::vector<size_t> PartitionsOf(std::string_view lower, std::string_view upper) const;

  // Registers / unregisters a live snapshot sequence.
  uint64_t AcquireSnapshotSeq();
  void ReleaseSnapshotSeq(uint64_t seq);
  // The oldest sequence any live snapshot may read (M in the comment above),
  // for a collection after publishing batch `published`.
  // REQUIRES: the batch's partitions still locked.
  uint64_t OldestLiveSeq(uint64_t published);

  // What a writer unlinks under a partition's lock, freed when this is
  // destroyed after the lock is released: readers then wait for pointer
  // surgery only, never for the allocator (a free may return pages to the
  // kernel). Nothing unlinked is reachable by a reader once the lock is
  // released, so freeing it later is as safe as freeing it at once.
  // Inline room for a small batch (a document write is ~3 ops): no heap
  // allocation per write for the bookkeeping.
  template <typename T>
  using SmallVector = boost::container::small_vector<T, 8>;

  struct Garbage {
    SmallVector<Version*> versions;
    SmallVector<Map::node_type> nodes;  // erased nodes (their chains freed)
    Garbage() = default;
    Garbage(const Garbage&) = delete;
    Garbage& operator=(const Garbage&) = delete;
    ~Garbage();
  };

  // A batch ready to be applied: made by PrepareOps, consumed by
  // CommitPrepared.
  struct Prepared final : KVPreparedWrite {
    const MemoryStore* store = nullptr;
    std::vector<KVWriteBatch::Op> owned;  // an owned batch's ops (values moved out)
    const std::vector<KVWriteBatch::Op>* ops = nullptr;  // owned, or the caller's
    Status status;                     // not OK: too large; nothing allocated
    SmallVector<Version*> fresh;       // per op; null once the commit took it
    SmallVector<Map::node_type> nodes;  // per op: its node, should the key be new
    SmallVector<uint32_t> part_of;     // per op: its partition (empty: all in 0)
    SmallVector<uint32_t> order;       // op indexes in partition and key order
    SmallVector<uint32_t> locked;      // the partitions, ascending (the lock order)
    Prepared() = default;
    Prepared(const Prepared&) = delete;
    Prepared& operator=(const Prepared&) = delete;
    ~Prepared() override;
  };

  // lower_bound(key) in part.map, from a finger if one is at or just before
  // it (*slot: that finger's index), else by a descent (*slot = -1).
  // REQUIRES: part.lock held as the writer.
  static Map::iterator Place(Partition& part, std::string_view key, int* slot);
  // Node `it` was written (inserted just before `next`, or already there:
  // `next` end and `inserted` false): it becomes the finger `slot` (the
  // one Place found its key by, moving along its run), or refreshes the
  // finger already on it, or replaces the least recently used one.
  // REQUIRES: part.lock held as the writer.
  static void NoteFinger(Partition& part, Map::iterator it, bool inserted, Map::iterator next,
                         int slot);
  // Node `it` was just inserted before `next`: fingers whose successor was
  // `next` and that lie before `it` now have `it` as their successor.
  // REQUIRES: part.lock held as the writer.
  static void NoteInsert(Partition& part, Map::iterator it, Map::iterator next);
  // Unlinks the versions of node `it` of `part` that no snapshot as of >=
  // `oldest` can see into `garbage`, and the node too if nothing visible
  // remains. Returns true if the node still holds versions kept only for a
  // snapshot.
  // REQUIRES: part.lock held exclusively.
  static bool Collect(Partition& part, Map::iterator it, uint64_t oldest, Garbage* garbage);
  // Collects the keys in part.gc_pending if the oldest snapshot has advanced.
  // REQUIRES: part.lock held exclusively.
  static void CollectPending(Partition& part, uint64_t oldest, Garbage* garbage);
  // CompactRange within one partition.
  void CompactPartition(Partition& part, std::string_view begin, std::string_view end);
  // ApproximateSize within one partition.
  uint64_t PartitionSize(size_t p, std::string_view begin, std::string_view end);

  // Constant after construction.
  const Options options_;
  const std::unique_ptr<Partition[]> parts_;

  // The sequence of the last batch that took one (see Partitions). Atomic:
  // writers take sequences and snapshots read it without any lock. On a
  // line of its own: every write changes it, and the constants above are
  // read by every read and write.
  alignas(kNoFalseSharing) std::atomic<uint64_t> last_seq_{0};

  // Live snapshot sequences (a multiset: several snapshots may share one).
  alignas(kNoFalseSharing) std::mutex snapshots_mu_;
  std::multiset<uint64_t> live_snapshots_;  // guarded by snapshots_mu_
  // Snapshots live or registering; lets a writer skip snapshots_mu_ when 0.
  std::atomic<uint64_t> snapshot_count_{0};
};

}  // namespace settee
