// DatabaseImpl, writing: Put, Delete, BulkDocs and the revision-tree edits
// behind them. See the design notes in database_impl.h.
#include <algorithm>
#include <forward_list>
#include <span>
#include <unordered_map>

#include <boost/container/small_vector.hpp>

#include "storage/database_impl.h"
#include "storage/spin_wait.h"
#include "storage/store_impl.h"
#include "util/coding.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

// Inline room for a single-document write's few entries: a put then
// allocates none of its bookkeeping (a write made ~30 allocations, each
// touching the allocator's lines inside the writer's section).
template <typename T, size_t N = 4>
using SmallVec = boost::container::small_vector<T, N>;

}  // namespace

// The state of one write batch: the records it has loaded and edited, and an
// overlay of the other keys it has written, so that a later document of the
// same batch (the same id twice) sees the earlier one's effects. Every read
// of the store first waits for the batches in flight that write the key
// (`pipeline`).
class DatabaseImpl::WriteContext {
 public:
  WriteContext(KVStore* kv, WritePipeline* pipeline, const keys::DatabaseKeys& keys,
               Counters counters)
      : kv_(kv),
        pipeline_(pipeline),
        keys_(keys),
        start_seq_(counters.update_seq),
        counters(counters) {}

  // The record slot of `docid` (nullopt: the document does not exist).
  // `docid` must outlive the context (it is an incoming document's id).
  Status LoadRecord(std::string_view docid, std::optional<DocRecord>** slot) {
    auto it = records_.find(docid);
    if (it == records_.end()) {
      std::string bytes;
      const std::string key = keys_.Doc(docid);
      pipeline_->BeforeRead(key);
      Status s = kv_->Get(KVReadOptions(), key, &bytes);
      std::optional<DocRecord> record;
      if (s.ok()) {
        record.emplace();
        s = DecodeDocRecord(bytes, &*record);
        if (!s.ok()) return s;
      } else if (!s.IsNotFound()) {
        return s;
      }
      it = records_.emplace(docid, std::move(record)).first;
    }
    *slot = &it->second;
    return Status::OK();
  }
  // Loads the records of `ids` (sorted, unique, none loaded yet) in one
  // ordered pass instead of one Get each. Ids that ascend past the existing
  // ones (sequential and time-ordered ids, the common bulk insert) cost one
  // seek for the whole batch; ids scattered among existing keys make it
  // stop after a few seeks, as a seek costs more than a Get. Best effort:
  // whatever it does not load (on an error too), LoadRecord reads itself
  // and reports per document.
  void LoadRecords(const SmallVec<std::string_view>& ids) {
    if (ids.empty()) return;
    if (!pipeline_->Idle()) {
      for (std::string_view id : ids) pipeline_->BeforeRead(keys_.Doc(id));
    }
    records_.reserve(records_.size() + ids.size());
    const std::string doc_kind = keys_.KindPrefix(keys::kDocKind);
    KVIteratorOptions io;
    io.lower_bound = keys_.Doc(ids.front());
    io.upper_bound = keys::PrefixEnd(doc_kind);
    auto it = kv_->NewIterator(io);
    it->SeekToFirst();
    constexpr int kMaxSeeks = 4;
    int seeks = 0;
    for (std::string_view id : ids) {
      // Dense ids (a batch updating neighbouring docs) are a step apart.
      if (it->Valid() && keys_.Suffix(it->key()) < id) it->Next();
      if (it->Valid() && keys_.Suffix(it->key()) < id) {
        if (++seeks > kMaxSeeks) break;  // LoadRecord Gets the rest
        it->Seek(keys_.Doc(id));
      }
      if (!it->status().ok()) return;
      std::optional<DocRecord> record;
      if (it->Valid() && keys_.Suffix(it->key()) == id) {
        record.emplace();
        if (!DecodeDocRecord(it->value(), &*record).ok()) continue;
      }
      records_.emplace(id, std::move(record));
    }
  }
  // Loads the record of `id` (not loaded yet; it must outlive the context)
  // as LoadRecord would, with a seek instead of a Get, and sets *next to
  // the id of the following document record: no document id lies strictly
  // between the two. Returns false if there is none after it, or on an
  // error (LoadRecord then reads the record itself and reports it).
  // REQUIRES: the pipeline drained (a seek sees only what is written).
  bool SeekRecord(std::string_view id, std::string* next) {
    KVIteratorOptions io;
    io.lower_bound = keys_.Doc(id);
    io.upper_bound = keys::PrefixEnd(keys_.KindPrefix(keys::kDocKind));
    auto it = kv_->NewIterator(io);
    it->SeekToFirst();
    if (!it->status().ok()) return false;
    std::optional<DocRecord> record;
    if (it->Valid() && keys_.Suffix(it->key()) == id) {
      record.emplace();
      if (!DecodeDocRecord(it->value(), &*record).ok()) return false;
      it->Next();
      if (!it->status().ok()) return false;
    }
    records_.emplace(id, std::move(record));
    if (!it->Valid()) return false;
    next->assign(keys_.Suffix(it->key()));
    return true;
  }
  // A slot for a document known not to exist, outside the id map: the
  // caller hands it to every document of the batch with that id (a freshly
  // generated id has no other).
  std::optional<DocRecord>& FreshRecordSlot() {
    if (!fresh_first_used_) {
      fresh_first_used_ = true;
      return fresh_first_;
    }
    return fresh_more_.emplace_front();
  }
  // `slot` (from LoadRecord or FreshRecordSlot) is to be written back. `docid`
  // must outlive the context (it is the incoming document's id).
  void MarkDirty(std::string_view docid, std::optional<DocRecord>* slot) {
    dirty_.push_back({docid, slot});
  }
  // A document's change at `seq` is replaced by a newer one: take it out of
  // the by-sequence index. `shared` is the record's change_shared flag.
  void SupersedeChange(uint64_t seq, bool shared) {
    if (seq > start_seq_) return;  // this batch's own change: its block is not written yet
    if (shared) {
      rest_.push_back({false, keys_.Obsolete(seq), std::string()});
    } else {
      rest_.push_back({true, keys_.Seq(seq), std::string()});  // alone in its block
    }
  }

  Status Get(const std::string& key, std::string* value) {
    auto it = overlay_.find(key);
    if (it != overlay_.end()) {
      if (!it->second) return Status::NotFound();
      *value = *it->second;
      return Status::OK();
    }
    pipeline_->BeforeRead(key);
    return kv_->Get(KVReadOptions(), key, value);
  }
  void Put(std::string key, std::string value) { overlay_[std::move(key)] = std::move(value); }
  void Delete(std::string key) { overlay_[std::move(key)] = std::nullopt; }

