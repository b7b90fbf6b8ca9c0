// DatabaseImpl: construction, properties, change notification, compaction.
#include "storage/database_impl.h"

#include "storage/store_impl.h"
#include "util/coding.h"
#include "util/json.h"

namespace settee {

namespace {

// Documents compacted per hold of the writer lock, so compaction of a large
// database does not stall writers for long.
constexpr size_t kCompactionChunk = 256;

}  // namespace

DatabaseImpl::DatabaseImpl(StoreImpl* owner, std::string name, uint64_t db_id,
                           std::unique_ptr<KVStore> own_kv)
    : owner_(owner),
      own_kv_(std::move(own_kv)),
      kv_(own_kv_ ? own_kv_.get() : owner->kv()),
      name_(std::move(name)),
      db_id_(db_id),
      keys_(db_id),
      direct_writes_(kv_->BackendName() == "memory" && !owner->options().sync),
      use_id_gaps_(kv_->BackendName() == "leveldb"),
      // A batch being built reads only records, stored revision bodies and
      // local documents (database_write.cc): the pipeline remembers those
      // keys of the batches in flight, not their counters or change blocks.
      pipeline_([kind_at = keys_.prefix().size()](std::string_view key) {
        if (key.size() <= kind_at) return true;
        const char kind = key[kind_at];
        return kind == keys::kDocKind || kind == keys::kRevBodyKind || kind == keys::kLocalKind;
      }),
      attachment_store_(kv_, &keys_) {}

void DatabaseImpl::InitializeNew(uint64_t db_id, uint32_t revs_limit, KVWriteBatch* batch) {
  keys::DatabaseKeys keys(db_id);
  std::string counters;
  for (int i = 0; i < 4; ++i) coding::PutVarint64(&counters, 0);
  batch->Put(keys.Counters(), counters);
  std::string limit;
  coding::PutVarint64(&limit, revs_limit);
  batch->Put(keys.Property(keys::kRevsLimitProperty), limit);
}

Result<std::shared_ptr<DatabaseImpl>> DatabaseImpl::Load(StoreImpl* owner, std::string name,
                                                         uint64_t db_id,
                                                         std::unique_ptr<KVStore> own_kv) {
  std::shared_ptr<DatabaseImpl> db(
      new DatabaseImpl(owner, std::move(name), db_id, std::move(own_kv)));
  Counters& c = db->counters_;
  Status s = db->ReadCounters(nullptr, &c);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("database counters missing") : s;
  db->committed_counters_ = c;
  db->update_seq_ = c.update_seq;
  db->doc_count_ = c.doc_count;
  db->doc_del_count_ = c.doc_del_count;
  db->external_size_ = c.external_size;

  uint64_t revs_limit = db->revs_limit_;
  s = db->ReadVarintProperty(keys::kRevsLimitProperty, UINT32_MAX, &revs_limit);
  if (!s.ok()) return s;
  db->revs_limit_ = static_cast<uint32_t>(revs_limit);
  s = db->kv_->Get(KVReadOptions(), db->keys_.Property(keys::kSecurityProperty), &db->security_);
  if (s.IsNotFound()) db->security_ = "{}";
  else if (!s.ok()) return s;
  s = db->LoadPurgeState();
  if (!s.ok()) return s;
  return db;
}

Status DatabaseImpl::ReadCounters(const KVSnapshot* snapshot, Counters* out) const {
  std::string bytes;
  Status s = kv_->Get(KVReadOptions{snapshot}, keys_.Counters(), &bytes);
  if (!s.ok()) return s;
  std::string_view in(bytes);
  if (!coding::GetVarint64(&in, &out->update_seq) || !coding::GetVarint64(&in, &out->doc_count) ||
      !coding::GetVarint64(&in, &out->doc_del_count) ||
      !coding::GetVarint64(&in, &out->external_size)) {
    return Status::Corruption("bad database counters");
  }
  // A write never supersedes the newest block (a later change of one of its
  // documents writes a newer block) and compaction never rewrites it, so
  // past the 'i' key's update_seq it is the last batch's, whose counters it
  // carries. A purge can supersede it or leave it without the counters, but
  // then writes the 'i' key at or past every block's seq, which wins below.
  KVIteratorOptions io;
  io.snapshot = snapshot;
  io.lower_bound = keys_.KindPrefix(keys::kSeqKind);
  io.upper_bound = keys::PrefixEnd(io.lower_bound);
  auto it = kv_->NewIterator(io);
  it->SeekToLast();
  if (!it->Valid()) return it->status();
  const uint64_t block_seq = coding::DecodeFixed64BE(keys_.Suffix(it->key()));
  if (block_seq <= out->update_seq) return Status::OK();  // a block of before counted blocks
  BlockCounters counted;
  bool found = false;
  s = ChangeBlockCountersOf(it->value(), &counted, &found);
  if (!s.ok()) return s;
  if (!found) return Status::Corruption("database counters behind its changes");
  out->update_seq = block_seq;
  out->doc_count = counted.doc_count;
  out->doc_del_count = counted.doc_del_count;
  out->external_size = counted.external_size;
  return Status::OK();
}

void DatabaseImpl::MarkDeleted() {
  auto lock = LockWriterDrained();
  deleted_.store(true, std::memory_order_release);
  NotifyListeners(UINT64_MAX);
}

//////// Change notification

void DatabaseImpl::NotifyListeners(uint64_t seq) {
  // Either a waiter's check sees the caller's new update_seq_ (or deleted_)
  // or this sees the waiter: each side stores, fences, then loads.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (watchers_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(listeners_mu_);
  for (auto& [id, listener] : listeners_) listener(seq);
  changed_cv_.notify_all();
}

uint64_t DatabaseImpl::AddChangeListener(ChangeListener listener) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  uint64_t id = next_listener_id_++;
  listeners_.emplace(id, std::move(listener));
  watchers_.fetch_add(1, std::memory_order_relaxed);  // published by the unlock
  return id;
}

