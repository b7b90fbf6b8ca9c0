// Tests of the KVStore contract (include/settee/kv.h), run against both
// backends, plus backend-specific tests (LevelDB locking and reopen, memory
// store garbage collection).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "settee/kv.h"
#include "storage/memory_store.h"

namespace settee {
namespace {

using KVs = std::vector<std::pair<std::string, std::string>>;

// kMemoryPartitioned: the memory store split by first key byte into 4
// partitions, so the tests' keys spread over them and every multi-partition
// path (merged iteration, cross-partition batches) is exercised.
enum class Backend { kMemory, kMemoryPartitioned, kLevelDB };

const char* BackendLabel(Backend b) {
  switch (b) {
    case Backend::kMemory: return "memory";
    case Backend::kMemoryPartitioned: return "memory_partitioned";
    case Backend::kLevelDB: return "leveldb";
  }
  return "?";
}

void PrintTo(Backend b, std::ostream* os) { *os << BackendLabel(b); }

std::string UniqueTempDir(const std::string& tag) {
  static std::atomic<int> counter{0};
  std::string name = tag;
  std::replace(name.begin(), name.end(), '/', '_');
  std::filesystem::path p = std::filesystem::path(testing::TempDir()) /
                            ("settee_kv_" + std::to_string(getpid()) + "_" +
                             std::to_string(counter.fetch_add(1)) + "_" + name);
  std::filesystem::remove_all(p);
  return p.string();
}

// Reads the whole iterator in the given direction.
KVs Drain(KVIterator* it, bool reverse) {
  KVs out;
  if (reverse) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) out.emplace_back(it->key(), it->value());
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) out.emplace_back(it->key(), it->value());
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

// A value that identifies its writer and can be checked for tearing: the
// header "t,i,r|" followed by a payload whose length and bytes derive from it.
std::string MakeValue(int t, int i, int r) {
  std::string v = std::to_string(t) + "," + std::to_string(i) + "," + std::to_string(r) + "|";
  const size_t len = 20 + static_cast<size_t>((i * 7 + r * 13 + t) % 180);
  const char fill = static_cast<char>('a' + (t * 31 + i * 17 + r) % 26);
  v.append(len, fill);
  return v;
}

// True iff `v` is exactly MakeValue(t, i, r) for the (t, i) given and some r;
// stores r.
bool ParseValue(const std::string& v, int t, int i, int* r) {
  int pt, pi, pr;
  if (std::sscanf(v.c_str(), "%d,%d,%d|", &pt, &pi, &pr) != 3) return false;
  if (pt != t || pi != i) return false;
  *r = pr;
  return v == MakeValue(t, i, pr);
}

class KVStoreTest : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kLevelDB) {
      dir_ = UniqueTempDir(testing::UnitTest::GetInstance()->current_test_info()->name());
    }
    Open();
  }

  void TearDown() override {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  void Open() {
    if (GetParam() == Backend::kMemory) {
      store_ = NewMemoryStore();
    } else if (GetParam() == Backend::kMemoryPartitioned) {
      store_ = std::make_unique<MemoryStore>(MemoryStore::Options{4, "", 1});
    } else {
      Status s = OpenLevelDBStore(dir_, LevelDBOptions(), &store_);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    ASSERT_NE(store_, nullptr);
  }

  bool IsLevelDB() const { return GetParam() == Backend::kLevelDB; }

  void Put(std::string_view k, std::string_view v) {
    Status s = store_->Put(KVWriteOptions(), k, v);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Del(std::string_view k) {
    Status s = store_->Delete(KVWriteOptions(), k);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The value, or "NOT_FOUND", or the error.
  std::string Get(std::string_view k, const KVSnapshot* snap = nullptr) {
    KVReadOptions o;
    o.snapshot = snap;
    std::string v;
    Status s = store_->Get(o, k, &v);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return v;
  }
  KVs Scan(std::string lower = "", std::string upper = "", bool reverse = false,
           const KVSnapshot* snap = nullptr) {
    KVIteratorOptions o;
    o.lower_bound = std::move(lower);
    o.upper_bound = std::move(upper);
    o.snapshot = snap;
    auto it = store_->NewIterator(o);
    return Drain(it.get(), reverse);
  }
  std::vector<std::string> Keys(const KVs& kvs) {
    std::vector<std::string> keys;
    for (const auto& kv : kvs) keys.push_back(kv.first);
    return keys;
  }

  std::string dir_;
  std::unique_ptr<KVStore> store_;
};

using Strings = std::vector<std::string>;

//////// Basic reads and writes:

TEST_P(KVStoreTest, PutGetDeleteOverwrite) {
  EXPECT_EQ(store_->BackendName(), IsLevelDB() ? "leveldb" : "memory");
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  Put("a", "1");
  Put("b", "2");
  EXPECT_EQ(Get("a"), "1");
  EXPECT_EQ(Get("b"), "2");
  Put("a", "one");
  EXPECT_EQ(Get("a"), "one");
  Del("a");
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "2");
  Del("a");  // deleting an absent key is fine
  Del("never");
  EXPECT_EQ(Get("never"), "NOT_FOUND");
  Put("a", "again");
  EXPECT_EQ(Get("a"), "again");
  EXPECT_EQ(Keys(Scan()), (Strings{"a", "b"}));
}

TEST_P(KVStoreTest, GetMissingReportsNotFoundCode) {
  std::string v = "untouched";
  Status s = store_->Get(KVReadOptions(), "missing", &v);
  EXPECT_EQ(s.code(), Status::Code::kNotFound);
}

TEST_P(KVStoreTest, EmptyAndLargeValues) {
  Put("empty", "");
  EXPECT_EQ(Get("empty"), "");
  std::string big(1 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 4093) big[i] = static_cast<char>(i);
  Put("big", big);
  EXPECT_EQ(Get("big"), big);
  EXPECT_EQ(Scan(), (KVs{{"big", big}, {"empty", ""}}));
}

TEST_P(KVStoreTest, BatchAppliesOpsInOrder) {
  Put("d", "old");
  using namespace std::string_view_literals;
  KVWriteBatch b;
  b.Put("a"sv, "1"sv);
  b.Put(std::string("b"), std::string("2"));  // the moving overload
  b.Delete("a");
  b.Put("c"sv, "3"sv);
  b.Put("b"sv, "4"sv);
  b.Delete("d");
  b.Delete("e");
  b.Put("e"sv, "5"sv);
  ASSERT_TRUE(store_->Write(KVWriteOptions(), b).ok());
  EXPECT_EQ(Scan(), (KVs{{"b", "4"}, {"c", "3"}, {"e", "5"}}));
  EXPECT_TRUE(store_->Write(KVWriteOptions(), KVWriteBatch()).ok());
  KVWriteOptions sync;
  sync.sync = true;
  EXPECT_TRUE(store_->Put(sync, "f", "6").ok());
  EXPECT_EQ(Get("f"), "6");
}

// Prepare() changes nothing readers see; Commit() applies the batch as
// WriteOwned() would, in commit order (not prepare order); a prepared write
// never committed is dropped; another store's prepared write is refused.
TEST_P(KVStoreTest, PreparedWritesApplyAtCommitInCommitOrder) {
  Put("keep", "0");
  Put("gone", "x");
  auto snap = store_->GetSnapshot();
  auto batch = [](std::vector<std::pair<std::string, std::string>> puts, std::string del) {
    KVWriteBatch b;
    for (auto& [k, v] : puts) b.Put(std::move(k), std::move(v));
    if (!del.empty()) b.Delete(del);
    return b;
  };
  auto first = store_->Prepare(batch({{"a", "first"}, {"keep", "1"}}, "gone"));
  auto second = store_->Prepare(batch({{"a", "second"}, {"b", std::string(40000, 'b')}}, ""));
  auto dropped = store_->Prepare(batch({{"never", "seen"}}, "keep"));
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("gone"), "x");
  EXPECT_EQ(Keys(Scan()), (Strings{"gone", "keep"}));

  ASSERT_TRUE(store_->Commit(KVWriteOptions(), std::move(second)).ok());
  EXPECT_EQ(Get("a"), "second");
  EXPECT_EQ(Get("b"), std::string(40000, 'b'));
  ASSERT_TRUE(store_->Commit(KVWriteOptions(), std::move(first)).ok());
  EXPECT_EQ(Get("a"), "first");  // committed last, so it wins
  EXPECT_EQ(Get("keep"), "1");
  EXPECT_EQ(Get("gone"), "NOT_FOUND");
  dropped.reset();
  EXPECT_EQ(Get("never"), "NOT_FOUND");
  EXPECT_EQ(Keys(Scan()), (Strings{"a", "b", "keep"}));
  EXPECT_EQ(Keys(Scan("", "", false, snap.get())), (Strings{"gone", "keep"}));

  // A store's prepared write is not another's to commit.
  std::unique_ptr<KVStore> other = NewMemoryStore();
  Status s = store_->Commit(KVWriteOptions(), other->Prepare(batch({{"z", "1"}}, "")));
  EXPECT_EQ(s.code(), Status::Code::kInvalidOperation);
  EXPECT_EQ(Get("z"), "NOT_FOUND");
}

// CommitAll() applies prepared writes as their commits one after the other
// would (a later write of a key wins), empty ones among them; one not
// prepared by this store (another store of the same backend too) refuses
// the whole call before anything is written.
TEST_P(KVStoreTest, CommitAllAppliesPreparedWritesInOrder) {
  Put("gone", "x");
  auto prepare = [&](KVStore* store, std::vector<std::pair<std::string, std::string>> puts,
                     std::string del) {
    KVWriteBatch b;
    for (auto& [k, v] : puts) b.Put(std::move(k), std::move(v));
    if (!del.empty()) b.Delete(del);
    return store->Prepare(std::move(b));
  };
  std::vector<std::unique_ptr<KVPreparedWrite>> writes;
  writes.push_back(prepare(store_.get(), {{"a", "1"}, {"b", "1"}}, ""));
  writes.push_back(prepare(store_.get(), {}, ""));
  writes.push_back(prepare(store_.get(), {{"a", "2"}, {"gone", "y"}}, ""));
  writes.push_back(prepare(store_.get(), {{"c", std::string(40000, 'c')}}, "gone"));
  EXPECT_EQ(Keys(Scan()), (Strings{"gone"}));
  ASSERT_TRUE(store_->CommitAll(KVWriteOptions(), std::move(writes)).ok());
  EXPECT_EQ(Scan(), (KVs{{"a", "2"}, {"b", "1"}, {"c", std::string(40000, 'c')}}));

  // Nothing but empty writes: nothing to do.
  writes.clear();
  writes.push_back(prepare(store_.get(), {}, ""));
  EXPECT_TRUE(store_->CommitAll(KVWriteOptions(), std::move(writes)).ok());

  // A foreign write among them: refused, and this store's writes too.
  std::string other_dir;
  std::unique_ptr<KVStore> other;
  if (IsLevelDB()) {
    other_dir = dir_ + "-other";
    ASSERT_TRUE(OpenLevelDBStore(other_dir, LevelDBOptions(), &other).ok());
  } else {
    other = NewMemoryStore();
  }
  writes.clear();
  writes.push_back(prepare(store_.get(), {{"d", "1"}}, ""));
  writes.push_back(prepare(other.get(), {{"e", "1"}}, ""));
  Status s = store_->CommitAll(KVWriteOptions(), std::move(writes));
  EXPECT_EQ(s.code(), Status::Code::kInvalidOperation);
  EXPECT_EQ(Get("d"), "NOT_FOUND");
  EXPECT_EQ(Get("e"), "NOT_FOUND");
  other.reset();
  if (!other_dir.empty()) std::filesystem::remove_all(other_dir);
}

// Batches in any key order, with repeated keys, deletes of absent keys and
// keys that fall between, before and after stored ones, match a model that
// applies the ops one by one (the memory store places sorted keys by their
// neighbour, which this exercises from every side).
TEST_P(KVStoreTest, RandomBatchesMatchSequentialModel) {
  std::map<std::string, std::string> model;
  std::mt19937 rng(7);
  auto key = [&rng] {
    std::string k = "k" + std::to_string(rng() % 40);
    if (rng() % 3 == 0) k += "/" + std::to_string(rng() % 5);
    return k;
  };
  for (int round = 0; round < 300; ++round) {
    KVWriteBatch b;
    const int n = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      std::string k = key();
      if (rng() % 4 == 0) {
        b.Delete(k);
        model.erase(k);
      } else {
        std::string v = std::to_string(round) + "." + std::to_string(i);
        // Some values are big enough for the memory store to adopt an
        // owned batch's buffer instead of copying it.
        if (rng() % 8 == 0) v.append(16 * 1024 + rng() % 4096, static_cast<char>('a' + i));
        if (rng() % 2) b.Put(k, v);
        else b.PutOwned(std::string(k), std::string(v));
        model[k] = v;
      }
    }
    Status s = (round % 2) ? store_->WriteOwned(KVWriteOptions(), std::move(b))
                           : store_->Write(KVWriteOptions(), b);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(Scan(), KVs(model.begin(), model.end())) << "round " << round;
  }
}

