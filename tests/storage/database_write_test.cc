// The write path (storage/database_write.cc) under concurrency, on both
// backends: many threads write into one database and into several at once,
// through single puts, deletes and bulk batches, with contended updates of
// shared documents; each thread keeps a model of what it was acknowledged,
// and the store must agree with the models at the end: nothing lost, every
// sequence assigned exactly once, the changes feed and the counters exact.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "settee/database.h"
#include "settee/store.h"
#include "tests/storage/forwarding_kv.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

// What one acknowledged write left a document as.
struct ModelDoc {
  std::string rev;
  int value = 0;
  bool deleted = false;
};

// Every document a thread owns in one database, plus how many acknowledged
// changes (each consumes one sequence) it made there.
struct Model {
  std::map<std::string, ModelDoc> docs;
  uint64_t changes = 0;
};

std::string Body(int value) { return R"({"v":)" + std::to_string(value) + "}"; }

// Contended documents every thread updates with the rev it last saw; each
// acknowledged update bumps its generation by exactly one.
constexpr int kSharedDocs = 3;
std::string SharedId(int i) { return "shared" + std::to_string(i); }

class DatabaseWriteTest : public ::testing::TestWithParam<Backend> {
 protected:
  DatabaseWriteTest() : store_(GetParam()) {}

