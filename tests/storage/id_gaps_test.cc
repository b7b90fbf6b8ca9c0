// IdGaps (storage/id_gaps.h): its ranges and seek budget, and the database
// that uses them on LevelDB: ascending ids below the largest one are
// written with no store read each, and no write ever takes an existing
// document for a new one (a model of the ids checked against every write:
// single puts, bulk writes, replicated and generated ids, from several
// threads).
#include "storage/id_gaps.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "settee/store.h"
#include "tests/storage/forwarding_kv.h"
#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

TEST(IdGaps, ContainsOnlyIdsStrictlyInside) {
  IdGaps gaps;
  EXPECT_FALSE(gaps.Contains("b"));
  gaps.Add("b", "d");
  EXPECT_FALSE(gaps.Contains("b"));
  EXPECT_TRUE(gaps.Contains("b0"));
  EXPECT_TRUE(gaps.Contains("c"));
  EXPECT_TRUE(gaps.Contains("czzz"));
  EXPECT_FALSE(gaps.Contains("d"));
  EXPECT_FALSE(gaps.Contains("a"));
  gaps.Add("x", "x");  // empty: ignored
  gaps.Add("z", "y");
  EXPECT_EQ(gaps.size(), 1u);
}

TEST(IdGaps, CreatedCutsTheGapBelowTheNewId) {
  IdGaps gaps;
  gaps.Add("a", "m");
  gaps.Created("f");
  EXPECT_FALSE(gaps.Contains("c"));  // below f: forgotten, not claimed
  EXPECT_FALSE(gaps.Contains("f"));
  EXPECT_TRUE(gaps.Contains("g"));
  gaps.Created("m");  // outside: nothing changes
  gaps.Created("a");
  EXPECT_TRUE(gaps.Contains("l"));
  gaps.Created("lzz");
  EXPECT_FALSE(gaps.Contains("l"));
  EXPECT_TRUE(gaps.Contains("lzzz"));
}

TEST(IdGaps, OverlappingGapsMergeAdjacentOnesDoNot) {
  IdGaps gaps;
  gaps.Add("a", "f");
  gaps.Add("d", "k");  // overlaps: one gap (a, k)
  EXPECT_EQ(gaps.size(), 1u);
  EXPECT_TRUE(gaps.Contains("e"));
  EXPECT_TRUE(gaps.Contains("j"));
  gaps.Created("e");  // cuts the merged gap once
  EXPECT_FALSE(gaps.Contains("d"));
  EXPECT_TRUE(gaps.Contains("j"));
  gaps.Add("k", "p");  // shares only the bound k, which may exist
  EXPECT_EQ(gaps.size(), 2u);
  EXPECT_FALSE(gaps.Contains("k"));
  EXPECT_TRUE(gaps.Contains("n"));
}

TEST(IdGaps, KeepsTheMostRecentlyUsed) {
  IdGaps gaps;
  auto id = [](int i, const char* suffix) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "g%02d%s", i, suffix);
    return std::string(buf);
  };
  for (size_t i = 0; i < IdGaps::kMaxGaps; ++i) gaps.Add(id(i, "a"), id(i, "z"));
  EXPECT_TRUE(gaps.Contains(id(0, "m")));  // gap 0 used last: gap 1 is the oldest
  gaps.Add("x", "y");
  EXPECT_EQ(gaps.size(), IdGaps::kMaxGaps);
  EXPECT_TRUE(gaps.Contains(id(0, "m")));
  EXPECT_FALSE(gaps.Contains(id(1, "m")));
  EXPECT_TRUE(gaps.Contains(id(2, "m")));
  EXPECT_TRUE(gaps.Contains("xx"));
}

TEST(IdGaps, SeeksWhileHitsPayForThemThenProbes) {
  IdGaps gaps;
  int seeks = 0;
  for (int i = 0; i < 100; ++i) seeks += gaps.ShouldSeek();
  EXPECT_EQ(seeks, 2);  // the initial budget, then no hit refilled it
  gaps.Add("a", "z");
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(gaps.Contains("m"));
  seeks = 0;
  for (int i = 0; i < 100; ++i) seeks += gaps.ShouldSeek();
  EXPECT_EQ(seeks, 5);  // one per hit
  seeks = 0;
  for (int i = 0; i < 1024; ++i) seeks += gaps.ShouldSeek();
  EXPECT_EQ(seeks, 4);  // a probe every 256 lookups
}

// A "leveldb" KVStore (so the database keeps gaps) over a memory store that
// counts the reads a write could make: Gets and iterators.
class CountingKV : public testing::ForwardingKV {
 public:
  CountingKV() : ForwardingKV("leveldb") {}
  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override {
    gets++;
    return ForwardingKV::Get(o, k, v);
  }
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& o) override {
    iterators++;
    return ForwardingKV::NewIterator(o);
  }
  std::atomic<int> gets{0};
  std::atomic<int> iterators{0};
};

