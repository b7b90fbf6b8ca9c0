// Store: database lifecycle, names, persistence, clean deletion.
#include "settee/store.h"

#include <gtest/gtest.h>

#include "storage/keys.h"
#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  StoreTest() : store_(GetParam()) {}

  // Number of keys in the store under `prefix`.
  size_t CountKeys(const std::string& prefix) {
    KVIteratorOptions io;
    io.lower_bound = prefix;
    io.upper_bound = keys::PrefixEnd(prefix);
    auto it = store_->kv()->NewIterator(io);
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
  ASSERT_GT(CountKeys(std::string(1, keys::kDatabasePrefix)), 5000u);
  ASSERT_TRUE(store_->DeleteDatabase("gone").ok());
  EXPECT_EQ(0u, CountKeys(std::string(1, keys::kDatabasePrefix)));
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