  // Runs `threads` writers over `databases` databases (thread t writes into
  // database t % databases) and checks every database against the models.
  // `compact_meanwhile`: another thread compacts every database over and
  // over while they write (compaction takes the writer lock per chunk,
  // between writes, on both write paths).
  void RunAndCheck(int threads, int databases, int ops_per_thread,
                   bool compact_meanwhile = false) {
    std::vector<std::shared_ptr<Database>> dbs;
    for (int d = 0; d < databases; ++d) {
      auto db = store_->CreateDatabase("db" + std::to_string(d));
      ASSERT_TRUE(db.ok()) << db.status().ToString();
      dbs.push_back(*db);
      for (int i = 0; i < kSharedDocs; ++i) {
        ASSERT_TRUE(dbs[d]->Put(SharedId(i), Body(0)).ok());
      }
    }
    std::vector<Model> models(threads);
    // Per database, per shared doc: acknowledged updates.
    std::vector<std::vector<int>> shared_updates(databases, std::vector<int>(kSharedDocs, 0));
    std::mutex shared_mu;
    std::vector<std::string> failures;

    auto writer = [&](int t) {
      Database& db = *dbs[t % databases];
      Model& model = models[t];
      std::mt19937 rng(1000 + t);
      int next_doc = 0;
      auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> l(shared_mu);
        failures.push_back("thread " + std::to_string(t) + ": " + what);
      };
      auto own_id = [&](int n) { return "t" + std::to_string(t) + "_" + std::to_string(n); };
      for (int op = 0; op < ops_per_thread; ++op) {
        const int value = op + 1;
        const int kind = static_cast<int>(rng() % 10);
        if (kind < 4 || model.docs.empty()) {  // a new document
          const std::string id = own_id(next_doc++);
          auto r = db.Put(id, Body(value));
          if (!r.ok()) return fail("put " + id + ": " + r.status().ToString());
          model.docs[id] = {r->rev, value, false};
          ++model.changes;
        } else if (kind < 6) {  // update or recreate one of its own
          auto it = std::next(model.docs.begin(), rng() % model.docs.size());
          std::string json = Body(value);
          if (!it->second.deleted) json = R"({"_rev":")" + it->second.rev + R"(","v":)" +
                                           std::to_string(value) + "}";
          auto r = db.Put(it->first, json);
          if (!r.ok()) return fail("update " + it->first + ": " + r.status().ToString());
          it->second = {r->rev, value, false};
          ++model.changes;
        } else if (kind < 7) {  // delete one of its own
          auto it = std::next(model.docs.begin(), rng() % model.docs.size());
          if (it->second.deleted) continue;
          auto r = db.Delete(it->first, it->second.rev);
          if (!r.ok()) return fail("delete " + it->first + ": " + r.status().ToString());
          it->second = {r->rev, 0, true};
          ++model.changes;
        } else if (kind < 9) {  // a batch: new documents and one stale update
          std::vector<std::string> texts;
          std::vector<std::string> ids;
          const int n = 1 + static_cast<int>(rng() % 8);
          for (int k = 0; k < n; ++k) {
            ids.push_back(own_id(next_doc++));
            texts.push_back(R"({"_id":")" + ids.back() + R"(","v":)" + std::to_string(value) + "}");
          }
          // A conflict inside the batch must fail alone and consume nothing.
          texts.push_back(R"({"_id":")" + ids.front() + R"(","v":-1})");
          std::vector<std::string_view> views(texts.begin(), texts.end());
          std::vector<DocUpdateResult> results;
          Status s = db.BulkDocs(views, {}, &results);
          if (!s.ok() || results.size() != texts.size()) return fail("bulk: " + s.ToString());
          for (int k = 0; k < n; ++k) {
            if (!results[k].status.ok() || results[k].id != ids[k]) {
              return fail("bulk doc " + ids[k] + ": " + results[k].status.ToString());
            }
            model.docs[ids[k]] = {results[k].rev, value, false};
            ++model.changes;
          }
          if (results[n].status.code() != Status::Code::kConflict) {
            return fail("a second create of " + ids.front() + " in one batch did not conflict");
          }
        } else {  // a contended update of a shared document
          const int i = static_cast<int>(rng() % kSharedDocs);
          auto doc = db.Get(SharedId(i));
          if (!doc.ok()) return fail("get shared: " + doc.status().ToString());
          json::Document d;
          if (!json::Parse(*doc, &d).ok()) return fail("shared doc is not JSON");
          std::string rev = d["_rev"].GetString();
          auto r = db.Put(SharedId(i), R"({"_rev":")" + rev + R"(","v":)" + std::to_string(value) + "}");
          if (r.ok()) {
            std::lock_guard<std::mutex> l(shared_mu);
            ++shared_updates[t % databases][i];
            ++model.changes;
          } else if (r.status().code() != Status::Code::kConflict) {
            return fail("shared update: " + r.status().ToString());
          }
        }
      }
    };
    std::atomic<bool> writing{true};
    std::thread compactor;
    if (compact_meanwhile) {
      compactor = std::thread([&] {
        do {
          for (auto& db : dbs) {
            Status s = db->Compact();
            if (!s.ok()) {
              std::lock_guard<std::mutex> l(shared_mu);
              failures.push_back("compact: " + s.ToString());
              return;
            }
          }
        } while (writing.load());
      });
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(writer, t);
    for (auto& th : pool) th.join();
    writing = false;
    if (compactor.joinable()) compactor.join();
    for (const std::string& f : failures) ADD_FAILURE() << f;
    ASSERT_TRUE(failures.empty());

    for (int d = 0; d < databases; ++d) {
      SCOPED_TRACE("database " + std::to_string(d));
      Database& db = *dbs[d];
      // Every acknowledged change took one sequence, and no sequence was
      // taken twice or skipped: the counter is exactly their number.
      uint64_t changes = kSharedDocs;  // the shared docs' creations
      std::map<std::string, ModelDoc> expected;
      for (int t = d; t < threads; t += databases) {
        changes += models[t].changes;
        expected.insert(models[t].docs.begin(), models[t].docs.end());
      }
      EXPECT_EQ(db.UpdateSeq(), changes);

      // The feed lists each document once, at distinct ascending sequences,
      // with the winning rev each model was acknowledged.
      std::set<std::string> seen;
      uint64_t prev_seq = 0, last_seq = 0;
      uint64_t live = 0, deleted = 0;
      Status s = db.Changes({}, [&](const ChangeRow& row) {
        EXPECT_GT(row.seq, prev_seq) << row.id;
        prev_seq = row.seq;
        EXPECT_TRUE(seen.insert(row.id).second) << row.id << " listed twice";
        (row.deleted ? deleted : live)++;
        auto it = expected.find(row.id);
        if (it != expected.end()) {
          EXPECT_EQ(row.revs.at(0), it->second.rev) << row.id;
          EXPECT_EQ(row.deleted, it->second.deleted) << row.id;
        }
        return true;
      }, &last_seq);
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(last_seq, changes);
      EXPECT_EQ(seen.size(), expected.size() + kSharedDocs);

      for (const auto& [id, m] : expected) {
        auto doc = db.Get(id);
        if (m.deleted) {
          EXPECT_EQ(doc.status().code(), Status::Code::kNotFound) << id;
          continue;
        }
        ASSERT_TRUE(doc.ok()) << id << ": " << doc.status().ToString();
        json::Document parsed;
        ASSERT_TRUE(json::Parse(*doc, &parsed).ok());
        EXPECT_EQ(parsed["_rev"].GetString(), m.rev) << id;
        EXPECT_EQ(parsed["v"].GetInt(), m.value) << id;
      }
      for (int i = 0; i < kSharedDocs; ++i) {
        auto doc = db.Get(SharedId(i));
        ASSERT_TRUE(doc.ok());
        json::Document parsed;
        ASSERT_TRUE(json::Parse(*doc, &parsed).ok());
        const std::string rev = parsed["_rev"].GetString();
        EXPECT_EQ(rev.substr(0, rev.find('-')), std::to_string(1 + shared_updates[d][i]))
            << SharedId(i) << ": one generation per acknowledged update";
      }
      auto info = db.Info();
      ASSERT_TRUE(info.ok());
      EXPECT_EQ(info->doc_count, live);
      EXPECT_EQ(info->doc_del_count, deleted);
      EXPECT_EQ(info->update_seq, changes);
    }
  }