//////// Iteration:

TEST_P(KVStoreTest, OrderedIterationWithBoundsBothDirections) {
  for (char c = 'j'; c >= 'a'; c--) Put(std::string(1, c), std::string(2, c));
  EXPECT_EQ(Keys(Scan()), (Strings{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}));
  EXPECT_EQ(Keys(Scan("", "", true)), (Strings{"j", "i", "h", "g", "f", "e", "d", "c", "b", "a"}));
  EXPECT_EQ(Scan("c", "g"), (KVs{{"c", "cc"}, {"d", "dd"}, {"e", "ee"}, {"f", "ff"}}));
  EXPECT_EQ(Keys(Scan("c", "g", true)), (Strings{"f", "e", "d", "c"}));
  // Bounds between keys.
  EXPECT_EQ(Keys(Scan("c1", "g1")), (Strings{"d", "e", "f", "g"}));
  EXPECT_EQ(Keys(Scan("c1", "g1", true)), (Strings{"g", "f", "e", "d"}));
  // One side only.
  EXPECT_EQ(Keys(Scan("h")), (Strings{"h", "i", "j"}));
  EXPECT_EQ(Keys(Scan("", "c", true)), (Strings{"b", "a"}));
  // Empty ranges.
  EXPECT_TRUE(Scan("c1", "c2").empty());
  EXPECT_TRUE(Scan("c1", "c2", true).empty());
  EXPECT_TRUE(Scan("g", "c").empty());
  EXPECT_TRUE(Scan("g", "c", true).empty());
  EXPECT_TRUE(Scan("k").empty());
  EXPECT_TRUE(Scan("", "a", true).empty());

  // Changing direction mid-scan.
  auto it = store_->NewIterator(KVIteratorOptions());
  it->Seek("e");
  ASSERT_TRUE(it->Valid());
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "f");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "d");
  EXPECT_EQ(it->value(), "dd");
}

