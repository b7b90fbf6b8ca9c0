// DatabaseImpl: purge (CouchDB 3's POST /db/_purge) and its log of purge
// infos, which indexes follow (storage/views.cc).
//
// A purge is one KV batch built under the writer lock with the pipeline
// drained, so it sees every committed write and no write sees half of it:
// the edited or deleted records, their bodies, the superseded changes, the
// new changes of documents that keep revisions, one purge info per request
// and the counters key (docs/storage_format.md, "Purge").
#include <algorithm>
#include <map>
#include <optional>

#include "storage/database_impl.h"
#include "storage/store_impl.h"
#include "util/coding.h"

namespace settee {

namespace {

// DO NOT CHANGE: embedded in stored purge infos.
constexpr uint8_t kPurgeInfoFormat = 1;

std::string EncodePurgeInfo(uint64_t update_seq, std::string_view docid,
                            const std::vector<std::string>& revs) {
  std::string v;
  v.push_back(static_cast<char>(kPurgeInfoFormat));
  coding::PutVarint64(&v, update_seq);
  coding::PutLengthPrefixed(&v, docid);
  coding::PutVarint64(&v, revs.size());
  for (const std::string& r : revs) coding::PutLengthPrefixed(&v, r);
  return v;
}

Status DecodePurgeInfo(std::string_view in, DatabaseImpl::PurgeInfo* out) {
  if (in.empty() || static_cast<uint8_t>(in[0]) != kPurgeInfoFormat) {
    return Status::Corruption("bad purge info");
  }
  in.remove_prefix(1);
  std::string_view docid;
  uint64_t n = 0;
  if (!coding::GetVarint64(&in, &out->update_seq) || !coding::GetLengthPrefixed(&in, &docid) ||
      !coding::GetVarint64(&in, &n) || n > in.size()) {
    return Status::Corruption("bad purge info");
  }
  out->docid.assign(docid);
  out->revs.clear();
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view rev;
    if (!coding::GetLengthPrefixed(&in, &rev)) return Status::Corruption("bad purge info");
    out->revs.emplace_back(rev);
  }
  if (!in.empty()) return Status::Corruption("bad purge info");
  return Status::OK();
}

// The tree without the nodes that lead to no kept leaf: the purged leaves
// and their ancestors that no other leaf shares (couch_key_tree's
// remove_leafs). Nodes keep their order, so parents stay before children.
// *removed gets the indexes (in `tree`) of the dropped nodes.
RevTree WithoutLeaves(const RevTree& tree, const std::vector<int>& purged,
                      std::vector<int>* removed) {
  const int n = static_cast<int>(tree.size());
  std::vector<bool> keep(n, false);
  std::vector<bool> is_purged(n, false);
  for (int i : purged) is_purged[i] = true;
  // Children come after their parents: a reverse pass sees every child first.
  for (int i = n - 1; i >= 0; --i) {
    if (!keep[i] && tree.IsLeaf(i) && !is_purged[i]) keep[i] = true;
    if (keep[i] && tree.node(i).parent != RevTree::kNone) keep[tree.node(i).parent] = true;
  }
  RevTree out;
  std::vector<int> new_index(n, RevTree::kNone);
  for (int i = 0; i < n; ++i) {
    if (!keep[i]) {
      removed->push_back(i);
      continue;
    }
    const RevTree::Node& node = tree.node(i);
    const int parent = node.parent == RevTree::kNone ? RevTree::kNone : new_index[node.parent];
    new_index[i] = out.AddRevision(parent, tree.Rev(i), node.deleted, node.has_body, node.seq);
  }
  return out;
}

}  // namespace

Status DatabaseImpl::LoadPurgeState() {
  KVIteratorOptions io;
  io.lower_bound = keys_.KindPrefix(keys::kPurgeInfoKind);
  io.upper_bound = keys::PrefixEnd(io.lower_bound);
  auto it = kv_->NewIterator(io);
  it->SeekToLast();
  if (it->Valid()) purge_seq_ = coding::DecodeFixed64BE(keys_.Suffix(it->key()));
  if (!it->status().ok()) return it->status();
  uint64_t limit = purged_infos_limit_;
  Status s = ReadVarintProperty(keys::kPurgedInfosLimitProperty, UINT64_MAX, &limit);
  if (s.ok()) purged_infos_limit_ = limit;
  return s;
}

