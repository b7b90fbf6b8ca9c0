// Local-to-local replication through the Replicator and LocalEndpoint.
#include "replication/replicator.h"

#include <cstdint>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "replication/local_endpoint.h"
#include "tests/replication/replication_test_util.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee::replication {
namespace {

using settee::testing::ExpectSameDatabases;
using settee::testing::TempStore;

class ReplicatorTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  ReplicatorTest() : store_(GetParam()) {}

  std::shared_ptr<Database> Db(const std::string& name) {
    auto db = store_->OpenDatabase(name);
    if (!db.ok()) db = store_->CreateDatabase(name);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return *db;
  }

  std::unique_ptr<Replicator> Make(const std::string& from, const std::string& to,
                                   ReplicationOptions options = {}) {
    options.server_uuid = store_->uuid();
    options.initial_backoff = std::chrono::milliseconds(10);
    return std::make_unique<Replicator>(std::make_unique<LocalEndpoint>(store_.get(), from),
                                        std::make_unique<LocalEndpoint>(store_.get(), to),
                                        options);
  }

  ReplicationStats Replicate(const std::string& from, const std::string& to,
                             ReplicationOptions options = {}) {
    auto r = Make(from, to, options);
    Status s = r->Run();
    EXPECT_TRUE(s.ok()) << s.ToString();
    return r->Stats();
  }

  std::string Put(Database& db, const std::string& id, const std::string& body) {
    auto r = db.Put(id, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->rev : "";
  }

  TempStore store_;
};

TEST_P(ReplicatorTest, OneShotCopiesEverythingInBatchesAndCheckpoints) {
  auto a = Db("a");
  Db("b");
  for (int i = 0; i < 250; ++i) Put(*a, "doc" + std::to_string(i), R"({"n":1})");
  ReplicationOptions options;
  options.batch_size = 100;
  auto stats = Replicate("a", "b", options);
  EXPECT_EQ(stats.state, ReplicationState::kCompleted);
  EXPECT_EQ(stats.docs_read, 250u);
  EXPECT_EQ(stats.docs_written, 250u);
  EXPECT_EQ(stats.missing_checked, 250u);
  EXPECT_EQ(stats.checkpointed_source_seq, std::to_string(a->UpdateSeq()));
  ExpectSameDatabases(*a, **store_->OpenDatabase("b"));

  // Both sides hold the same CouchDB-format checkpoint.
  auto r = Make("a", "b");
  auto on_a = a->Get("_local/" + r->id());
  auto on_b = (*store_->OpenDatabase("b"))->Get("_local/" + r->id());
  ASSERT_TRUE(on_a.ok() && on_b.ok());
  json::Document ca, cb;
  ASSERT_TRUE(json::Parse(*on_a, &ca).ok() && json::Parse(*on_b, &cb).ok());
  EXPECT_STREQ(ca["session_id"].GetString(), cb["session_id"].GetString());
  EXPECT_EQ(ca["source_last_seq"].GetUint64(), a->UpdateSeq());
  EXPECT_EQ(ca["replication_id_version"].GetInt(), 4);
  // A checkpoint per batch, each its own session; the attempt's last two
  // are kept.
  ASSERT_EQ(ca["history"].Size(), 2u);
  EXPECT_STREQ(ca["history"][0]["session_id"].GetString(), ca["session_id"].GetString());
  EXPECT_STRNE(ca["history"][1]["session_id"].GetString(), ca["session_id"].GetString());
  EXPECT_EQ(ca["history"][0]["recorded_seq"].GetUint64(), a->UpdateSeq());
  EXPECT_EQ(ca["history"][1]["recorded_seq"].GetUint64(), 200u);

  // A second run keeps the first one's entries behind its own.
  Put(*a, "late", "{}");
  Replicate("a", "b", options);
  on_a = a->Get("_local/" + r->id());
  ASSERT_TRUE(on_a.ok());
  ASSERT_TRUE(json::Parse(*on_a, &ca).ok());
  ASSERT_EQ(ca["history"].Size(), 3u);
  EXPECT_EQ(ca["history"][0]["recorded_seq"].GetUint64(), a->UpdateSeq());
  EXPECT_EQ(ca["history"][1]["recorded_seq"].GetUint64(), a->UpdateSeq() - 1);
}

TEST_P(ReplicatorTest, SecondRunResumesFromTheCheckpoint) {
  auto a = Db("a");
  Db("b");
  for (int i = 0; i < 100; ++i) Put(*a, "doc" + std::to_string(i), "{}");
  Replicate("a", "b");
  for (int i = 100; i < 130; ++i) Put(*a, "doc" + std::to_string(i), "{}");
  auto stats = Replicate("a", "b");
  EXPECT_EQ(stats.start_seq, "100");
  EXPECT_EQ(stats.missing_checked, 30u);
  EXPECT_EQ(stats.docs_written, 30u);
  ExpectSameDatabases(*a, **store_->OpenDatabase("b"));
}

TEST_P(ReplicatorTest, ConflictsDeletionsAndLongHistoriesConverge) {
  auto a = Db("a");
  auto b = Db("b");
  std::string rev = Put(*a, "long", R"({"v":0})");
  for (int i = 1; i < 60; ++i) {
    rev = Put(*a, "long", R"({"_rev":")" + rev + R"(","v":)" + std::to_string(i) + "}");
  }
  std::string gone = Put(*a, "gone", "{}");
  ASSERT_TRUE(a->Delete("gone", gone).ok());
  std::string c = Put(*a, "conflicted", R"({"side":"base"})");
  Put(*a, "_design/app", R"({"views":{}})");
  Put(*a, "_local/mine", R"({"private":true})");
  Replicate("a", "b");
  ExpectSameDatabases(*a, *b);
  EXPECT_TRUE(b->Get("_local/mine").status().IsNotFound());

  // Edit the same doc on both sides, then sync both ways.
  Put(*a, "conflicted", R"({"_rev":")" + c + R"(","side":"a"})");
  Put(*b, "conflicted", R"({"_rev":")" + c + R"(","side":"b"})");
  std::string bc = Put(*b, "b-only", "{}");
  Replicate("a", "b");
  Replicate("b", "a");
  ExpectSameDatabases(*a, *b);
  GetOptions with_conflicts;
  with_conflicts.conflicts = true;
  auto doc = a->Get("conflicted", with_conflicts);
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->find("_conflicts"), std::string::npos) << *doc;
  // Deleting a branch replicates as a tombstone leaf.
  ASSERT_TRUE(b->Delete("b-only", bc).ok());
  Replicate("b", "a");
  ExpectSameDatabases(*a, *b);
  EXPECT_EQ(a->Get("b-only").status().reason(), "deleted");
}

