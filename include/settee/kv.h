// The ordered key-value interface every settee database is stored in.
//
// A KVStore is a persistent (or in-memory) ordered map from byte-string keys
// to byte-string values, ordered bytewise (memcmp, shorter prefix first).
// Two backends implement it: LevelDB on disk (OpenLevelDBStore) and an
// in-memory map (NewMemoryStore). The document layer, view indexes and
// replication checkpoints all live in one KVStore under disjoint key prefixes
// (docs/storage_format.md).
//
// Thread safety: every method of KVStore may be called from many threads at
// once without external synchronization. Readers do not block each other on
// either backend. A KVIterator and a KVWriteBatch are single-threaded objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

// A consistent point-in-time view of a KVStore. Reads through a snapshot see
// exactly the writes committed before it was taken. Release it by dropping the
// last shared_ptr; it must not outlive the store that made it.
class KVSnapshot {
 public:
  virtual ~KVSnapshot() = default;
};

struct KVReadOptions {
  // Read as of this snapshot; nullptr reads the latest committed state.
  const KVSnapshot* snapshot = nullptr;
};

struct KVWriteOptions {
  // Flush to stable storage before returning (fsync on LevelDB). A write
  // acknowledged with sync=true survives a process or machine crash; without
  // it a process crash is survived but a machine crash may lose the newest
  // writes. Ignored by the memory backend.
  bool sync = false;
};

// An ordered list of puts and deletes applied atomically by KVStore::Write:
// either all of them become visible, or none.
class KVWriteBatch {
 public:
  struct Op {
    bool is_delete;
    std::string key;
    std::string value;  // empty for deletes
  };

  void Put(std::string_view key, std::string_view value) {
    ops_.push_back(Op{false, std::string(key), std::string(value)});
    bytes_ += key.size() + value.size();
  }
  // Put() that takes ownership of the bytes instead of copying them.
  void PutOwned(std::string&& key, std::string&& value) {
    bytes_ += key.size() + value.size();
    ops_.push_back(Op{false, std::move(key), std::move(value)});
  }
  void Delete(std::string_view key) {
    ops_.push_back(Op{true, std::string(key), {}});
    bytes_ += key.size();
  }
  // Moves `other`'s operations to the end of this batch.
  void Append(KVWriteBatch&& other) {
    if (ops_.empty()) {
      ops_ = std::move(other.ops_);
    } else {
      ops_.reserve(ops_.size() + other.ops_.size());
      for (Op& op : other.ops_) ops_.push_back(std::move(op));
    }
    bytes_ += other.bytes_;
    other.Clear();
  }
  void Clear() { ops_.clear(); bytes_ = 0; }
  // Room for `n` more operations without reallocating.
  void Reserve(size_t n) { ops_.reserve(ops_.size() + n); }
  bool empty() const { return ops_.empty(); }
  size_t count() const { return ops_.size(); }
  // Total key and value bytes, a cheap size estimate.
  size_t ApproximateBytes() const { return bytes_; }
  const std::vector<Op>& ops() const { return ops_; }
  std::vector<Op>& mutable_ops() { return ops_; }

 private:
  std::vector<Op> ops_;
  size_t bytes_ = 0;
};

struct KVIteratorOptions {
  // Iterate as of this snapshot; nullptr takes an implicit snapshot when the
  // iterator is created, so one iterator always sees one consistent state.
  const KVSnapshot* snapshot = nullptr;
  // Keys outside [lower_bound, upper_bound) are never returned. Empty means
  // unbounded on that side.
  std::string lower_bound;
  std::string upper_bound;
};

// Walks keys in order. A new iterator is not positioned: call a Seek method.
class KVIterator {
 public:
  virtual ~KVIterator() = default;

  // True iff positioned at an entry within the bounds.
  virtual bool Valid() const = 0;
  // Positions at the first entry within bounds.
  virtual void SeekToFirst() = 0;
  // Positions at the last entry within bounds.
  virtual void SeekToLast() = 0;
  // Positions at the first entry with key >= target (clamped to the bounds).
  virtual void Seek(std::string_view target) = 0;
  // Positions at the last entry with key <= target (clamped to the bounds).
  virtual void SeekForPrev(std::string_view target) = 0;
  // REQUIRES: Valid()
  virtual void Next() = 0;
  // REQUIRES: Valid()
  virtual void Prev() = 0;
  // REQUIRES: Valid(). The views stay valid until the next move or destruction.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  // Not OK if iteration stopped on a storage error rather than the end.
  virtual Status status() const = 0;
};

