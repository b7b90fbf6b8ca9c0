// libFuzzer target: a model-checked sequence of database operations.
//
// The input is a script of writes (BulkDocs, BulkDocsArray, Put, Delete; with
// the current _rev, a stale one or none; ids from a small set, ids past every
// stored one, generated ids), Compact() and reopening the store over the same
// in-memory KV (a new DatabaseImpl, which reads its largest doc id back from
// the store). Only new_edits=true writes, so every document's history is one
// branch and a simple model predicts every result: the status (conflict or
// not), the new revision (generation and hash) and its seq. After every step
// the database must agree with the model through Get, AllDocs, Info and
// Changes (all, since, descending, limit, doc_ids).
//
// Exercises the write path's change blocks and 'o' obsolete markers,
// CompactChanges(), PrefetchRecords/LoadRecords and the largest-doc-id
// fast path (an existing document treated as new would show up as a write
// without _rev that succeeds instead of conflicting).
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/kv.h"
#include "settee/store.h"
#include "storage/document.h"
#include "util/json.h"

namespace {

using namespace settee;

std::string g_trace;  // the steps so far, printed on failure

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "\n*** database_ops_fuzzer: %s\n--- steps:\n%s\n", what.c_str(), g_trace.c_str());
  std::abort();
}

void Check(bool ok, const std::string& what) {
  if (!ok) Fail(what);
}

// Forwards to a KV store that outlives the Store, so the store can be reopened.
class SharedKV final : public KVStore {
 public:
  explicit SharedKV(std::shared_ptr<KVStore> kv) : kv_(std::move(kv)) {}
  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override { return kv_->Get(o, k, v); }
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override { return kv_->Write(o, b); }
  Status WriteOwned(const KVWriteOptions& o, KVWriteBatch&& b) override {
    return kv_->WriteOwned(o, std::move(b));
  }
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& o) override { return kv_->NewIterator(o); }
  std::shared_ptr<const KVSnapshot> GetSnapshot() override { return kv_->GetSnapshot(); }
  uint64_t ApproximateSize(std::string_view b, std::string_view e) override { return kv_->ApproximateSize(b, e); }
  void CompactRange(std::string_view b, std::string_view e) override { kv_->CompactRange(b, e); }
  std::string_view BackendName() const override { return kv_->BackendName(); }

 private:
  std::shared_ptr<KVStore> kv_;
};

struct ModelDoc {
  uint64_t gen = 0;
  std::string rev;  // "gen-hash"
  bool deleted = false;
  uint64_t seq = 0;
};

struct World {
  std::shared_ptr<KVStore> kv = std::shared_ptr<KVStore>(NewMemoryStore());
  std::unique_ptr<Store> store;
  std::shared_ptr<Database> db;
  std::map<std::string, ModelDoc> docs;  // every non-local document written
  uint64_t update_seq = 0;
  int next_new_id = 0;

  void Open(bool create) {
    db.reset();
    store.reset();
    StoreOptions options;
    options.max_document_size = 1 << 16;
    std::shared_ptr<KVStore> shared = kv;
    options.kv_factory = [shared] { return std::unique_ptr<KVStore>(new SharedKV(shared)); };
    auto opened = Store::Open(options);
    Check(opened.ok(), "Store::Open: " + opened.status().ToString());
    store = std::move(opened).value();
    auto d = create ? store->CreateDatabase("db") : store->OpenDatabase("db");
    Check(d.ok(), "Create/OpenDatabase: " + d.status().ToString());
    db = *d;
  }
};

const char* const kIds[] = {"a", "b", "c", "m", "n", "x", "_design/d", "_local/l"};

struct Write {
  std::string id;        // "" = generated
  enum class RevMode { kNone, kCurrent, kStale } rev_mode = RevMode::kNone;
  std::string rev;       // as sent
  bool deleted = false;
  int value = 0;
};

std::string PickId(FuzzedDataProvider& in, World& w) {
  uint8_t b = in.ConsumeIntegral<uint8_t>();
  if (b < 160) return kIds[b % 8];
  if (b < 230) {
    // Past every id so far (the largest-doc-id fast path), ascending.
    char buf[16];
    std::snprintf(buf, sizeof buf, "z%04d", w.next_new_id++);
    return buf;
  }
  if (b < 245) return "";  // generated
  // Between existing ids.
  return std::string(kIds[b % 6]) + "0";
}

