// Fault tolerance: the peer (a real `settee serve` process) is killed with
// SIGKILL in the middle of a replication. The job fails after its bounded
// retries; once the peer is back (same data, same port, so the same
// replication id), the next run resumes from the last checkpoint, transfers
// only what is left, and both sides end identical.
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "replication/http_endpoint.h"
#include "replication/local_endpoint.h"
#include "replication/replicator.h"
#include "tests/replication/peer_process.h"
#include "tests/replication/replication_test_util.h"
#include "tests/storage/store_test_util.h"

namespace settee::replication {
namespace {

using settee::testing::ExpectSameDatabases;
using settee::testing::TempStore;

class ReplicationFaultTest : public ::testing::TestWithParam<bool> {
 protected:
  ReplicationFaultTest() : local_(StoreOptions::Backend::kMemory) {}

  void SetUp() override {
    data_ = settee::testing::FreshTempDir("fault-peer");
    // One port per direction: ctest may run both cases at once.
    peer_ = std::make_unique<PeerProcess>(SETTEE_BINARY, GetParam() ? 16651 : 16650, data_);
    peer_->Start();
    // 1,000 documents, some with several revisions, a deletion and a
    // conflict, written locally.
    auto db = local_->CreateDatabase("seed");
    ASSERT_TRUE(db.ok());
    std::string docs = "[";
    for (int i = 0; i < kDocs; ++i) {
      docs += (i ? "," : "") + std::string(R"({"_id":"doc)") + std::to_string(1000 + i) +
              R"(","n":)" + std::to_string(i) + "}";
    }
    docs += "]";
    std::vector<DocUpdateResult> results;
    ASSERT_TRUE((*db)->BulkDocsArray(docs, {}, &results).ok());
    auto r = (*db)->Put("doc1000", R"({"_rev":")" + results[0].rev + R"(","n":"second"})");
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE((*db)->Delete("doc1001", results[1].rev).ok());
    UpdateOptions repl;
    repl.new_edits = false;
    ASSERT_TRUE((*db)
                    ->BulkDocs({R"({"_id":"doc1002","_rev":"1-ffff","side":"other"})"}, repl,
                               &results)
                    .ok());
  }
  void TearDown() override {
    peer_.reset();
    std::filesystem::remove_all(data_);
  }

  std::unique_ptr<Endpoint> Remote(const std::string& db) {
    return std::make_unique<HttpEndpoint>(*ParseUrl(peer_->Root() + db));
  }
  std::unique_ptr<Endpoint> Local(const std::string& db) {
    return std::make_unique<LocalEndpoint>(local_.get(), db);
  }
  ReplicationOptions Options() {
    ReplicationOptions o;
    o.server_uuid = local_->uuid();
    o.create_target = true;
    o.batch_size = 50;
    o.retries = 1;
    o.initial_backoff = std::chrono::milliseconds(20);
    return o;
  }

  static constexpr int kDocs = 1000;
  TempStore local_;
  std::string data_;
  std::unique_ptr<PeerProcess> peer_;
};

TEST_P(ReplicationFaultTest, KilledPeerResumesFromTheCheckpoint) {
  const bool push = GetParam();
  // Pull: the peer holds the source. Push: the peer is the target.
  if (!push) {
    Replicator seed(Local("seed"), Remote("src"), Options());
    ASSERT_TRUE(seed.Run().ok());
  }
  auto from = [&] { return push ? Local("seed") : Remote("src"); };
  auto to = [&] { return push ? Remote("dst") : Local("dst"); };

  Replicator first(from(), to(), Options());
  int changes = 0;
  first.SetListener([&](const ReplicationEvent& e) {
    if (e.kind == ReplicationEvent::Kind::kChange && ++changes == 5) peer_->Kill();
  });
  Status s = first.Run();
  EXPECT_FALSE(s.ok());
  ReplicationStats one = first.Stats();
  EXPECT_EQ(one.state, ReplicationState::kFailed);
  // Five batches of 50, then the peer died; batches fetched ahead before
  // that (pull) may still be written.
  EXPECT_GE(one.docs_written, 250u);
  EXPECT_LT(one.docs_written, static_cast<uint64_t>(kDocs));
  std::string checkpoint = one.checkpointed_source_seq;
  EXPECT_NE(checkpoint, "0");

  peer_->Start();
  Replicator second(from(), to(), Options());
  EXPECT_EQ(second.id(), first.id());
  ASSERT_TRUE(second.Run().ok());
  ReplicationStats two = second.Stats();
  EXPECT_EQ(two.start_seq, checkpoint);
  // Only what was left crossed: nothing twice, nothing skipped (one
  // revision per document, plus doc1002's second branch).
  EXPECT_EQ(one.docs_read + two.docs_read, static_cast<uint64_t>(kDocs + 1));
  EXPECT_EQ(one.docs_written + two.docs_written, static_cast<uint64_t>(kDocs + 1));

  // Both sides identical, rev tree by rev tree: pull the peer's copy back
  // into a fresh local database to compare with the seed.
  if (push) {
    Replicator back(Remote("dst"), Local("mirror"), Options());
    ASSERT_TRUE(back.Run().ok());
    ExpectSameDatabases(**local_->OpenDatabase("seed"), **local_->OpenDatabase("mirror"));
  } else {
    ExpectSameDatabases(**local_->OpenDatabase("seed"), **local_->OpenDatabase("dst"));
  }
}

INSTANTIATE_TEST_SUITE_P(Directions, ReplicationFaultTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "push" : "pull"; });

}  // namespace
}  // namespace settee::replication