struct CountingStore {
  CountingStore() {
    StoreOptions options;
    options.kv_factory = [this] {
      auto kv = std::make_unique<CountingKV>();
      kvs.push_back(kv.get());
      return kv;
    };
    auto s = Store::Open(options);
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    store = std::move(s).value();
  }
  int Reads() const {
    int n = 0;
    for (const CountingKV* kv : kvs) n += kv->gets + kv->iterators;
    return n;
  }
  std::vector<CountingKV*> kvs;
  std::unique_ptr<Store> store;
};

std::string Id(const char* prefix, int i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%s%08d", prefix, i);
  return buf;
}

// Two runs of ascending ids below the largest one (each thread of
// write_scaling_bench's shared_db, or its get_storm writer): after a seek
// each, their puts read nothing.
TEST(IdGapsDatabase, AscendingRunsBelowTheLargestIdReadNothing) {
  CountingStore cs;
  auto db = *cs.store->CreateDatabase("db");
  ASSERT_TRUE(db->Put("t9_00000000", "{}").ok());  // the largest id
  const int before = cs.Reads();
  for (int i = 0; i < 200; ++i) {
    ASSERT_TRUE(db->Put(Id("t0_", i), "{}").ok());
    ASSERT_TRUE(db->Put(Id("t1_", i), "{}").ok());
  }
  // Without gaps: a Get per put (400). With them: a seek per run, and the
  // seek after each interleaved write of the other run, while the budget
  // allows; well under one read per put.
  EXPECT_LT(cs.Reads() - before, 40);
  EXPECT_EQ(db->Info()->doc_count, 401u);
  // Every one of them exists: a put without a rev conflicts.
  for (int i = 0; i < 200; i += 37) {
    EXPECT_EQ(db->Put(Id("t0_", i), "{}").status().code(), Status::Code::kConflict);
    EXPECT_EQ(db->Put(Id("t1_", i), "{}").status().code(), Status::Code::kConflict);
  }
}

// Documents created inside a gap by every path (replicated, bulk, a
// generated id) cut it: a put of the same id then conflicts instead of
// replacing the document with a new one.
TEST(IdGapsDatabase, EveryCreatedDocumentLeavesItsGap) {
  CountingStore cs;
  auto db = *cs.store->CreateDatabase("db");
  // "~" sorts after every generated (hex) id: a run from "!" opens a gap
  // over all of them.
  ASSERT_TRUE(db->Put("~", "{}").ok());
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(db->Put(Id("!", i), "{}").ok());

  UpdateOptions replicated;
  replicated.new_edits = false;
  ASSERT_TRUE(db->Put("m", R"({"_rev":"1-abc"})", replicated).ok());
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db->BulkDocs({R"({"_id":"n1"})", R"({"_id":"n2"})"}, {}, &results).ok());
  auto generated = db->Put("", "{}");
  ASSERT_TRUE(generated.ok());
  ASSERT_LT(generated->id, "~");
  ASSERT_TRUE(db->Put("o", "{}").ok());

  for (const std::string& id : {std::string("m"), std::string("n1"), std::string("n2"), generated->id,
                                std::string("o")}) {
    EXPECT_EQ(db->Put(id, "{}").status().code(), Status::Code::kConflict) << id;
  }
  EXPECT_EQ(db->Info()->doc_count, 10u);
}

// Writers on several threads at once, each with ids of its own (an
// ascending run, scattered ids with repeats, re-puts of ids it wrote),
// interleaved in the id space with the others' so that each one's writes
// land in gaps the others' seeks found: a put without a rev succeeds
// exactly when the thread's model says the id is new, and nothing is lost.
void WritersMatchTheModel(Store* store) {
  auto db = *store->CreateDatabase("model");
  ASSERT_TRUE(db->Put("zzzz", "{}").ok());
  constexpr int kThreads = 4, kOps = 500;
  std::atomic<int> mismatches{0};
  std::vector<std::set<std::string>> existing(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(1234 + t);
      std::set<std::string>& mine = existing[t];
      const std::string run = "r" + std::to_string(t) + "_";
      const std::string scattered = "x" + std::to_string(t) + "_";
      int next = 0;
      for (int op = 0; op < kOps; ++op) {
        std::string id;
        switch (rng() % 4) {
          case 0:
          case 1: id = Id(run.c_str(), next++); break;
          case 2: id = Id(scattered.c_str(), static_cast<int>(rng() % 300)); break;
          default: id = mine.empty() ? Id(run.c_str(), next++) : *mine.begin(); break;
        }
        const bool is_new = mine.count(id) == 0;
        auto r = db->Put(id, "{}");
        if (r.ok() != is_new || (!r.ok() && r.status().code() != Status::Code::kConflict)) {
          ++mismatches;
          ADD_FAILURE() << id << ": new " << is_new << ", " << r.status().ToString();
        }
        mine.insert(id);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  size_t total = 1;
  for (const auto& mine : existing) total += mine.size();
  EXPECT_EQ(db->Info()->doc_count, total);
}

TEST(IdGapsDatabase, WritersMatchTheModelOnACountingStore) {
  CountingStore cs;
  WritersMatchTheModel(cs.store.get());
}

TEST(IdGapsDatabase, WritersMatchTheModelOnLevelDB) {
  testing::TempStore store(StoreOptions::Backend::kLevelDB);
  WritersMatchTheModel(store.get());
}

}  // namespace
}  // namespace settee