  // Returns the batch of everything this context changed, in key order:
  // the document records by id, then the few other keys.
  // Sorted batches let the store place each key beside the previous one.
  // `gaps` (if not null) learns of every document the batch writes.
  KVWriteBatch& Finish(IdGaps* gaps = nullptr) {
    // A document edited twice in the batch is in dirty_ twice. Generated and
    // other ascending ids arrive sorted already.
    auto by_id = [](const Dirty& a, const Dirty& b) { return a.docid < b.docid; };
    if (!std::is_sorted(dirty_.begin(), dirty_.end(), by_id)) {
      std::sort(dirty_.begin(), dirty_.end(), by_id);
    }
    dirty_.erase(std::unique(dirty_.begin(), dirty_.end(),
                             [](const Dirty& a, const Dirty& b) { return a.slot == b.slot; }),
                 dirty_.end());
    batch_.Reserve(dirty_.size() + overlay_.size() + rest_.size() + 2);
    // The batch's change blocks: each document's latest change, in seq
    // order (a document written twice keeps only its later change).
    SmallVec<const Dirty*, 8> changed;
    changed.reserve(dirty_.size());
    for (const Dirty& d : dirty_) {
      if (*d.slot && (*d.slot)->seq > start_seq_) changed.push_back(&d);
    }
    if (!changed.empty()) {
      auto by_seq = [](const Dirty* a, const Dirty* b) { return (*a->slot)->seq < (*b->slot)->seq; };
      if (!std::is_sorted(changed.begin(), changed.end(), by_seq)) {
        std::sort(changed.begin(), changed.end(), by_seq);
      }
      // A big batch's changes go in blocks of at most kChangeBlockEntries:
      // a reader of a few seqs (a feed since a recent seq, an index update
      // reading a share at a time) reads only the blocks holding them, and
      // blocks stay small enough to be kept uncompressed in memory.
      for (size_t from = 0; from < changed.size(); from += kChangeBlockEntries) {
        const size_t to = std::min(changed.size(), from + kChangeBlockEntries);
        ChangeBlockBuilder block;
        for (size_t i = from; i < to; ++i) {
          DocRecord& record = **changed[i]->slot;
          record.change_shared = to - from > 1;
          block.Add(record.seq, changed[i]->docid, record.deleted, record.winner_rev);
        }
        const uint64_t last = block.last_seq();
        // The batch's last block (keyed by its update_seq: no seq is taken
        // without being given to a document) carries the counters, so no
        // key of its own is rewritten by every batch.
        const BlockCounters after{counters.doc_count, counters.doc_del_count,
                                  counters.external_size};
        rest_.push_back({false, keys_.Seq(last),
                         block.Finish(to == changed.size() ? &after : nullptr)});
      }
    }
    for (const Dirty& d : dirty_) {
      if (!*d.slot) continue;
      if (gaps != nullptr) gaps->Created(d.docid);
      std::string encoded;
      EncodeDocRecord(**d.slot, &encoded);
      batch_.PutOwned(keys_.Doc(d.docid), std::move(encoded));
      // The record is spent (the context ends with the batch): its body,
      // now copied into the encoded record, goes back at once, so a batch
      // of big documents holds each body once, not twice, and the next
      // record reuses the memory while it is warm.
      std::string().swap((*d.slot)->winner_body);
      std::string().swap((*d.slot)->winner_body_snappy);
    }
    // May name a slot left empty: too large an estimate only costs lookups.
    if (!dirty_.empty()) largest_written_ = dirty_.back().docid;
    dirty_.clear();
    for (auto& [key, value] : overlay_) {
      rest_.push_back({!value, key, value ? std::move(*value) : std::string()});
    }
    overlay_.clear();
    std::sort(rest_.begin(), rest_.end(),
              [](const KVWriteBatch::Op& a, const KVWriteBatch::Op& b) { return a.key < b.key; });
    for (KVWriteBatch::Op& op : rest_) {
      if (op.is_delete) batch_.Delete(op.key);
      else batch_.PutOwned(std::move(op.key), std::move(op.value));
    }
    rest_.clear();
    return batch_;
  }

  bool changed() const { return !overlay_.empty() || !dirty_.empty() || !rest_.empty(); }
  // After Finish(): the largest id among the documents it wrote ("" if none).
  std::string_view LargestWrittenDocId() const { return largest_written_; }

 private:
  struct Dirty {
    std::string_view docid;
    std::optional<DocRecord>* slot;
  };

  KVStore* const kv_;
  WritePipeline* const pipeline_;
  const keys::DatabaseKeys& keys_;
  const uint64_t start_seq_;  // this batch's changes have greater seqs
  // Node-based: slots stay put while the map grows.
  // Keyed by views of the incoming documents' ids, which outlive the context.
  std::unordered_map<std::string_view, std::optional<DocRecord>> records_;
  // Slots stay put: the first inline (a put's one new document), the rest
  // in a list (a std::deque would allocate even when unused).
  std::optional<DocRecord> fresh_first_;
  bool fresh_first_used_ = false;
  std::forward_list<std::optional<DocRecord>> fresh_more_;
  SmallVec<Dirty> dirty_;
  std::unordered_map<std::string, std::optional<std::string>> overlay_;
  // Other ops for the batch (superseded changes, the change block), put in
  // key order with the overlay by Finish().
  SmallVec<KVWriteBatch::Op> rest_;
  KVWriteBatch batch_;
  std::string_view largest_written_;  // views a dirty document's id

 public:
  Counters counters;  // as they will be after this batch
  bool design_changed = false;  // a design document was written
};

struct DatabaseImpl::Writer {
  Writer(std::vector<IncomingDoc>* docs, const std::vector<bool>* valid, bool new_edits,
         std::vector<DocUpdateResult>* results)
      : docs(docs), valid(valid), new_edits(new_edits), results(results) {}

  std::vector<IncomingDoc>* docs;
  const std::vector<bool>* valid;  // which docs parsed and are to be applied
  bool new_edits;
  std::vector<DocUpdateResult>* results;
  // Per document, its record slot when PrefetchRecords found it to be new
  // (nullptr: ApplyDoc looks the record up).
  SmallVec<std::optional<DocRecord>*> slots;

  // Handoff from the leader: it writes `status`, then sets `state` (release)
  // to kDone (committed by the leader) or kLeader (now at the front).
  enum State : int { kWaiting, kDone, kLeader };
  std::atomic<int> state{kWaiting};
  Status status;
  // Set under queue_mu_ by a writer about to sleep on `cv`; the leader wakes
  // it only then (a spinning writer needs no wake-up call).
  bool sleeping = false;       // GUARDED_BY(queue_mu_)
  std::condition_variable cv;  // waits use queue_mu_
};