TEST_P(KVStoreTest, SeekAndSeekForPrevEdgeCases) {
  {
    // Empty store.
    auto it = store_->NewIterator(KVIteratorOptions());
    EXPECT_FALSE(it->Valid());
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek("a");
    EXPECT_FALSE(it->Valid());
    it->SeekForPrev("a");
    EXPECT_FALSE(it->Valid());
  }
  Put("b", "B");
  Put("d", "D");
  Put("f", "F");
  auto at = [](KVIterator* it) { return it->Valid() ? std::string(it->key()) : "INVALID"; };

  auto it = store_->NewIterator(KVIteratorOptions());
  it->Seek("");
  EXPECT_EQ(at(it.get()), "b");
  it->Seek("a");
  EXPECT_EQ(at(it.get()), "b");
  it->Seek("b");
  EXPECT_EQ(at(it.get()), "b");
  it->Seek("c");
  EXPECT_EQ(at(it.get()), "d");
  it->Seek("f");
  EXPECT_EQ(at(it.get()), "f");
  it->Seek("f\x01");
  EXPECT_EQ(at(it.get()), "INVALID");
  it->SeekForPrev("");
  EXPECT_EQ(at(it.get()), "INVALID");
  it->SeekForPrev("a");
  EXPECT_EQ(at(it.get()), "INVALID");
  it->SeekForPrev("b");
  EXPECT_EQ(at(it.get()), "b");
  it->SeekForPrev("c");
  EXPECT_EQ(at(it.get()), "b");
  it->SeekForPrev("d");
  EXPECT_EQ(at(it.get()), "d");
  it->SeekForPrev("z");
  EXPECT_EQ(at(it.get()), "f");
  // Walking off either end.
  it->SeekToFirst();
  it->Prev();
  EXPECT_EQ(at(it.get()), "INVALID");
  it->SeekToLast();
  it->Next();
  EXPECT_EQ(at(it.get()), "INVALID");

  // Bounds [c, f): only "d" is inside; targets are clamped.
  KVIteratorOptions o;
  o.lower_bound = "c";
  o.upper_bound = "f";
  auto bit = store_->NewIterator(o);
  bit->Seek("a");
  EXPECT_EQ(at(bit.get()), "d");
  bit->Seek("e");
  EXPECT_EQ(at(bit.get()), "INVALID");
  bit->Seek("f");  // upper bound is exclusive
  EXPECT_EQ(at(bit.get()), "INVALID");
  bit->SeekForPrev("z");
  EXPECT_EQ(at(bit.get()), "d");
  bit->SeekForPrev("f");
  EXPECT_EQ(at(bit.get()), "d");
  bit->SeekForPrev("c");  // "b" exists but is below the lower bound
  EXPECT_EQ(at(bit.get()), "INVALID");
  bit->SeekToFirst();
  EXPECT_EQ(at(bit.get()), "d");
  bit->Next();
  EXPECT_EQ(at(bit.get()), "INVALID");
  bit->SeekToLast();
  EXPECT_EQ(at(bit.get()), "d");
  bit->Prev();
  EXPECT_EQ(at(bit.get()), "INVALID");

  // Bounds equal to existing keys: lower inclusive, upper exclusive.
  o.lower_bound = "b";
  o.upper_bound = "d";
  auto eit = store_->NewIterator(o);
  eit->SeekToLast();
  EXPECT_EQ(at(eit.get()), "b");
  eit->SeekForPrev("d");
  EXPECT_EQ(at(eit.get()), "b");
  eit->SeekToFirst();
  EXPECT_EQ(at(eit.get()), "b");
}

TEST_P(KVStoreTest, BinaryKeysSortBytewise) {
  using namespace std::string_literals;
  const Strings ordered = {
      ""s,     "\0"s,  "\0\0"s, "\0\x01"s, "a"s,    "a\0"s,     "a\0b"s,
      "ab"s,   "\x7f"s, "\x80"s, "\xfe"s,  "\xff"s, "\xff\0"s, "\xff\xff"s,
  };
  Strings shuffled = ordered;
  std::mt19937 rng(7);
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  for (const std::string& k : shuffled) Put(k, "v" + k + "\0\xff"s);
  for (const std::string& k : ordered) EXPECT_EQ(Get(k), "v" + k + "\0\xff"s);
  EXPECT_EQ(Get("\0\0\0"s), "NOT_FOUND");

  EXPECT_EQ(Keys(Scan()), ordered);
  Strings reversed(ordered.rbegin(), ordered.rend());
  EXPECT_EQ(Keys(Scan("", "", true)), reversed);
  EXPECT_EQ(Keys(Scan("\0"s, "\xff"s)), Strings(ordered.begin() + 1, ordered.begin() + 11));
  EXPECT_EQ(Keys(Scan("a\0"s, "ab"s)), (Strings{"a\0"s, "a\0b"s}));
  EXPECT_EQ(Keys(Scan("\x80"s, "", true)), (Strings{"\xff\xff"s, "\xff\0"s, "\xff"s, "\xfe"s, "\x80"s}));

  auto it = store_->NewIterator(KVIteratorOptions());
  it->Seek("a\0"s);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "a\0"s);
  it->SeekForPrev("a\0a"s);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "a\0"s);
  it->Seek("\xff\x01"s);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "\xff\xff"s);

  Del("\0"s);
  Del(""s);
  EXPECT_EQ(Get("\0"s), "NOT_FOUND");
  EXPECT_EQ(Keys(Scan("", "a")), (Strings{"\0\0"s, "\0\x01"s}));
}

