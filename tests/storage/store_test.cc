// Store: database lifecycle, names, persistence, clean deletion.
#include "settee/store.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "storage/database_impl.h"
#include "storage/keys.h"
#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  StoreTest() : store_(GetParam()) {}

  // Number of keys under `prefix` in `kv` (default: the store's own).
  size_t CountKeys(const std::string& prefix, KVStore* kv = nullptr) {
    KVIteratorOptions io;
    io.lower_bound = prefix;
    io.upper_bound = keys::PrefixEnd(prefix);
    auto it = (kv != nullptr ? kv : store_->kv())->NewIterator(io);
    size_t n = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
    return n;
  }

  testing::TempStore store_;
};

TEST_P(StoreTest, CreateOpenListDelete) {
  ASSERT_TRUE(store_->CreateDatabase("b").ok());
  ASSERT_TRUE(store_->CreateDatabase("a").ok());
  auto dup = store_->CreateDatabase("a");
  EXPECT_EQ(Status::Code::kFileExists, dup.status().code());
  EXPECT_EQ((std::vector<std::string>{"a", "b"}), store_->ListDatabases());

  auto a1 = store_->OpenDatabase("a");
  auto a2 = store_->OpenDatabase("a");
  ASSERT_TRUE(a1.ok() && a2.ok());
  EXPECT_EQ(a1->get(), a2->get()) << "handles to one database are shared";
  EXPECT_EQ("Database does not exist.", store_->OpenDatabase("zz").status().reason());

  ASSERT_TRUE(store_->DeleteDatabase("a").ok());
  EXPECT_TRUE(store_->DeleteDatabase("a").IsNotFound());
  EXPECT_EQ((std::vector<std::string>{"b"}), store_->ListDatabases());
  // The old handle now reports the database as gone.
  EXPECT_TRUE((*a1)->Put("x", "{}").status().IsNotFound());
  EXPECT_TRUE((*a1)->Get("x").status().IsNotFound());
}

TEST_P(StoreTest, DatabaseNamesFollowCouchDBRules) {
  for (const char* good : {"a", "abc", "a-b_c$d(e)f+g/h", "a9", "_users", "_replicator"}) {
    EXPECT_TRUE(IsValidDatabaseName(good)) << good;
  }
  for (const char* bad : {"", "A", "9a", "_a", "a b", "a.b", "../etc", "a%2f", "ab\xc3\xa9",
                          "_design"}) {
    EXPECT_FALSE(IsValidDatabaseName(bad)) << bad;
    auto r = store_->CreateDatabase(bad);
    EXPECT_EQ(Status::Code::kIllegalDatabaseName, r.status().code()) << bad;
  }
  EXPECT_FALSE(IsValidDatabaseName(std::string(239, 'a')));
}

TEST_P(StoreTest, DeletingADatabaseLeavesNothingBehind) {
  auto db = store_->CreateDatabase("gone");
  ASSERT_TRUE(db.ok());
  for (int i = 0; i < 2500; ++i) {
    ASSERT_TRUE((*db)->Put("doc" + std::to_string(i), R"({"v":1})").ok());
  }
  ASSERT_TRUE((*db)->Put("_local/x", "{}").ok());
  KVStore* db_kv = static_cast<DatabaseImpl*>(db->get())->kv();
  ASSERT_GT(CountKeys(std::string(1, keys::kDatabasePrefix), db_kv), 5000u);
  db->reset();
  ASSERT_TRUE(store_->DeleteDatabase("gone").ok());
  EXPECT_EQ(0u, CountKeys(std::string(1, keys::kDatabasePrefix)));
  if (GetParam() == Backend::kLevelDB) {
    // Its own LevelDB went with its directory.
    EXPECT_TRUE(std::filesystem::is_empty(std::filesystem::path(store_.options().path) / "dbs"));
  }
  EXPECT_EQ(0u, CountKeys(std::string(1, keys::kCatalogPrefix)));
  EXPECT_EQ(0u, CountKeys(std::string(1, keys::kPurgePrefix)));

  // Recreated under the same name, it starts empty.
  auto again = store_->CreateDatabase("gone");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(0u, (*again)->Info()->doc_count);
  EXPECT_EQ(0u, (*again)->UpdateSeq());
  EXPECT_TRUE((*again)->Get("doc1").status().IsNotFound());
}

TEST_P(StoreTest, UuidIsStable32Hex) {
  std::string uuid = store_->uuid();
  EXPECT_EQ(32u, uuid.size());
  if (GetParam() == Backend::kLevelDB) {
    store_.Reopen();
    EXPECT_EQ(uuid, store_->uuid());
  }
}