Write MakeWrite(FuzzedDataProvider& in, World& w) {
  Write wr;
  wr.id = PickId(in, w);
  uint8_t m = in.ConsumeIntegral<uint8_t>();
  wr.deleted = (m & 0x80) != 0;
  wr.value = m & 0x0f;
  auto it = w.docs.find(wr.id);
  switch ((m >> 4) & 7) {
    case 0: case 1: case 2:
      wr.rev_mode = Write::RevMode::kCurrent;
      if (it != w.docs.end()) wr.rev = it->second.rev;
      else wr.rev_mode = Write::RevMode::kNone;
      break;
    case 3:
      wr.rev_mode = Write::RevMode::kStale;
      wr.rev = "1-0123456789abcdef0123456789abcdef";
      break;
    default:
      wr.rev_mode = Write::RevMode::kNone;
      break;
  }
  if (wr.id.rfind("_local/", 0) == 0 && wr.rev_mode == Write::RevMode::kStale) {
    wr.rev_mode = Write::RevMode::kNone;  // _local revisions are "0-N": not modelled
    wr.rev.clear();
  }
  return wr;
}

std::string Body(const Write& wr) { return "{\"v\":" + std::to_string(wr.value) + "}"; }

std::string DocJson(const Write& wr) {
  std::string j = "{";
  if (!wr.id.empty()) j += "\"_id\":" + json::Quote(wr.id) + ",";
  if (!wr.rev.empty()) j += "\"_rev\":" + json::Quote(wr.rev) + ",";
  if (wr.deleted) j += "\"_deleted\":true,";
  j += "\"v\":" + std::to_string(wr.value) + "}";
  return j;
}

bool IsLocal(const std::string& id) { return id.rfind("_local/", 0) == 0; }

// Applies the model to one write's result (in batch order).
void Expect(World& w, const Write& wr, const DocUpdateResult& r) {
  const std::string what = "write " + DocJson(wr) + " -> " + r.status.ToString() + " id=" + r.id + " rev=" + r.rev;
  if (IsLocal(wr.id)) return;  // not modelled beyond "never in changes/all_docs"
  if (wr.id.empty()) {
    if (!wr.rev.empty()) {  // a _rev for a document that cannot exist yet
      Check(r.status.code() == Status::Code::kConflict, "expected a conflict: " + what);
      return;
    }
    Check(r.status.ok() && !r.id.empty(), "generated-id write failed: " + what);
    Check(w.docs.count(r.id) == 0, "generated id names an existing document: " + what);
  } else {
    Check(r.id == wr.id, "result id differs: " + what);
  }
  const std::string id = wr.id.empty() ? r.id : wr.id;
  auto it = w.docs.find(id);
  const bool exists = it != w.docs.end();
  bool ok;
  uint64_t parent_gen = 0;
  std::string parent_rev;
  if (!exists) {
    ok = wr.rev.empty();
  } else if (!wr.rev.empty()) {
    ok = wr.rev == it->second.rev;
  } else {
    ok = it->second.deleted;
  }
  if (ok && exists) {
    parent_gen = it->second.gen;
    parent_rev = it->second.rev;
  }
  if (!ok) {
    Check(r.status.code() == Status::Code::kConflict, "expected a conflict: " + what);
    return;
  }
  Check(r.status.ok(), "expected success: " + what);
  ModelDoc d;
  d.gen = parent_gen + 1;
  d.rev = std::to_string(d.gen) + "-" + ComputeRevHash(parent_rev, wr.deleted, Body(wr));
  d.deleted = wr.deleted;
  d.seq = ++w.update_seq;
  Check(r.rev == d.rev, "unexpected rev (want " + d.rev + "): " + what);
  w.docs[id] = d;
}

