#include "storage/views.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "storage/collation.h"
#include "storage/database_impl.h"
#include "storage/keys.h"
#include "storage/mango.h"
#include "storage/view_reduce.h"
#include "storage/view_reduce_cache.h"
#include "util/coding.h"
#include "util/json.h"

namespace settee::views {

namespace {

// The seqs one round of an update covers (one MapShares() call; the
// header moves after each round). A ViewFunctions that maps on the calling
// thread makes a round one share, so this bounds the documents held at once.
constexpr uint64_t kRoundSeqs = 16384;
// Rows a JavaScript reduce sees per call before a rereduce.
constexpr size_t kReduceChunk = 1000;

// The keys of one index (docs/index_key_format.md, "Views"), all under
// `base` = 'D' db_id 'v' signature:
//   base 'h'                          header: varint seq, varint n, n varint row counts
//                                     [, varint dirty [, varint purge_seq]]
//   base 'r' fixed16 view key docid n row: lenpref docid, lenpref key JSON, value JSON
//   base 'b' docid                    the doc's row keys (lenpref each, after base)
struct IndexKeys {
  std::string base;
  std::string Header() const { return base + 'h'; }
  std::string Rows(size_t view) const {
    std::string k = base;
    k.push_back('r');
    k.push_back(static_cast<char>((view >> 8) & 0xff));
    k.push_back(static_cast<char>(view & 0xff));
    return k;
  }
  std::string Back(std::string_view docid) const {
    std::string k = base;
    k.push_back('b');
    k.append(docid);
    return k;
  }
};

struct Header {
  bool found = false;  // the index has a header (it was ever written)
  uint64_t seq = 0;
  std::vector<uint64_t> counts;
  // An update is writing (or died writing) rows past `seq` in batches of
  // its own (UpdateAt): the counts may be off, and docs past `seq` may
  // have rows.
  bool dirty = false;
  // The database's purges up to this purge_seq have been applied (their
  // documents' rows deleted; the documents that kept revisions come again
  // through their new changes). Every purge whose change is at or below
  // `seq` is at or below it (DatabaseImpl::IndexSeqs).
  uint64_t purge_seq = 0;
};

Status ReadHeader(KVStore* kv, const KVReadOptions& ro, const IndexKeys& ik, size_t nviews,
                  Header* h) {
  *h = Header{};
  h->counts.assign(nviews, 0);
  std::string v;
  Status s = kv->Get(ro, ik.Header(), &v);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  h->found = true;
  std::string_view in(v);
  uint64_t n = 0;
  if (!coding::GetVarint64(&in, &h->seq) || !coding::GetVarint64(&in, &n) || n != nviews) {
    return Status::Corruption("bad view index header");
  }
  for (uint64_t i = 0; i < n; ++i) {
    if (!coding::GetVarint64(&in, &h->counts[i])) return Status::Corruption("bad view index header");
  }
  // Headers written before the flag existed end here: clean.
  uint64_t dirty = 0;
  if (!in.empty() && !coding::GetVarint64(&in, &dirty)) return Status::Corruption("bad view index header");
  h->dirty = dirty != 0;
  // Headers written before purges existed end here: purge_seq 0.
  if (!in.empty() && !coding::GetVarint64(&in, &h->purge_seq)) {
    return Status::Corruption("bad view index header");
  }
  return Status::OK();
}

std::string EncodeHeader(const Header& h) {
  std::string v;
  coding::PutVarint64(&v, h.seq);
  coding::PutVarint64(&v, h.counts.size());
  for (uint64_t c : h.counts) coding::PutVarint64(&v, c);
  if (h.dirty || h.purge_seq != 0) coding::PutVarint64(&v, h.dirty ? 1 : 0);
  if (h.purge_seq != 0) coding::PutVarint64(&v, h.purge_seq);
  return v;
}

// One lock per index in the process, so that queries from HTTP fibers and
// JS isolates share one update instead of racing two.
std::shared_ptr<std::mutex> IndexLock(KVStore* kv, const std::string& base) {
  static std::mutex mu;
  static std::map<std::pair<KVStore*, std::string>, std::weak_ptr<std::mutex>> locks;
  std::lock_guard<std::mutex> g(mu);
  auto& slot = locks[{kv, base}];
  auto lock = slot.lock();
  if (!lock) {
    lock = std::make_shared<std::mutex>();
    slot = lock;
  }
  if (locks.size() > 256) {
    for (auto it = locks.begin(); it != locks.end();) {
      it = it->second.expired() ? locks.erase(it) : std::next(it);
    }
  }
  return lock;
}

void AppendDocIdKey(std::string_view id, std::string* out) {
  json::Value v(rapidjson::StringRef(id.data(), id.size()));
  collation::AppendIndexKey(v, out);
}

bool IsDesign(std::string_view id) { return id.rfind("_design/", 0) == 0; }

Status DeleteRange(KVStore* kv, const std::string& lower, const std::string& upper);

// Where an index lives: the KV store, write options, key base.
struct IndexPlace {
  KVStore* kv = nullptr;
  KVWriteOptions wo;
  IndexKeys keys;
  ReduceCaches* caches = nullptr;  // the database's; nullptr: no caching
};

Result<IndexPlace> PlaceOf(Store& store, Database& db, const DesignDoc& ddoc) {
  auto* impl = dynamic_cast<DatabaseImpl*>(&db);
  if (impl == nullptr) return Status::Internal("views need a settee database");
  IndexPlace p;
  p.kv = impl->kv();
  p.wo.sync = false;  // an index is rebuilt from the changes feed if lost
  p.keys.base = keys::DatabaseKeys(impl->db_id()).KindPrefix(keys::kViewKind);
  p.keys.base += ddoc.signature;
  p.caches = &impl->reduce_caches();
  return p;
}

// ViewFunctions for Mango's language "query", else the caller's.
Result<ViewFunctions*> FunctionsFor(const MapCode& code, ViewFunctions* js) {
  if (code.language == "query") return &mango::IndexFunctions();
  if (code.language != "javascript") {
    return Status(Status::Code::kInvalidDesignDoc, "unsupported language: " + code.language);
  }
  if (js == nullptr) return Status::Internal("JavaScript views need the settee runtime");
  return js;
}

// The rows of one view: how many (the header's counts after an update
// died mid-way, see Header::dirty).
Result<uint64_t> CountRows(KVStore* kv, const std::string& prefix) {
  KVIteratorOptions io;
  io.lower_bound = prefix;
  io.upper_bound = keys::PrefixEnd(prefix);
  auto it = kv->NewIterator(io);
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  if (!it->status().ok()) return it->status();
  return n;
}

// One share's rows, to be written as one batch, prepared for the store
// (KVStore::Prepare: values copied, nodes allocated, ops sorted) on the
// thread that encoded them, so that the round's one writer at a time
// (CommitPart) only commits.
struct PartBatch {
  std::unique_ptr<KVPreparedWrite> prepared;
  std::vector<std::string> changed;  // row keys written or deleted (reduce caches)
  std::vector<int64_t> delta;        // row count changes per view
};

// One round of changes being applied to an index: what every share of its
// map results (UpdateAt) reads, and what they add up.
struct RoundUpdate {
  const IndexPlace* p = nullptr;
  const std::vector<std::string>* view_prefix = nullptr;
  size_t nviews = 0;
  bool fresh = false;         // no back-index entries exist yet
  bool note_changes = false;  // reduce caches exist: name the changed keys
  uint64_t seq = 0;           // the index seq the round moves to
  // The header as it was before the round, marked dirty before the
  // round's first share of several is written.
  std::string dirty_header;
  std::mutex mu;
  std::vector<int64_t> count_delta;  // per view; GUARDED_BY(mu)
  std::vector<PartBatch> queued;     // shares' rows to write; GUARDED_BY(mu)
  bool writing = false;              // a thread writes `queued`; GUARDED_BY(mu)
  Status write_error;                // the first failed write; GUARDED_BY(mu)
  bool marked = false;               // dirty_header written; only by the writing thread
  std::atomic<bool> committed{false};  // some part was written
  // A round mapped as one share is not written by its share: its rows go
  // into the round's last batch, with the header (no dirty mark needed).
  KVWriteBatch held;
  std::vector<std::string> held_changed;
  std::vector<int64_t> held_delta;
};

// Replaces the rows of document `id` by `emits` (its Map() element, or
// nullptr for a deleted or design document): the puts and deletes go into
// `batch`, the changed row keys into `changed`, the row count changes into
// `delta`.
Status ReplaceDocRows(const RoundUpdate& u, std::string_view id, const json::Value* emits,
                      KVWriteBatch* batch, std::vector<std::string>* changed,
                      std::vector<int64_t>* delta) {
  const IndexKeys& ik = u.p->keys;
  std::string back;
  // The rows kept (only looked up against old rows: none in a fresh index).
  std::unordered_set<std::string> new_keys;
  std::string key_json;
  if (emits != nullptr && emits->IsArray()) {
    const size_t nv = std::min<size_t>(emits->Size(), u.nviews);
    for (size_t v = 0; v < nv; ++v) {
      const json::Value& list = (*emits)[static_cast<rapidjson::SizeType>(v)];
      if (!list.IsArray()) continue;
      uint32_t n = 0;
      for (auto& pair : list.GetArray()) {
        if (!pair.IsArray() || pair.Size() != 2) continue;
        std::string key = (*u.view_prefix)[v];
        collation::AppendIndexKey(pair[0], &key);
        AppendDocIdKey(id, &key);
        coding::PutFixed64BE(&key, n++);
        key_json.clear();
        json::SerializeTo(pair[0], &key_json);
        std::string value;
        value.reserve(id.size() + key_json.size() + 16);
        coding::PutLengthPrefixed(&value, id);
        coding::PutLengthPrefixed(&value, key_json);
        json::SerializeTo(pair[1], &value);
        coding::PutLengthPrefixed(&back, std::string_view(key).substr(ik.base.size()));
        (*delta)[v]++;
        if (!u.fresh) new_keys.insert(key);
        if (u.note_changes) changed->push_back(key);
        batch->PutOwned(std::move(key), std::move(value));
      }
    }
  }
  bool had_back = false;
  if (!u.fresh) {
    std::string old_back;
    Status s = u.p->kv->Get(KVReadOptions{}, ik.Back(id), &old_back);
    if (s.ok()) {
      had_back = true;
      std::string_view in(old_back);
      std::string_view suffix;
      while (coding::GetLengthPrefixed(&in, &suffix)) {
        std::string old = ik.base;
        old.append(suffix);
        // The view is the two bytes after 'r'.
        size_t view = (static_cast<unsigned char>(suffix[1]) << 8) | static_cast<unsigned char>(suffix[2]);
        if (view < u.nviews) (*delta)[view]--;
        if (!new_keys.count(old)) {
          batch->Delete(old);
          if (u.note_changes) changed->push_back(old);
        }
      }
    } else if (!s.IsNotFound()) {
      return s;
    }
  }
  if (!back.empty()) {
    batch->PutOwned(ik.Back(id), std::move(back));
  } else if (had_back) {
    batch->Delete(ik.Back(id));
  }
  return Status::OK();
}

// Writes one share's rows (after naming its changed keys to the reduce
// caches, which must hear of a change before it can be read) and adds its
// row count changes to the round's. REQUIRES: u.writing is this thread's.
Status WritePart(RoundUpdate& u, PartBatch& part) {
  if (!u.marked) {
    // Rows past the header's seq: mark it first (see UpdateAt).
    KVWriteBatch mark;
    mark.Put(u.p->keys.Header(), u.dirty_header);
    Status s = u.p->kv->WriteOwned(u.p->wo, std::move(mark));
    if (!s.ok()) return s;
    u.marked = true;
  }
  if (u.note_changes) u.p->caches->NoteChanges(u.p->keys.base, part.changed, u.seq);
  Status s = u.p->kv->Commit(u.p->wo, std::move(part.prepared));
  if (!s.ok()) return s;
  u.committed = true;
  std::lock_guard<std::mutex> g(u.mu);
  for (size_t v = 0; v < part.delta.size(); ++v) u.count_delta[v] += part.delta[v];
  return Status::OK();
}

// Has a share's rows written. One thread writes a round's shares at a time:
// a thread that finds another writing leaves its part queued and goes back
// to mapping, and the writing thread writes every part queued before it
// stops, so the shares' batches never wait on each other in the store (a
// writer kept waiting spins) and no thread waits for another's write. The
// round's last `each` returns only after every part is written. Returns
// the first write error of the round (the update then fails).
Status CommitPart(RoundUpdate& u, PartBatch&& part) {
  std::unique_lock<std::mutex> g(u.mu);
  u.queued.push_back(std::move(part));
  if (u.writing) return u.write_error;
  u.writing = true;
  while (!u.queued.empty()) {
    std::vector<PartBatch> parts;
    parts.swap(u.queued);
    g.unlock();
    Status s;
    // After a failure the rest are dropped: the update fails anyway.
    for (PartBatch& p : parts) {
      if (s.ok()) s = WritePart(u, p);
    }
    g.lock();
    if (!s.ok() && u.write_error.ok()) u.write_error = s;
  }
  u.writing = false;
  return u.write_error;
}

// Where the time of an update goes (UpdateIndex with a profile): adds up
// the shares' phases as they run, on whichever thread.
class Profiler {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Profiler(UpdateProfile* out) : out_(out), start_(Clock::now()) {}
  bool on() const { return out_ != nullptr; }
  static double Ms(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
  }
  // Adds `ms` to the field `field` of the profile, and to the calling
  // thread's busy time when `busy`.
  void Add(double UpdateProfile::*field, double ms, bool busy = true) {
    if (!out_) return;
    std::lock_guard<std::mutex> g(mu_);
    out_->*field += ms;
    if (!busy) return;
    out_->thread_busy_ms[ThreadIndex()] += ms;
  }
  // Notes that the calling thread worked on a share in [from, to]: its
  // first start and last end since the update began.
  void Span(Clock::time_point from, Clock::time_point to) {
    if (!out_) return;
    std::lock_guard<std::mutex> g(mu_);
    const size_t t = ThreadIndex();
    if (out_->thread_start_ms[t] < 0) out_->thread_start_ms[t] = Ms(start_, from);
    out_->thread_end_ms[t] = std::max(out_->thread_end_ms[t], Ms(start_, to));
  }
  void Count(uint64_t UpdateProfile::*field, uint64_t n) {
    if (!out_) return;
    std::lock_guard<std::mutex> g(mu_);
    out_->*field += n;
  }