namespace {

// A leader stops adding writers to its group past this many documents, so one
// commit (and the memory of one WriteContext) stays bounded.
constexpr size_t kMaxGroupDocs = 4096;

constexpr const char* kNeedsRevReason =
    "When `new_edits: false`, the document needs `_rev` or `_revisions` specified";

// "0-N" -> N. Local documents have no history, only a counter.
bool ParseLocalRev(std::string_view rev, uint64_t* n) {
  if (rev.size() < 3 || rev.substr(0, 2) != "0-" || rev.size() > 22) return false;
  uint64_t v = 0;
  for (char c : rev.substr(2)) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  *n = v;
  return true;
}

}  // namespace

Status DatabaseImpl::CheckAlive() const {
  if (deleted_.load(std::memory_order_acquire)) return Status::NotFound("Database does not exist.");
  return Status::OK();
}

void DatabaseImpl::ApplyDoc(IncomingDoc& doc, bool new_edits, WriteContext& ctx,
                            DocUpdateResult* result, std::optional<DocRecord>* slot) {
  // Only a new document's first revision takes a body held compressed as
  // it is (CreateDoc); every other write reads the JSON.
  Status s = IsLocalDocId(doc.id) || !new_edits ? ExpandBody(&doc) : Status::OK();
  if (s.ok()) {
    if (IsLocalDocId(doc.id)) s = ApplyLocal(doc, ctx, result);
    else if (new_edits) s = ApplyNewEdit(doc, ctx, result, slot);
    else s = ApplyReplicated(doc, ctx, result, slot);
  }
  // result->id is set once the batch is committed (WriteGrouped).
  if (!s.ok()) {
    result->rev.clear();
    result->status = std::move(s);
  } else if (IsDesignDoc(doc.id)) {
    ctx.design_changed = true;
  }
}

Status DatabaseImpl::ApplyNewEdit(IncomingDoc& doc, WriteContext& ctx, DocUpdateResult* result,
                                  std::optional<DocRecord>* slot) {
  if (doc.id.empty()) {
    // A freshly generated id (104 random bits + a per-thread counter) cannot
    // name an existing document, so the existence lookup is skipped.
    doc.id = SequentialUuidHex();
    slot = &ctx.FreshRecordSlot();
  } else if (slot == nullptr) {
    Status s = ctx.LoadRecord(doc.id, &slot);
    if (!s.ok()) return s;
  }

  if (!*slot) {
    if (doc.rev) return Status::Conflict();
    Status s = FinishAttachments(doc, nullptr, 1, true);
    if (!s.ok()) return s;
    CreateDoc(doc, *slot, ctx, result);
    return Status::OK();
  }
  int parent = RevTree::kNone;
  {
    DocRecord& record = **slot;
    if (doc.rev) {
      parent = record.tree.Find(*doc.rev);
      if (parent == RevTree::kNone || !record.tree.IsLeaf(parent)) return Status::Conflict();
    } else if (!record.deleted) {
      return Status::Conflict();
    } else {
      // Recreating a deleted document extends the deleted winner's branch,
      // as CouchDB does, instead of starting a second 1- root.
      parent = record.tree.Winner();
    }
  }
  {
    // An edit reads its own body, and the winner's, which a document this
    // batch created holds compressed.
    Status s = ExpandBody(&doc);
    if (s.ok()) s = ExpandWinnerBody(&**slot);
    if (!s.ok()) return s;
  }
  DocRecord& record = **slot;
  std::string parent_rev = parent == RevTree::kNone ? "" : record.tree.RevString(parent);
  if (doc.attachments) {
    std::string parent_body;
    if (parent != RevTree::kNone) {
      if (parent == record.tree.Winner()) parent_body = record.winner_body;
      else ctx.Get(keys_.RevBody(doc.id, parent_rev), &parent_body).ok();  // none: no stubs
    }
    Status s = FinishAttachments(doc, parent == RevTree::kNone ? nullptr : &parent_body,
                                 parent == RevTree::kNone ? 1 : record.tree.node(parent).gen + 1,
                                 true);
    if (!s.ok()) return s;
  }
  RevId rev;
  rev.gen = parent == RevTree::kNone ? 1 : record.tree.node(parent).gen + 1;
  rev.hash = ComputeRevHash(parent_rev, doc.deleted, doc.body);
  uint64_t seq = ++ctx.counters.update_seq;
  result->rev = rev.ToString();
  int index = record.tree.AddRevision(parent, std::move(rev), doc.deleted, true, seq);
  CommitDocChange(doc.id, *slot, record, index, std::move(doc.body), seq, ctx);
  return Status::OK();
}

void DatabaseImpl::CreateDoc(IncomingDoc& doc, std::optional<DocRecord>& slot, WriteContext& ctx,
                             DocUpdateResult* result) {
  DocRecord& record = slot.emplace();
  const uint64_t seq = ++ctx.counters.update_seq;
  const size_t body_size = BodySize(doc);
  RevId rev{1, doc.snappy_body.empty() ? ComputeRevHash("", doc.deleted, doc.body) : std::move(doc.first_rev_hash)};
  result->rev = rev.ToString();
  record.winner_rev = result->rev;
  record.tree.AddRevision(RevTree::kNone, std::move(rev), doc.deleted, true, seq);
  record.seq = seq;
  record.deleted = doc.deleted;
  record.winner_body = std::move(doc.body);
  record.winner_body_snappy = std::move(doc.snappy_body);
  ctx.MarkDirty(doc.id, &slot);
  Counters& c = ctx.counters;
  if (record.deleted) ++c.doc_del_count;
  else ++c.doc_count;
  c.external_size += body_size;
}