TEST_P(ReplicatorTest, DocIdsAndSinceSeqLimitWhatIsSent) {
  auto a = Db("a");
  Db("b");
  Db("c");
  for (int i = 0; i < 10; ++i) Put(*a, "d" + std::to_string(i), "{}");
  ReplicationOptions ids;
  ids.doc_ids = std::vector<std::string>{"d3", "d7"};
  auto stats = Replicate("a", "b", ids);
  EXPECT_EQ(stats.docs_written, 2u);
  EXPECT_EQ((*(*store_->OpenDatabase("b"))->Info()).doc_count, 2u);
  ReplicationOptions since;
  since.since_seq = "6";
  stats = Replicate("a", "c", since);
  EXPECT_EQ(stats.docs_written, 4u);
}

TEST_P(ReplicatorTest, MissingTargetFailsUnlessCreateTarget) {
  auto a = Db("a");
  Put(*a, "x", "{}");
  auto r = Make("a", "nope");
  Status s = r->Run();
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(r->Stats().state, ReplicationState::kFailed);
  ReplicationOptions create;
  create.create_target = true;
  auto stats = Replicate("a", "nope", create);
  EXPECT_EQ(stats.docs_written, 1u);
  EXPECT_NE(Make("a", "nope", create)->job_id().find("+create_target"), std::string::npos);
}

TEST_P(ReplicatorTest, ContinuousDeliversNewWritesUntilCancelled) {
  auto a = Db("a");
  auto b = Db("b");
  Put(*a, "first", "{}");
  ReplicationOptions options;
  options.continuous = true;
  options.feed_wait = std::chrono::milliseconds(5000);
  auto r = Make("a", "b", options);
  std::mutex mu;
  std::vector<ReplicationEvent::Kind> kinds;
  r->SetListener([&](const ReplicationEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    kinds.push_back(e.kind);
  });
  Status result;
  std::thread job([&] { result = r->Run(); });
  auto wait_for = [&](const char* id) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (std::chrono::steady_clock::now() < deadline) {
      if (b->Get(id).ok()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    return false;
  };
  EXPECT_TRUE(wait_for("first"));
  // A write made while the job waits on the feed arrives within a second.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  Put(*a, "second", "{}");
  EXPECT_TRUE(wait_for("second"));
  r->Cancel();
  job.join();
  EXPECT_TRUE(result.ok()) << result.ToString();
  EXPECT_EQ(r->Stats().state, ReplicationState::kCancelled);
  EXPECT_TRUE(r->job_id().ends_with("+continuous"));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front(), ReplicationEvent::Kind::kActive);
  EXPECT_EQ(kinds.back(), ReplicationEvent::Kind::kComplete);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), ReplicationEvent::Kind::kPaused), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), ReplicationEvent::Kind::kChange), kinds.end());
}