Status DatabaseImpl::Purge(const std::vector<PurgeRequest>& request, std::vector<PurgeResult>* out) {
  out->clear();
  if (request.empty()) return Status::OK();  // CouchDB writes nothing either
  // Checked whole before anything is written, as CouchDB parses every rev
  // of the body first.
  for (const PurgeRequest& r : request) {
    for (const std::string& rev : r.revs) {
      RevId parsed;
      if (!RevId::Parse(rev, &parsed)) return Status::BadRequest("Invalid rev format");
    }
  }
  // One result per distinct id; a repeated id's revisions add up.
  std::map<std::string, size_t> slot_of;
  std::vector<std::vector<std::string>> wanted;
  for (const PurgeRequest& r : request) {
    auto [it, fresh] = slot_of.emplace(r.id, out->size());
    if (fresh) {
      out->emplace_back().id = r.id;
      wanted.emplace_back();
    }
    auto& revs = wanted[it->second];
    for (const std::string& rev : r.revs) {
      if (std::find(revs.begin(), revs.end(), rev) == revs.end()) revs.push_back(rev);
    }
  }

  auto lock = LockWriterDrained();
  Status s = BeginBatch();
  if (!s.ok()) return s;
  Counters c = counters_;
  const uint64_t start_seq = c.update_seq;
  KVWriteBatch batch;
  bool design_changed = false;
  // Documents that keep revisions: their records get new changes below.
  struct Kept {
    std::string docid;
    DocRecord record;
  };
  std::vector<Kept> kept;
  auto supersede = [&](const DocRecord& record) {
    if (record.change_shared) batch.Put(keys_.Obsolete(record.seq), "");
    else batch.Delete(keys_.Seq(record.seq));
  };
  std::string bytes;
  for (size_t d = 0; d < out->size(); ++d) {
    const std::string& docid = (*out)[d].id;
    s = kv_->Get(KVReadOptions(), keys_.Doc(docid), &bytes);
    if (s.IsNotFound()) continue;
    if (!s.ok()) return s;
    DocRecord record;
    s = DecodeDocRecord(bytes, &record);
    if (!s.ok()) return s;
    std::vector<int> leaves;
    for (const std::string& rev : wanted[d]) {
      RevId id;
      RevId::Parse(rev, &id);
      const int i = record.tree.Find(id);
      if (i == RevTree::kNone || !record.tree.IsLeaf(i)) continue;
      leaves.push_back(i);
      (*out)[d].purged.push_back(rev);
    }
    if (leaves.empty()) continue;
    if (IsDesignDoc(docid)) design_changed = true;
    std::vector<int> removed;
    RevTree rest = WithoutLeaves(record.tree, leaves, &removed);
    // Newest generation first, as PouchDB's findPathToLeaf lists them.
    std::vector<int> by_gen = removed;
    std::sort(by_gen.begin(), by_gen.end(),
              [&](int x, int y) { return record.tree.Rev(y) < record.tree.Rev(x); });
    for (int i : by_gen) (*out)[d].removed.push_back(record.tree.RevString(i));
    (*out)[d].doc_removed = rest.empty();
    for (int i : removed) {
      const std::string rev = record.tree.RevString(i);
      if (record.tree.node(i).has_body && rev != record.winner_rev) {
        batch.Delete(keys_.RevBody(docid, rev));
      }
    }
    supersede(record);
    if (record.deleted) --c.doc_del_count;
    else --c.doc_count;
    c.external_size -= std::min<uint64_t>(c.external_size, record.winner_body.size());
    if (rest.empty()) {
      batch.Delete(keys_.Doc(docid));
      continue;
    }
    // A purge never makes a new leaf, so the winner changes only when it was
    // purged itself; its successor's body moves into the record.
    const int winner = rest.Winner();
    std::string winner_rev = rest.RevString(winner);
    if (winner_rev != record.winner_rev) {
      const std::string key = keys_.RevBody(docid, winner_rev);
      s = kv_->Get(KVReadOptions(), key, &record.winner_body);
      if (s.IsNotFound()) record.winner_body.clear();  // not stored, as the write path keeps it
      else if (!s.ok()) return s;
      else batch.Delete(key);
      record.winner_rev = std::move(winner_rev);
    }
    record.deleted = rest.node(winner).deleted;
    record.tree = std::move(rest);
    if (record.deleted) ++c.doc_del_count;
    else ++c.doc_count;
    c.external_size += record.winner_body.size();
    kept.push_back({docid, std::move(record)});
  }

  // The kept documents' new changes, in blocks as a write batch stores them.
  uint64_t seq = start_seq;
  for (size_t from = 0; from < kept.size(); from += kChangeBlockEntries) {
    const size_t to = std::min(kept.size(), from + kChangeBlockEntries);
    ChangeBlockBuilder block;
    for (size_t i = from; i < to; ++i) {
      DocRecord& record = kept[i].record;
      record.seq = ++seq;
      record.change_shared = to - from > 1;
      block.Add(record.seq, kept[i].docid, record.deleted, record.winner_rev);
    }
    const BlockCounters after{c.doc_count, c.doc_del_count, c.external_size};
    const uint64_t last = block.last_seq();  // before Finish() empties the builder
    batch.Put(keys_.Seq(last), block.Finish(to == kept.size() ? &after : nullptr));
  }
  std::string encoded;
  for (const Kept& k : kept) {
    EncodeDocRecord(k.record, &encoded);
    batch.Put(keys_.Doc(k.docid), encoded);
  }
  // The update_seq moves even when nothing kept a revision: indexes learn
  // of purges by it (CouchDB bumps it the same way).
  c.update_seq = std::max(seq, start_seq + 1);
  uint64_t purge_seq = purge_seq_.load(std::memory_order_relaxed);
  for (const PurgeRequest& r : request) {
    batch.Put(keys_.PurgeInfo(++purge_seq), EncodePurgeInfo(c.update_seq, r.id, r.revs));
  }
  // The counters key, past every change block now (docs/storage_format.md):
  // a purge can leave the newest block without its batch's counters.
  std::string counters;
  for (uint64_t v : {c.update_seq, c.doc_count, c.doc_del_count, c.external_size}) {
    coding::PutVarint64(&counters, v);
  }
  batch.Put(keys_.Counters(), counters);
  s = kv_->Write(owner_->write_options(), batch);
  if (!s.ok()) return s;
  counters_ = committed_counters_ = c;
  purge_seq_.store(purge_seq, std::memory_order_release);
  {
    std::lock_guard<std::mutex> g(memo_mu_);
    changes_after_memo_.valid = false;
  }
  PublishCommitted(c, design_changed, true);
  return Status::OK();
}