//////// Snapshots:

// Big values (which the memory store compresses, or adopts from an owned
// batch when they do not compress) read back whole, through Get, iterators
// and snapshots, and old ones are let go when overwritten or deleted.
TEST_P(KVStoreTest, BigOwnedValuesSurviveOverwritesAndSnapshots) {
  std::string big1;
  for (int i = 0; big1.size() < 300 * 1024; ++i) big1 += "{\"sovery" + std::to_string(i % 10) + "\":\"cool\"}";
  std::mt19937 rng(3);
  std::string big2(200 * 1024, '\0');
  for (char& c : big2) c = static_cast<char>(rng());
  {
    KVWriteBatch copied;  // written from a batch the store does not own
    copied.Put("c", big1 + big2);
    ASSERT_TRUE(store_->Write(KVWriteOptions(), copied).ok());
    EXPECT_EQ(Get("c"), big1 + big2);
    Del("c");
  }
  auto put_owned = [&](std::string k, std::string v) {
    KVWriteBatch b;
    b.PutOwned(std::move(k), std::move(v));
    Status s = store_->WriteOwned(KVWriteOptions(), std::move(b));
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  put_owned("a", big1);
  auto snap = store_->GetSnapshot();
  put_owned("a", big2);
  put_owned("b", big1);
  EXPECT_EQ(Get("a"), big2);
  EXPECT_EQ(Get("a", snap.get()), big1);
  EXPECT_EQ(Scan(), (KVs{{"a", big2}, {"b", big1}}));
  snap.reset();
  Del("b");
  put_owned("a", "small");
  EXPECT_EQ(Scan(), (KVs{{"a", "small"}}));
}

TEST_P(KVStoreTest, SnapshotIsolatesLaterWrites) {
  Put("a", "1");
  Put("b", "1");
  auto snap1 = store_->GetSnapshot();
  Put("a", "2");
  Del("b");
  Put("c", "1");
  auto snap2 = store_->GetSnapshot();
  Put("a", "3");
  Put("b", "3");

  EXPECT_EQ(Get("a", snap1.get()), "1");
  EXPECT_EQ(Get("b", snap1.get()), "1");
  EXPECT_EQ(Get("c", snap1.get()), "NOT_FOUND");
  EXPECT_EQ(Scan("", "", false, snap1.get()), (KVs{{"a", "1"}, {"b", "1"}}));
  EXPECT_EQ(Scan("", "", true, snap1.get()), (KVs{{"b", "1"}, {"a", "1"}}));

  EXPECT_EQ(Get("a", snap2.get()), "2");
  EXPECT_EQ(Get("b", snap2.get()), "NOT_FOUND");
  EXPECT_EQ(Scan("", "", false, snap2.get()), (KVs{{"a", "2"}, {"c", "1"}}));

  EXPECT_EQ(Scan(), (KVs{{"a", "3"}, {"b", "3"}, {"c", "1"}}));

  snap1.reset();
  store_->CompactRange("", "");
  Put("a", "4");
  EXPECT_EQ(Scan("", "", false, snap2.get()), (KVs{{"a", "2"}, {"c", "1"}}));
  snap2.reset();
  Put("a", "5");
  store_->CompactRange("", "");
  EXPECT_EQ(Scan(), (KVs{{"a", "5"}, {"b", "3"}, {"c", "1"}}));
}

TEST_P(KVStoreTest, IteratorTakesImplicitSnapshotAndDoesNotBlockWriters) {
  for (int i = 0; i < 10; i++) Put("k" + std::to_string(i), "old");
  auto it = store_->NewIterator(KVIteratorOptions());
  Put("k5", "new");  // after creation, before positioning
  it->Seek("k3");
  ASSERT_TRUE(it->Valid());
  // Writers proceed while the iterator is positioned (same thread: a held
  // read lock would deadlock here), including on the current key.
  Del("k3");
  Del("k4");
  Put("k35", "inserted");
  std::thread other([&] {
    KVWriteBatch b;
    for (int i = 0; i < 10; i++) b.Put("k" + std::to_string(i), "newer");
    EXPECT_TRUE(store_->Write(KVWriteOptions(), b).ok());
  });
  other.join();
  store_->CompactRange("", "");
  EXPECT_EQ(it->key(), "k3");
  EXPECT_EQ(it->value(), "old");
  Strings seen;
  for (; it->Valid(); it->Next()) {
    EXPECT_EQ(it->value(), "old");
    seen.emplace_back(it->key());
  }
  EXPECT_EQ(seen, (Strings{"k3", "k4", "k5", "k6", "k7", "k8", "k9"}));
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "k9");
  EXPECT_EQ(Get("k5"), "newer");
  EXPECT_EQ(Get("k35"), "inserted");
}

TEST_P(KVStoreTest, IteratorOutlivesCallersSnapshotHandle) {
  Put("a", "1");
  Put("b", "1");
  auto snap = store_->GetSnapshot();
  KVIteratorOptions o;
  o.snapshot = snap.get();
  auto it = store_->NewIterator(o);
  snap.reset();
  Del("a");
  Put("b", "2");
  Put("c", "2");
  store_->CompactRange("", "");
  EXPECT_EQ(Drain(it.get(), false), (KVs{{"a", "1"}, {"b", "1"}}));
}

TEST_P(KVStoreTest, ForeignSnapshotIsRejected) {
  Put("a", "1");
  std::unique_ptr<KVStore> other = NewMemoryStore();
  auto foreign = other->GetSnapshot();
  std::string v;
  KVReadOptions ro;
  ro.snapshot = foreign.get();
  Status s = store_->Get(ro, "a", &v);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(s.IsNotFound());
  KVIteratorOptions io;
  io.snapshot = foreign.get();
  auto it = store_->NewIterator(io);
  ASSERT_NE(it, nullptr);
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_FALSE(it->status().ok());
}

//////// Sizes:

TEST_P(KVStoreTest, ApproximateSizeIsSane) {
  EXPECT_EQ(store_->ApproximateSize("", ""), 0u);
  constexpr int kKeys = 2000;
  constexpr size_t kValueBytes = 500;
  std::mt19937 rng(42);
  KVWriteBatch b;
  for (int i = 0; i < kKeys; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "a%05d", i);
    std::string value(kValueBytes, '\0');
    for (char& c : value) c = static_cast<char>(rng());  // incompressible
    b.Put(key, value);
  }
  ASSERT_TRUE(store_->Write(KVWriteOptions(), b).ok());
  store_->CompactRange("", "");  // LevelDB sizes only table files

  const uint64_t raw = kKeys * (6 + kValueBytes);
  const uint64_t total = store_->ApproximateSize("", "");
  EXPECT_GE(total, raw / 2);
  EXPECT_LE(total, raw * 2);
  const uint64_t half = store_->ApproximateSize("a00000", "a01000");
  EXPECT_GE(half, total / 4);
  EXPECT_LE(half, total * 3 / 4);
  EXPECT_LE(store_->ApproximateSize("b", "c"), total / 20);
  EXPECT_LE(store_->ApproximateSize("a01000", "a00000"), total / 20);
  if (!IsLevelDB()) {
    EXPECT_EQ(total, raw);  // the memory store counts exactly
    EXPECT_EQ(half, raw / 2);
  }
}

//////// Concurrency:

// Each batch sets every key to one generation and, on odd generations,
// deletes a quarter of them; a reader must always see exactly one generation.
TEST_P(KVStoreTest, ConcurrentReadersNeverSeePartialBatches) {
  constexpr int kKeys = 200;
  const int kGenerations = IsLevelDB() ? 150 : 300;
  auto key = [](int i) {
    char k[8];
    std::snprintf(k, sizeof(k), "k%03d", i);
    return std::string(k);
  };
  {
    KVWriteBatch b;
    for (int i = 0; i < kKeys; i++) b.Put(key(i), "0");
    ASSERT_TRUE(store_->Write(KVWriteOptions(), b).ok());
  }
  std::atomic<bool> done{false};
  std::atomic<int> bad{0}, scans{0}, readers_ready{0};
  std::thread writer([&] {
    // Start once both readers run, so that scans overlap the writes even
    // when the scheduler is slow to start the reader threads.
    while (readers_ready.load() < 2) std::this_thread::yield();
    for (int g = 1; g <= kGenerations; g++) {
      KVWriteBatch b;
      for (int i = 0; i < kKeys; i++) b.Put(key(i), std::to_string(g));
      if (g % 2 == 1) {
        for (int i = 0; i < kKeys; i += 4) b.Delete(key(i));
      }
      if (!store_->Write(KVWriteOptions(), b).ok()) bad++;
      // Unrelated keys outside the scanned range keep the structure moving.
      if (!store_->Put(KVWriteOptions(), "z" + std::to_string(g % 50), "x").ok()) bad++;
    }
    done = true;
  });
  auto check = [&](const KVs& kvs) {
    if (kvs.empty()) return false;
    const std::string& gen = kvs.front().second;
    const size_t expect = (std::stoi(gen) % 2 == 1) ? kKeys * 3 / 4 : kKeys;
    if (kvs.size() != expect) return false;
    for (const auto& kv : kvs) {
      if (kv.second != gen) return false;
    }
    return true;
  };
  auto reader = [&](int id) {
    KVIteratorOptions o;
    o.lower_bound = "k";
    o.upper_bound = "l";
    readers_ready++;
    do {
      auto it = store_->NewIterator(o);
      KVs kvs = Drain(it.get(), id % 2 == 1);
      if (!check(kvs)) bad++;
      // The same through Get on a snapshot.
      auto snap = store_->GetSnapshot();
      KVs got;
      KVReadOptions ro;
      ro.snapshot = snap.get();
      for (int i = 0; i < kKeys; i++) {
        std::string v;
        Status s = store_->Get(ro, key(i), &v);
        if (s.ok()) {
          got.emplace_back(key(i), v);
        } else if (!s.IsNotFound()) {
          bad++;
        }
      }
      if (!check(got)) bad++;
      scans++;
    } while (!done);
  };
  std::thread r1(reader, 0), r2(reader, 1);
  writer.join();
  r1.join();
  r2.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(scans.load(), 0);
  KVs final_kvs = Scan("k", "l");
  EXPECT_TRUE(check(final_kvs));
  EXPECT_EQ(final_kvs.front().second, std::to_string(kGenerations));
}

// 8 threads each own 100 keys, rewrite them round after round (single puts,
// batches and delete/re-put), read their own keys back and read and scan the
// other threads' keys. Nothing may be lost, torn or mixed up.
TEST_P(KVStoreTest, ManyThreadsWriteAndReadConcurrently) {
  constexpr int kThreads = 8;
  constexpr int kKeysPerThread = 100;
  const int kRounds = IsLevelDB() ? 12 : 30;
  auto key = [](int t, int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "t%d/%03d", t, i);
    return std::string(k);
  };
  std::atomic<int> bad{0};
  auto worker = [&](int t) {
    std::mt19937 rng(t);
    for (int r = 0; r < kRounds; r++) {
      KVWriteBatch b;
      for (int i = 0; i < kKeysPerThread; i++) {
        if (i % 3 == 0) {
          if (!store_->Put(KVWriteOptions(), key(t, i), MakeValue(t, i, r)).ok()) bad++;
        } else {
          if (i % 3 == 2 && r % 2 == 1) b.Delete(key(t, i));
          b.Put(key(t, i), MakeValue(t, i, r));
          if (b.count() >= 10) {
            if (!store_->Write(KVWriteOptions(), b).ok()) bad++;
            b.Clear();
          }
        }
      }
      if (!store_->Write(KVWriteOptions(), b).ok()) bad++;
      // Own keys: exactly this round's values.
      for (int i = 0; i < kKeysPerThread; i++) {
        std::string v;
        int got_r = -1;
        if (!store_->Get(KVReadOptions(), key(t, i), &v).ok() || !ParseValue(v, t, i, &got_r) ||
            got_r != r) {
          bad++;
        }
      }
      // Other threads' keys: well-formed if present.
      for (int n = 0; n < 50; n++) {
        const int ot = static_cast<int>(rng() % kThreads), oi = static_cast<int>(rng() % kKeysPerThread);
        std::string v;
        int got_r;
        Status s = store_->Get(KVReadOptions(), key(ot, oi), &v);
        if (s.ok() ? !ParseValue(v, ot, oi, &got_r) : !s.IsNotFound()) bad++;
      }
      // A scan of another thread's range: ordered and well-formed.
      const int ot = static_cast<int>(rng() % kThreads);
      KVIteratorOptions o;
      o.lower_bound = "t" + std::to_string(ot) + "/";
      o.upper_bound = "t" + std::to_string(ot) + "0";
      auto it = store_->NewIterator(o);
      std::string prev;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        std::string k(it->key());
        int oi = std::stoi(k.substr(k.find('/') + 1));
        int got_r;
        if (k <= prev || !ParseValue(std::string(it->value()), ot, oi, &got_r)) bad++;
        prev = k;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  EXPECT_EQ(bad.load(), 0);
  KVs all = Scan("t", "u");
  ASSERT_EQ(all.size(), static_cast<size_t>(kThreads * kKeysPerThread));
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kKeysPerThread; i++) {
      EXPECT_EQ(Get(key(t, i)), MakeValue(t, i, kRounds - 1));
    }
  }
}