Status DatabaseImpl::ApplyReplicated(IncomingDoc& doc, WriteContext& ctx,
                                     DocUpdateResult* result, std::optional<DocRecord>* slot) {
  if (doc.id.empty()) return {Status::Code::kIllegalDocId, "Document id must not be empty"};
  Revisions path;
  if (doc.revisions) {
    path = *doc.revisions;
  } else if (doc.rev) {
    path.start = doc.rev->gen;
    path.ids.push_back(doc.rev->hash);
  } else {
    return Status::BadRequest(kNeedsRevReason);
  }
  RevId newest{path.start, path.ids[0]};
  result->rev = newest.ToString();

  if (slot == nullptr) {
    Status s = ctx.LoadRecord(doc.id, &slot);
    if (!s.ok()) return s;
  }
  if (*slot) {
    int existing = (*slot)->tree.Find(newest);
    if (existing != RevTree::kNone && (*slot)->tree.node(existing).has_body) {
      return Status::OK();  // already have it: replication is idempotent
    }
    Status s = ExpandWinnerBody(&**slot);  // created by this batch, body held compressed
    if (!s.ok()) return s;
  }
  if (doc.attachments) {
    // Stubs refer to the nearest ancestor this database has a body of.
    std::string parent_body;
    bool have_parent = false;
    for (size_t k = 1; *slot && k < path.ids.size() && !have_parent; ++k) {
      const int i = (*slot)->tree.Find(RevId{path.start - k, path.ids[k]});
      if (i == RevTree::kNone || !(*slot)->tree.node(i).has_body) continue;
      if (i == (*slot)->tree.Winner()) {
        parent_body = (*slot)->winner_body;
        have_parent = true;
      } else {
        have_parent = ctx.Get(keys_.RevBody(doc.id, (*slot)->tree.RevString(i)), &parent_body).ok();
      }
    }
    Status s = FinishAttachments(doc, have_parent ? &parent_body : nullptr, path.start, false);
    if (!s.ok()) return s;
  }
  std::optional<DocRecord> fresh;
  DocRecord& record = *slot ? **slot : fresh.emplace();
  const uint64_t seq = ctx.counters.update_seq + 1;
  RevTree::MergeResult merged = record.tree.MergePath(path.start, path.ids, doc.deleted, true, seq);
  if (merged.index == RevTree::kNone) return Status::BadRequest("Invalid _revisions");
  if (!merged.changed) return Status::OK();
  if (merged.kind == RevTree::MergeKind::kInternalNode) {
    // No new revision: a known ancestor got its body, or stemmed history was
    // reconnected. The sequence does not move.
    if (merged.took_body) {
      if (merged.index == record.tree.Winner()) record.winner_body = std::move(doc.body);
      else ctx.Put(keys_.RevBody(doc.id, newest.ToString()), std::move(doc.body));
    }
    if (fresh) *slot = std::move(fresh);
    ctx.MarkDirty(doc.id, slot);
    return Status::OK();
  }
  ctx.counters.update_seq = seq;
  CommitDocChange(doc.id, *slot, record, merged.index, std::move(doc.body), seq, ctx);
  if (fresh) *slot = std::move(fresh);
  return Status::OK();
}

void DatabaseImpl::CommitDocChange(const std::string& docid, std::optional<DocRecord>& slot,
                                   DocRecord& record, int new_index, std::string body,
                                   uint64_t seq, WriteContext& ctx) {
  const bool existed = slot.has_value();
  const bool was_deleted = record.deleted;
  const std::string old_winner_rev = std::move(record.winner_rev);
  const uint64_t old_seq = record.seq;
  const bool old_change_shared = record.change_shared;
  const size_t old_body_size = record.winner_body.size();

  const int winner = record.tree.Winner();
  const bool winner_deleted = record.tree.node(winner).deleted;
  std::string winner_rev = record.tree.RevString(winner);
  if (winner == new_index) {
    // The new revision wins: the previous winner's body moves aside.
    RevId old_rev;
    if (existed && RevId::Parse(old_winner_rev, &old_rev)) {
      int old = record.tree.Find(old_rev);
      if (old != RevTree::kNone && record.tree.node(old).has_body) {
        ctx.Put(keys_.RevBody(docid, old_winner_rev), std::move(record.winner_body));
      }
    }
    record.winner_body = std::move(body);
  } else if (winner_rev != old_winner_rev) {
    // Another existing leaf became the winner (possible when the new revision
    // is a deletion): bring its body in, park the old winner's.
    const std::string new_rev = record.tree.RevString(new_index);
    std::string winner_body;
    std::string key = keys_.RevBody(docid, winner_rev);
    if (ctx.Get(key, &winner_body).ok()) ctx.Delete(key);
    ctx.Put(keys_.RevBody(docid, old_winner_rev), std::move(record.winner_body));
    record.winner_body = std::move(winner_body);
    ctx.Put(keys_.RevBody(docid, new_rev), std::move(body));
  } else {
    // A losing branch grew (conflict or replicated history).
    ctx.Put(keys_.RevBody(docid, record.tree.RevString(new_index)), std::move(body));
  }

  for (const RevId& stemmed : record.tree.Stem(RevsLimit())) {
    ctx.Delete(keys_.RevBody(docid, stemmed.ToString()));
  }

  // Stemming never removes a leaf, so the winner is unchanged by it.
  record.seq = seq;
  record.winner_rev = std::move(winner_rev);
  record.deleted = winner_deleted;
  // The new change goes into the batch's change block (WriteContext::Finish).
  if (existed) ctx.SupersedeChange(old_seq, old_change_shared);
  ctx.MarkDirty(docid, &slot);

  Counters& c = ctx.counters;
  if (existed) {
    if (was_deleted) --c.doc_del_count;
    else --c.doc_count;
    c.external_size -= std::min<uint64_t>(c.external_size, old_body_size);
  }
  if (record.deleted) ++c.doc_del_count;
  else ++c.doc_count;
  c.external_size += record.winner_body.size();
}

void DatabaseImpl::MarkLocalRevChecks(std::vector<IncomingDoc>& docs, const UpdateOptions& options) {
  if (!options.check_local_revs || !options.new_edits) return;
  for (IncomingDoc& doc : docs) doc.check_local_rev = IsLocalDocId(doc.id);
}

Status DatabaseImpl::ApplyLocal(IncomingDoc& doc, WriteContext& ctx, DocUpdateResult* result) {
  // CouchDB 3 semantics: no MVCC on _local docs; the new rev is the given
  // rev's number plus one ("0-1" without one).
  uint64_t n = 0;
  if (!doc.rev_text.empty() && !ParseLocalRev(doc.rev_text, &n)) {
    return Status::BadRequest("Invalid rev format");
  }
  std::string key = keys_.Local(std::string_view(doc.id).substr(kLocalPrefix.size()));
  if (doc.check_local_rev) {
    // PouchDB's rule (UpdateOptions::check_local_revs), read here under the
    // writer lock: the rev given (or the one _revisions names) must be the
    // stored one. A rev not of the _local form is left to the rules above.
    std::string given = doc.rev_text;
    if (given.empty() && doc.revisions && !doc.revisions->ids.empty()) {
      given = std::to_string(doc.revisions->start) + "-" + doc.revisions->ids[0];
    }
    uint64_t given_n = 0;
    if (given.empty() || ParseLocalRev(given, &given_n)) {
      std::string existing;
      Status s = ctx.Get(key, &existing);
      if (!s.ok() && !s.IsNotFound()) return s;
      std::string_view in(existing);
      uint64_t current = 0;
      if (s.ok() && !coding::GetVarint64(&in, &current)) return Status::Corruption("bad _local document");
      if (s.ok() ? given.empty() || given_n != current : !given.empty()) return Status::Conflict();
    }
  }
  if (doc.deleted) {
    std::string existing;
    Status s = ctx.Get(key, &existing);
    if (s.IsNotFound()) return Status::NotFound("missing");  // not the store's reason
    if (!s.ok()) return s;
    ctx.Delete(key);
    result->rev = "0-0";
    return Status::OK();
  }
  std::string value;
  coding::PutVarint64(&value, n + 1);
  value += doc.body;
  ctx.Put(std::move(key), std::move(value));
  result->rev = "0-" + std::to_string(n + 1);
  return Status::OK();
}