  testing::TempStore store_;
};

TEST_P(DatabaseWriteTest, ManyWritersIntoOneDatabaseLoseNothing) { RunAndCheck(8, 1, 300); }

TEST_P(DatabaseWriteTest, ManyWritersIntoManyDatabasesLoseNothing) { RunAndCheck(8, 4, 300); }

TEST_P(DatabaseWriteTest, WritersRacingCompactionLoseNothing) { RunAndCheck(4, 2, 300, true); }

// Writers of one database never block writers of another: a database whose
// writer is held inside its write lock (here: a listener that runs after
// each commit, under that lock) does not stop another database's writes.
TEST_P(DatabaseWriteTest, DatabasesDoNotWaitForEachOther) {
  auto a = store_->CreateDatabase("a");
  auto b = store_->CreateDatabase("b");
  ASSERT_TRUE(a.ok() && b.ok());
  std::atomic<bool> in_listener{false};
  std::atomic<bool> release{false};
  (*a)->AddChangeListener([&](uint64_t) {
    in_listener = true;
    while (!release) std::this_thread::yield();  // parks a's writer mid-commit
  });
  std::thread blocked([&] { EXPECT_TRUE((*a)->Put("x", Body(1)).ok()); });
  while (!in_listener) std::this_thread::yield();
  // a's writer holds a's write lock; b must still take writes, single and bulk.
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE((*b)->Put("y" + std::to_string(i), Body(i)).ok());
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE((*b)->BulkDocs({R"({"_id":"z1"})", R"({"_id":"z2"})"}, {}, &results).ok());
  EXPECT_EQ((*b)->UpdateSeq(), 52u);
  release = true;
  blocked.join();
  EXPECT_EQ((*a)->UpdateSeq(), 1u);
}

// The records of new documents live in slots the batch's context hands out
// (the first inline, the rest in a list): a batch of several new documents,
// generated ids and ids past every stored one, with a repeat of one, must
// give each its own record.
// UpdateOptions::check_local_revs: PouchDB's rule for _local documents,
// checked in the write; without it, CouchDB 3's (the last write wins).
TEST_P(DatabaseWriteTest, LocalRevsCheckedInTheWriteWhenAsked) {
  auto db = store_->CreateDatabase("locals");
  ASSERT_TRUE(db.ok());
  UpdateOptions checked;
  checked.check_local_revs = true;
  EXPECT_TRUE((*db)->Put("_local/a", R"({"_rev":"0-1"})", checked).status().IsConflict());  // none stored
  auto r1 = (*db)->Put("_local/a", "{}", checked);
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ(r1->rev, "0-1");
  EXPECT_TRUE((*db)->Put("_local/a", "{}", checked).status().IsConflict());  // no rev for a stored one
  EXPECT_TRUE((*db)->Put("_local/a", R"({"_rev":"0-7"})", checked).status().IsConflict());
  // The rev _revisions names counts as the one given.
  EXPECT_EQ((*db)->Put("_local/a", R"({"_revisions":{"start":0,"ids":["1"]}})", checked)->rev, "0-2");
  EXPECT_TRUE((*db)->Put("_local/a", R"({"_rev":"0-1"})", checked).status().IsConflict());
  auto r3 = (*db)->Put("_local/a", R"({"_rev":"0-2","v":3})", checked);
  ASSERT_TRUE(r3.ok()) << r3.status().ToString();
  EXPECT_EQ(r3->rev, "0-3");
  EXPECT_EQ((*db)->Put("_local/a", R"({"_rev":"x"})", checked).status().code(), Status::Code::kBadRequest);
  EXPECT_TRUE((*db)->Delete("_local/a", "0-2", checked).status().IsConflict());
  EXPECT_TRUE((*db)->Delete("_local/zz", "0-1", checked).status().IsConflict());
  EXPECT_TRUE((*db)->Delete("_local/a", "0-3", checked).ok());
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE((*db)->BulkDocs({R"({"_id":"_local/b"})", R"({"_id":"_local/b"})"}, checked, &results).ok());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_TRUE(results[1].status.IsConflict());  // the first of the batch is stored now
  // CouchDB 3 (the default): no check, the last write wins.
  EXPECT_TRUE((*db)->Put("_local/b", "{}").ok());
  EXPECT_TRUE((*db)->Put("_local/b", R"({"_rev":"0-9"})").ok());
}