void DoWrites(FuzzedDataProvider& in, World& w) {
  const uint8_t kind = in.ConsumeIntegralInRange<uint8_t>(0, 3);
  const size_t n = kind >= 2 ? 1 : in.ConsumeIntegralInRange<size_t>(1, 8);
  std::vector<Write> writes;
  for (size_t i = 0; i < n; ++i) writes.push_back(MakeWrite(in, w));
  // A batch naming an id twice: the second sees the first (sequential model).
  // Revisions for later writes of the same id were picked from the model
  // before the batch, so they may well conflict; that is modelled too.
  std::vector<DocUpdateResult> results;
  if (kind == 0 || kind == 1) {
    std::vector<std::string> texts;
    for (const Write& wr : writes) texts.push_back(DocJson(wr));
    g_trace += (kind == 0 ? "BulkDocs " : "BulkDocsArray ");
    for (const std::string& t : texts) g_trace += t + " ";
    g_trace += "\n";
    UpdateOptions options;
    Status s;
    if (kind == 0) {
      std::vector<std::string_view> views(texts.begin(), texts.end());
      s = w.db->BulkDocs(views, options, &results);
    } else {
      std::string array = "[";
      for (size_t i = 0; i < texts.size(); ++i) array += (i ? "," : "") + texts[i];
      array += "]";
      s = w.db->BulkDocsArray(array, options, &results);
    }
    Check(s.ok(), "bulk write failed: " + s.ToString());
    Check(results.size() == writes.size(), "bulk result count");
  } else {
    Write& wr = writes[0];
    if (wr.id.empty()) wr.id = "p";  // Put/Delete need an id
    DocUpdateResult r;
    if (kind == 2 || !wr.deleted) {
      g_trace += "Put " + wr.id + " " + DocJson(wr) + "\n";
      auto put = w.db->Put(wr.id, DocJson(wr));
      if (put.ok()) r = *put;
      else r.status = put.status();
    } else {
      g_trace += "Delete " + wr.id + " rev=" + wr.rev + "\n";
      auto del = w.db->Delete(wr.id, wr.rev);
      if (del.ok()) r = *del;
      else r.status = del.status();
      wr.value = -1;  // Delete stores {}
    }
    if (r.id.empty()) r.id = wr.id;
    results.push_back(r);
  }
  for (size_t i = 0; i < writes.size(); ++i) {
    Write wr = writes[i];
    if (wr.value == -1) {
      // Delete's body is {}: model its hash with that body.
      const std::string what = "Delete " + wr.id + " -> " + results[i].status.ToString();
      auto it = w.docs.find(wr.id);
      if (IsLocal(wr.id)) continue;
      const bool exists = it != w.docs.end();
      // Delete() checks first: a missing document, or a deleted one without
      // a rev, is not_found; a live one without a rev a conflict.
      if (!exists || (wr.rev.empty() && it->second.deleted)) {
        Check(results[i].status.IsNotFound(), "expected not_found: " + what);
        continue;
      }
      const bool ok = !wr.rev.empty() && wr.rev == it->second.rev;
      if (!ok) {
        Check(results[i].status.code() == Status::Code::kConflict, "expected a conflict: " + what);
        continue;
      }
      Check(results[i].status.ok(), "expected success: " + what);
      ModelDoc d;
      d.gen = it->second.gen + 1;
      d.rev = std::to_string(d.gen) + "-" + ComputeRevHash(it->second.rev, true, "{}");
      d.deleted = true;
      d.seq = ++w.update_seq;
      Check(results[i].rev == d.rev, "unexpected rev (want " + d.rev + "): " + what + " rev=" + results[i].rev);
      w.docs[wr.id] = d;
      continue;
    }
    Expect(w, wr, results[i]);
  }
}

std::vector<ChangeRow> Changes(World& w, const ChangesOptions& options, uint64_t* last) {
  std::vector<ChangeRow> rows;
  Status s = w.db->Changes(options, [&](const ChangeRow& r) {
    rows.push_back(r);
    return true;
  }, last);
  Check(s.ok(), "Changes: " + s.ToString());
  return rows;
}

