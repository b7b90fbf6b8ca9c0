// Database::Purge (storage/database_purge.cc) on both backends, against
// CouchDB 3's purge semantics (api/database/misc.rst, couch_db purge tests):
// leaves and their unshared ancestors go, a fully purged document vanishes
// from every read, purge_seq counts requests, update_seq moves, and a
// failed write leaves no trace.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "settee/store.h"
#include "storage/database_impl.h"
#include "tests/storage/forwarding_kv.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

class PurgeTest : public ::testing::TestWithParam<Backend> {
 protected:
  PurgeTest() : store_(GetParam()) { Open(true); }

  void Open(bool create) {
    auto db = create ? store_->CreateDatabase("purge") : store_->OpenDatabase("purge");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
  }
  void Reopen() {
    db_.reset();
    store_.Reopen();
    Open(GetParam() == Backend::kMemory);
  }

  std::string Put(const std::string& id, const std::string& json) {
    auto r = db_->Put(id, json);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " " << json;
    return r.ok() ? r->rev : "";
  }
  // A replicated revision with its history (new_edits=false): conflicts.
  void PutBranch(const std::string& id, int start, const std::vector<std::string>& hashes,
                 const std::string& body, bool deleted = false) {
    std::string ids;
    for (const auto& h : hashes) ids += (ids.empty() ? "\"" : ",\"") + h + "\"";
    std::string doc = R"({"_id":")" + id + R"(","_rev":")" + std::to_string(start) + "-" +
                      hashes[0] + R"(","_revisions":{"start":)" + std::to_string(start) +
                      R"(,"ids":[)" + ids + "]}" + (deleted ? R"(,"_deleted":true)" : "") +
                      (body.empty() ? "" : "," + body) + "}";
    UpdateOptions repl;
    repl.new_edits = false;
    auto r = db_->Put(id, doc, repl);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }

  std::vector<PurgeResult> Purge(const std::vector<PurgeRequest>& req) {
    std::vector<PurgeResult> out;
    Status s = db_->Purge(req, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  std::vector<std::string> AllDocIds() {
    AllDocsOptions o;
    AllDocsResult r;
    EXPECT_TRUE(db_->AllDocs(o, &r).ok());
    std::vector<std::string> ids;
    for (auto& row : r.rows) ids.push_back(row.id);
    return ids;
  }
  std::vector<std::string> ChangeIds(uint64_t since = 0) {
    std::vector<std::string> ids;
    uint64_t last = 0;
    ChangesOptions o;
    o.since = since;
    Status s = db_->Changes(o, [&](const ChangeRow& r) {
      ids.push_back(r.id + "@" + r.revs[0]);
      return true;
    }, &last);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return ids;
  }

  testing::TempStore store_;
  std::shared_ptr<Database> db_;
};

std::string H(char c) { return std::string(32, c); }

TEST_P(PurgeTest, FullPurgeLeavesNoTrace) {
  std::string a = Put("a", R"({"v":1})");
  std::string b = Put("b", R"({"v":2})");
  a = Put("a", R"({"_rev":")" + a + R"(","v":3})");
  ASSERT_EQ(db_->UpdateSeq(), 3u);
  auto out = Purge({{"a", {a}}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].id, "a");
  EXPECT_EQ(out[0].purged, std::vector<std::string>{a});
  EXPECT_EQ(out[0].removed.size(), 2u);  // 2-... and 1-...
  EXPECT_TRUE(out[0].doc_removed);
  // No tombstone: missing, not deleted.
  auto got = db_->Get("a");
  EXPECT_TRUE(got.status().IsNotFound());
  EXPECT_EQ(got.status().reason(), "missing");
  EXPECT_EQ(AllDocIds(), std::vector<std::string>{"b"});
  EXPECT_EQ(ChangeIds(), std::vector<std::string>{"b@" + b});
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->doc_count, 1u);
  EXPECT_EQ(info->doc_del_count, 0u);
  EXPECT_EQ(info->purge_seq, 1u);
  EXPECT_EQ(info->update_seq, 4u);  // bumped though no change was written
  std::vector<RevsDiffResult> diff;
  ASSERT_TRUE(db_->RevsDiff({{"a", {a}}}, &diff).ok());
  ASSERT_EQ(diff.size(), 1u);
  EXPECT_EQ(diff[0].missing, std::vector<std::string>{a});
  // The id is free again: a new document starts at generation 1.
  EXPECT_EQ(Put("a", R"({"v":9})").substr(0, 2), "1-");
  // The counters survive a reopen (LevelDB), now read from the newest block.
  Reopen();
  if (GetParam() == Backend::kLevelDB) {
    info = db_->Info();
    EXPECT_EQ(info->doc_count, 2u);
    EXPECT_EQ(info->purge_seq, 1u);
    EXPECT_EQ(info->update_seq, 5u);
  }
}