Status DatabaseImpl::BeginBatch() {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  // A failed write left counters_ counting it and the batches built on it
  // (they fail too): start again from what was written.
  if (pipeline_.TakeFailure()) counters_ = committed_counters_;
  return Status::OK();
}

void DatabaseImpl::Stage(WriteContext& ctx, StagedCommit* staged) {
  if (!ctx.changed()) return;
  staged->batch = std::move(ctx.Finish(use_id_gaps_ ? &id_gaps_ : nullptr));
  staged->ticket = pipeline_.Enqueue(staged->batch);
  staged->empty = false;
  staged->counters = ctx.counters;
  staged->seq_changed = ctx.counters.update_seq != counters_.update_seq;
  staged->design_changed = ctx.design_changed;
  // The next batch is built on this one's state, written or not (the
  // pipeline makes its reads wait for the keys this one writes).
  counters_ = ctx.counters;
  NoteWrittenDocIds(ctx);
}

namespace {

Status NotWritten() { return Status::IOError("not written: an earlier write of this database failed"); }

}  // namespace

Status DatabaseImpl::WriteStaged(StagedCommit& staged) {
  if (staged.empty) return Status::OK();
  if (direct_writes_) {
    // Memory: the store's allocations and copies come before the turn,
    // beside the previous batch's write, so the turn holds only the map's
    // pointer surgery; no batches are written together (the memory store's
    // write has no fixed cost a group could share).
    std::unique_ptr<KVPreparedWrite> prepared = kv_->Prepare(std::move(staged.batch));
    const bool healthy = pipeline_.WaitTurn(staged.ticket, false);
    Status s = healthy ? kv_->Commit(owner_->write_options(), std::move(prepared)) : NotWritten();
    StagedCommit* self = &staged;
    return FinishWritten(&self, 1, s);
  }
  const bool sync = owner_->options().sync;
  if ((staged.ticket == 0 || pipeline_.Finished(staged.ticket - 1)) &&
      ready_count_.load(std::memory_order_acquire) == 0) {
    // Its turn at once and no batch ready after it (a writer alone): written
    // as it is, with none of the hand-over below. A batch that gets ready
    // meanwhile waits for its own turn.
    const bool healthy = pipeline_.WaitTurn(staged.ticket, sync);  // returns at once
    Status s = healthy ? kv_->WriteOwned(owner_->write_options(), std::move(staged.batch))
                       : NotWritten();
    StagedCommit* self = &staged;
    return FinishWritten(&self, 1, s);
  }
  // What the store can do before this batch's turn (copying values,
  // allocating) it does now, beside the previous batch's write: the turn
  // holds only the store's serialized step.
  std::unique_ptr<KVPreparedWrite> prepared = kv_->Prepare(std::move(staged.batch));
  {
    LockSpinning(ready_mu_);
    std::lock_guard<std::mutex> lock(ready_mu_, std::adopt_lock);
    auto at = std::upper_bound(ready_.begin(), ready_.end(), staged.ticket,
                               [](uint64_t t, const ReadyWrite& r) { return t < r.ticket; });
    ready_.insert(at, ReadyWrite{staged.ticket, std::move(prepared), &staged});
    ready_count_.fetch_add(1, std::memory_order_release);
  }
  // With sync the previous batch fsyncs (milliseconds): sleep, do not spin.
  const bool healthy = pipeline_.WaitTurn(staged.ticket, sync);
  // Written meanwhile by the writer of an earlier batch, with its own.
  if (pipeline_.Finished(staged.ticket)) return staged.status;
  // This batch's turn: take it, and the ready batches of the turns after it
  // (a broken pipeline fails this one alone; the later ones see it broken).
  std::vector<ReadyWrite> group;
  {
    LockSpinning(ready_mu_);
    std::lock_guard<std::mutex> lock(ready_mu_, std::adopt_lock);
    size_t n = 0;
    while (n < ready_.size() && ready_[n].ticket == staged.ticket + n && (healthy || n == 0)) ++n;
    group.assign(std::make_move_iterator(ready_.begin()),
                 std::make_move_iterator(ready_.begin() + static_cast<std::ptrdiff_t>(n)));
    ready_.erase(ready_.begin(), ready_.begin() + static_cast<std::ptrdiff_t>(n));
    ready_count_.fetch_sub(static_cast<int>(n), std::memory_order_relaxed);
  }
  Status s;
  if (healthy) {
    std::vector<std::unique_ptr<KVPreparedWrite>> writes;
    writes.reserve(group.size());
    for (ReadyWrite& r : group) writes.push_back(std::move(r.prepared));
    s = kv_->CommitAll(owner_->write_options(), std::move(writes));
  } else {
    s = NotWritten();
  }
  std::vector<StagedCommit*> written;
  written.reserve(group.size());
  for (ReadyWrite& r : group) written.push_back(r.staged);
  return FinishWritten(written.data(), written.size(), s);
}

Status DatabaseImpl::FinishWritten(StagedCommit* const* written, size_t n, const Status& s) {
  const uint64_t last = written[n - 1]->ticket;
  if (!s.ok()) {
    for (size_t i = 0; i < n; ++i) written[i]->status = s;
    pipeline_.Finish(last, false);
    return s;
  }
  // In ticket order (the next batch's turn starts at Finish): counters and
  // notifications never go backwards.
  const StagedCommit& newest = *written[n - 1];
  committed_counters_ = newest.counters;
  bool design_changed = false, seq_changed = false;
  for (size_t i = 0; i < n; ++i) {
    design_changed = design_changed || written[i]->design_changed;
    seq_changed = seq_changed || written[i]->seq_changed;
    written[i]->status = Status::OK();
  }
  PublishCommitted(newest.counters, design_changed, seq_changed);
  // The other writers of the batches may return (and destroy them) from
  // here on.
  pipeline_.Finish(last, true);
  return Status::OK();
}