// Read-modify-write of one _local counter from several threads: with the
// check in the write, exactly the acknowledged updates are counted (a check
// before the write would let two writers of one revision both succeed).
TEST_P(DatabaseWriteTest, LocalRevCheckLosesNoUpdateBetweenThreads) {
  auto db = store_->CreateDatabase("counter");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Put("_local/c", R"({"n":0})").ok());
  UpdateOptions checked;
  checked.check_local_revs = true;
  std::atomic<int> acknowledged{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 300; ++i) {
        auto cur = (*db)->Get("_local/c", {});
        if (!cur.ok()) continue;
        json::Document d;
        if (!json::Parse(*cur, &d).ok()) continue;
        const int n = d["n"].GetInt();
        const std::string next =
            R"({"_rev":")" + std::string(json::View(d["_rev"])) + R"(","n":)" + std::to_string(n + 1) + "}";
        if ((*db)->Put("_local/c", next, checked).ok()) ++acknowledged;
      }
    });
  }
  for (auto& t : threads) t.join();
  auto last = (*db)->Get("_local/c", {});
  ASSERT_TRUE(last.ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(*last, &d).ok());
  EXPECT_GT(acknowledged.load(), 0);
  EXPECT_EQ(d["n"].GetInt(), acknowledged.load());
}

TEST_P(DatabaseWriteTest, ABatchOfNewDocumentsGetsARecordEach) {
  auto db = store_->CreateDatabase("fresh");
  ASSERT_TRUE(db.ok());
  ASSERT_TRUE((*db)->Put("a0", Body(0)).ok());
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE((*db)
                  ->BulkDocs({Body(1), R"({"_id":"b1","v":2})", Body(3), R"({"_id":"b2","v":4})",
                              R"({"_id":"b1","v":5})", Body(6)},
                             {}, &results)
                  .ok());
  ASSERT_EQ(results.size(), 6u);
  const int values[] = {1, 2, 3, 4, 5, 6};
  std::set<std::string> ids;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i == 4) {  // the repeat of b1 conflicts with the first
      EXPECT_TRUE(results[i].status.IsConflict());
      continue;
    }
    ASSERT_TRUE(results[i].status.ok()) << i;
    ids.insert(results[i].id);
    auto got = (*db)->Get(results[i].id);
    ASSERT_TRUE(got.ok()) << results[i].id;
    EXPECT_NE(got->find(R"("v":)" + std::to_string(values[i])), std::string::npos) << *got;
  }
  EXPECT_EQ(ids.size(), 5u);
  EXPECT_EQ((*db)->UpdateSeq(), 6u);
}

// A write with no listener and no waiter skips the listeners' lock; a
// WaitForChange that starts while writers write must still be woken by the
// next write. Each write here waits until the waiter has seen it, so a
// wake-up lost would leave the waiter asleep for its whole timeout and fail
// the test at the writer's deadline.
TEST_P(DatabaseWriteTest, AWaiterIsWokenByEveryWriteOfConcurrentWriters) {
  auto db = store_->CreateDatabase("w");
  ASSERT_TRUE(db.ok());
  constexpr int kWrites = 200;  // per writer
  std::atomic<uint64_t> seen{0};
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    uint64_t since = 0;
    while (!done.load()) {
      since = (*db)->WaitForChange(since, std::chrono::seconds(60));
      seen.store(since);
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < 2; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        auto r = (*db)->Put("w" + std::to_string(t) + "_" + std::to_string(i), Body(i));
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        const uint64_t mine = (*db)->UpdateSeq();
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
        while (seen.load() < mine && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
        ASSERT_GE(seen.load(), mine) << "the waiter missed the write of seq " << mine;
      }
    });
  }
  for (auto& w : writers) w.join();
  done = true;
  ASSERT_TRUE((*db)->Put("last", Body(0)).ok());  // wakes the waiter to see `done`
  waiter.join();
  EXPECT_EQ((*db)->UpdateSeq(), 2u * kWrites + 1);
}