TEST_P(ReplicatorTest, AttachmentsTravelWithTheirDocuments) {
  // Every byte value, on a first revision and on one edited after the
  // attachment was added (the target never saw the revision the stub
  // would point back to).
  auto a = Db("a");
  Db("b");
  std::string bytes;
  for (int i = 0; i < 256 * 4; ++i) bytes.push_back(static_cast<char>(i));
  auto put = a->PutAttachment("with-att", "bin", "", "application/octet-stream", bytes);
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  auto doc = a->Get("with-att");
  ASSERT_TRUE(doc.ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(*doc, &d).ok());
  d.AddMember("edited", true, d.GetAllocator());
  ASSERT_TRUE(a->Put("with-att", json::Serialize(d)).ok());
  ASSERT_TRUE(a->PutAttachment("other", "t.txt", "", "text/plain", "hello").ok());

  auto stats = Replicate("a", "b");
  EXPECT_EQ(stats.doc_write_failures, 0u);
  EXPECT_EQ(stats.docs_written, 2u);
  auto b = *store_->OpenDatabase("b");
  for (auto [id, name, want] : {std::tuple<std::string, std::string, std::string>{"with-att", "bin", bytes},
                                {"other", "t.txt", "hello"}}) {
    auto reader = b->OpenAttachment(id, name);
    ASSERT_TRUE(reader.ok()) << id << ": " << reader.status().ToString();
    std::string got;
    Status read = (*reader)->Read(0, UINT64_MAX, [&](std::string_view piece) {
      got.append(piece);
      return true;
    });
    ASSERT_TRUE(read.ok()) << read.ToString();
    EXPECT_EQ(got, want) << id;
  }
  ExpectSameDatabases(*a, *b);
}

// Edits one field of `id` without touching its attachments.
void EditKeepingAttachments(Database& db, const std::string& id) {
  auto doc = db.Get(id);
  ASSERT_TRUE(doc.ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(*doc, &d).ok());
  d.AddMember("edited", true, d.GetAllocator());
  ASSERT_TRUE(db.Put(id, json::Serialize(d)).ok());
}

TEST_P(ReplicatorTest, AttsSinceSendsBodiesTheTargetHasAsStubs) {
  // 1 MB attachment replicated; the doc edited without touching it and
  // replicated again: the second run carries no attachment body (the
  // fetched documents are what the kChange event reports).
  auto a = Db("a");
  Db("b");
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 3);
  ASSERT_TRUE(a->PutAttachment("doc", "big.bin", "", "application/octet-stream", big).ok());
  size_t fetched = 0;
  auto count = [&](const ReplicationEvent& e) {
    if (e.kind == ReplicationEvent::Kind::kChange) fetched += e.docs_json.size();
  };
  auto r = Make("a", "b");
  r->SetListener(count);
  ASSERT_TRUE(r->Run().ok());
  EXPECT_GT(fetched, big.size());  // base64 inline the first time
  EditKeepingAttachments(*a, "doc");
  fetched = 0;
  r = Make("a", "b");
  r->SetListener(count);
  ASSERT_TRUE(r->Run().ok());
  EXPECT_EQ(r->Stats().docs_written, 1u);
  EXPECT_EQ(r->Stats().doc_write_failures, 0u);
  EXPECT_GT(fetched, 0u);
  EXPECT_LT(fetched, 2000u) << "the attachment body was sent again";
  auto b = *store_->OpenDatabase("b");
  auto reader = b->OpenAttachment("doc", "big.bin");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::string got;
  ASSERT_TRUE((*reader)->Read(0, UINT64_MAX, [&](std::string_view piece) {
    got.append(piece);
    return true;
  }).ok());
  EXPECT_EQ(got, big);
  ExpectSameDatabases(*a, *b);
}

TEST_P(ReplicatorTest, EveryBatchesLimitGivesTheSameDatabase) {
  auto a = Db("a");
  for (int i = 0; i < 230; ++i) Put(*a, "d" + std::to_string(i), R"({"v":1})");
  for (uint64_t limit : {1u, 2u, 10u}) {
    std::string target = "b" + std::to_string(limit);
    Db(target);
    ReplicationOptions o;
    o.batch_size = 20;
    o.batches_limit = limit;
    std::vector<size_t> batches;
    auto r = Make("a", target, o);
    r->SetListener([&](const ReplicationEvent& e) {
      if (e.kind == ReplicationEvent::Kind::kChange) batches.push_back(e.doc_ids.size());
    });
    ASSERT_TRUE(r->Run().ok());
    EXPECT_EQ(r->Stats().docs_written, 230u) << limit;
    EXPECT_EQ(batches.size(), 12u) << limit;  // checkpointed batch by batch, in order
    ExpectSameDatabases(*a, **store_->OpenDatabase(target));
  }
}