 private:
  // The calling thread's index in the per-thread fields. REQUIRES: mu_.
  size_t ThreadIndex() {
    auto [it, fresh] = thread_index_.try_emplace(std::this_thread::get_id(), thread_index_.size());
    if (fresh) {
      out_->thread_busy_ms.push_back(0);
      out_->thread_start_ms.push_back(-1);
      out_->thread_end_ms.push_back(0);
    }
    return it->second;
  }

  UpdateProfile* out_;
  const Clock::time_point start_;
  std::mutex mu_;
  std::map<std::thread::id, size_t> thread_index_;  // GUARDED_BY(mu_)
};

// Follows the database's purges from h->purge_seq to `purge_seq`: the
// purged documents' rows go, in one batch with the header that names the
// new purge_seq, so a crash leaves the index before or after them. The
// documents that kept revisions have changes past h->seq (a purge gives
// them new seqs above every change before it), so the rounds that follow
// map them again. An index further behind than the purge infos compaction
// kept cannot tell which documents went: it is emptied and rebuilt.
// The index's cached reductions are dropped (its seq does not move).
// REQUIRES: the index lock held; *h read (and recounted if dirty).
Status ApplyPurges(const IndexPlace& p, DatabaseImpl& db, const std::vector<std::string>& view_prefix,
                   uint64_t purge_seq, Header* h) {
  const IndexKeys& ik = p.keys;
  const size_t nviews = h->counts.size();
  std::vector<DatabaseImpl::PurgeInfo> infos;
  bool complete = false;
  Status s = db.PurgeInfos(h->purge_seq, purge_seq, &infos, &complete);
  if (!s.ok()) return s;
  if (p.caches != nullptr) p.caches->Drop(ik.base);
  if (!complete) {
    s = DeleteRange(p.kv, ik.base, keys::PrefixEnd(ik.base));
    if (!s.ok()) return s;
    *h = Header{};
    h->counts.assign(nviews, 0);
    h->purge_seq = purge_seq;
    return Status::OK();
  }
  RoundUpdate u;
  u.p = &p;
  u.view_prefix = &view_prefix;
  u.nviews = nviews;
  KVWriteBatch batch;
  std::vector<std::string> changed;
  std::vector<int64_t> delta(nviews, 0);
  std::unordered_set<std::string> seen;
  for (const DatabaseImpl::PurgeInfo& info : infos) {
    if (!seen.insert(info.docid).second) continue;
    s = ReplaceDocRows(u, info.docid, nullptr, &batch, &changed, &delta);
    if (!s.ok()) return s;
  }
  for (size_t v = 0; v < nviews; ++v) {
    const int64_t c = static_cast<int64_t>(h->counts[v]) + delta[v];
    h->counts[v] = c > 0 ? static_cast<uint64_t>(c) : 0;
  }
  h->purge_seq = purge_seq;
  h->dirty = false;
  h->found = true;
  batch.Put(ik.Header(), EncodeHeader(*h));
  return p.kv->WriteOwned(p.wo, std::move(batch));
}

// Brings the index up to the database's update_seq, in rounds of at most
// kRoundSeqs seqs. A round's seq range is cut into shares (by the
// ViewFunctions: MapShares), and each share is read from the store (the
// changes in its seq range, with the winning bodies and _conflicts),
// mapped, and its rows encoded and written as one batch, all on the thread
// that maps it (a pool's isolate thread), so that the isolate threads share
// the whole per-document cost and the caller only waits. Every document's
// rows change in one batch; the header, which names the seq the index is
// complete up to, moves after a round's shares are all written.
// Meanwhile it is marked dirty: an update that dies between the two leaves
// rows past its seq (redone from the back-index by the next update, as for
// any changed doc) and counts that the next update recounts. A round mapped
// as one share (Mango's C++ mapper) is written with its header in one batch.
//
// Each share reads its own snapshot: a document edited after the round
// began has a seq past the round, so the share skips it or maps its older
// body, and either way it comes again in a later round (the update goes on
// until it reaches the database's update_seq). No document is in two
// shares of one round.
Status UpdateAt(const IndexPlace& p, Database& db, ViewFunctions* js, const MapCode& code,
                UpdateProfile* profile = nullptr) {
  const auto update_start = Profiler::Clock::now();
  Profiler prof(profile);
  auto fns = FunctionsFor(code, js);
  if (!fns.ok()) return fns.status();
  auto lock = IndexLock(p.kv, p.keys.base);
  std::lock_guard<std::mutex> g(*lock);
  const IndexKeys& ik = p.keys;
  const size_t nviews = code.maps.size();
  Header h;
  Status s = ReadHeader(p.kv, KVReadOptions{}, ik, nviews, &h);
  if (!s.ok()) return s;
  if (h.dirty) {
    for (size_t v = 0; v < nviews; ++v) {
      auto n = CountRows(p.kv, ik.Rows(v));
      if (!n.ok()) return n.status();
      h.counts[v] = *n;
    }
  }
  auto* impl = dynamic_cast<DatabaseImpl*>(&db);
  if (impl == nullptr) return Status::Internal("views need a settee database");
  {
    uint64_t update_seq = 0, purge_seq = 0;
    impl->IndexSeqs(&update_seq, &purge_seq);
    if (h.seq >= update_seq && h.purge_seq >= purge_seq && !h.dirty) return Status::OK();
  }
  std::vector<std::string> view_prefix;
  for (size_t v = 0; v < nviews; ++v) view_prefix.push_back(ik.Rows(v));
  // Writes the clean header (after a recount, or when a failed round wrote
  // nothing past it).
  auto write_header = [&]() {
    h.dirty = false;
    h.found = true;
    KVWriteBatch batch;
    batch.Put(ik.Header(), EncodeHeader(h));
    return p.kv->WriteOwned(p.wo, std::move(batch));
  };
  bool need_clean = h.dirty;
  // A share between its read and its results: its changes (without their
  // bodies, which went to the map), and when the read ended (for the
  // profile).
  struct PendingRow {
    std::string id;
    bool deleted = false;
  };
  struct Pending {
    std::vector<PendingRow> rows;
    Profiler::Clock::time_point read_start, read_end;
  };
  std::mutex pending_mu;
  std::map<size_t, Pending> pending;  // by first unit; GUARDED_BY(pending_mu)
  for (;;) {
    uint64_t target = 0, db_purge_seq = 0;
    impl->IndexSeqs(&target, &db_purge_seq);
    if (!h.found) {
      // Built from what the documents are now: no purge to follow.
      h.purge_seq = db_purge_seq;
    } else if (h.purge_seq < db_purge_seq) {
      s = ApplyPurges(p, *impl, view_prefix, db_purge_seq, &h);
      if (!s.ok()) return s;
      need_clean = false;
    }
    if (h.seq >= target) break;
    const uint64_t since = h.seq;
    const uint64_t last = std::min(target, since + kRoundSeqs);
    RoundUpdate u;
    u.p = &p;
    u.view_prefix = &view_prefix;
    u.nviews = nviews;
    // A fresh index has no back-index entries to read.
    u.fresh = !h.found;
    // Row keys this update writes or deletes, for the cached reductions
    // (view_reduce_cache.h). A cache is only created under this index's
    // lock, so none appears while this update runs.
    u.note_changes = p.caches != nullptr && p.caches->Any(ik.base);
    u.count_delta.assign(nviews, 0);
    u.seq = last;
    {
      Header dirty = h;
      dirty.dirty = true;
      u.dirty_header = EncodeHeader(dirty);
    }
    u.held_delta.assign(nviews, 0);
    const size_t units = static_cast<size_t>(last - since);
    // Unit i of the round is seq since + 1 + i.
    auto fetch = [&](size_t from, size_t to, std::vector<std::string>* docs) {
      const auto start = Profiler::Clock::now();
      ChangesOptions co;
      co.since = since + from;
      co.until = since + to;
      co.include_docs = true;
      co.conflicts = true;
      Pending share;
      uint64_t ignored = 0;
      docs->clear();
      Status fs = db.Changes(co, [&](const ChangeRow& r) {
        share.rows.push_back({r.id, r.deleted});
        if (!r.deleted && !IsDesign(r.id)) docs->push_back(r.doc);
        return true;
      }, &ignored);
      if (!fs.ok()) return fs;
      share.read_start = start;
      share.read_end = Profiler::Clock::now();
      prof.Add(&UpdateProfile::read_ms, Profiler::Ms(start, share.read_end));
      prof.Span(start, share.read_end);
      prof.Count(&UpdateProfile::docs, docs->size());
      std::lock_guard<std::mutex> pg(pending_mu);
      pending[from] = std::move(share);
      return Status::OK();
    };
    auto each = [&](size_t from, size_t to, std::string_view json) {
      auto t0 = Profiler::Clock::now();
      Pending share;
      {
        std::lock_guard<std::mutex> pg(pending_mu);
        auto it = pending.find(from);
        if (it == pending.end()) return Status::Internal("map results for a share never read");
        share = std::move(it->second);
        pending.erase(it);
      }
      prof.Add(&UpdateProfile::map_ms, Profiler::Ms(share.read_end, t0), false);
      prof.Count(&UpdateProfile::shares, 1);
      json::Document mapped;
      Status ps = json::Parse(json, &mapped);
      if (!ps.ok()) return ps;
      auto t1 = Profiler::Clock::now();
      prof.Add(&UpdateProfile::parse_ms, Profiler::Ms(t0, t1));
      KVWriteBatch batch;
      // A row per view and a back-index entry per document: the usual one
      // emit, without the batch growing (and moving) as it fills.
      batch.Reserve(share.rows.size() * (nviews + 1));
      std::vector<std::string> changed;
      std::vector<int64_t> delta(nviews, 0);
      // Deleted and design documents lose their rows; the others' rows are
      // their map results, in order.
      rapidjson::SizeType next = 0;
      for (const PendingRow& r : share.rows) {
        const json::Value* emits = nullptr;
        if (!r.deleted && !IsDesign(r.id)) {
          if (!mapped.IsArray() || next >= mapped.Size()) {
            return Status::Internal("map results do not match the documents");
          }
          emits = &mapped[next++];
        }
        ps = ReplaceDocRows(u, r.id, emits, &batch, &changed, &delta);
        if (!ps.ok()) return ps;
      }
      if (!mapped.IsArray() || next != mapped.Size()) {
        return Status::Internal("map results do not match the documents");
      }
      auto t2 = Profiler::Clock::now();
      prof.Add(&UpdateProfile::encode_ms, Profiler::Ms(t1, t2));
      if (from == 0 && to == units) {
        u.held = std::move(batch);
        u.held_changed = std::move(changed);
        u.held_delta = std::move(delta);
        return Status::OK();
      }
      // Prepared here, in parallel with the other shares, not by the
      // round's writer.
      auto prepared = u.p->kv->Prepare(std::move(batch));
      const auto t3 = Profiler::Clock::now();
      prof.Add(&UpdateProfile::prepare_ms, Profiler::Ms(t2, t3));
      ps = CommitPart(u, PartBatch{std::move(prepared), std::move(changed), std::move(delta)});
      const auto t4 = Profiler::Clock::now();
      prof.Add(&UpdateProfile::write_ms, Profiler::Ms(t3, t4));
      prof.Span(t0, t4);
      return ps;
    };
    const auto fan_start = Profiler::Clock::now();
    s = (*fns)->MapShares(code, units, fetch, each);
    if (s.ok()) {
      std::lock_guard<std::mutex> wg(u.mu);
      s = u.write_error;
    }
    const auto fan_end = Profiler::Clock::now();
    prof.Add(&UpdateProfile::fan_ms, Profiler::Ms(fan_start, fan_end), false);
    prof.Count(&UpdateProfile::rounds, 1);
    if (!s.ok()) {
      // Nothing written past it: the header is exact (again).
      if (!u.committed && need_clean) (void)write_header();
      return s;
    }
    // The round's last batch: a single share's rows, and the header at the
    // round's seq (exact: every share is written).
    KVWriteBatch& batch = u.held;
    for (size_t v = 0; v < nviews; ++v) {
      const int64_t c = static_cast<int64_t>(h.counts[v]) + u.count_delta[v] + u.held_delta[v];
      h.counts[v] = c > 0 ? static_cast<uint64_t>(c) : 0;
    }
    h.seq = last;
    h.dirty = false;
    h.found = true;
    batch.Put(ik.Header(), EncodeHeader(h));
    if (u.note_changes) p.caches->NoteChanges(ik.base, u.held_changed, last);
    s = p.kv->WriteOwned(p.wo, std::move(batch));
    prof.Add(&UpdateProfile::header_ms, Profiler::Ms(fan_end, Profiler::Clock::now()), false);
    if (!s.ok()) return s;
    need_clean = false;
  }
  s = need_clean ? write_header() : Status::OK();
  prof.Add(&UpdateProfile::wall_ms, Profiler::Ms(update_start, Profiler::Clock::now()), false);
  return s;
}

//////// Reading rows

struct Row {
  std::string_view id;
  std::string_view key;    // JSON
  std::string_view value;  // JSON
};

bool DecodeRow(std::string_view v, Row* row) {
  if (!coding::GetLengthPrefixed(&v, &row->id) || !coding::GetLengthPrefixed(&v, &row->key)) {
    return false;
  }
  row->value = v;
  return true;
}

// [lower, upper) of one key range of a view, CouchDB's start/end semantics.
struct Range {
  std::string lower, upper;
};

std::string KeyBound(const std::string& prefix, const json::Value& key,
                     const std::optional<std::string>& docid) {
  std::string b = prefix;
  collation::AppendIndexKey(key, &b);
  if (docid) AppendDocIdKey(*docid, &b);
  return b;
}

Range RangeOf(const std::string& prefix, const ViewQuery& q, const json::Value* start,
              const json::Value* end, bool inclusive_end) {
  Range r;
  const std::string all_end = keys::PrefixEnd(prefix);
  if (!q.descending) {
    r.lower = start ? KeyBound(prefix, *start, q.start_docid) : prefix;
    if (end) {
      std::string b = KeyBound(prefix, *end, q.end_docid);
      r.upper = inclusive_end ? keys::PrefixEnd(b) : b;
    } else {
      r.upper = all_end;
    }
  } else {
    // Descending: the start key is the high end, the end key the low one.
    r.upper = start ? keys::PrefixEnd(KeyBound(prefix, *start, q.start_docid)) : all_end;
    if (end) {
      std::string b = KeyBound(prefix, *end, q.end_docid);
      r.lower = inclusive_end ? b : keys::PrefixEnd(b);
    } else {
      r.lower = prefix;
    }
  }
  return r;
}

// Calls `each` for the rows of `r` in the query's direction until it
// returns false.
template <typename F>
Status Scan(KVStore* kv, const KVSnapshot* snap, const Range& r, bool descending, F&& each) {
  if (r.lower >= r.upper) return Status::OK();
  KVIteratorOptions io;
  io.snapshot = snap;
  io.lower_bound = r.lower;
  io.upper_bound = r.upper;
  auto it = kv->NewIterator(io);
  Row row;
  for (descending ? it->SeekToLast() : it->SeekToFirst(); it->Valid();
       descending ? it->Prev() : it->Next()) {
    if (!DecodeRow(it->value(), &row)) return Status::Corruption("bad view row");
    if (!each(it->key(), row)) break;
  }
  return it->status();
}

// The key a row is grouped under at `level` (SIZE_MAX: the whole key).
void GroupKey(const json::Value& key, size_t level, json::Document* out) {
  if (key.IsArray() && level != SIZE_MAX && key.Size() > level) {
    out->SetArray();
    for (size_t i = 0; i < level; ++i) {
      out->PushBack(json::Value(key[static_cast<rapidjson::SizeType>(i)], out->GetAllocator()),
                    out->GetAllocator());
    }
  } else {
    out->CopyFrom(key, out->GetAllocator());
  }
}

void AppendIncludedDoc(Database& db, const ViewQuery& q, std::string_view row_id,
                       std::string_view value_json, std::string* out) {
  std::string id(row_id);
  GetOptions go;
  go.conflicts = q.conflicts;
  // An emitted {"_id": ...} value links another document (CouchDB's
  // "linked documents").
  if (!value_json.empty() && value_json.front() == '{') {
    json::Document v;
    if (json::Parse(value_json, &v).ok() && v.IsObject()) {
      if (auto it = v.FindMember("_id"); it != v.MemberEnd() && it->value.IsString()) {
        id = std::string(json::View(it->value));
        if (auto r = v.FindMember("_rev"); r != v.MemberEnd() && r->value.IsString()) {
          go.rev = std::string(json::View(r->value));
        }
      }
    }
  }
  auto doc = db.Get(id, go);
  if (doc.ok() && q.after_read) q.after_read(id, &*doc);
  out->append(",\"doc\":");
  out->append(doc.ok() ? *doc : std::string("null"));
}

Status CheckRange(const ViewQuery& q) {
  if (q.start_key == nullptr || q.end_key == nullptr || q.keys != nullptr) return Status::OK();
  int c = collation::Compare(*q.start_key, *q.end_key);
  if (c == 0 && q.start_docid && q.end_docid) c = q.start_docid->compare(*q.end_docid);
  if (!q.descending && c > 0) {
    return Status(Status::Code::kQueryParseError,
                  "No rows can match your key range, reverse your start_key and end_key or set "
                  "descending=true");
  }
  if (q.descending && c < 0) {
    return Status(Status::Code::kQueryParseError,
                  "No rows can match your key range, reverse your start_key and end_key or set "
                  "descending=false");
  }
  return Status::OK();
}

// The ranges a query reads, in order: one per key of `keys`, else one.
std::vector<Range> RangesOf(const std::string& prefix, const ViewQuery& q) {
  std::vector<Range> ranges;
  if (q.keys != nullptr) {
    for (auto& k : q.keys->GetArray()) {
      Range r;
      r.lower = KeyBound(prefix, k, std::nullopt);
      r.upper = keys::PrefixEnd(r.lower);
      ranges.push_back(std::move(r));
    }
  } else if (q.key != nullptr) {
    ranges.push_back(RangeOf(prefix, q, q.key, q.key, true));
  } else {
    ranges.push_back(RangeOf(prefix, q, q.start_key, q.end_key, q.inclusive_end));
  }
  return ranges;
}

// The rows of `r`, a key range of one view: with `cache` (that view's
// _count blocks, valid at index seq `seq`), a block wholly inside the range
// adds its stored count instead of being read, and a block read whole
// leaves its counts for the next query.
Status CountRange(KVStore* kv, const KVSnapshot* snap, ReduceCache* cache, uint64_t seq, const Range& r,
                  uint64_t* n) {
  *n = 0;
  if (cache == nullptr) {
    return Scan(kv, snap, r, false, [&](std::string_view, const Row&) {
      ++*n;
      return true;
    });
  }
  std::string cur = r.lower;
  while (cur < r.upper) {
    ReduceCache::Lookup b = cache->Find(cur, seq);
    const bool whole = cur == b.start && b.end <= r.upper;
    if (whole && b.summary) {
      *n += b.summary->rows;
      cur = b.end;
      continue;
    }
    // The segment read is kept even when the range ends inside the block
    // (the block is cut there): an offset's range always ends inside one,
    // and the first block of a fresh cache is the whole view, so keeping
    // whole blocks only would count every row before the range again at
    // every query.
    Range seg{cur, std::min(b.end, r.upper)};
    std::vector<std::pair<std::string, BlockSummary>> parts;
    Status s = Scan(kv, snap, seg, false, [&](std::string_view kv_key, const Row& row) {
      ++*n;
      if (parts.empty() || parts.back().second.rows == ReduceCache::kBlockRows) {
        parts.emplace_back(parts.empty() ? seg.lower : std::string(kv_key), BlockSummary());
        parts.back().second.first_key.assign(row.key);
      }
      BlockSummary& part = parts.back().second;
      ++part.rows;
      part.last_key.assign(row.key);
      return true;
    });
    if (!s.ok()) return s;
    if (parts.empty()) parts.emplace_back(seg.lower, BlockSummary());
    // The value a _count reduce of the part gives, so that a _count view's
    // reduce and offsets share one cache.
    for (auto& part : parts) part.second.value = std::to_string(part.second.rows);
    cache->Store(b.start, seq, std::move(parts), seg.upper == b.end ? std::string() : seg.upper);
    cur = seg.upper;
  }
  return Status::OK();
}

Status MapQuery(const IndexPlace& p, const KVSnapshot* snap, Database& db, size_t view,
                const Header& h, const ViewQuery& q, ReduceCache* count_cache, std::string* out) {
  const std::string prefix = p.keys.Rows(view);
  std::vector<Range> ranges = RangesOf(prefix, q);
  // offset: the rows before the first one in the query's order (CouchDB
  // reads it from its b-tree's reductions; the cached block counts here).
  uint64_t offset = 0;
  if (!ranges.empty() && q.keys == nullptr) {
    Range before;
    if (!q.descending) {
      before.lower = prefix;
      before.upper = ranges[0].lower;
    } else {
      before.lower = ranges[0].upper;
      before.upper = keys::PrefixEnd(prefix);
    }
    Status s = CountRange(p.kv, snap, count_cache, h.seq, before, &offset);
    if (!s.ok()) return s;
  }
  out->append("{\"total_rows\":");
  out->append(std::to_string(h.counts[view]));
  out->append(",\"offset\":");
  out->append(std::to_string(std::min(offset + q.skip, h.counts[view])));
  if (q.update_seq) {
    out->append(",\"update_seq\":");
    out->append(std::to_string(h.seq));
  }
  out->append(",\"rows\":[");
  uint64_t skipped = 0, emitted = 0;
  bool first = true;
  for (const Range& r : ranges) {
    if (emitted >= q.limit) break;
    Status s = Scan(p.kv, snap, r, q.descending, [&](std::string_view, const Row& row) {
      if (skipped < q.skip) {
        ++skipped;
        return true;
      }
      if (emitted >= q.limit) return false;
      ++emitted;
      if (!first) out->push_back(',');
      first = false;
      out->append("{\"id\":");
      json::AppendQuoted(out, row.id);
      out->append(",\"key\":");
      out->append(row.key);
      out->append(",\"value\":");
      out->append(row.value);
      if (q.include_docs) AppendIncludedDoc(db, q, row.id, row.value, out);
      out->push_back('}');
      return true;
    });
    if (!s.ok()) return s;
  }
  out->append("]}");
  return Status::OK();
}

// One group of a reduce query: its key and what it reduces.
struct Group {
  std::string key;  // JSON
  std::string encoded;
  // JavaScript: the rows read for the group ([key, id] JSON, value JSON),
  // and reductions that stand for other rows of it (cached blocks').
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::vector<std::string> reduced;
  // Rows [from, to) of keys/values that a new block part (NewPart, by
  // index) holds whole: the part's reduction stands for them.
  struct Covered {
    size_t from, to, part;
  };
  std::vector<Covered> covered;
  std::string result;  // the group's value (JSON)
};

// A part of a block read whole for a JavaScript reduce: its rows, reduced
// in the same call as the groups' rows, then kept in the cache.
struct NewPart {
  std::vector<std::string> keys, values;
  std::string result;
};

std::string JoinArray(const std::vector<std::string>& items, size_t from, size_t to) {
  std::string a = "[";
  for (size_t i = from; i < to; ++i) {
    if (i > from) a.push_back(',');
    a.append(items[i]);
  }
  a.push_back(']');
  return a;
}

// Reduces through the JavaScript reduce `source`, in one call, every new
// part and every group's rows no part covers (in chunks of kReduceChunk);
// then, in a second call, rereduces each group's reductions (its cached
// blocks', its parts', its chunks') unless it has only one.
Status ReduceJs(ViewFunctions* fns, const MapCode& code, const std::string& source,
                std::vector<Group>& groups, std::vector<NewPart>& parts) {
  if (fns == nullptr) return Status::Internal("JavaScript reduce needs the settee runtime");
  std::string calls = "[";
  size_t ncalls = 0;
  auto add_call = [&](const std::vector<std::string>& keys, const std::vector<std::string>& values,
                      size_t from, size_t to) {
    if (ncalls++ > 0) calls.push_back(',');
    calls += '[';
    calls += JoinArray(keys, from, to);
    calls += ',';
    calls += JoinArray(values, from, to);
    calls += ",false]";
  };
  for (const NewPart& part : parts) add_call(part.keys, part.values, 0, part.keys.size());
  std::vector<std::vector<size_t>> chunk_calls(groups.size());
  for (size_t g = 0; g < groups.size(); ++g) {
    Group& gr = groups[g];
    // In row order (a descending walk adds a block's parts top first).
    std::sort(gr.covered.begin(), gr.covered.end(),
              [](const Group::Covered& a, const Group::Covered& b) { return a.from < b.from; });
    auto run = [&](size_t from, size_t to) {
      for (size_t f = from; f < to; f += kReduceChunk) {
        chunk_calls[g].push_back(ncalls);
        add_call(gr.keys, gr.values, f, std::min(to, f + kReduceChunk));
      }
    };
    size_t at = 0;
    for (const Group::Covered& c : gr.covered) {
      run(at, c.from);
      at = c.to;
    }
    run(at, gr.keys.size());
    if (chunk_calls[g].empty() && gr.covered.empty() && gr.reduced.empty()) {
      chunk_calls[g].push_back(ncalls);
      add_call(gr.keys, gr.values, 0, 0);
    }
  }
  calls.push_back(']');
  json::Document results;
  std::string out;
  if (ncalls > 0) {
    Status s = fns->Reduce(code, source, calls, &out);
    if (!s.ok()) return s;
    s = json::Parse(out, &results);
    if (!s.ok()) return s;
    if (!results.IsArray() || results.Size() != ncalls) return Status::Internal("reduce results do not match");
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    parts[i].result = json::Serialize(results[static_cast<rapidjson::SizeType>(i)]);
  }
  std::string rereduce = "[";
  std::vector<size_t> needs;
  for (size_t g = 0; g < groups.size(); ++g) {
    Group& gr = groups[g];
    std::vector<std::string> partials = std::move(gr.reduced);
    for (const Group::Covered& c : gr.covered) partials.push_back(parts[c.part].result);
    for (size_t k : chunk_calls[g]) partials.push_back(json::Serialize(results[static_cast<rapidjson::SizeType>(k)]));
    if (partials.size() == 1) {
      gr.result = std::move(partials[0]);
      continue;
    }
    if (!needs.empty()) rereduce.push_back(',');
    rereduce += "[null,";
    rereduce += JoinArray(partials, 0, partials.size());
    rereduce += ",true]";
    needs.push_back(g);
  }
  rereduce.push_back(']');
  if (!needs.empty()) {
    Status s = fns->Reduce(code, source, rereduce, &out);
    if (!s.ok()) return s;
    s = json::Parse(out, &results);
    if (!s.ok()) return s;
    if (!results.IsArray() || results.Size() != needs.size()) {
      return Status::Internal("rereduce results do not match");
    }
    for (size_t i = 0; i < needs.size(); ++i) {
      groups[needs[i]].result = json::Serialize(results[static_cast<rapidjson::SizeType>(i)]);
    }
  }
  return Status::OK();
}

// The collation encoding of a JSON key.
Status EncodeJsonKey(std::string_view key_json, std::string* out) {
  json::Document k;
  Status s = json::Parse(key_json, &k);
  if (!s.ok()) return s;
  out->clear();
  collation::AppendIndexKey(k, out);
  return Status::OK();
}

// What the reduce cache is kept under: the built-in's name, or the
// JavaScript function's source.
std::string CacheName(const std::string& reduce) {
  switch (ParseBuiltin(reduce)) {
    case Builtin::kSum: return "_sum";
    case Builtin::kCount: return "_count";
    case Builtin::kStats: return "_stats";
    case Builtin::kApproxCountDistinct: return "_approx_count_distinct";
    case Builtin::kNone: break;
  }
  return reduce;
}

// A reduce query. With `cache` (the view's reductions), a block of rows
// that lies wholly inside a range and inside one group adds its cached
// value instead of its rows, and every block read whole leaves its summary
// for the next query: built-ins' at once, a JavaScript reduce's once the
// reduce call that computes the groups' values has computed them too.
Status ReduceQuery(const IndexPlace& p, const KVSnapshot* snap, ViewFunctions* fns,
                   const MapCode& code, size_t view, const std::string& reduce, const Header& h,
                   const ViewQuery& q, ReduceCache* cache, std::string* out) {
  const Builtin builtin = ParseBuiltin(reduce);
  const bool js = builtin == Builtin::kNone;
  const bool distinct = builtin == Builtin::kApproxCountDistinct;
  const bool grouped = q.group || q.group_level.has_value();
  const size_t level = q.group_level ? static_cast<size_t>(*q.group_level)
                                     : (q.group ? SIZE_MAX : 0);
  const std::string prefix = p.keys.Rows(view);
  std::vector<Range> ranges = RangesOf(prefix, q);
  std::vector<Group> groups;
  BuiltinReducer reducer(builtin);
  // JavaScript: the parts of blocks read whole, and the blocks to store once
  // their parts are reduced (the first part's index in new_parts).
  std::vector<NewPart> new_parts;
  struct PendingStore {
    std::string start;
    std::vector<std::pair<std::string, BlockSummary>> parts;
    size_t first_part;
    std::string end;
  };
  std::vector<PendingStore> pending_stores;
  // Groups needed: skip + limit of them (all when ungrouped: one).
  // A descending query with the cache and without a limit or keys reduces
  // its range in ascending order, block by block, and reverses the groups
  // (the blocks are cut from the bottom, as ascending queries cut them);
  // with a limit it walks the blocks from the top.
  const bool reverse = cache != nullptr && q.descending && q.limit == UINT64_MAX && q.keys == nullptr;
  const uint64_t wanted = q.limit == UINT64_MAX || reverse ? UINT64_MAX : q.skip + q.limit;
  Status err;
  bool open = false;
  auto close_group = [&]() {
    if (open && !js) groups.back().result = reducer.Finish();
    open = false;
  };
  json::Document key_doc, group_doc;
  // The group key (JSON) and its encoding of a row's key.
  auto group_of = [&](std::string_view key_json, std::string* gkey, std::string* encoded) -> Status {
    encoded->clear();
    *gkey = "null";
    if (!grouped) return Status::OK();
    Status s = json::Parse(key_json, &key_doc);
    if (!s.ok()) return s;
    GroupKey(key_doc, level, &group_doc);
    collation::AppendIndexKey(group_doc, encoded);
    *gkey = json::Serialize(group_doc);
    return Status::OK();
  };
  // Opens the group of `encoded` unless it is the open one; false once
  // enough groups are done.
  auto enter_group = [&](std::string gkey, std::string encoded) {
    if (open && groups.back().encoded == encoded) return true;
    close_group();
    if (groups.size() >= wanted) return false;
    groups.emplace_back();
    groups.back().key = std::move(gkey);
    groups.back().encoded = std::move(encoded);
    open = true;
    return true;
  };
  // Adds a row (`enc_key`: its key's encoding, for _approx_count_distinct).
  auto add_row = [&](const Row& row, std::string_view enc_key) {
    std::string gkey, encoded;
    err = group_of(row.key, &gkey, &encoded);
    if (!err.ok()) return false;
    if (!enter_group(std::move(gkey), std::move(encoded))) return false;
    Group& g = groups.back();
    if (!js) {
      err = reducer.Add(enc_key, row.value);
      if (!err.ok()) return false;
    } else {
      std::string pair = "[";
      pair.append(row.key);
      pair.push_back(',');
      json::AppendQuoted(&pair, row.id);
      pair.push_back(']');
      g.keys.push_back(std::move(pair));
      g.values.emplace_back(row.value);
    }
    return true;
  };
  std::string enc_key;
  bool stopped = false;
  for (size_t ri = 0; ri < ranges.size() && !stopped; ++ri) {
    const Range& r = ranges[ri];
    // Each of `keys` is its own fold in CouchDB (couch_mrview_util:key_opts):
    // a key given twice in a row answers twice, not once with its rows
    // reduced twice over.
    close_group();
    if (cache == nullptr) {
      Status s = Scan(p.kv, snap, r, q.descending, [&](std::string_view, const Row& row) {
        if (distinct) {
          err = EncodeJsonKey(row.key, &enc_key);
          if (!err.ok()) return false;
        }
        return (stopped = !add_row(row, enc_key)) == false;
      });
      if (!err.ok()) return err;
      if (!s.ok()) return s;
      continue;
    }
    // Block by block, from the top when descending (unless reversing).
    const bool down = q.descending && !reverse;
    std::string cur = down ? r.upper : r.lower;
    while ((down ? cur > r.lower : cur < r.upper) && !stopped) {
      ReduceCache::Lookup b = down ? cache->FindBefore(cur, h.seq) : cache->Find(cur, h.seq);
      const bool whole = down ? b.end == cur && b.start >= r.lower : cur == b.start && b.end <= r.upper;
      if (whole && b.summary) {
        const BlockSummary& sum = *b.summary;
        if (sum.rows == 0) {
          cur = down ? b.start : b.end;
          continue;
        }
        std::string gfirst, efirst, glast, elast;
        err = group_of(sum.first_key, &gfirst, &efirst);
        if (err.ok()) err = group_of(sum.last_key, &glast, &elast);
        if (!err.ok()) return err;
        if (efirst == elast) {
          if (!enter_group(std::move(gfirst), std::move(efirst))) break;
          if (js) {
            groups.back().reduced.push_back(sum.value);
          } else if (distinct) {
            std::string first, last;
            err = EncodeJsonKey(sum.first_key, &first);
            if (err.ok()) err = EncodeJsonKey(sum.last_key, &last);
            if (err.ok()) err = reducer.AddDistinctRun(sum.value, first, last);
          } else {
            err = reducer.AddReduced(sum.value);
          }
          if (!err.ok()) return err;
          cur = down ? b.start : b.end;
          continue;
        }
      }
      // Read the rows of the block in range, cutting them into parts of
      // kBlockRows rows (from the top when descending), each summarized:
      // the parts become blocks, and what the read leaves of the block
      // before and after them blocks of unknown summary.
      Range seg = down ? Range{std::max(b.start, r.lower), cur} : Range{cur, std::min(b.end, r.upper)};
      std::vector<std::pair<std::string, BlockSummary>> parts;
      BuiltinReducer part_reducer(builtin);
      // JavaScript: the new parts' rows, and the group rows each holds when
      // it lies inside one group.
      std::vector<NewPart> block_parts;
      struct Span {
        size_t group = SIZE_MAX, from = 0, to = 0;
        bool one_group = true;
      };
      std::vector<Span> spans;
      auto close_part = [&]() {
        if (!parts.empty() && !js) parts.back().second.value = part_reducer.Finish();
      };
      bool complete = true;
      Status s = Scan(p.kv, snap, seg, down, [&](std::string_view kv_key, const Row& row) {
        if (distinct) {
          err = EncodeJsonKey(row.key, &enc_key);
          if (!err.ok()) return false;
        }
        if (parts.empty() || parts.back().second.rows == ReduceCache::kBlockRows) {
          close_part();
          parts.emplace_back(std::string(kv_key), BlockSummary());
          (down ? parts.back().second.last_key : parts.back().second.first_key).assign(row.key);
          if (js) {
            block_parts.emplace_back();
            spans.emplace_back();
          }
        }
        auto& [part_start, part] = parts.back();
        ++part.rows;
        if (down) {
          // A part read downwards starts at its lowest row.
          part_start.assign(kv_key);
          part.first_key.assign(row.key);
        } else {
          part.last_key.assign(row.key);
        }
        if (!js) {
          err = part_reducer.Add(enc_key, row.value);
          if (!err.ok()) return false;
        }
        if (!add_row(row, enc_key)) {
          stopped = true;
          complete = false;
          return false;
        }
        if (js) {
          // The row as add_row kept it, for the part too.
          const Group& g = groups.back();
          block_parts.back().keys.push_back(g.keys.back());
          block_parts.back().values.push_back(g.values.back());
          Span& span = spans.back();
          const size_t gi = groups.size() - 1, at = g.keys.size() - 1;
          if (span.group == SIZE_MAX) {
            span.group = gi;
            span.from = at;
          } else if (span.group != gi) {
            span.one_group = false;
          }
          span.to = at + 1;
        }
        return true;
      });
      if (!err.ok()) return err;
      if (!s.ok()) return s;
      // The parts' end: the segment's (empty: the block's end). Stopped
      // (enough groups): the last part holds the row not taken; the parts
      // before it were read whole and are kept.
      std::string parts_end = seg.upper == b.end ? std::string() : seg.upper;
      if (!complete) {
        if (!down) parts_end = parts.back().first;
        parts.pop_back();
        if (js) {
          block_parts.pop_back();
          spans.pop_back();
        }
      } else {
        close_part();
      }
      if (down) {
        std::reverse(parts.begin(), parts.end());
        std::reverse(block_parts.begin(), block_parts.end());
        std::reverse(spans.begin(), spans.end());
      }
      // The lowest part starts where the read began (ascending) or ended
      // (descending, unless stopped: then at its lowest row).
      if (parts.empty() && complete) {
        // No rows: the segment is one empty part (its value is never used:
        // rows == 0).
        parts.emplace_back(seg.lower, BlockSummary());
        parts.back().second.value = js ? "null" : part_reducer.Finish();
      } else if (!parts.empty() && (!down || complete)) {
        parts.front().first = seg.lower;
      }
      if (!parts.empty()) {
        if (!js || block_parts.empty()) {
          cache->Store(b.start, h.seq, std::move(parts), parts_end);
        } else {
          const size_t first = new_parts.size();
          for (size_t i = 0; i < block_parts.size(); ++i) {
            if (spans[i].one_group) groups[spans[i].group].covered.push_back({spans[i].from, spans[i].to, first + i});
            new_parts.push_back(std::move(block_parts[i]));
          }
          pending_stores.push_back({b.start, std::move(parts), first, std::move(parts_end)});
        }
      }
      cur = down ? seg.lower : seg.upper;
    }
  }
  close_group();
  if (reverse) std::reverse(groups.begin(), groups.end());
  if (js && !groups.empty()) {
    Status s = ReduceJs(fns, code, reduce, groups, new_parts);
    if (!s.ok()) return s;
    for (PendingStore& ps : pending_stores) {
      for (size_t i = 0; i < ps.parts.size(); ++i) ps.parts[i].second.value = new_parts[ps.first_part + i].result;
      cache->Store(ps.start, h.seq, std::move(ps.parts), ps.end);
    }
  }
  out->append("{");
  if (q.update_seq) {
    out->append("\"update_seq\":");
    out->append(std::to_string(h.seq));
    out->append(",");
  }
  out->append("\"rows\":[");
  bool first = true;
  for (size_t i = std::min<uint64_t>(q.skip, groups.size()); i < groups.size(); ++i) {
    if (!first) out->push_back(',');
    first = false;
    out->append("{\"key\":");
    out->append(groups[i].key);
    out->append(",\"value\":");
    out->append(groups[i].result);
    out->push_back('}');
  }
  out->append("]}");
  return Status::OK();
}

// The cache of a view's reductions. A new one is made under the index's
// lock, so an update either runs before it (and the caller's snapshot, taken
// after, sees that update) or after it (and notes its changes to it).
// A query that finds the index being updated goes without (stale=ok must
// not wait for the update).
std::shared_ptr<ReduceCache> CacheFor(const IndexPlace& p, const std::string& prefix,
                                      const std::string& reduce) {
  if (p.caches == nullptr) return nullptr;
  const std::string name = CacheName(reduce);
  if (auto cache = p.caches->Find(prefix, name)) return cache;
  auto lock = IndexLock(p.kv, p.keys.base);
  std::unique_lock<std::mutex> g(*lock, std::try_to_lock);
  if (!g.owns_lock()) return nullptr;
  return p.caches->Get(prefix, name);
}

Status QueryAt(const IndexPlace& p, Database& db, ViewFunctions* js, const DesignDoc& ddoc,
               const ViewDef& view, const ViewQuery& q, std::string* out) {
  const bool has_reduce = !view.reduce.empty();
  const bool reduce = q.reduce.value_or(has_reduce);
  if (reduce && !has_reduce) {
    if (q.reduce.has_value()) {
      return Status(Status::Code::kQueryParseError, "Reduce is invalid for map-only views.");
    }
  }
  if (!has_reduce && (q.group || q.group_level.has_value())) {
    return Status(Status::Code::kQueryParseError, "Invalid use of grouping on a map view.");
  }
  if (reduce && has_reduce && q.include_docs) {
    return Status(Status::Code::kQueryParseError, "`include_docs` is invalid for reduce");
  }
  if (reduce && has_reduce && q.keys != nullptr && !q.group && !q.group_level.has_value()) {
    return Status(Status::Code::kQueryParseError,
                  "Multi-key fetches for reduce views must use `group=true`");
  }
  if (!reduce && (q.group || q.group_level.has_value())) {
    return Status(Status::Code::kQueryParseError, "Invalid use of grouping when reduce=false");
  }
  Status s = CheckRange(q);
  if (!s.ok()) return s;
  if (q.update == UpdateMode::kTrue) {
    s = UpdateAt(p, db, js, ddoc.code);
    if (!s.ok()) return s;
  }
  // The cached reductions, taken before the snapshot (see CacheFor).
  std::shared_ptr<ReduceCache> cache;
  if (reduce && has_reduce) {
    cache = CacheFor(p, p.keys.Rows(view.map_index), view.reduce);
  } else if (!(reduce && has_reduce) && q.keys == nullptr) {
    // A map query's offset counts the rows before its range.
    cache = CacheFor(p, p.keys.Rows(view.map_index), "_count");
  }
  auto snap = p.kv->GetSnapshot();
  Header h;
  s = ReadHeader(p.kv, KVReadOptions{snap.get()}, p.keys, ddoc.code.maps.size(), &h);
  if (!s.ok()) return s;
  out->clear();
  if (reduce && has_reduce) {
    s = ReduceQuery(p, snap.get(), js, ddoc.code, view.map_index, view.reduce, h, q, cache.get(), out);
  } else {
    s = MapQuery(p, snap.get(), db, view.map_index, h, q, cache.get(), out);
  }
  if (!s.ok()) return s;
  if (q.update == UpdateMode::kLazy) {
    // update=lazy: answered from the index as it was, updated afterwards.
    snap.reset();
    s = UpdateAt(p, db, js, ddoc.code);
    (void)s;  // the answer stands; a later query reports the failure
  }
  return Status::OK();
}

Result<DesignDoc> LoadDesignDoc(Database& db, std::string_view ddoc) {
  std::string id = "_design/";
  id.append(ddoc);
  auto body = db.Get(id);
  if (!body.ok()) return body.status();
  return ParseDesignDoc(id, *body);
}

}  // namespace

Status QueryDesignDoc(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                      const ViewDef& view, const ViewQuery& query, std::string* out) {
  auto place = PlaceOf(store, db, ddoc);
  if (!place.ok()) return place.status();
  return QueryAt(*place, db, functions, ddoc, view, query, out);
}

Status Query(Store& store, Database& db, ViewFunctions* functions, std::string_view ddoc,
             std::string_view view, const ViewQuery& query, std::string* out) {
  auto d = LoadDesignDoc(db, ddoc);
  if (!d.ok()) return d.status();
  const ViewDef* v = d->Find(view);
  if (v == nullptr) return Status::NotFound("missing_named_view");
  return QueryDesignDoc(store, db, functions, *d, *v, query, out);
}

Status ScanIndex(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                 const ViewDef& view, bool update, const std::string& lower,
                 const std::string& upper, bool descending,
                 const std::function<bool(const IndexRow&)>& each) {
  auto place = PlaceOf(store, db, ddoc);
  if (!place.ok()) return place.status();
  if (update) {
    Status s = UpdateAt(*place, db, functions, ddoc.code);
    if (!s.ok()) return s;
  }
  const std::string prefix = place->keys.Rows(view.map_index);
  Range r;
  r.lower = prefix + lower;
  r.upper = upper.empty() ? keys::PrefixEnd(prefix) : prefix + upper;
  auto snap = place->kv->GetSnapshot();
  return Scan(place->kv, snap.get(), r, descending, [&](std::string_view, const Row& row) {
    return each(IndexRow{row.id, row.key, row.value});
  });
}

Status UpdateIndex(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                   UpdateProfile* profile) {
  auto place = PlaceOf(store, db, ddoc);
  if (!place.ok()) return place.status();
  return UpdateAt(*place, db, functions, ddoc.code, profile);
}

Status TempQuery(Database& db, ViewFunctions* functions, const DesignDoc& temp,
                 const ViewQuery& query, std::string* out) {
  std::unique_ptr<KVStore> kv = NewMemoryStore();
  IndexPlace p;
  p.kv = kv.get();
  p.keys.base = "T";
  ViewQuery q = query;
  q.update = UpdateMode::kTrue;
  return QueryAt(p, db, functions, temp, temp.views[0], q, out);
}

Status DesignDocs(Database& db, AllDocsResult* out) {
  AllDocsOptions ao;
  ao.start_key = "_design/";
  ao.end_key = "_design0";  // '0' follows '/'
  ao.inclusive_end = false;
  ao.include_docs = true;
  return db.AllDocs(ao, out);
}

namespace {

// Deletes the keys of [lower, upper) in batches, each batch's keys read by
// an iterator that is gone before the batch is written: an iterator's
// snapshot alive during the writes would keep every deleted version, and
// the memory store would leave them for a later writer to collect (the
// next index update, which would pay for this one's removal).
Status DeleteRange(KVStore* kv, const std::string& lower, const std::string& upper) {
  constexpr size_t kBatch = 10000;
  std::string from = lower;
  for (bool more = true; more;) {
    KVWriteBatch batch;
    {
      KVIteratorOptions io;
      io.lower_bound = from;
      io.upper_bound = upper;
      auto it = kv->NewIterator(io);
      for (it->SeekToFirst(); it->Valid() && batch.count() < kBatch; it->Next()) batch.Delete(it->key());
      if (!it->status().ok()) return it->status();
      more = it->Valid();
      // The next batch starts just past this one's last key.
      if (more) from = std::string(it->key());
    }
    if (batch.count() == 0) break;
    Status s = kv->WriteOwned(KVWriteOptions{}, std::move(batch));
    if (!s.ok()) return s;
  }
  return Status::OK();
}

}  // namespace

Status Cleanup(Store& store, Database& db) {
  auto* impl = dynamic_cast<DatabaseImpl*>(&db);
  if (impl == nullptr) return Status::Internal("views need a settee database");
  // The signatures still in use.
  std::unordered_set<std::string> live;
  AllDocsResult docs;
  Status s = DesignDocs(db, &docs);
  if (!s.ok()) return s;
  for (const AllDocsRow& r : docs.rows) {
    auto d = ParseDesignDoc(r.id, r.doc);
    if (d.ok()) live.insert(d->signature);
  }
  const std::string base = keys::DatabaseKeys(impl->db_id()).KindPrefix(keys::kViewKind);
  KVStore* kv = impl->kv();
  constexpr size_t kSigLen = 32;
  // The dead indexes, found first: their keys are deleted without an
  // iterator alive (DeleteRange).
  std::vector<std::string> dead;
  {
    KVIteratorOptions io;
    io.lower_bound = base;
    io.upper_bound = keys::PrefixEnd(base);
    auto it = kv->NewIterator(io);
    for (it->SeekToFirst(); it->Valid();) {
      std::string_view k = it->key();
      if (k.size() < base.size() + kSigLen) {
        it->Next();
        continue;
      }
      std::string sig_base = base + std::string(k.substr(base.size(), kSigLen));
      if (!live.count(sig_base.substr(base.size()))) dead.push_back(sig_base);
      it->Seek(keys::PrefixEnd(sig_base));
    }
    if (!it->status().ok()) return it->status();
  }
  for (const std::string& sig_base : dead) {
    // Under the index's lock, so no update is halfway.
    auto lock = IndexLock(kv, sig_base);
    std::lock_guard<std::mutex> g(*lock);
    impl->reduce_caches().Drop(sig_base);
    s = DeleteRange(kv, sig_base, keys::PrefixEnd(sig_base));
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status Info(Store& store, Database& db, std::string_view ddoc, std::string* out) {
  auto d = LoadDesignDoc(db, ddoc);
  if (!d.ok()) return d.status();
  auto place = PlaceOf(store, db, *d);
  if (!place.ok()) return place.status();
  Header h;
  Status s = ReadHeader(place->kv, KVReadOptions{}, place->keys, d->code.maps.size(), &h);
  if (!s.ok()) return s;
  uint64_t size = place->kv->ApproximateSize(place->keys.base, keys::PrefixEnd(place->keys.base));
  out->clear();
  out->append("{\"name\":");
  json::AppendQuoted(out, ddoc);
  out->append(",\"view_index\":{\"signature\":\"");
  out->append(d->signature);
  out->append("\",\"language\":");
  json::AppendQuoted(out, d->code.language);
  out->append(",\"update_seq\":");
  out->append(std::to_string(h.seq));
  out->append(",\"purge_seq\":");
  out->append(std::to_string(h.purge_seq));
  out->append(",\"updater_running\":false,\"compact_running\":false,"
              "\"waiting_clients\":0,\"waiting_commit\":false,\"sizes\":{\"file\":");
  out->append(std::to_string(size));
  out->append(",\"active\":");
  out->append(std::to_string(size));
  out->append(",\"external\":");
  out->append(std::to_string(size));
  out->append("}}}");
  return Status::OK();
}

}  // namespace settee::views
