// LevelDBStore: the on-disk KVStore backend (OpenLevelDBStore()).
//
// Wraps one leveldb::DB opened with a bytewise comparator, an LRU block cache
// and (optionally) a 10-bits-per-key Bloom filter, both owned by the store.
// The leveldb::DB is shared by every thread: LevelDB itself serializes writers
// (group commit) and lets readers run concurrently, so this class adds no
// locking of its own.
//
// Mapping of the KVStore contract onto LevelDB:
//   - KVWriteBatch -> one leveldb::WriteBatch (atomic); sync -> WriteOptions::sync.
//   - KVSnapshot   -> a leveldb::Snapshot, released when the last shared_ptr dies.
//   - KVIterator   -> a leveldb::Iterator, which already reads one implicit
//                     snapshot taken at creation; bounds and SeekForPrev are
//                     implemented here on top of Seek/Prev.
//   - Status       -> NotFound -> kNotFound, Corruption -> kCorruption,
//                     everything else (I/O, lock held, bad arguments) -> kIOError.
//   - ApproximateSize counts only data already flushed to table files (LevelDB
//     does not size its memtable), so freshly written data may count as 0.
//
// A directory can be open once per process: LevelDB's LOCK file (and its
// in-process lock table) makes a second open fail with kIOError.
//
// Thread safety: all KVStore methods may be called concurrently. Snapshots
// and iterators must not outlive the store.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "settee/kv.h"

namespace leveldb {
class Cache;
class DB;
class FilterPolicy;
class Status;
}  // namespace leveldb

namespace settee {

// Converts a LevelDB status to a settee Status (see the mapping above).
Status FromLevelDBStatus(const leveldb::Status& s);

class LevelDBStore final : public KVStore {
 public:
  // Use OpenLevelDBStore().
  LevelDBStore(leveldb::DB* db, std::unique_ptr<leveldb::Cache> cache,
               std::unique_ptr<const leveldb::FilterPolicy> filter);
  ~LevelDBStore() override;

  Status Get(const KVReadOptions& options, std::string_view key, std::string* value) override;
  Status Write(const KVWriteOptions& options, const KVWriteBatch& batch) override;
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& options) override;
  std::shared_ptr<const KVSnapshot> GetSnapshot() override;
  uint64_t ApproximateSize(std::string_view begin, std::string_view end) override;
  void CompactRange(std::string_view begin, std::string_view end) override;
  std::string_view BackendName() const override { return "leveldb"; }

 private:
  class Snapshot;
  class Iter;

  // Constant after construction. db_ is destroyed before cache_ and filter_,
  // which it uses.
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace settee