void DatabaseImpl::RemoveChangeListener(uint64_t id) {
  std::lock_guard<std::mutex> lock(listeners_mu_);
  if (listeners_.erase(id) != 0) watchers_.fetch_sub(1, std::memory_order_relaxed);
}

uint64_t DatabaseImpl::WaitForChange(uint64_t since, std::chrono::milliseconds timeout) {
  watchers_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // pairs with NotifyListeners'
  {
    std::unique_lock<std::mutex> lock(listeners_mu_);
    changed_cv_.wait_for(lock, timeout, [&] {
      return UpdateSeq() > since || deleted_.load(std::memory_order_acquire);
    });
  }
  watchers_.fetch_sub(1, std::memory_order_relaxed);
  return UpdateSeq();
}

//////// Properties

Status DatabaseImpl::ReadVarintProperty(std::string_view name, uint64_t max, uint64_t* value) const {
  std::string bytes;
  Status s = kv_->Get(KVReadOptions(), keys_.Property(name), &bytes);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  std::string_view in(bytes);
  uint64_t v = 0;
  if (!coding::GetVarint64(&in, &v) || v == 0 || v > max) {
    return Status::Corruption("bad " + std::string(name));
  }
  *value = v;
  return Status::OK();
}

template <typename OnWritten>
Status DatabaseImpl::WriteVarintProperty(std::string_view name, uint64_t value, OnWritten on_written) {
  auto lock = LockWriterDrained();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  std::string bytes;
  coding::PutVarint64(&bytes, value);
  s = kv_->Put(owner_->write_options(), keys_.Property(name), bytes);
  if (s.ok()) on_written();
  return s;
}

