// LevelDBStore: the on-disk KVStore backend (OpenLevelDBStore()).
//
// Wraps one leveldb::DB opened with a bytewise comparator, an LRU block cache
// (possibly shared with other stores) and (optionally) a 10-bits-per-key
// Bloom filter, owned by the store.
// The leveldb::DB is shared by every thread and lets readers run concurrently.
// Writers are group-committed here, in front of LevelDB's own writer queue: a
// writer that finds another writing queues its batch and spins; the one writing
// (the leader) appends every queued batch (each encoded as LevelDB's by its own
// writer before it queued) to its own and writes them with one log append, then
// hands each its status. LevelDB's queue does the same but parks each follower
// on a condition variable, so two threads writing paid a futex sleep and
// wake-up per write; here the handoff is a spin (SpinBackoff) and only a slow write
// (a memtable switch) makes followers sleep, or a sync one (fsync: they sleep
// at once). LevelDB's queue then always sees one writer. Each database has a
// LevelDB of its own (store_impl.h), so this queue is shared by one database's
// writes and its views' and attachments' batches.
//
// Mapping of the KVStore contract onto LevelDB:
//   - KVWriteBatch -> one leveldb::WriteBatch (atomic); sync -> WriteOptions::sync.
//   - KVSnapshot   -> a leveldb::Snapshot, released when the last shared_ptr dies.
//   - KVIterator   -> a leveldb::Iterator, which already reads one implicit
//                     snapshot taken at creation; bounds and SeekForPrev are
//                     implemented here on top of Seek/Prev, and Next() seeks
//                     past a key instead of stepping when steps are slow
//                     (many old versions: storage/reseek_policy.h).
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

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "settee/kv.h"
#include "storage/spin_wait.h"

namespace leveldb {
class Cache;
class DB;
class FilterPolicy;
class Status;
class WriteBatch;
}  // namespace leveldb

namespace settee {

// Converts a LevelDB status to a settee Status (see the mapping above).
Status FromLevelDBStatus(const leveldb::Status& s);

// An LRU block cache of `bytes` that several LevelDBStores may share (the
// store's own and one per database, see store_impl.h), so their cached
// blocks stay within one budget.
std::shared_ptr<leveldb::Cache> NewLevelDBBlockCache(size_t bytes);

// OpenLevelDBStore() with a shared block cache and a bound on the table
// files this LevelDB keeps open (LevelDB raises it to at least 74).
Status OpenLevelDBStore(const std::string& path, const LevelDBOptions& options,
                        std::shared_ptr<leveldb::Cache> cache, int max_open_files,
                        std::unique_ptr<KVStore>* store);

class LevelDBStore final : public KVStore {
 public:
  // Use OpenLevelDBStore().
  LevelDBStore(leveldb::DB* db, std::shared_ptr<leveldb::Cache> cache,
               std::unique_ptr<const leveldb::FilterPolicy> filter);
  ~LevelDBStore() override;

  Status Get(const KVReadOptions& options, std::string_view key, std::string* value) override;
  Status Write(const KVWriteOptions& options, const KVWriteBatch& batch) override;
  // Prepare encodes the batch as LevelDB's (a copy of every key and value)
  // on the caller's thread, so a turn of the caller's write order (and the
  // leader of a group here) only appends encoded batches.
  std::unique_ptr<KVPreparedWrite> Prepare(KVWriteBatch&& batch) override;
  Status Commit(const KVWriteOptions& options, std::unique_ptr<KVPreparedWrite> prepared) override;
  Status CommitAll(const KVWriteOptions& options,
                   std::vector<std::unique_ptr<KVPreparedWrite>> prepared) override;
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& options) override;
  std::shared_ptr<const KVSnapshot> GetSnapshot() override;
  uint64_t ApproximateSize(std::string_view begin, std::string_view end) override;
  void CompactRange(std::string_view begin, std::string_view end) override;
  std::string_view BackendName() const override { return "leveldb"; }

 private:
  class Snapshot;
  class Iter;
  class Prepared;
  struct Writer;  // one caller's batch waiting in writers_

  // Writes `batch` (encoded, not empty) through the group-commit queue. As
  // the leader it may append the batches of the writers queued behind it
  // to `batch`, which the caller discards afterwards.
  Status WriteEncoded(bool sync, leveldb::WriteBatch* batch);

  // Constant after construction. db_ is destroyed before cache_ and filter_,
  // which it uses. The cache may be shared with other stores.
  std::shared_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;

  // The group-commit queue; the front writer is the leader. Held for a
  // push or a pop only, so contenders spin instead of sleeping.
  std::mutex queue_mu_;
  std::deque<Writer*> writers_;  // GUARDED_BY(queue_mu_)

  // The iterators' last verdict on stepping (0: fast; else how many seeks a
  // new iterator starts with: keys with many old versions), shared so that
  // short scans need not find out each time (storage/reseek_policy.h).
  std::atomic<int> slow_steps_{0};
};

}  // namespace settee