bool DatabaseImpl::LockWriterDirect() {
  const bool free = write_mu_.try_lock();
  if (!free) LockSpinning(write_mu_);
  const bool alone = free && contended_writes_ == 0;
  if (!free) contended_writes_ = kContendedWrites;
  else if (contended_writes_ > 0) --contended_writes_;
  return alone;
}

std::unique_lock<std::mutex> DatabaseImpl::LockWriterDrained() {
  std::unique_lock<std::mutex> lock(write_mu_);
  pipeline_.Drain();
  return lock;
}

Status DatabaseImpl::BulkDocs(const std::vector<std::string_view>& docs,
                              const UpdateOptions& options,
                              std::vector<DocUpdateResult>* results) {
  // Parse outside the lock: it is the bulk of the CPU work.
  std::vector<IncomingDoc> parsed(docs.size());
  std::vector<Status> statuses(docs.size());
  const size_t max_size = owner_->options().max_document_size;
  for (size_t i = 0; i < docs.size(); ++i) {
    statuses[i] = ParseIncomingDoc(docs[i], {}, max_size, &parsed[i]);
  }
  return WriteParsed(parsed, statuses, options, results);
}

Status DatabaseImpl::BulkDocsArray(std::string_view docs, const UpdateOptions& options,
                                   std::vector<DocUpdateResult>* results) {
  std::vector<IncomingDoc> parsed;
  std::vector<Status> statuses;
  Status s = ParseIncomingDocArray(docs, owner_->options().max_document_size, &parsed, &statuses);
  if (!s.ok()) return s;
  return WriteParsed(parsed, statuses, options, results);
}

BulkDocsBody::BulkDocsBody() = default;
BulkDocsBody::BulkDocsBody(std::unique_ptr<Parsed> parsed) : parsed_(std::move(parsed)) {}
BulkDocsBody::~BulkDocsBody() = default;
BulkDocsBody::BulkDocsBody(BulkDocsBody&&) noexcept = default;
BulkDocsBody& BulkDocsBody::operator=(BulkDocsBody&&) noexcept = default;
std::optional<bool> BulkDocsBody::new_edits() const {
  return parsed_ ? parsed_->info.new_edits : std::nullopt;
}
bool BulkDocsBody::has_design_docs() const { return parsed_ && parsed_->info.has_design_docs; }

Result<BulkDocsBody> DatabaseImpl::ParseBulkDocsBody(std::string_view body) {
  auto parsed = std::make_unique<BulkDocsBody::Parsed>();
  Status s = settee::ParseBulkDocsBody(body, owner_->options().max_document_size, &parsed->info,
                                       &parsed->docs, &parsed->statuses);
  if (!s.ok()) return s;
  return BulkDocsBody(std::move(parsed));
}

Status DatabaseImpl::BulkDocs(BulkDocsBody body, const UpdateOptions& options,
                              std::vector<DocUpdateResult>* results) {
  BulkDocsBody::Parsed* parsed = body.parsed();
  if (parsed == nullptr) return Status(Status::Code::kInvalidOperation, "bulk docs body already used");
  // A body split outside the parsers (js/doc_split.h) was not measured yet.
  const size_t max_size = owner_->options().max_document_size;
  for (size_t i = 0; i < parsed->docs.size(); ++i) {
    if (parsed->statuses[i].ok() && BodySize(parsed->docs[i]) > max_size) {
      parsed->statuses[i] = Status(Status::Code::kDocumentTooLarge, "Document exceeds max_document_size");
    }
  }
  return WriteParsed(parsed->docs, parsed->statuses, options, results, &parsed->refusals);
}

Status DatabaseImpl::WriteParsed(std::vector<IncomingDoc>& parsed, std::vector<Status>& statuses,
                                 const UpdateOptions& options,
                                 std::vector<DocUpdateResult>* results,
                                 std::vector<DocRefusal>* refusals) {
  results->clear();
  // CouchDB (chttpd_db's _bulk_docs) and PouchDB (bulkDocs' parseDoc) both
  // parse and check every document before writing any: the first document
  // that fails refuses the whole request, and nothing is written.
  const uint64_t max_attachment = owner_->options().max_attachment_size;
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (!statuses[i].ok()) return std::move(statuses[i]);
    // CouchDB's couch_doc:validate_attachment_sizes, after the body's size.
    Status sizes = CheckAttachmentSizes(parsed[i], max_attachment);
    if (!sizes.ok()) return sizes;
    if (!options.new_edits && parsed[i].rev_text.empty() && !parsed[i].revisions) {
      return Status::BadRequest(kNeedsRevReason);
    }
  }
  results->resize(parsed.size());
  std::vector<bool> valid(parsed.size(), true);
  if (refusals != nullptr) {
    for (DocRefusal& r : *refusals) {
      if (r.index >= parsed.size() || !valid[r.index]) continue;
      IncomingDoc& doc = parsed[r.index];
      DocUpdateResult& result = (*results)[r.index];
      valid[r.index] = false;
      // As a conflict of a document without an id: under the id it gets.
      if (doc.id.empty()) doc.id = SequentialUuidHex();
      result.id = doc.id;
      if (!options.new_edits) {
        // The replicated revision it names, as a refused one's result does.
        result.rev = doc.revisions ? std::to_string(doc.revisions->start) + "-" + doc.revisions->ids.front()
                                   : doc.rev_text;
      }
      result.status = std::move(r.status);
    }
  }
  Status s = ValidateWrite(parsed, valid, *results, options);
  if (!s.ok()) return s;
  // Attachment bodies are stored before the queue (a body that cannot be
  // stored refuses the request like a document that does not parse); the
  // pins keep compaction off them until the revisions naming them commit.
  AttachmentPins pins(this);
  for (size_t i = 0; i < parsed.size(); ++i) {
    if (!valid[i] || !parsed[i].attachments) continue;
    s = StageAttachments(parsed[i], options.new_edits, &pins);
    if (!s.ok()) return s;
  }
  MarkLocalRevChecks(parsed, options);
  Writer w(&parsed, &valid, options.new_edits, results);
  return WriteGrouped(&w);
}