Status DatabaseImpl::SetRevsLimit(uint32_t limit) {
  if (limit < 1) return Status::BadRequest("revs_limit must be a positive integer");
  return WriteVarintProperty(keys::kRevsLimitProperty, limit,
                             [&] { revs_limit_.store(limit, std::memory_order_relaxed); });
}

Status DatabaseImpl::SetPurgedInfosLimit(uint64_t limit) {
  if (limit < 1) return Status::BadRequest("`purged_infos_limit` must be positive integer");
  return WriteVarintProperty(keys::kPurgedInfosLimitProperty, limit,
                             [&] { purged_infos_limit_.store(limit, std::memory_order_relaxed); });
}

std::string DatabaseImpl::Security() const {
  std::lock_guard<std::mutex> lock(security_mu_);
  return security_;
}

Status DatabaseImpl::SetSecurity(std::string_view text) {
  json::Document doc;
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  if (!doc.IsObject()) return Status::BadRequest("Security object must be a JSON object");
  std::string compact = json::Serialize(doc);
  auto lock = LockWriterDrained();
  s = CheckAlive();
  if (!s.ok()) return s;
  s = kv_->Put(owner_->write_options(), keys_.Property(keys::kSecurityProperty), compact);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> sec_lock(security_mu_);
  security_ = std::move(compact);
  return Status::OK();
}

Result<DatabaseInfo> DatabaseImpl::Info() {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  DatabaseInfo info;
  info.db_name = name_;
  info.purge_seq = PurgeSeq();
  info.update_seq = UpdateSeq();
  info.doc_count = doc_count_.load(std::memory_order_relaxed);
  info.doc_del_count = doc_del_count_.load(std::memory_order_relaxed);
  info.sizes_external = external_size_.load(std::memory_order_relaxed);
  info.sizes_file = kv_->ApproximateSize(keys_.prefix(), keys::PrefixEnd(keys_.prefix()));
  info.sizes_active = std::max(info.sizes_file, info.sizes_external);
  if (kv_->BackendName() == "memory") info.sizes_file = info.sizes_active;
  return info;
}

//////// Compaction

Status DatabaseImpl::Compact() {
  const std::string begin = keys_.KindPrefix(keys::kDocKind);
  const std::string end = keys::PrefixEnd(begin);
  std::string resume = begin;
  for (;;) {
    // Collect a chunk of ids outside the lock, then rewrite them under it.
    std::vector<std::string> ids;
    {
      KVIteratorOptions io;
      io.lower_bound = resume;
      io.upper_bound = end;
      auto it = kv_->NewIterator(io);
      for (it->SeekToFirst(); it->Valid() && ids.size() < kCompactionChunk; it->Next()) {
        ids.emplace_back(keys_.Suffix(it->key()));
      }
      if (!it->status().ok()) return it->status();
    }
    if (ids.empty()) break;
    resume = keys_.Doc(ids.back());
    resume.push_back('\0');  // the next key after the last id

    auto lock = LockWriterDrained();
    Status s = CheckAlive();
    if (!s.ok()) return s;
    s = DropOldBodiesLocked(ids);
    if (!s.ok()) return s;
  }
  Status s = CompactChanges();
  if (!s.ok()) return s;
  s = TrimPurgeInfos();
  if (!s.ok()) return s;
  s = CollectAttachmentGarbage();
  if (!s.ok()) return s;
  kv_->CompactRange(keys_.prefix(), keys::PrefixEnd(keys_.prefix()));
  return Status::OK();
}

Status DatabaseImpl::CompactDocuments(const std::vector<std::string>& ids) {
  if (ids.empty()) return Status::OK();
  auto lock = LockWriterDrained();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  return DropOldBodiesLocked(ids);
}

