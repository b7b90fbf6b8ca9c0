#include "storage/leveldb_store.h"

#include <leveldb/cache.h>
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/iterator.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <vector>
#include <system_error>
#include <utility>

#include "storage/kv_error_iterator.h"
#include "storage/leveldb_env.h"
#include "storage/reseek_policy.h"
#include "storage/spin_wait.h"

namespace settee {

namespace {

constexpr int kBloomBitsPerKey = 10;

leveldb::Slice ToSlice(std::string_view s) { return leveldb::Slice(s.data(), s.size()); }
std::string_view ToView(const leveldb::Slice& s) { return std::string_view(s.data(), s.size()); }

Status ForeignSnapshot() {
  return Status(Status::Code::kInvalidOperation, "snapshot does not belong to this LevelDB store");
}

}  // namespace

Status FromLevelDBStatus(const leveldb::Status& s) {
  if (s.ok()) return Status::OK();
  if (s.IsNotFound()) return Status::NotFound(s.ToString());
  if (s.IsCorruption()) return Status::Corruption(s.ToString());
  return Status::IOError(s.ToString());
}

//////// Snapshots:

class LevelDBStore::Snapshot final : public KVSnapshot {
 public:
  Snapshot(leveldb::DB* db, const leveldb::Snapshot* snap) : db_(db), snap_(snap) {}
  ~Snapshot() override { db_->ReleaseSnapshot(snap_); }

  const leveldb::DB* db() const { return db_; }
  const leveldb::Snapshot* get() const { return snap_; }

 private:
  leveldb::DB* const db_;
  const leveldb::Snapshot* const snap_;
};

std::shared_ptr<const KVSnapshot> LevelDBStore::GetSnapshot() {
  return std::make_shared<Snapshot>(db_.get(), db_->GetSnapshot());
}

//////// Iterator:

// leveldb::Iterator already pins one consistent state; this class clamps it
// to [lower_, upper_) and adds SeekForPrev.
class LevelDBStore::Iter final : public KVIterator {
 public:
  Iter(leveldb::Iterator* it, const KVIteratorOptions& o, std::atomic<int>* slow_steps)
      : it_(it), lower_(o.lower_bound), upper_(o.upper_bound), reseek_(slow_steps) {}

  bool Valid() const override { return valid_; }

  void SeekToFirst() override {
    reseek_.Reset();  // a window times steps only
    if (lower_.empty()) {
      it_->SeekToFirst();
    } else {
      it_->Seek(lower_);
    }
    CheckForward();
  }

  void SeekToLast() override {
    reseek_.Reset();  // a window times steps only
    if (upper_.empty()) {
      it_->SeekToLast();
    } else {
      // Last key < upper_: step back from the first key >= upper_.
      it_->Seek(upper_);
      if (it_->Valid()) {
        it_->Prev();
      } else if (it_->status().ok()) {
        it_->SeekToLast();
      }
    }
    CheckBackward();
  }

  void Seek(std::string_view target) override {
    reseek_.Reset();  // a window times steps only
    it_->Seek(ToSlice(target < lower_ ? std::string_view(lower_) : target));
    CheckForward();
  }

  void SeekForPrev(std::string_view target) override {
    reseek_.Reset();  // a window times steps only
    if (!upper_.empty() && target >= upper_) {
      SeekToLast();
      return;
    }
    it_->Seek(ToSlice(target));
    if (!it_->Valid()) {
      if (it_->status().ok()) it_->SeekToLast();
    } else if (ToView(it_->key()) != target) {
      it_->Prev();
    }
    CheckBackward();
  }

  void Next() override {
    if (!valid_) return;  // REQUIRES: Valid(); tolerated as a no-op
    reseek_.BeforeMove();
    if (reseek_.Seeking()) {
      // The smallest key after this one: past all its older versions at once.
      successor_.assign(it_->key().data(), it_->key().size());
      successor_.push_back('\0');
      it_->Seek(ToSlice(successor_));
    } else {
      it_->Next();
    }
    CheckForward();
    reseek_.AfterMove(valid_ ? it_->key().size() + it_->value().size() : 0);
  }

  void Prev() override {
    if (!valid_) return;
    reseek_.Reset();
    it_->Prev();
    CheckBackward();
  }

  std::string_view key() const override { return ToView(it_->key()); }
  std::string_view value() const override { return ToView(it_->value()); }
  Status status() const override { return FromLevelDBStatus(it_->status()); }

 private:
  // After a forward move only the upper bound can be crossed, and vice versa.
  void CheckForward() {
    valid_ = it_->Valid() && (upper_.empty() || ToView(it_->key()) < upper_);
  }
  void CheckBackward() { valid_ = it_->Valid() && ToView(it_->key()) >= lower_; }