Status DatabaseImpl::PurgeInfos(uint64_t after, uint64_t upto, std::vector<PurgeInfo>* out,
                                bool* complete) {
  out->clear();
  *complete = true;
  if (upto <= after) return Status::OK();
  KVIteratorOptions io;
  io.lower_bound = keys_.PurgeInfo(after + 1);
  io.upper_bound = upto == UINT64_MAX ? keys::PrefixEnd(keys_.KindPrefix(keys::kPurgeInfoKind))
                                      : keys_.PurgeInfo(upto + 1);
  auto it = kv_->NewIterator(io);
  uint64_t expect = after + 1;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    PurgeInfo info;
    info.purge_seq = coding::DecodeFixed64BE(keys_.Suffix(it->key()));
    if (info.purge_seq != expect) *complete = false;
    expect = info.purge_seq + 1;
    Status s = DecodePurgeInfo(it->value(), &info);
    if (!s.ok()) return s;
    out->push_back(std::move(info));
  }
  if (!it->status().ok()) return it->status();
  if (upto != UINT64_MAX && expect != upto + 1) *complete = false;
  return Status::OK();
}

Status DatabaseImpl::TrimPurgeInfos() {
  auto lock = LockWriterDrained();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  const uint64_t newest = purge_seq_.load(std::memory_order_relaxed);
  const uint64_t limit = PurgedInfosLimit();
  if (newest <= limit) return Status::OK();
  // Every info at or below `oldest_kept - 1` goes.
  KVIteratorOptions io;
  io.lower_bound = keys_.KindPrefix(keys::kPurgeInfoKind);
  io.upper_bound = keys_.PurgeInfo(newest - limit + 1);
  auto it = kv_->NewIterator(io);
  KVWriteBatch batch;
  for (it->SeekToFirst(); it->Valid(); it->Next()) batch.Delete(std::string(it->key()));
  if (!it->status().ok()) return it->status();
  if (batch.empty()) return Status::OK();
  return kv_->Write(owner_->write_options(), batch);
}

}  // namespace settee