TEST_P(PurgeTest, PurgingADeletedDocumentRemovesTheTombstone) {
  std::string a = Put("a", R"({"v":1})");
  auto del = db_->Delete("a", a);
  ASSERT_TRUE(del.ok());
  EXPECT_EQ(db_->Info()->doc_del_count, 1u);
  auto out = Purge({{"a", {del->rev}}});
  EXPECT_EQ(out[0].purged, std::vector<std::string>{del->rev});
  EXPECT_EQ(db_->Info()->doc_del_count, 0u);
  EXPECT_TRUE(ChangeIds().empty());
  Reopen();
  if (GetParam() == Backend::kLevelDB) {
    EXPECT_EQ(db_->Info()->doc_del_count, 0u);
    EXPECT_TRUE(ChangeIds().empty());
  }
}

TEST_P(PurgeTest, PartialPurgeKeepsTheOtherBranchWithANewChange) {
  // 1-a -> 2-b -> 3-c (winner) and 1-a -> 2-d (conflict).
  PutBranch("doc", 3, {H('c'), H('b'), H('a')}, R"("v":"c")");
  PutBranch("doc", 2, {H('d'), H('a')}, R"("v":"d")");
  Put("other", R"({"v":0})");
  const uint64_t before = db_->UpdateSeq();
  // Purging the winner: its unshared ancestor 2-b goes, 1-a stays (shared).
  auto out = Purge({{"doc", {"3-" + H('c'), "2-" + H('b')}}});
  EXPECT_EQ(out[0].purged, std::vector<std::string>{"3-" + H('c')});  // 2-b is no leaf
  EXPECT_EQ(out[0].removed, (std::vector<std::string>{"3-" + H('c'), "2-" + H('b')}));
  EXPECT_FALSE(out[0].doc_removed);
  GetOptions go;
  go.revs = true;
  go.conflicts = true;
  auto got = db_->Get("doc", go);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  json::Document d;
  ASSERT_TRUE(json::Parse(*got, &d).ok());
  EXPECT_EQ(std::string(d["_rev"].GetString()), "2-" + H('d'));
  EXPECT_EQ(std::string(d["v"].GetString()), "d");
  EXPECT_FALSE(d.HasMember("_conflicts"));
  EXPECT_EQ(d["_revisions"]["ids"].Size(), 2u);  // 2-d, 1-a
  GetOptions old_leaf;
  old_leaf.rev = "2-" + H('b');
  EXPECT_TRUE(db_->Get("doc", old_leaf).status().IsNotFound());
  // The document's change moved past every earlier one.
  auto changes = ChangeIds(before);
  EXPECT_EQ(changes, std::vector<std::string>{"doc@2-" + H('d')});
  EXPECT_EQ(db_->UpdateSeq(), before + 1);
  EXPECT_EQ(db_->Info()->doc_count, 2u);
  // The document is writable on from its new winner.
  auto next = db_->Put("doc", R"({"_rev":"2-)" + H('d') + R"(","v":"e"})");
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  Reopen();
  if (GetParam() == Backend::kLevelDB) {
    EXPECT_EQ(db_->Info()->doc_count, 2u);
    EXPECT_EQ(ChangeIds(before), std::vector<std::string>{"doc@" + next->rev});
  }
}

TEST_P(PurgeTest, PurgingALosingLeafKeepsTheWinner) {
  PutBranch("doc", 2, {H('b'), H('a')}, R"("v":"b")");
  PutBranch("doc", 2, {H('c'), H('a')}, R"("v":"c")");  // wins: higher hash
  auto out = Purge({{"doc", {"2-" + H('b')}}});
  EXPECT_EQ(out[0].purged.size(), 1u);
  GetOptions go;
  go.conflicts = true;
  auto got = db_->Get("doc", go);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->find("_conflicts"), std::string::npos);
  EXPECT_NE(got->find("2-" + H('c')), std::string::npos);
  std::vector<OpenRevResult> open;
  ASSERT_TRUE(db_->GetOpenRevs("doc", {}, {}, &open).ok());
  EXPECT_EQ(open.size(), 1u);
}