  const std::unique_ptr<leveldb::Iterator> it_;
  const std::string lower_;
  const std::string upper_;
  ReseekPolicy reseek_;
  std::string successor_;  // Next()'s seek target, kept to reuse its buffer
  bool valid_ = false;
};

//////// Store:

LevelDBStore::LevelDBStore(leveldb::DB* db, std::shared_ptr<leveldb::Cache> cache,
                           std::unique_ptr<const leveldb::FilterPolicy> filter)
    : cache_(std::move(cache)), filter_(std::move(filter)), db_(db) {}

LevelDBStore::~LevelDBStore() = default;

Status LevelDBStore::Get(const KVReadOptions& options, std::string_view key, std::string* value) {
  leveldb::ReadOptions ro;
  if (options.snapshot != nullptr) {
    auto* snap = dynamic_cast<const Snapshot*>(options.snapshot);
    if (snap == nullptr || snap->db() != db_.get()) return ForeignSnapshot();
    ro.snapshot = snap->get();
  }
  return FromLevelDBStatus(db_->Get(ro, ToSlice(key), value));
}

struct LevelDBStore::Writer {
  explicit Writer(leveldb::WriteBatch* batch, bool sync) : batch(batch), sync(sync) {}

  leveldb::WriteBatch* const batch;  // encoded, not empty
  const bool sync;
  // Handoff from the leader: it writes `status`, then sets `state` (release)
  // to kDone (written by the leader) or kLeader (now at the front).
  enum State : int { kWaiting, kDone, kLeader };
  std::atomic<int> state{kWaiting};
  Status status;
  bool sleeping = false;       // GUARDED_BY(queue_mu_); see DatabaseImpl::Writer
  std::condition_variable cv;  // waits use queue_mu_
};

// A batch Prepare() encoded, for Commit()/CommitAll() of the same store.
class LevelDBStore::Prepared final : public KVPreparedWrite {
 public:
  explicit Prepared(const LevelDBStore* store) : store(store) {}