TEST_P(StoreTest, DataSurvivesReopenOnLevelDB) {
  if (GetParam() != Backend::kLevelDB) GTEST_SKIP() << "memory stores do not persist";
  {
    auto db = store_->CreateDatabase("p");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put("a", R"({"v":1})").ok());
    ASSERT_TRUE((*db)->SetRevsLimit(7).ok());
    ASSERT_TRUE((*db)->SetSecurity(R"({"members":{"names":["x"]}})").ok());
  }
  store_.Reopen();
  auto db = store_->OpenDatabase("p");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE((*db)->Get("a").ok());
  EXPECT_EQ(1u, (*db)->UpdateSeq());
  EXPECT_EQ(1u, (*db)->Info()->doc_count);
  EXPECT_EQ(7u, (*db)->RevsLimit());
  EXPECT_EQ(R"({"members":{"names":["x"]}})", (*db)->Security());
  // New databases after reopen get fresh ids and do not collide.
  auto q = store_->CreateDatabase("q");
  ASSERT_TRUE(q.ok());
  EXPECT_TRUE((*q)->Get("a").status().IsNotFound());
}

// Each database keeps its keys in a KV store of its own (a LevelDB, or a
// MemoryStore: writers of different databases share no log, sequence
// counter or lock); the store's keeps only the catalog.
TEST_P(StoreTest, DatabasesHaveStoresOfTheirOwn) {
  auto a = store_->CreateDatabase("a");
  auto b = store_->CreateDatabase("b");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Put("x", R"({"v":1})").ok());
  ASSERT_TRUE((*b)->Put("y", R"({"v":2})").ok());
  KVStore* a_kv = static_cast<DatabaseImpl*>(a->get())->kv();
  KVStore* b_kv = static_cast<DatabaseImpl*>(b->get())->kv();
  EXPECT_NE(a_kv, b_kv);
  EXPECT_NE(a_kv, store_->kv());
  const std::string d(1, keys::kDatabasePrefix);
  EXPECT_EQ(0u, CountKeys(d));
  EXPECT_GT(CountKeys(d, a_kv), 0u);
  EXPECT_EQ(2u, CountKeys(std::string(1, keys::kCatalogPrefix)));
  if (GetParam() != Backend::kLevelDB) return;  // the rest is persistence
  a->reset();
  b->reset();
  store_.Reopen();
  auto a2 = store_->OpenDatabase("a");
  ASSERT_TRUE(a2.ok()) << a2.status().ToString();
  EXPECT_TRUE((*a2)->Get("x").ok());
  EXPECT_TRUE((*a2)->Get("y").status().IsNotFound());
}

// A database created before databases had stores of their own keeps its
// keys in the store's, and still opens, reads and writes there.
TEST_P(StoreTest, LevelDBDatabaseInTheStoresOwnKeysStillOpens) {
  if (GetParam() != Backend::kLevelDB) GTEST_SKIP() << "a LevelDB layout";
  const uint64_t id = 1000;  // beyond next_db_id: no directory
  KVWriteBatch batch;
  std::string id_bytes;
  for (int shift = 56; shift >= 0; shift -= 8) id_bytes.push_back(static_cast<char>(id >> shift));
  batch.Put(keys::Catalog("old"), id_bytes);
  DatabaseImpl::InitializeNew(id, 1000, &batch);
  ASSERT_TRUE(store_->kv()->Write({}, batch).ok());
  store_.Reopen();
  auto db = store_->OpenDatabase("old");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_EQ(store_->kv(), static_cast<DatabaseImpl*>(db->get())->kv());
  ASSERT_TRUE((*db)->Put("x", R"({"v":1})").ok());
  EXPECT_TRUE((*db)->Get("x").ok());
  db->reset();
  ASSERT_TRUE(store_->DeleteDatabase("old").ok());
  EXPECT_EQ(0u, CountKeys(std::string(1, keys::kDatabasePrefix)));
}

// A create that failed between making the database's directory and writing
// its catalog entry leaves a directory the next create of that id clears.
TEST_P(StoreTest, LevelDBCreateClearsALeftoverDirectory) {
  if (GetParam() != Backend::kLevelDB) GTEST_SKIP() << "a LevelDB layout";
  {
    auto db = store_->CreateDatabase("first");
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE((*db)->Put("ghost", R"({"v":1})").ok());
  }
  // Forget the catalog entry and the id it took, as if never written.
  std::string next_id;
  ASSERT_TRUE(store_->kv()->Get({}, keys::Meta("next_db_id"), &next_id).ok());
  std::string id_bytes;
  ASSERT_TRUE(store_->kv()->Get({}, keys::Catalog("first"), &id_bytes).ok());
  KVWriteBatch undo;
  undo.Delete(keys::Catalog("first"));
  undo.Put(keys::Meta("next_db_id"), id_bytes);
  ASSERT_TRUE(store_->kv()->Write({}, undo).ok());
  store_.Reopen();
  auto db = store_->CreateDatabase("second");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  EXPECT_TRUE((*db)->Get("ghost").status().IsNotFound());
  EXPECT_EQ(0u, (*db)->Info()->doc_count);
}

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

TEST(StoreOpen, LevelDBNeedsAPath) {
  StoreOptions options;
  options.backend = Backend::kLevelDB;
  EXPECT_EQ(Status::Code::kBadRequest, Store::Open(options).status().code());
}

TEST(StoreOpen, SecondOpenOfOneDirectoryFails) {
  testing::TempStore first(Backend::kLevelDB);
  auto second = Store::Open(first.options());
  EXPECT_EQ(Status::Code::kIOError, second.status().code());
}

}  // namespace
}  // namespace settee