TEST_P(ReplicatorTest, SelectorReplicatesOnlyWhatMatches) {
  auto a = Db("a");
  Db("b");
  for (int i = 0; i < 150; ++i) {
    Put(*a, "d" + std::to_string(i), R"({"kind":")" + std::string(i % 3 == 0 ? "keep" : "drop") + "\"}");
  }
  ReplicationOptions o;
  o.batch_size = 20;
  ChangesFilterSpec spec;
  spec.selector = R"({"kind":"keep"})";
  o.filter = spec;
  auto r = Make("a", "b", o);
  ASSERT_TRUE(r->Run().ok());
  EXPECT_EQ(r->Stats().docs_written, 50u);
  auto b = *store_->OpenDatabase("b");
  EXPECT_EQ(b->Info()->doc_count, 50u);
  EXPECT_TRUE(b->Get("d3").ok());
  EXPECT_TRUE(b->Get("d4").status().IsNotFound());
  // The checkpoint reached the end of the source, so a later match (and
  // only it) is what the next run brings.
  Put(*a, "late", R"({"kind":"keep"})");
  Put(*a, "late2", R"({"kind":"drop"})");
  auto again = Make("a", "b", o);
  ASSERT_TRUE(again->Run().ok());
  EXPECT_EQ(again->Stats().docs_written, 1u);
  EXPECT_EQ(again->Stats().missing_checked, 1u);
  // The selector is part of the id; so is its absence.
  EXPECT_EQ(again->id(), r->id());
  EXPECT_NE(Make("a", "b")->id(), r->id());
  ReplicationOptions other = o;
  other.filter->selector = R"({"kind":"drop"})";
  EXPECT_NE(Make("a", "b", other)->id(), r->id());
}

TEST_P(ReplicatorTest, DesignFilterWithoutAViewRuntimeIsABadRequest) {
  auto a = Db("a");
  Db("b");
  Put(*a, "_design/app", R"({"filters":{"even":"function(doc, req) { return true; }"}})");
  ReplicationOptions o;
  ChangesFilterSpec spec;
  spec.filter = "app/even";
  o.filter = spec;
  o.filter_code = "function(doc, req) { return true; }";
  auto r = Make("a", "b", o);
  Status s = r->Run();
  EXPECT_EQ(s.code(), Status::Code::kBadRequest) << s.ToString();
  EXPECT_EQ(r->Stats().retries, 1u);  // not retried
}

TEST_P(ReplicatorTest, ContinuousRetriesThroughAMissingSourceWithBackoff) {
  Db("b");
  ReplicationOptions o;
  o.continuous = true;
  o.max_backoff = std::chrono::milliseconds(40);
  auto r = Make("not-yet", "b", o);  // Make() sets a 10 ms initial backoff
  std::thread job([&] { EXPECT_TRUE(r->Run().ok()); });
  for (int i = 0; i < 200 && r->Stats().retries < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(r->Stats().retries, 3u);
  EXPECT_EQ(r->Stats().state, ReplicationState::kRetrying);
  EXPECT_TRUE(r->Stats().error.IsNotFound());
  // The source appears: the next attempt replicates it.
  auto a = Db("not-yet");
  Put(*a, "x", "{}");
  auto b = *store_->OpenDatabase("b");
  bool arrived = false;
  for (int i = 0; i < 300 && !arrived; ++i) {
    arrived = b->Get("x").ok();
    if (!arrived) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(arrived);
  r->Cancel();
  job.join();
  EXPECT_EQ(r->Stats().state, ReplicationState::kCancelled);
}

TEST_P(ReplicatorTest, BadSinceSeqFailsWithoutRetrying) {
  Db("a");
  Db("b");
  ReplicationOptions options;
  options.continuous = true;  // even a continuous job gives up on bad input
  options.since_seq = "\"not-a-seq\"";
  auto r = Make("a", "b", options);
  Status s = r->Run();
  EXPECT_EQ(s.code(), Status::Code::kBadRequest) << s.ToString();
  EXPECT_EQ(r->Stats().state, ReplicationState::kFailed);
  EXPECT_EQ(r->Stats().retries, 1u);
}

INSTANTIATE_TEST_SUITE_P(Backends, ReplicatorTest,
                         ::testing::Values(StoreOptions::Backend::kMemory,
                                           StoreOptions::Backend::kLevelDB),
                         settee::testing::BackendName);

}  // namespace
}  // namespace settee::replication