  const LevelDBStore* const store;
  leveldb::WriteBatch batch;
  bool empty = true;
};

namespace {

// A leader stops adding batches past this many bytes, as LevelDB's
// BuildBatchGroup does, so one small write does not wait behind a huge one.
constexpr size_t kMaxGroupBytes = 1u << 20;

void AppendTo(const KVWriteBatch& batch, leveldb::WriteBatch* wb) {
  for (const KVWriteBatch::Op& op : batch.ops()) {
    if (op.is_delete) {
      wb->Delete(op.key);
    } else {
      wb->Put(op.key, op.value);
    }
  }
}

Status NotPreparedHere() {
  return Status(Status::Code::kInvalidOperation, "write not prepared by this store");
}

}  // namespace

Status LevelDBStore::Write(const KVWriteOptions& options, const KVWriteBatch& batch) {
  if (batch.empty()) return Status::OK();
  leveldb::WriteBatch wb;
  AppendTo(batch, &wb);
  return WriteEncoded(options.sync, &wb);
}

std::unique_ptr<KVPreparedWrite> LevelDBStore::Prepare(KVWriteBatch&& batch) {
  auto prepared = std::make_unique<Prepared>(this);
  AppendTo(batch, &prepared->batch);
  prepared->empty = batch.empty();
  return prepared;
}

Status LevelDBStore::Commit(const KVWriteOptions& options, std::unique_ptr<KVPreparedWrite> prepared) {
  auto* p = dynamic_cast<Prepared*>(prepared.get());
  if (p == nullptr || p->store != this) return NotPreparedHere();
  if (p->empty) return Status::OK();
  return WriteEncoded(options.sync, &p->batch);
}

Status LevelDBStore::CommitAll(const KVWriteOptions& options,
                               std::vector<std::unique_ptr<KVPreparedWrite>> prepared) {
  // All or nothing: check every write before appending any.
  Prepared* first = nullptr;
  for (auto& write : prepared) {
    auto* p = dynamic_cast<Prepared*>(write.get());
    if (p == nullptr || p->store != this) return NotPreparedHere();
    if (p->empty) continue;
    if (first == nullptr) first = p;
    else first->batch.Append(p->batch);  // a copy of encoded bytes, in order
  }
  if (first == nullptr) return Status::OK();
  return WriteEncoded(options.sync, &first->batch);
}

Status LevelDBStore::WriteEncoded(bool sync_requested, leveldb::WriteBatch* batch) {
  Writer w(batch, sync_requested);
  LockSpinning(queue_mu_);
  std::unique_lock<std::mutex> queue_lock(queue_mu_, std::adopt_lock);
  writers_.push_back(&w);
  if (writers_.front() != &w) {
    queue_lock.unlock();
    // A sync write's group fsyncs (milliseconds): sleep at once.
    if (!w.sync) {
      SpinBackoff backoff;
      while (w.state.load(std::memory_order_acquire) == Writer::kWaiting &&
             !backoff.Exhausted()) {
        backoff.Pause();
      }
    }
    RelockSpinning(queue_lock);
    if (w.state.load(std::memory_order_acquire) == Writer::kWaiting) {
      w.sleeping = true;
      w.cv.wait(queue_lock,
                [&w] { return w.state.load(std::memory_order_acquire) != Writer::kWaiting; });
      w.sleeping = false;
    }
    if (w.state.load(std::memory_order_acquire) == Writer::kDone) return w.status;
  }

  // Leader: the group is a prefix of the queue, starting with this writer.
  // A sync batch makes the whole group sync (an fsync more than asked never
  // hurts a write). The followers' batches are appended to the leader's
  // own (encoded already: a copy of bytes each); a writer alone writes its
  // batch as it is.
  size_t group = 0;
  size_t bytes = 0;
  bool sync = false;
  for (Writer* x : writers_) {
    const size_t size = x->batch->ApproximateSize();
    if (group > 0 && bytes + size > kMaxGroupBytes) break;
    ++group;
    bytes += size;
    sync = sync || x->sync;
  }
  // The group's followers stay queued (and waiting) until the hand-off
  // below, so their batches stay valid; only this thread pops the queue.
  std::vector<Writer*> followers(writers_.begin() + 1,
                                 writers_.begin() + static_cast<std::ptrdiff_t>(group));
  queue_lock.unlock();

  for (Writer* x : followers) batch->Append(*x->batch);
  leveldb::WriteOptions wo;
  wo.sync = sync;
  const Status s = FromLevelDBStatus(db_->Write(wo, batch));

  RelockSpinning(queue_lock);
  auto hand_off = [](Writer* x, Writer::State state) {
    const bool sleeping = x->sleeping;  // x may be gone once its state is set
    x->state.store(state, std::memory_order_release);
    if (sleeping) x->cv.notify_one();
  };
  writers_.pop_front();  // this writer
  for (Writer* x : followers) {
    writers_.pop_front();
    x->status = s;
    hand_off(x, Writer::kDone);
  }
  if (!writers_.empty()) hand_off(writers_.front(), Writer::kLeader);
  return s;
}

std::unique_ptr<KVIterator> LevelDBStore::NewIterator(const KVIteratorOptions& options) {
  leveldb::ReadOptions ro;
  // A scan should not evict the hot working set from the block cache.
  ro.fill_cache = false;
  if (options.snapshot != nullptr) {
    auto* snap = dynamic_cast<const Snapshot*>(options.snapshot);
    if (snap == nullptr || snap->db() != db_.get()) return NewErrorIterator(ForeignSnapshot());
    // LevelDB fixes the sequence at creation; the snapshot may be released
    // before the iterator without harm.
    ro.snapshot = snap->get();
  }
  return std::make_unique<Iter>(db_->NewIterator(ro), options, &slow_steps_);
}

uint64_t LevelDBStore::ApproximateSize(std::string_view begin, std::string_view end) {
  std::string limit(end);
  if (limit.empty()) {
    // No key sorts after every other; use just past the last key.
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
    it->SeekToLast();
    if (!it->Valid()) return 0;
    limit = it->key().ToString();
    limit.push_back('\0');
  }
  if (ToView(limit) <= begin) return 0;
  leveldb::Range range(ToSlice(begin), limit);
  uint64_t size = 0;
  db_->GetApproximateSizes(&range, 1, &size);
  return size;
}

void LevelDBStore::CompactRange(std::string_view begin, std::string_view end) {
  leveldb::Slice b = ToSlice(begin), e = ToSlice(end);
  db_->CompactRange(begin.empty() ? nullptr : &b, end.empty() ? nullptr : &e);
}

std::shared_ptr<leveldb::Cache> NewLevelDBBlockCache(size_t bytes) {
  return std::shared_ptr<leveldb::Cache>(leveldb::NewLRUCache(bytes));
}

Status OpenLevelDBStore(const std::string& path, const LevelDBOptions& options,
                        std::unique_ptr<KVStore>* store) {
  // LevelDB's own default bound on open table files.
  constexpr int kDefaultMaxOpenFiles = 1000;
  return OpenLevelDBStore(path, options, NewLevelDBBlockCache(options.block_cache_bytes),
                          kDefaultMaxOpenFiles, store);
}

Status OpenLevelDBStore(const std::string& path, const LevelDBOptions& options,
                        std::shared_ptr<leveldb::Cache> cache, int max_open_files,
                        std::unique_ptr<KVStore>* store) {
  store->reset();
  if (!options.create_if_missing) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec)) {
      return Status::NotFound("no LevelDB database at " + path);
    }
  }
  std::unique_ptr<const leveldb::FilterPolicy> filter(
      options.bloom_filter ? leveldb::NewBloomFilterPolicy(kBloomBitsPerKey) : nullptr);
  leveldb::Options lo;
  lo.create_if_missing = options.create_if_missing;
  lo.block_cache = cache.get();
  lo.write_buffer_size = options.write_buffer_bytes;
  lo.filter_policy = filter.get();
  lo.max_open_files = max_open_files;
  if (options.mmap_log) lo.env = MmapLogEnv();
  leveldb::DB* db = nullptr;
  leveldb::Status s = leveldb::DB::Open(lo, path, &db);
  if (!s.ok()) return FromLevelDBStatus(s);
  *store = std::make_unique<LevelDBStore>(db, std::move(cache), std::move(filter));
  return Status::OK();
}

}  // namespace settee