// A write batch made ready to be written (KVStore::Prepare); owned by the
// caller until it is handed to Commit of the store that made it.
class KVPreparedWrite {
 public:
  virtual ~KVPreparedWrite() = default;
};

class KVStore {
 public:
  KVStore() = default;
  KVStore(const KVStore&) = delete;
  KVStore& operator=(const KVStore&) = delete;
  virtual ~KVStore() = default;

  // Stores the value of `key` in *value. Returns kNotFound if absent.
  virtual Status Get(const KVReadOptions& options, std::string_view key, std::string* value) = 0;

  // Applies the batch atomically.
  virtual Status Write(const KVWriteOptions& options, const KVWriteBatch& batch) = 0;

  // Write() that may take the batch's bytes instead of copying them; the
  // batch is left in a valid but unspecified state.
  virtual Status WriteOwned(const KVWriteOptions& options, KVWriteBatch&& batch) {
    return Write(options, batch);
  }

  // WriteOwned() in two steps: Prepare() does what it can before the write
  // (copying values, allocating; no lock, no effect on what readers see),
  // Commit() the rest. A caller that keeps its writes in an order of its own
  // prepares before it waits for its turn, so the turn holds only the
  // store's serialized step. Commit(Prepare(b)) equals WriteOwned(b); a
  // prepared write that is never committed is simply dropped. Thread-safe
  // as the other methods; the default prepares nothing.
  virtual std::unique_ptr<KVPreparedWrite> Prepare(KVWriteBatch&& batch) {
    auto held = std::make_unique<HeldBatch>();
    held->batch = std::move(batch);
    return held;
  }
  virtual Status Commit(const KVWriteOptions& options, std::unique_ptr<KVPreparedWrite> prepared) {
    auto* held = dynamic_cast<HeldBatch*>(prepared.get());
    if (held == nullptr) return Status(Status::Code::kInvalidOperation, "write not prepared by this store");
    return WriteOwned(options, std::move(held->batch));
  }
  // Commits several prepared writes in order, as the commits one after the
  // other would, but in one write where the store can: the default writes
  // all their operations as one batch (one log record and one fsync on
  // LevelDB), so the writes succeed or fail together. Not empty.
  virtual Status CommitAll(const KVWriteOptions& options,
                           std::vector<std::unique_ptr<KVPreparedWrite>> prepared) {
    if (prepared.size() == 1) return Commit(options, std::move(prepared[0]));
    KVWriteBatch all;
    for (auto& p : prepared) {
      auto* held = dynamic_cast<HeldBatch*>(p.get());
      if (held == nullptr) return Status(Status::Code::kInvalidOperation, "write not prepared by this store");
      all.Append(std::move(held->batch));
    }
    return WriteOwned(options, std::move(all));
  }

  Status Put(const KVWriteOptions& options, std::string_view key, std::string_view value) {
    KVWriteBatch b;
    b.Put(key, value);
    return Write(options, b);
  }
  Status Delete(const KVWriteOptions& options, std::string_view key) {
    KVWriteBatch b;
    b.Delete(key);
    return Write(options, b);
  }

  // Never returns nullptr; a failure shows in the iterator's status().
  virtual std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& options) = 0;

  virtual std::shared_ptr<const KVSnapshot> GetSnapshot() = 0;

  // Approximate bytes used by keys in [begin, end) (end empty = to the end).
  virtual uint64_t ApproximateSize(std::string_view begin, std::string_view end) = 0;

  // Reclaims space held by deleted or overwritten entries in [begin, end).
  // A hint: backends may do nothing.
  virtual void CompactRange(std::string_view begin, std::string_view end) = 0;

  // "leveldb" or "memory".
  virtual std::string_view BackendName() const = 0;

 private:
  // What the default Prepare() makes: the batch, untouched.
  struct HeldBatch final : KVPreparedWrite {
    KVWriteBatch batch;
  };
};

struct LevelDBOptions {
  bool create_if_missing = true;
  size_t block_cache_bytes = 64u << 20;
  size_t write_buffer_bytes = 16u << 20;
  bool bloom_filter = true;  // 10 bits per key
  // Append the write-ahead log through a memory mapping instead of a
  // write() system call per write (storage/leveldb_env.h): the same
  // durability, a system call less in every write.
  bool mmap_log = true;
};

// Opens (creating if allowed) a LevelDB store in directory `path`. One process
// may open a directory once; a second open fails with kIOError (lock held).
Status OpenLevelDBStore(const std::string& path, const LevelDBOptions& options,
                        std::unique_ptr<KVStore>* store);

// A new, empty in-memory store. Contents vanish when it is destroyed.
std::unique_ptr<KVStore> NewMemoryStore();

}  // namespace settee