Status DatabaseImpl::DropOldBodiesLocked(const std::vector<std::string>& ids) {
  KVWriteBatch batch;
  std::string bytes, encoded;
  for (const std::string& id : ids) {
    Status s = kv_->Get(KVReadOptions(), keys_.Doc(id), &bytes);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    DocRecord record;
    s = DecodeDocRecord(bytes, &record);
    if (!s.ok()) return s;
    bool changed = false;
    for (int i = 0; i < static_cast<int>(record.tree.size()); ++i) {
      if (record.tree.node(i).has_body && !record.tree.IsLeaf(i)) {
        record.tree.SetHasBody(i, false);
        batch.Delete(keys_.RevBody(id, record.tree.RevString(i)));
        changed = true;
      }
    }
    if (changed) {
      EncodeDocRecord(record, &encoded);
      batch.Put(keys_.Doc(id), encoded);
    }
  }
  if (batch.empty()) return Status::OK();
  return kv_->Write(owner_->write_options(), batch);
}

Status DatabaseImpl::CompactChanges() {
  const std::string marker_kind = keys_.KindPrefix(keys::kObsoleteKind);
  const std::string block_end = keys::PrefixEnd(keys_.KindPrefix(keys::kSeqKind));
  std::vector<ChangeEntry> entries;
  for (;;) {
    // Under the writer lock, so no writer marks or moves a change meanwhile.
    auto lock = LockWriterDrained();
    Status s = CheckAlive();
    if (!s.ok()) return s;
    std::vector<uint64_t> superseded;  // ascending
    {
      KVIteratorOptions io;
      io.lower_bound = marker_kind;
      io.upper_bound = keys::PrefixEnd(marker_kind);
      auto it = kv_->NewIterator(io);
      for (it->SeekToFirst(); it->Valid() && superseded.size() < kCompactionChunk; it->Next()) {
        superseded.push_back(coding::DecodeFixed64BE(keys_.Suffix(it->key())));
      }
      if (!it->status().ok()) return it->status();
    }
    if (superseded.empty()) return Status::OK();

    KVWriteBatch batch;
    for (uint64_t seq : superseded) batch.Delete(keys_.Obsolete(seq));
    size_t next = 0;
    while (next < superseded.size()) {
      // Blocks hold disjoint seq ranges and are keyed by their last seq: the
      // first key at or after a seq is the block holding it.
      KVIteratorOptions io;
      io.lower_bound = keys_.Seq(superseded[next]);
      io.upper_bound = block_end;
      auto it = kv_->NewIterator(io);
      it->SeekToFirst();
      if (!it->Valid()) {
        if (!it->status().ok()) return it->status();
        break;  // markers past every block: nothing left to rewrite
      }
      const std::string block_key(it->key());
      const uint64_t block_seq = coding::DecodeFixed64BE(keys_.Suffix(block_key));
      s = DecodeChangeBlock(block_seq, it->value(), &entries);
      if (!s.ok()) return s;
      ChangeBlockBuilder kept;
      for (const ChangeEntry& e : entries) {
        while (next < superseded.size() && superseded[next] < e.seq) ++next;  // stray marker
        if (next < superseded.size() && superseded[next] == e.seq) {
          ++next;
          continue;
        }
        kept.Add(e.seq, e.docid, e.deleted, e.rev);
      }
      while (next < superseded.size() && superseded[next] <= block_seq) ++next;
      // A block still ending at its batch's last seq keeps the counters it
      // carries (only the newest block's are read, and that one has no
      // superseded entries to drop; this keeps them right regardless).
      BlockCounters counted;
      bool has_counters = false;
      s = ChangeBlockCountersOf(it->value(), &counted, &has_counters);
      if (!s.ok()) return s;
      batch.Delete(block_key);
      if (kept.count() > 0) {
        const uint64_t last = kept.last_seq();
        const bool keep_counters = has_counters && last == block_seq;
        batch.PutOwned(keys_.Seq(last), kept.Finish(keep_counters ? &counted : nullptr));
      }
    }
    s = kv_->Write(owner_->write_options(), batch);
    if (!s.ok()) return s;
  }
}

}  // namespace settee