// Keys rewritten hundreds of times (LevelDB keeps every version until a
// compaction, and its iterator then seeks past each key instead of stepping
// over them: storage/reseek_policy.h): a scan still returns each key once
// with its latest value, a snapshot's scan the values it saw, and a scan
// that starts inside the range or turns back lands on the right keys.
TEST_P(KVStoreTest, ScansOfKeysRewrittenManyTimes) {
  constexpr int kKeys = 60, kVersions = 300;
  auto key = [](int i) { return "r" + std::to_string(1000 + i); };
  std::shared_ptr<const KVSnapshot> half;
  for (int v = 0; v < kVersions; ++v) {
    KVWriteBatch b;
    for (int i = 0; i < kKeys; ++i) b.Put(key(i), "v" + std::to_string(v) + std::string(40, 'x'));
    ASSERT_TRUE(store_->Write(KVWriteOptions(), b).ok());
    if (v == kVersions / 2) half = store_->GetSnapshot();
  }
  ASSERT_TRUE(store_->Put(KVWriteOptions(), "s", "after").ok());
  for (int pass = 0; pass < 3; ++pass) {  // later passes find the policy warmed up: a new iterator starts afresh
    KVIteratorOptions o;
    o.lower_bound = "r";
    o.upper_bound = "s";
    auto it = store_->NewIterator(o);
    KVs got = Drain(it.get(), /*reverse=*/false);
    ASSERT_EQ(got.size(), static_cast<size_t>(kKeys));
    for (int i = 0; i < kKeys; ++i) {
      EXPECT_EQ(got[i].first, key(i));
      EXPECT_EQ(got[i].second.substr(0, 4), "v" + std::to_string(kVersions - 1));
    }
    EXPECT_EQ(Drain(it.get(), /*reverse=*/true).size(), static_cast<size_t>(kKeys));
  }
  KVIteratorOptions at_half;
  at_half.snapshot = half.get();
  at_half.upper_bound = "s";
  auto it = store_->NewIterator(at_half);
  int n = 0;
  for (it->Seek(key(10)); it->Valid(); it->Next(), ++n) {
    EXPECT_EQ(it->key(), key(10 + n));
    EXPECT_EQ(it->value().substr(0, 4), "v" + std::to_string(kVersions / 2));
    if (n == 30) {  // turn back once, then on again
      it->Prev();
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(it->key(), key(10 + n - 1));
      it->Next();
      EXPECT_EQ(it->key(), key(10 + n));
    }
  }
  EXPECT_EQ(n, kKeys - 10);
}

//////// LevelDB only:

TEST_P(KVStoreTest, LevelDBReopenKeepsData) {
  if (!IsLevelDB()) GTEST_SKIP() << "LevelDB only";
  Put("a", "1");
  Put("b", "2");
  Del("b");
  KVWriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE(store_->Put(sync, "c", "3").ok());
  store_.reset();
  Open();
  EXPECT_EQ(Scan(), (KVs{{"a", "1"}, {"c", "3"}}));
  store_->CompactRange("", "");
  store_.reset();
  Open();
  EXPECT_EQ(Scan(), (KVs{{"a", "1"}, {"c", "3"}}));
}

TEST_P(KVStoreTest, LevelDBDoubleOpenFailsWithIOError) {
  if (!IsLevelDB()) GTEST_SKIP() << "LevelDB only";
  Put("a", "1");
  std::unique_ptr<KVStore> second = NewMemoryStore();
  Status s = OpenLevelDBStore(dir_, LevelDBOptions(), &second);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_EQ(second, nullptr);
  EXPECT_EQ(Get("a"), "1");  // the first handle is unaffected
  store_.reset();
  ASSERT_TRUE(OpenLevelDBStore(dir_, LevelDBOptions(), &second).ok());
  std::string v;
  EXPECT_TRUE(second->Get(KVReadOptions(), "a", &v).ok());
  EXPECT_EQ(v, "1");
}

TEST_P(KVStoreTest, LevelDBOpenErrors) {
  if (!IsLevelDB()) GTEST_SKIP() << "LevelDB only";
  std::unique_ptr<KVStore> s2;
  LevelDBOptions no_create;
  no_create.create_if_missing = false;
  Status s = OpenLevelDBStore(dir_ + "_missing", no_create, &s2);
  EXPECT_EQ(s.code(), Status::Code::kNotFound) << s.ToString();
  EXPECT_EQ(s2, nullptr);
  // A path below a regular file cannot be created.
  const std::string file = dir_ + "_file";
  { std::FILE* f = std::fopen(file.c_str(), "w"); ASSERT_NE(f, nullptr); std::fclose(f); }
  s = OpenLevelDBStore(file + "/db", LevelDBOptions(), &s2);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_EQ(s2, nullptr);
  std::filesystem::remove(file);
  // Options without cache or filter still work.
  LevelDBOptions small;
  small.bloom_filter = false;
  small.block_cache_bytes = 1 << 16;
  small.write_buffer_bytes = 1 << 16;
  const std::string other = dir_ + "_small";
  ASSERT_TRUE(OpenLevelDBStore(other, small, &s2).ok());
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(s2->Put(KVWriteOptions(), "k" + std::to_string(i), std::string(100, 'v')).ok());
  }
  std::string v;
  EXPECT_TRUE(s2->Get(KVReadOptions(), "k1999", &v).ok());
  EXPECT_TRUE(s2->Get(KVReadOptions(), "k2000", &v).IsNotFound());
  s2.reset();
  std::filesystem::remove_all(other);
}

INSTANTIATE_TEST_SUITE_P(Backends, KVStoreTest,
                         testing::Values(Backend::kMemory, Backend::kMemoryPartitioned,
                                         Backend::kLevelDB),
                         [](const testing::TestParamInfo<Backend>& info) {
                           return std::string(BackendLabel(info.param));
                         });

//////// Memory store garbage collection:

// The memory store's sizes are exact whichever side it walks: after random
// puts, overwrites (within a batch too) and deletes, with a snapshot holding
// old versions, every range matches a sum over a full scan.
TEST(MemoryStoreSize, ExactForEveryRangeAfterOverwritesAndDeletes) {
 for (const MemoryStore::Options& options :
      {MemoryStore::Options{}, MemoryStore::Options{5, "k", 1}}) {
  SCOPED_TRACE(options.partitions);
  MemoryStore store(options);
  std::mt19937 rng(11);
  auto key = [&rng] { return "k" + std::to_string(rng() % 300); };
  std::shared_ptr<const KVSnapshot> old;
  for (int round = 0; round < 200; ++round) {
    KVWriteBatch b;
    for (int i = 0; i < 8; ++i) {
      if (rng() % 4 == 0) b.Delete(key());
      else b.Put(key(), std::string(rng() % 40, 'v'));
    }
    ASSERT_TRUE(store.Write(KVWriteOptions(), b).ok());
    if (round == 100) old = store.GetSnapshot();
  }
  std::map<std::string, size_t> live;
  auto it = store.NewIterator(KVIteratorOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) live[std::string(it->key())] = it->key().size() + it->value().size();
  auto brute = [&](const std::string& begin, const std::string& end) {
    uint64_t sum = 0;
    for (const auto& [k, bytes] : live) {
      if (k >= begin && (end.empty() || k < end)) sum += bytes;
    }
    return sum;
  };
  for (const auto& [begin, end] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"k1", "k2"}, {"", "k5"}, {"k5", ""}, {"k", "l"}, {"k10", "k99"},
           {"k150", "k151"}, {"a", "b"}, {"z", ""}, {"k9", "k1"}}) {
    EXPECT_EQ(store.ApproximateSize(begin, end), brute(begin, end)) << begin << ".." << end;
  }
 }
}

TEST(MemoryStoreGC, OverwrittenVersionsAreFreedWithoutSnapshots) {
  MemoryStore store;
  for (int i = 0; i < 100; i++) ASSERT_TRUE(store.Put(KVWriteOptions(), "k", std::to_string(i)).ok());
  EXPECT_EQ(store.TEST_VersionCount(), 1u);
  ASSERT_TRUE(store.Delete(KVWriteOptions(), "k").ok());
  EXPECT_EQ(store.TEST_NodeCount(), 0u);
  EXPECT_EQ(store.TEST_VersionCount(), 0u);
}

TEST(MemoryStoreGC, SnapshotPinsVersionsUntilReleased) {
  MemoryStore store;
  ASSERT_TRUE(store.Put(KVWriteOptions(), "k", "0").ok());
  ASSERT_TRUE(store.Put(KVWriteOptions(), "gone", "0").ok());
  auto snap = store.GetSnapshot();
  for (int i = 1; i <= 10; i++) ASSERT_TRUE(store.Put(KVWriteOptions(), "k", std::to_string(i)).ok());
  ASSERT_TRUE(store.Delete(KVWriteOptions(), "gone").ok());
  EXPECT_GE(store.TEST_VersionCount(), 4u);  // "k"@0, "k"@10, "gone"@0, its deletion
  std::string v;
  KVReadOptions ro;
  ro.snapshot = snap.get();
  ASSERT_TRUE(store.Get(ro, "k", &v).ok());
  EXPECT_EQ(v, "0");
  ASSERT_TRUE(store.Get(ro, "gone", &v).ok());
  EXPECT_EQ(v, "0");

  snap.reset();
  // Collection happens on the next write.
  ASSERT_TRUE(store.Put(KVWriteOptions(), "other", "x").ok());
  EXPECT_EQ(store.TEST_NodeCount(), 2u);
  EXPECT_EQ(store.TEST_VersionCount(), 2u);
  ASSERT_TRUE(store.Get(KVReadOptions(), "k", &v).ok());
  EXPECT_EQ(v, "10");
}

TEST(MemoryStoreGC, IteratorPinsVersionsAndCompactRangeCollects) {
  MemoryStore store;
  KVWriteBatch b;
  for (int i = 0; i < 500; i++) b.Put("k" + std::to_string(i), "old");
  ASSERT_TRUE(store.Write(KVWriteOptions(), b).ok());
  auto it = store.NewIterator(KVIteratorOptions());
  it->SeekToFirst();
  b.Clear();
  for (int i = 0; i < 500; i++) {
    if (i % 2) {
      b.Delete("k" + std::to_string(i));
    } else {
      b.Put("k" + std::to_string(i), "new");
    }
  }
  ASSERT_TRUE(store.Write(KVWriteOptions(), b).ok());
  EXPECT_EQ(store.TEST_VersionCount(), 1000u);
  int n = 0;
  for (; it->Valid(); it->Next(), n++) EXPECT_EQ(it->value(), "old");
  EXPECT_EQ(n, 500);
  it.reset();
  store.CompactRange("", "");
  EXPECT_EQ(store.TEST_NodeCount(), 250u);
  EXPECT_EQ(store.TEST_VersionCount(), 250u);
}

TEST(MemoryStoreGC, ManyPendingKeysAreCollectedAfterRelease) {
  MemoryStore store;
  KVWriteBatch b;
  for (int i = 0; i < 1000; i++) b.Put("k" + std::to_string(i), "a");
  ASSERT_TRUE(store.Write(KVWriteOptions(), b).ok());
  auto snap = store.GetSnapshot();
  for (int i = 0; i < 1000; i++) ASSERT_TRUE(store.Put(KVWriteOptions(), "k" + std::to_string(i), "b").ok());
  EXPECT_EQ(store.TEST_VersionCount(), 2000u);
  snap.reset();
  ASSERT_TRUE(store.Put(KVWriteOptions(), "z", "z").ok());
  EXPECT_EQ(store.TEST_VersionCount(), 1001u);
}

//////// Memory store partitions:

