// LocalEndpoint: a database of this process as a replication endpoint.
#include "replication/local_endpoint.h"

#include <gtest/gtest.h>

#include "tests/replication/replication_test_util.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee::replication {
namespace {

using settee::testing::ExpectSameDatabases;
using settee::testing::TempStore;

class LocalEndpointTest : public ::testing::Test {
 protected:
  LocalEndpointTest() : store_(StoreOptions::Backend::kMemory) {}

  std::unique_ptr<LocalEndpoint> Open(const std::string& name) {
    auto e = std::make_unique<LocalEndpoint>(store_.get(), name);
    EXPECT_TRUE(e->Open(/*create=*/true).ok());
    return e;
  }
  std::string Put(Database& db, const std::string& id, const std::string& body) {
    auto r = db.Put(id, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->rev : "";
  }

  TempStore store_;
};

// A first-generation revision crosses without `_revisions` (its _rev is its
// history); one that `latest` takes to a descendant, with its history.
TEST_F(LocalEndpointTest, FetchesFirstGenerationsWithoutHistoryAndTheRestWithIt) {
  auto source = Open("src");
  auto db = *store_->OpenDatabase("src");
  std::string fresh = Put(*db, "fresh", R"({"v":1})");
  std::string old = Put(*db, "edited", R"({"v":1})");
  std::string mid = Put(*db, "edited", R"({"_rev":")" + old + R"(","v":2})");
  std::string leaf = Put(*db, "edited", R"({"_rev":")" + mid + R"(","v":3})");
  std::string second = Put(*db, "second", R"({"v":1})");
  std::string second2 = Put(*db, "second", R"({"_rev":")" + second + R"(","v":2})");

  DocBatch docs;
  ASSERT_TRUE(source
                  ->FetchRevs({RevsDiffResult{"fresh", {fresh}, {}},
                               RevsDiffResult{"edited", {old}, {}},
                               RevsDiffResult{"second", {second2}, {}}},
                              &docs)
                  .ok());
  ASSERT_EQ(docs.count(), 3u);
  std::map<std::string, json::Document> by_id;
  for (const std::string& text : docs.docs()) {
    json::Document d;
    ASSERT_TRUE(json::Parse(text, &d).ok()) << text;
    by_id[std::string(json::View(d["_id"]))].Swap(d);
  }
  EXPECT_EQ(json::View(by_id["fresh"]["_rev"]), fresh);
  EXPECT_FALSE(by_id["fresh"].HasMember("_revisions"));
  EXPECT_EQ(json::View(by_id["edited"]["_rev"]), leaf);
  ASSERT_TRUE(by_id["edited"].HasMember("_revisions"));
  EXPECT_EQ(by_id["edited"]["_revisions"]["ids"].Size(), 3u);
  ASSERT_TRUE(by_id["second"].HasMember("_revisions"));
  EXPECT_EQ(by_id["second"]["_revisions"]["ids"].Size(), 2u);

  // Written with new_edits=false, they make the same revision trees.
  auto target = Open("dst");
  std::vector<DocUpdateResult> failures;
  ASSERT_TRUE(target->WriteDocs(docs, &failures).ok());
  EXPECT_TRUE(failures.empty());
  ExpectSameDatabases(*db, **store_->OpenDatabase("dst"));
}

// A first-generation conflict branch joins the target's tree as a branch.
TEST_F(LocalEndpointTest, AFirstGenerationConflictBranchJoinsTheTree) {
  auto source = Open("src");
  auto target = Open("dst");
  auto src = *store_->OpenDatabase("src");
  auto dst = *store_->OpenDatabase("dst");
  std::string mine = Put(*src, "d", R"({"side":"src"})");
  std::string theirs = Put(*dst, "d", R"({"side":"dst","x":1})");
  ASSERT_NE(mine, theirs);
  std::vector<RevsDiffResult> missing;
  ASSERT_TRUE(target->RevsDiff({RevsDiffRequest{"d", {mine}}}, &missing).ok());
  DocBatch docs;
  ASSERT_TRUE(source->FetchRevs(missing, &docs).ok());
  std::vector<DocUpdateResult> failures;
  ASSERT_TRUE(target->WriteDocs(docs, &failures).ok());
  std::vector<OpenRevResult> leaves;
  ASSERT_TRUE(dst->GetOpenRevs("d", {}, {}, &leaves).ok());
  EXPECT_EQ(leaves.size(), 2u);
}

}  // namespace
}  // namespace settee::replication