// Write() waits while `hold` is set; counts the writes, those prepared, and
// records how many each CommitAll() took.
class GatedKV : public testing::ForwardingKV {
 public:
  explicit GatedKV(const char* name = "gated-memory") : ForwardingKV(name) {}
  std::atomic<bool> hold{false};
  std::atomic<int> held{0};      // writers waiting in Write()
  std::atomic<int> writes{0};    // batches written, either way
  std::atomic<int> prepared{0};  // of those, prepared first (the pipeline)
  std::mutex mu;
  std::vector<size_t> groups;  // GUARDED_BY(mu)

  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override {
    ++held;
    while (hold) std::this_thread::yield();
    --held;
    ++writes;
    return ForwardingKV::Write(o, b);
  }
  std::unique_ptr<KVPreparedWrite> Prepare(KVWriteBatch&& b) override {
    ++prepared;
    return KVStore::Prepare(std::move(b));
  }
  Status CommitAll(const KVWriteOptions& o,
                   std::vector<std::unique_ptr<KVPreparedWrite>> p) override {
    {
      std::lock_guard<std::mutex> lock(mu);
      groups.push_back(p.size());
    }
    return KVStore::CommitAll(o, std::move(p));
  }
};

// db's changes feed: n rows in ascending seq order, ending at seq n (every
// write made one change, none lost or listed twice).
void ExpectFeedOfSeqsOneTo(Database* db, uint64_t n) {
  uint64_t prev = 0, last_seq = 0, changes = 0;
  ASSERT_TRUE(db->Changes({}, [&](const ChangeRow& row) {
                      EXPECT_GT(row.seq, prev);
                      prev = row.seq;
                      ++changes;
                      return true;
                    }, &last_seq).ok());
  EXPECT_EQ(n, changes);
  EXPECT_EQ(n, last_seq);
}

struct StoreAndDatabase {
  std::unique_ptr<Store> store;
  std::shared_ptr<Database> db;
};

// A store whose KV (each database's, when it opens one per database) is
// a `KV` the test sees into through *kv: the last one made; and its
// database "d".
template <class KV>
Result<StoreAndDatabase> OpenDatabaseOn(KV** kv) {
  StoreOptions options;
  options.kv_factory = [kv] {
    auto made = std::make_unique<KV>();
    *kv = made.get();
    return made;
  };
  auto store = Store::Open(options);
  if (!store.ok()) return store.status();
  auto db = (*store)->CreateDatabase("d");
  if (!db.ok()) return db.status();
  return StoreAndDatabase{std::move(*store), std::move(*db)};
}

// Batches of one database built while an earlier one is being written wait
// for their turn ready (prepared); the first whose turn comes writes the
// others with it, in one store write, and every writer gets its result. A
// batch whose turn is at once, with none ready after it, is written as it
// is (no CommitAll).
TEST(DatabaseWriteGroupTest, ReadyBatchesAreWrittenWithTheTurnBeforeThem) {
  GatedKV* kv = nullptr;
  auto opened = OpenDatabaseOn(&kv);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Database* db = opened->db.get();
  ASSERT_TRUE(db->Put("before", Body(0)).ok());
  std::atomic<int> listened{0};
  db->AddChangeListener([&](uint64_t) { ++listened; });

  kv->hold = true;
  const int base = kv->prepared.load();
  auto put = [&](const char* id, int v) {
    return std::thread([&, id, v] { EXPECT_TRUE(db->Put(id, Body(v)).ok()) << id; });
  };
  auto wait_for = [](const std::atomic<int>& n, int want) {
    while (n.load() < want) std::this_thread::yield();
  };
  std::thread first = put("a", 1);
  wait_for(kv->held, 1);  // a's batch (alone: written as it is) is held in the store
  // b's and c's batches are built one after the other (each alone: the
  // one before has left the build stage), prepared, and wait for their turns.
  std::thread second = put("b", 2);
  wait_for(kv->prepared, base + 1);
  std::thread third = put("c", 3);
  wait_for(kv->prepared, base + 2);
  EXPECT_EQ(1u, db->UpdateSeq()) << "nothing of a's batch or after it is visible yet";
  kv->hold = false;
  first.join();
  second.join();
  third.join();

  {
    std::lock_guard<std::mutex> lock(kv->mu);
    EXPECT_EQ(std::vector<size_t>{2}, kv->groups) << "b and c in one write";
  }
  EXPECT_EQ(4u, db->UpdateSeq());
  EXPECT_EQ(4u, db->Info()->doc_count);
  for (const char* id : {"a", "b", "c"}) EXPECT_TRUE(db->Get(id).ok()) << id;
  EXPECT_GE(listened.load(), 2);  // once per write, with the newest seq
  ExpectFeedOfSeqsOneTo(db, 4);
}