// Versions a snapshot pinned in one partition are collected by the next
// write to that partition (or CompactRange), not by writes elsewhere.
// A document write's keys land on or just after nodes recent batches wrote
// (the counters key; the next sequence; the next id of each writer's
// ascending run), so the memory store places them from those nodes
// (fingers) instead of descending the map. Batches in that shape, with old
// sequences deleted (their nodes erased, fingers among them) and keys in
// between and before every run, must leave the store equal to a model,
// with and without partitions; and most keys must have been placed by a
// finger (else the mechanism is dead code and the test says so).
TEST(MemoryStoreFingers, DocumentShapedBatchesMatchAModel) {
  for (const MemoryStore::Options& options :
       {MemoryStore::Options{}, MemoryStore::Options{3, "r", 1}}) {
    SCOPED_TRACE(options.partitions);
    MemoryStore store(options);
    std::map<std::string, std::string> model;
    std::mt19937 rng(5);
    auto padded = [](const char* prefix, uint64_t n) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%s%08llu", prefix, static_cast<unsigned long long>(n));
      return std::string(buf);
    };
    uint64_t seq = 0;
    uint64_t next_id[3] = {0, 0, 0};
    std::vector<uint64_t> live_seqs;
    auto scan = [&store] {
      KVs all;
      auto it = store.NewIterator(KVIteratorOptions());
      for (it->SeekToFirst(); it->Valid(); it->Next()) all.emplace_back(it->key(), it->value());
      return all;
    };
    int keys_written = 0;
    for (int round = 0; round < 1500; ++round) {
      KVWriteBatch b;
      auto put = [&](std::string k, std::string v) {
        model[k] = v;
        b.Put(k, v);
        ++keys_written;
      };
      auto del = [&](std::string k) {
        model.erase(k);
        b.Delete(k);
        ++keys_written;
      };
      // One writer's next document ("r0...", "r1...", "r2...": three runs
      // whose keys interleave between batches).
      const int w = static_cast<int>(rng() % 3);
      const std::string run = "r" + std::to_string(w) + "_";
      put(padded(run.c_str(), next_id[w]++), "doc" + std::to_string(round));
      // Now and then a key before or inside the runs, or a rewrite.
      if (rng() % 8 == 0) put(padded("a", rng() % 50), "early");
      if (rng() % 8 == 0 && next_id[w] > 1) put(padded(run.c_str(), rng() % next_id[w]), "again");
      put("m_counters", std::to_string(round));
      // Supersede an old sequence (its node erased once nothing sees it;
      // often the newest one, the finger on the sequence run).
      if (!live_seqs.empty() && rng() % 3 == 0) {
        const size_t pick = rng() % 2 == 0 ? live_seqs.size() - 1 : rng() % live_seqs.size();
        del(padded("s", live_seqs[pick]));
        live_seqs.erase(live_seqs.begin() + static_cast<std::ptrdiff_t>(pick));
      }
      put(padded("s", ++seq), "change");
      live_seqs.push_back(seq);
      // A deleted run's last document: its node (a finger) is erased too.
      if (rng() % 16 == 0 && next_id[w] > 0) del(padded(run.c_str(), next_id[w] - 1));
      Status s = round % 2 ? store.WriteOwned(KVWriteOptions(), std::move(b))
                           : store.Write(KVWriteOptions(), b);
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_TRUE(store.TEST_FingersConsistent()) << "round " << round;
      if (round % 50 == 0 || round > 1450) {
        ASSERT_EQ(scan(), KVs(model.begin(), model.end())) << "round " << round;
      }
    }
    EXPECT_EQ(store.TEST_NodeCount(), model.size());
    EXPECT_GT(store.TEST_FingerHits(), static_cast<uint64_t>(keys_written) / 2);
  }
}

TEST(MemoryStorePartitions, PendingVersionsAreCollectedPerPartition) {
  MemoryStore store(MemoryStore::Options{3, "", 1});  // "a" and "b" apart
  ASSERT_TRUE(store.Put(KVWriteOptions(), "a", "0").ok());
  auto snap = store.GetSnapshot();
  ASSERT_TRUE(store.Put(KVWriteOptions(), "a", "1").ok());
  EXPECT_EQ(store.TEST_VersionCount(), 2u);
  snap.reset();
  ASSERT_TRUE(store.Put(KVWriteOptions(), "b", "x").ok());
  EXPECT_EQ(store.TEST_VersionCount(), 3u);
  ASSERT_TRUE(store.Put(KVWriteOptions(), "a2", "x").ok());
  EXPECT_EQ(store.TEST_VersionCount(), 3u);  // "a"@1, "a2", "b"
}

// Writers to different partitions run at once, yet every snapshot is one
// consistent cut of the whole store: a batch spanning two partitions is seen
// whole or not at all, and a write acknowledged before a snapshot is taken
// is in it.
TEST(MemoryStorePartitions, ConcurrentWritersPublishConsistentCuts) {
  MemoryStore store(MemoryStore::Options{3, "", 1});
  constexpr int kWrites = 3000;
  std::atomic<int> acked[2] = {0, 0};
  std::atomic<bool> failed{false};
  auto single = [&](int w) {
    const std::string key = w == 0 ? "a_count" : "b_count";
    for (int i = 1; i <= kWrites && !failed; ++i) {
      if (!store.Put(KVWriteOptions(), key, std::to_string(i)).ok()) failed = true;
      acked[w].store(i, std::memory_order_release);
    }
  };
  auto pairs = [&] {
    for (int i = 1; i <= kWrites && !failed; ++i) {
      KVWriteBatch b;
      b.Put("a_pair", std::to_string(i));
      b.Put("b_pair", std::to_string(i));
      if (!store.Write(KVWriteOptions(), b).ok()) failed = true;
    }
  };
  auto reader = [&] {
    std::string a, b;
    for (int round = 0; round < 2000 && !failed; ++round) {
      const int seen0 = acked[0].load(std::memory_order_acquire);
      const int seen1 = acked[1].load(std::memory_order_acquire);
      auto snap = store.GetSnapshot();
      KVReadOptions ro;
      ro.snapshot = snap.get();
      const bool has_a = store.Get(ro, "a_pair", &a).ok();
      const bool has_b = store.Get(ro, "b_pair", &b).ok();
      if (has_a != has_b || (has_a && a != b)) {
        ADD_FAILURE() << "torn batch: " << a << " vs " << b;
        failed = true;
      }
      for (int w = 0; w < 2; ++w) {
        const int seen = w == 0 ? seen0 : seen1;
        std::string v;
        Status s = store.Get(ro, w == 0 ? "a_count" : "b_count", &v);
        if (seen > 0 && (!s.ok() || std::stoi(v) < seen)) {
          ADD_FAILURE() << "acknowledged write " << seen << " missing from a later snapshot";
          failed = true;
        }
      }
      // The snapshot is stable: a merged scan through it sees the same pair.
      KVIteratorOptions io;
      io.snapshot = snap.get();
      auto it = store.NewIterator(io);
      std::map<std::string, std::string> all;
      for (it->SeekToFirst(); it->Valid(); it->Next()) all[std::string(it->key())] = it->value();
      if (has_a && (all["a_pair"] != a || all["b_pair"] != b)) {
        ADD_FAILURE() << "snapshot moved";
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(single, 0);
  threads.emplace_back(single, 1);
  threads.emplace_back(pairs);
  threads.emplace_back(reader);
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
  std::string v;
  ASSERT_TRUE(store.Get(KVReadOptions(), "a_pair", &v).ok());
  EXPECT_EQ(v, std::to_string(kWrites));
}

}  // namespace
}  // namespace settee