void Verify(FuzzedDataProvider& in, World& w) {
  size_t live = 0, deleted = 0;
  for (const auto& [id, d] : w.docs) {
    (d.deleted ? deleted : live)++;
    auto got = w.db->Get(id);
    if (d.deleted) {
      Check(!got.ok() && got.status().IsNotFound(), "Get of deleted " + id + ": " +
                                                         (got.ok() ? *got : got.status().ToString()));
    } else {
      Check(got.ok(), "Get " + id + ": " + got.status().ToString());
      Check(got->find("\"_rev\":\"" + d.rev + "\"") != std::string::npos, "Get " + id + " rev: " + *got);
    }
  }
  auto info = w.db->Info();
  Check(info.ok(), "Info: " + info.status().ToString());
  Check(info->doc_count == live, "doc_count " + std::to_string(info->doc_count) + " want " + std::to_string(live));
  Check(info->doc_del_count == deleted, "doc_del_count " + std::to_string(info->doc_del_count) + " want " +
                                            std::to_string(deleted));
  Check(info->update_seq == w.update_seq, "update_seq " + std::to_string(info->update_seq) + " want " +
                                              std::to_string(w.update_seq));
  AllDocsResult all;
  Check(w.db->AllDocs(AllDocsOptions(), &all).ok(), "AllDocs");
  std::vector<std::pair<std::string, std::string>> want;
  for (const auto& [id, d] : w.docs) {
    if (!d.deleted) want.emplace_back(id, d.rev);
  }
  Check(all.rows.size() == want.size(), "AllDocs row count " + std::to_string(all.rows.size()) +
                                            " want " + std::to_string(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    Check(all.rows[i].id == want[i].first && all.rows[i].rev == want[i].second,
          "AllDocs row " + all.rows[i].id + " " + all.rows[i].rev + " want " + want[i].first + " " + want[i].second);
  }

  // The whole feed: one row per document, at its latest change.
  uint64_t last = 0;
  std::vector<ChangeRow> feed = Changes(w, ChangesOptions(), &last);
  Check(last == info->update_seq, "Changes last_seq " + std::to_string(last) + " want " +
                                      std::to_string(info->update_seq));
  Check(feed.size() == w.docs.size(), "Changes rows " + std::to_string(feed.size()) + " want " +
                                          std::to_string(w.docs.size()));
  for (size_t i = 0; i < feed.size(); ++i) {
    const ChangeRow& r = feed[i];
    if (i > 0) Check(feed[i - 1].seq < r.seq, "Changes seqs not ascending");
    auto it = w.docs.find(r.id);
    Check(it != w.docs.end(), "Changes row for unknown id " + r.id);
    Check(!r.revs.empty() && r.revs[0] == it->second.rev, "Changes rev of " + r.id);
    Check(r.deleted == it->second.deleted, "Changes deleted flag of " + r.id);
  }
  // Seqs relative to each other must follow the model's order.
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [id, d] : w.docs) order.emplace_back(d.seq, id);
  std::sort(order.begin(), order.end());
  for (size_t i = 0; i < feed.size(); ++i) {
    Check(feed[i].id == order[i].second, "Changes order: " + feed[i].id + " want " + order[i].second);
  }
  if (feed.empty()) return;

  // since, descending, limit, doc_ids against the whole feed.
  ChangesOptions o;
  o.since = feed[in.ConsumeIntegralInRange<size_t>(0, feed.size() - 1)].seq - in.ConsumeIntegralInRange<uint64_t>(0, 1);
  std::vector<ChangeRow> tail = Changes(w, o, &last);
  std::vector<const ChangeRow*> want_tail;
  for (const ChangeRow& r : feed) {
    if (r.seq > o.since) want_tail.push_back(&r);
  }
  Check(tail.size() == want_tail.size(), "Changes since=" + std::to_string(o.since) + " rows " +
                                             std::to_string(tail.size()) + " want " + std::to_string(want_tail.size()));
  for (size_t i = 0; i < tail.size(); ++i) {
    Check(tail[i].seq == want_tail[i]->seq && tail[i].id == want_tail[i]->id, "Changes since row");
  }
  ChangesOptions d;
  d.descending = true;
  std::vector<ChangeRow> desc = Changes(w, d, &last);
  Check(desc.size() == feed.size(), "Changes descending rows");
  for (size_t i = 0; i < desc.size(); ++i) {
    Check(desc[i].seq == feed[feed.size() - 1 - i].seq, "Changes descending order");
  }
  ChangesOptions l;
  l.limit = in.ConsumeIntegralInRange<uint64_t>(1, feed.size());
  std::vector<ChangeRow> limited = Changes(w, l, &last);
  Check(limited.size() == l.limit, "Changes limit rows");
  Check(last == limited.back().seq, "Changes limit last_seq");
  ChangesOptions f;
  f.doc_ids.emplace();
  f.doc_ids->push_back(feed[0].id);
  f.doc_ids->push_back(feed.back().id);
  std::vector<ChangeRow> filtered = Changes(w, f, &last);
  Check(filtered.size() == (feed.size() > 1 ? 2u : 1u), "Changes doc_ids rows");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  World w;
  g_trace.clear();
  w.Open(/*create=*/true);
  for (int step = 0; step < 64 && in.remaining_bytes() > 0; ++step) {
    const uint8_t op = in.ConsumeIntegralInRange<uint8_t>(0, 9);
    if (op <= 6) {
      DoWrites(in, w);
    } else if (op == 7) {
      g_trace += "Compact\n";
      Status s = w.db->Compact();
      Check(s.ok(), "Compact: " + s.ToString());
    } else if (op == 8) {
      g_trace += "Reopen\n";
      w.Open(/*create=*/false);
    } else {
      g_trace += "Verify\n";
      Verify(in, w);
    }
    if (op != 9 && in.ConsumeBool()) Verify(in, w);
  }
  g_trace += "Verify (final)\n";
  Verify(in, w);
  static const bool trace = std::getenv("SETTEE_FUZZ_TRACE") != nullptr;
  if (trace) std::fprintf(stderr, "--- steps:\n%s", g_trace.c_str());
  return 0;
}