// On the memory backend a writer alone writes its batch to the store under
// the database's writer lock (no pipeline); a writer that meets another
// there builds its batch under the lock, then prepares it outside every lock
// and commits it in its turn, and so do the writes after it for a while,
// until writes find the lock free again.
struct CountingMemoryKV : GatedKV {
  CountingMemoryKV() : GatedKV("memory") {}  // the direct write path's name
};

TEST(DatabaseWriteDirectTest, AWriterThatMeetsAnotherWritesThroughThePipelineForAWhile) {
  CountingMemoryKV* kv = nullptr;
  auto opened = OpenDatabaseOn(&kv);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  Database* db = opened->db.get();
  ASSERT_TRUE(db->Put("alone", Body(0)).ok());
  EXPECT_EQ(0, kv->prepared.load()) << "a writer alone writes directly";

  // a's direct write is held in the store, under the writer lock, while b
  // comes: b must find the lock held. (A b slow to start may come only
  // after a's write: both direct then, and the pair is tried again.)
  int pairs = 0;
  for (; pairs < 8 && kv->prepared.load() == 0; ++pairs) {
    kv->hold = true;
    const int writes_before = kv->writes.load();
    const std::string n = std::to_string(pairs);
    std::thread first([&] { EXPECT_TRUE(db->Put("a" + n, Body(1)).ok()); });
    while (kv->held.load() < 1) std::this_thread::yield();
    std::thread second([&] { EXPECT_TRUE(db->Put("b" + n, Body(2)).ok()); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5 << pairs));
    EXPECT_EQ(1u + 2 * pairs, db->UpdateSeq()) << "nothing visible until a's write ends";
    kv->hold = false;
    first.join();
    second.join();
    EXPECT_EQ(writes_before + 2, kv->writes.load());
  }
  ASSERT_EQ(1, kv->prepared.load()) << "b, which met a, went through the pipeline";

  // The writes after the contention go through the pipeline too, then
  // direct again once writers keep finding the lock free.
  int staged = 0;
  for (bool direct = false; !direct && staged < 1000;) {
    ASSERT_TRUE(db->Put("after" + std::to_string(staged), Body(0)).ok());
    direct = kv->prepared.load() == 1 + staged;
    if (!direct) ++staged;
  }
  EXPECT_GT(staged, 0);
  EXPECT_LT(staged, 1000) << "never back to direct writes";
  const int prepared = kv->prepared.load();
  auto direct = db->Put("direct", Body(0));
  ASSERT_TRUE(direct.ok());
  EXPECT_EQ(prepared, kv->prepared.load());

  // Every write committed once, in sequence order.
  const uint64_t expected = 1 + 2 * static_cast<uint64_t>(pairs) + staged + 1 + 1;
  EXPECT_EQ(expected, db->UpdateSeq());
  EXPECT_EQ(expected, db->Info()->doc_count);
  ExpectFeedOfSeqsOneTo(db, expected);
  for (const char* id : {"alone", "a0", "b0", "direct"}) EXPECT_TRUE(db->Get(id).ok()) << id;

  // A delete alone is written directly too.
  ASSERT_TRUE(db->Delete("direct", direct->rev).ok());
  EXPECT_EQ(prepared, kv->prepared.load());
  EXPECT_EQ(expected + 1, db->UpdateSeq());
  EXPECT_EQ(expected - 1, db->Info()->doc_count);
  EXPECT_EQ(Status::Code::kNotFound, db->Get("direct").status().code());
}

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseWriteTest,
                         ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

}  // namespace
}  // namespace settee