TEST_P(PurgeTest, UnknownDocsAndRevsAreIgnoredButLogged) {
  std::string a = Put("a", "{}");
  auto out = Purge({{"nope", {"1-" + H('0')}}, {"a", {"1-" + H('0'), "2-" + H('1')}}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(out[0].purged.empty());
  EXPECT_TRUE(out[1].purged.empty());
  EXPECT_TRUE(db_->Get("a").ok());
  // Every request is a purge info, as CouchDB logs each.
  EXPECT_EQ(db_->PurgeSeq(), 2u);
  auto* impl = dynamic_cast<DatabaseImpl*>(db_.get());
  std::vector<DatabaseImpl::PurgeInfo> infos;
  bool complete = false;
  ASSERT_TRUE(impl->PurgeInfos(0, UINT64_MAX, &infos, &complete).ok());
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_TRUE(complete);
  EXPECT_EQ(infos[0].docid, "nope");
  EXPECT_EQ(infos[1].revs.size(), 2u);
  EXPECT_EQ(infos[1].purge_seq, 2u);
}

// CouchDB does nothing for an empty purge: no info, no update_seq bump.
TEST_P(PurgeTest, EmptyRequestWritesNothing) {
  Put("a", "{}");
  const uint64_t seq = db_->UpdateSeq();
  std::vector<PurgeResult> out(1);
  ASSERT_TRUE(db_->Purge({}, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(db_->UpdateSeq(), seq);
  EXPECT_EQ(db_->PurgeSeq(), 0u);
  EXPECT_EQ(ChangeIds().size(), 1u);
}

TEST_P(PurgeTest, BadRevFailsTheWholeRequest) {
  std::string a = Put("a", "{}");
  std::vector<PurgeResult> out;
  Status s = db_->Purge({{"a", {a}}, {"b", {"junk"}}}, &out);
  EXPECT_EQ(s.code(), Status::Code::kBadRequest);
  EXPECT_EQ(s.reason(), "Invalid rev format");
  EXPECT_TRUE(db_->Get("a").ok());
  EXPECT_EQ(db_->PurgeSeq(), 0u);
}

TEST_P(PurgeTest, ManyDocumentsInOnePurge) {
  // More kept documents than one change block holds.
  std::vector<PurgeRequest> req;
  for (int i = 0; i < 300; ++i) {
    std::string id = "d" + std::to_string(1000 + i);
    PutBranch(id, 1, {H('a')}, R"("v":1)");
    PutBranch(id, 1, {H('b')}, R"("v":2)");
    req.push_back({id, {"1-" + H('b')}});
  }
  for (int i = 0; i < 50; ++i) req.push_back({"x" + std::to_string(i), {"1-" + H('a')}});
  const uint64_t before = db_->UpdateSeq();
  Purge(req);
  EXPECT_EQ(db_->PurgeSeq(), 350u);
  EXPECT_EQ(db_->UpdateSeq(), before + 300);
  auto changes = ChangeIds();
  ASSERT_EQ(changes.size(), 300u);
  for (const auto& c : changes) EXPECT_EQ(c.substr(c.size() - 34), "1-" + H('a'));
  EXPECT_EQ(*db_->CountChanges(0, UINT64_MAX), 300u);
  // Compaction drops the superseded entries and keeps the counters.
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(ChangeIds().size(), 300u);
  EXPECT_EQ(db_->Info()->doc_count, 300u);
  Reopen();
  if (GetParam() == Backend::kLevelDB) {
    EXPECT_EQ(db_->Info()->doc_count, 300u);
  }
}

TEST_P(PurgeTest, CompactionFreesPurgedAttachmentsAndTrimsInfos) {
  auto put = db_->PutAttachment("a", "x.bin", "", "application/octet-stream",
                                testing::Noise(100000, 7));
  ASSERT_TRUE(put.ok());
  auto* impl = dynamic_cast<DatabaseImpl*>(db_.get());
  auto stored_bodies = [&] {
    KVIteratorOptions io;
    io.lower_bound = keys::DatabaseKeys(impl->db_id()).KindPrefix(keys::kAttachmentKind);
    io.upper_bound = keys::PrefixEnd(io.lower_bound);
    auto it = impl->kv()->NewIterator(io);
    int n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  };
  EXPECT_GT(stored_bodies(), 0);
  Purge({{"a", {put->rev}}});
  ASSERT_TRUE(db_->SetPurgedInfosLimit(2).ok());
  for (int i = 0; i < 4; ++i) Purge({{"none" + std::to_string(i), {"1-" + H('a')}}});
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(stored_bodies(), 0);
  std::vector<DatabaseImpl::PurgeInfo> infos;
  bool complete = true;
  ASSERT_TRUE(impl->PurgeInfos(0, impl->PurgeSeq(), &infos, &complete).ok());
  EXPECT_FALSE(complete);  // the oldest three are gone
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].purge_seq, 4u);
  ASSERT_TRUE(impl->PurgeInfos(3, 5, &infos, &complete).ok());
  EXPECT_TRUE(complete);
  EXPECT_EQ(db_->SetPurgedInfosLimit(0).code(), Status::Code::kBadRequest);
  Reopen();
  if (GetParam() == Backend::kLevelDB) {
    EXPECT_EQ(db_->PurgedInfosLimit(), 2u);
    EXPECT_EQ(db_->PurgeSeq(), 5u);
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, PurgeTest,
                         ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

// A purge is one KV batch: when the store fails it, nothing of it shows
// (records, changes, counters, purge_seq), and the same purge succeeds later.
class FaultyKV : public testing::ForwardingKV {
 public:
  FaultyKV(std::string name, std::atomic<bool>* fail) : ForwardingKV(std::move(name)), fail_(fail) {}
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override {
    if (fail_->load()) return Status::IOError("injected write failure");
    return ForwardingKV::Write(o, b);
  }

 private:
  std::atomic<bool>* fail_;
};

TEST(PurgeFaultTest, FailedPurgeWriteLeavesNoTrace) {
  std::atomic<bool> fail{false};
  StoreOptions options;
  options.kv_factory = [&] { return std::make_unique<FaultyKV>("memory", &fail); };
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok());
  auto db = *(*store)->CreateDatabase("faulty");
  auto a = db->Put("a", R"({"v":1})");
  auto b = db->Put("b", R"({"v":2})");
  ASSERT_TRUE(a.ok() && b.ok());
  fail = true;
  std::vector<PurgeResult> out;
  EXPECT_EQ(db->Purge({{"a", {a->rev}}, {"b", {b->rev}}}, &out).code(), Status::Code::kIOError);
  EXPECT_EQ(db->PurgeSeq(), 0u);
  EXPECT_EQ(db->UpdateSeq(), 2u);
  EXPECT_EQ(db->Info()->doc_count, 2u);
  EXPECT_TRUE(db->Get("a").ok());
  fail = false;
  ASSERT_TRUE(db->Purge({{"a", {a->rev}}}, &out).ok());
  EXPECT_EQ(db->PurgeSeq(), 1u);
  EXPECT_EQ(db->UpdateSeq(), 3u);
  EXPECT_EQ(db->Info()->doc_count, 1u);
  EXPECT_TRUE(db->Get("a").status().IsNotFound());
}

// A KV whose Get does not find keys ending with `hidden`: a revision body
// that is not stored.
class HidingKV : public testing::ForwardingKV {
 public:
  HidingKV(std::string name, const std::string* hidden) : ForwardingKV(std::move(name)), hidden_(hidden) {}
  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override {
    if (!hidden_->empty() && k.ends_with(*hidden_)) return Status::NotFound("hidden");
    return ForwardingKV::Get(o, k, v);
  }

 private:
  const std::string* hidden_;
};

// A new winner whose body is not stored gets "" (the write path's "not
// stored"), not "{}": nothing is counted for it.
TEST(PurgeFaultTest, NewWinnerWithoutStoredBodyGetsNoBody) {
  std::string hidden;
  StoreOptions options;
  options.kv_factory = [&] { return std::make_unique<HidingKV>("memory", &hidden); };
  auto store = Store::Open(options);
  ASSERT_TRUE(store.ok());
  auto db = *(*store)->CreateDatabase("hiding");
  const std::string b(32, 'b'), c(32, 'c');
  UpdateOptions repl;
  repl.new_edits = false;
  ASSERT_TRUE(db->Put("doc", R"({"_id":"doc","_rev":"1-)" + b + R"(","v":"b"})", repl).ok());
  ASSERT_TRUE(db->Put("doc", R"({"_id":"doc","_rev":"1-)" + c + R"(","v":"c"})", repl).ok());  // wins
  hidden = "1-" + b;
  std::vector<PurgeResult> out;
  ASSERT_TRUE(db->Purge({{"doc", {"1-" + c}}}, &out).ok());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].purged, std::vector<std::string>{"1-" + c});
  auto info = db->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->doc_count, 1u);
  EXPECT_EQ(info->sizes_external, 0u);
}

}  // namespace
}  // namespace settee