Status DatabaseImpl::WriteDirect(Writer* w) {
  Writer* const group[] = {w};
  Status s;
  {
    // A writer alone (the lock free, nothing in flight, no contention
    // lately) writes its batch to the store inside the section: no ticket,
    // no hand-over. One that finds another writer spins for the lock (the
    // section is a few microseconds, a futex sleep and wake-up costs more
    // on a VM) and then only builds its batch inside it: the store's
    // allocations and its pointer surgery come after, in ticket order,
    // while the next writer builds; so do the next kContendedWrites writes.
    const bool alone = LockWriterDirect();
    std::unique_lock<std::mutex> lock(write_mu_, std::adopt_lock);
    s = BeginBatch();
    if (!s.ok()) return s;
    WriteContext ctx(kv_, &pipeline_, keys_, counters_);
    PrefetchRecords(group, ctx);
    for (size_t i = 0; i < w->docs->size(); ++i) {
      if ((*w->valid)[i]) {
        ApplyDoc((*w->docs)[i], w->new_edits, ctx, &(*w->results)[i],
                 w->slots.empty() ? nullptr : w->slots[i]);
      }
    }
    s = CommitBuilt(ctx, alone, &lock);
  }
  TakeResultIds(group);
  return s;
}

Status DatabaseImpl::CommitBuilt(WriteContext& ctx, bool alone, std::unique_lock<std::mutex>* lock) {
  if (alone && pipeline_.Idle()) {
    if (!ctx.changed()) return Status::OK();
    Status s = kv_->WriteOwned(owner_->write_options(), std::move(ctx.Finish()));
    if (s.ok()) Publish(ctx);
    return s;
  }
  StagedCommit staged;
  Stage(ctx, &staged);
  lock->unlock();
  return WriteStaged(staged);
}

void DatabaseImpl::Publish(const WriteContext& ctx) {
  const bool seq_changed = ctx.counters.update_seq != counters_.update_seq;
  counters_ = committed_counters_ = ctx.counters;
  NoteWrittenDocIds(ctx);
  PublishCommitted(ctx.counters, ctx.design_changed, seq_changed);
}

void DatabaseImpl::PublishCommitted(const Counters& c, bool design_changed, bool seq_changed) {
  if (design_changed) NoteDesignWrite();
  doc_count_.store(c.doc_count, std::memory_order_relaxed);
  doc_del_count_.store(c.doc_del_count, std::memory_order_relaxed);
  external_size_.store(c.external_size, std::memory_order_relaxed);
  update_seq_.store(c.update_seq, std::memory_order_release);
  if (seq_changed) NotifyListeners(c.update_seq);
}

Status DatabaseImpl::WriteGrouped(Writer* w) {
  if (direct_writes_) return WriteDirect(w);
  LockSpinning(queue_mu_);
  std::unique_lock<std::mutex> queue_lock(queue_mu_, std::adopt_lock);
  writers_.push_back(w);
  if (writers_.front() != w) {
    // Another writer leads: wait until it commits our documents or hands us
    // the front. Its commit takes microseconds, so spin first; sleep only
    // if it is slow (a large batch, a descheduled leader), and at once if
    // it fsyncs (milliseconds: a spin would only burn a core).
    queue_lock.unlock();
    if (!owner_->options().sync) {
      SpinBackoff backoff;
      while (w->state.load(std::memory_order_acquire) == Writer::kWaiting &&
             !backoff.Exhausted()) {
        backoff.Pause();
      }
    }
    RelockSpinning(queue_lock);
    if (w->state.load(std::memory_order_acquire) == Writer::kWaiting) {
      w->sleeping = true;
      w->cv.wait(queue_lock,
                 [w] { return w->state.load(std::memory_order_acquire) != Writer::kWaiting; });
      w->sleeping = false;
    }
    if (w->state.load(std::memory_order_acquire) == Writer::kDone) return w->status;
  }

  // Leader: it builds the batch of the group at the front of the queue (a
  // prefix, starting with its own writer) and hands the front on before it
  // writes the batch (unless it fsyncs), so the next leader builds its
  // batch meanwhile (write_pipeline.h): two writers keep both stages busy
  // instead of one writing while the other waits.
  //
  // A writer that sees its new state may return at once and destroy itself:
  // read `sleeping` before the store, and notify only a sleeper (which
  // cannot return before this thread releases queue_mu_).
  auto hand_off = [](Writer* x, Writer::State state) {
    const bool sleeping = x->sleeping;
    x->state.store(state, std::memory_order_release);
    if (sleeping) x->cv.notify_one();
  };
  std::vector<Writer*> group;
  size_t group_docs = 0;
  for (Writer* x : writers_) {
    if (!group.empty() && group_docs + x->docs->size() > kMaxGroupDocs) break;
    group.push_back(x);
    group_docs += x->docs->size();
  }
  queue_lock.unlock();
  StagedCommit staged;
  Status s = StageGroup(group, &staged);
  // With sync the write is an fsync (milliseconds): the leader keeps the
  // front through it, so the writers that queue meanwhile become one group
  // and one fsync instead of a chain of small groups each fsyncing.
  const bool keep_front = owner_->options().sync;
  if (keep_front && s.ok()) s = WriteStaged(staged);
  RelockSpinning(queue_lock);
  for (size_t i = 0; i < group.size(); ++i) writers_.pop_front();
  if (!writers_.empty()) hand_off(writers_.front(), Writer::kLeader);
  if (!keep_front) {
    queue_lock.unlock();
    if (s.ok()) s = WriteStaged(staged);
    TakeResultIds(group);
    if (group.size() == 1) return s;
    RelockSpinning(queue_lock);
  } else {
    TakeResultIds(group);
  }
  for (Writer* x : group) {
    if (x == w) continue;
    x->status = s;
    hand_off(x, Writer::kDone);
  }
  return s;
}

Status DatabaseImpl::StageGroup(const std::vector<Writer*>& group, StagedCommit* staged) {
  std::lock_guard<std::mutex> lock(write_mu_);
  Status s = BeginBatch();
  if (!s.ok()) return s;
  WriteContext ctx(kv_, &pipeline_, keys_, counters_);
  PrefetchRecords(group, ctx);
  for (Writer* x : group) {
    for (size_t i = 0; i < x->docs->size(); ++i) {
      if ((*x->valid)[i]) {
        ApplyDoc((*x->docs)[i], x->new_edits, ctx, &(*x->results)[i],
                 x->slots.empty() ? nullptr : x->slots[i]);
      }
    }
  }
  Stage(ctx, staged);
  return Status::OK();
}

void DatabaseImpl::TakeResultIds(std::span<Writer* const> group) {
  // The batch is built and its context gone: nothing views the ids any
  // more, so the results take them instead of copies.
  for (Writer* x : group) {
    for (size_t i = 0; i < x->docs->size(); ++i) {
      if ((*x->valid)[i]) (*x->results)[i].id = std::move((*x->docs)[i].id);
    }
  }
}

void DatabaseImpl::PrefetchRecords(std::span<Writer* const> group, WriteContext& ctx) {
  // The documents that name an id, each with where its slot goes.
  struct Named {
    std::string_view id;
    std::optional<DocRecord>** slot;
  };
  SmallVec<Named> named;
  for (Writer* x : group) {
    x->slots.assign(x->docs->size(), nullptr);
    for (size_t i = 0; i < x->docs->size(); ++i) {
      const std::string& id = (*x->docs)[i].id;
      // Generated ids (empty here) are new by construction; _local docs
      // live under another kind.
      if ((*x->valid)[i] && !id.empty() && !IsLocalDocId(id)) named.push_back({id, &x->slots[i]});
    }
  }
  if (named.empty()) return;
  auto by_id = [](const Named& a, const Named& b) { return a.id < b.id; };
  if (!std::is_sorted(named.begin(), named.end(), by_id)) {
    std::sort(named.begin(), named.end(), by_id);
  }
  // Ids past the largest one stored are new: no lookup at all, and their
  // documents get their slots directly (one per id, shared by repeats).
  // Ascending ids (CouchDB's "sequential" uuids, time-ordered ids,
  // counters) make most inserts take this path.
  if (!largest_doc_id_known_) {
    pipeline_.Drain();  // a scan sees only what is written
    KVIteratorOptions io;
    io.lower_bound = keys_.KindPrefix(keys::kDocKind);
    io.upper_bound = keys::PrefixEnd(io.lower_bound);
    auto it = kv_->NewIterator(io);
    it->SeekToLast();
    if (!it->status().ok()) return;  // LoadRecord reads (and reports) per doc
    largest_doc_id_.assign(it->Valid() ? keys_.Suffix(it->key()) : std::string_view());
    largest_doc_id_known_ = true;
  }
  auto first_new = std::upper_bound(named.begin(), named.end(), Named{largest_doc_id_, nullptr}, by_id);
  std::optional<DocRecord>* slot = nullptr;
  for (auto n = first_new; n != named.end(); ++n) {
    if (n == first_new || n->id != std::prev(n)->id) slot = &ctx.FreshRecordSlot();
    *n->slot = slot;
  }
  // The others may exist, but those in a known gap (id_gaps.h): load the
  // rest in one ordered pass.
  SmallVec<std::string_view> ids;
  ids.reserve(static_cast<size_t>(first_new - named.begin()));
  for (auto n = named.begin(); n != first_new; ++n) {
    if (n != named.begin() && n->id == std::prev(n)->id) {
      *n->slot = *std::prev(n)->slot;  // a repeat: the same slot, or none
      continue;
    }
    if (use_id_gaps_ && id_gaps_.Contains(n->id)) {
      *n->slot = &ctx.FreshRecordSlot();
    } else {
      ids.push_back(n->id);
    }
  }
  if (ids.size() >= 2) {
    ctx.LoadRecords(ids);
  } else if (ids.size() == 1 && use_id_gaps_ && id_gaps_.ShouldSeek()) {
    // One id is as cheap with a Get, but a seek also finds the gap above
    // it, where the next ids of an ascending run will fall.
    pipeline_.Drain();
    std::string next;
    if (ctx.SeekRecord(ids[0], &next)) id_gaps_.Add(ids[0], next);
  }
}

void DatabaseImpl::NoteWrittenDocIds(const WriteContext& ctx) {
  std::string_view largest = ctx.LargestWrittenDocId();
  if (largest_doc_id_known_ && largest > largest_doc_id_) largest_doc_id_.assign(largest);
}

Result<DocUpdateResult> DatabaseImpl::Put(std::string_view docid, std::string_view json,
                                          const UpdateOptions& options) {
  std::vector<IncomingDoc> docs(1);
  Status s = ParseIncomingDoc(json, docid, owner_->options().max_document_size, &docs[0]);
  if (!s.ok()) return s;
  MarkLocalRevChecks(docs, options);
  if (docs[0].attachments) return WriteOneDoc(std::move(docs[0]), options);
  std::vector<bool> valid{true};
  std::vector<DocUpdateResult> results(1);
  s = ValidateWrite(docs, valid, results, options);
  if (!s.ok()) return s;
  if (!valid[0]) return results[0].status;
  Writer w(&docs, &valid, options.new_edits, &results);
  s = WriteGrouped(&w);
  if (!s.ok()) return s;
  if (!results[0].status.ok()) return results[0].status;
  return std::move(results[0]);
}

Result<DocUpdateResult> DatabaseImpl::Delete(std::string_view docid, std::string_view rev,
                                             const UpdateOptions& options) {
  if (!options.new_edits) return Status::BadRequest("a deletion is an edit (new_edits=true)");
  std::vector<IncomingDoc> docs(1);
  IncomingDoc& doc = docs[0];
  Status s = ValidateDocId(docid);
  if (!s.ok()) return s;
  doc.id.assign(docid);
  doc.deleted = true;
  doc.body = "{}";
  doc.rev_text.assign(rev);
  MarkLocalRevChecks(docs, options);
  if (!IsLocalDocId(docid) && !rev.empty()) {
    RevId r;
    if (!RevId::Parse(rev, &r)) return Status::BadRequest("Invalid rev format");
    doc.rev = std::move(r);
  }
  if (!rev.empty()) {
    std::vector<bool> valid{true};
    std::vector<DocUpdateResult> refused(1);
    s = ValidateWrite(docs, valid, refused, options);
    if (!s.ok()) return s;
    if (!valid[0]) return refused[0].status;
  }
  // As WriteDirect on memory: written under the lock when alone, else
  // through the pipeline.
  bool alone = false;
  if (direct_writes_) alone = LockWriterDirect();
  else write_mu_.lock();
  std::unique_lock<std::mutex> lock(write_mu_, std::adopt_lock);
  s = BeginBatch();
  if (!s.ok()) return s;
  WriteContext ctx(kv_, &pipeline_, keys_, counters_);
  if (!IsLocalDocId(docid)) {
    std::optional<DocRecord>* slot;
    s = ctx.LoadRecord(doc.id, &slot);
    if (!s.ok()) return s;
    if (!*slot) return Status::NotFound("missing");
    if (rev.empty()) {
      // CouchDB: deleting without a rev is a conflict for a live document.
      if ((*slot)->deleted) return Status::NotFound("deleted");
      return Status::Conflict();
    }
  }
  DocUpdateResult result;
  ApplyDoc(doc, true, ctx, &result, nullptr);
  if (!result.status.ok()) return result.status;
  s = CommitBuilt(ctx, alone, &lock);
  if (!s.ok()) return s;
  result.id = std::move(doc.id);
  return result;
}

}  // namespace settee
