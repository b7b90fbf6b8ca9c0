// The document database when its KVStore fails: a failed commit must leave no
// trace (no counters moved, no listener woken, no document visible) and must
// be reported to every writer whose documents were in it. Each test runs on
// both write paths: a store named "memory" takes the direct one
// (DatabaseImpl::WriteDirect), any other name the group-commit queue and
// the pipeline.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "settee/store.h"
#include "tests/storage/forwarding_kv.h"

namespace settee {
namespace {

// Fails every Write while fail_writes is set.
class FaultyKV : public testing::ForwardingKV {
 public:
  FaultyKV(std::string name, std::atomic<bool>* fail_writes)
      : ForwardingKV(std::move(name)), fail_writes_(fail_writes) {}
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override {
    if (fail_writes_->load()) return Status::IOError("injected write failure");
    return ForwardingKV::Write(o, b);
  }

 private:
  std::atomic<bool>* fail_writes_;
};

class DatabaseFaultTest : public ::testing::TestWithParam<const char*> {
 protected:
  DatabaseFaultTest() {
    StoreOptions options;
    options.kv_factory = [this] { return std::make_unique<FaultyKV>(GetParam(), &fail_writes_); };
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    db_ = *store_->CreateDatabase("faulty");
  }

  std::atomic<bool> fail_writes_{false};
  std::unique_ptr<Store> store_;
  std::shared_ptr<Database> db_;
};

TEST_P(DatabaseFaultTest, FailedCommitLeavesNoTrace) {
  auto first = db_->Put("a", R"({"v":1})");
  ASSERT_TRUE(first.ok());
  std::atomic<int> notified{0};
  db_->AddChangeListener([&](uint64_t) { ++notified; });

  fail_writes_ = true;
  auto update = db_->Put("a", R"({"_rev":")" + first->rev + R"(","v":2})");
  EXPECT_EQ(Status::Code::kIOError, update.status().code());
  auto fresh = db_->Put("b", "{}");
  EXPECT_EQ(Status::Code::kIOError, fresh.status().code());
  EXPECT_TRUE(db_->Delete("a", first->rev).status().code() == Status::Code::kIOError);

  EXPECT_EQ(1u, db_->UpdateSeq());
  EXPECT_EQ(1u, db_->Info()->doc_count);
  EXPECT_EQ(0, notified.load());
  EXPECT_TRUE(db_->Get("b").status().IsNotFound());
  auto doc = db_->Get("a");
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(std::string::npos, doc->find(R"("v":1)"));

  // Once the store recovers, the same edit goes through with the next seq.
  fail_writes_ = false;
  auto retry = db_->Put("a", R"({"_rev":")" + first->rev + R"(","v":2})");
  ASSERT_TRUE(retry.ok()) << retry.status().ToString();
  EXPECT_EQ(2u, db_->UpdateSeq());
  EXPECT_EQ(1, notified.load());
}

TEST_P(DatabaseFaultTest, EveryWriterOfAFailedGroupSeesTheError) {
  fail_writes_ = true;
  constexpr int kThreads = 8;
  std::atomic<int> failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        auto r = db_->Put("t" + std::to_string(t) + "-" + std::to_string(i), "{}");
        if (!r.ok() && r.status().code() == Status::Code::kIOError) ++failed;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(kThreads * 50, failed.load());
  EXPECT_EQ(0u, db_->UpdateSeq());
  EXPECT_EQ(0u, db_->Info()->doc_count);
}

// Writers of one database build their batches while earlier ones are being
// written (storage/write_pipeline.h): a failed write also fails the batches
// built on it, and the next batch starts again from what was written (the
// direct path builds and writes one batch at a time: a failed one leaves
// nothing to undo). Here
// writes fail on and off under four writers; at the end the counters, the
// changes feed and the documents must be exactly the acknowledged writes.
TEST_P(DatabaseFaultTest, FailuresAmongPipelinedWritersLeaveExactCounters) {
  constexpr int kThreads = 4;
  constexpr int kPuts = 400;
  std::atomic<int> running{kThreads};
  std::vector<std::vector<std::string>> written(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPuts; ++i) {
        const std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        auto r = db_->Put(id, R"({"v":1})");
        if (r.ok()) {
          written[t].push_back(id);
        } else {
          EXPECT_EQ(Status::Code::kIOError, r.status().code()) << r.status().ToString();
        }
      }
      --running;
    });
  }
  for (int flip = 0; running.load() > 0; ++flip) {
    fail_writes_ = flip % 3 == 1;  // fail a third of the time
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  for (auto& t : threads) t.join();
  fail_writes_ = false;

  size_t acknowledged = 0;
  for (const auto& ids : written) acknowledged += ids.size();
  ASSERT_GT(acknowledged, 0u);
  EXPECT_EQ(acknowledged, db_->UpdateSeq());
  EXPECT_EQ(acknowledged, db_->Info()->doc_count);
  size_t rows = 0;
  uint64_t last_seq = 0;
  ASSERT_TRUE(db_->Changes({}, [&](const ChangeRow&) { return ++rows, true; }, &last_seq).ok());
  EXPECT_EQ(acknowledged, last_seq);
  EXPECT_EQ(acknowledged, rows);
  for (const auto& ids : written) {
    for (const std::string& id : ids) EXPECT_TRUE(db_->Get(id).ok()) << id;
  }
  // And the next write takes the next sequence.
  ASSERT_TRUE(db_->Put("after", "{}").ok());
  EXPECT_EQ(acknowledged + 1, db_->UpdateSeq());
}

INSTANTIATE_TEST_SUITE_P(WritePaths, DatabaseFaultTest, ::testing::Values("memory", "pipelined"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

TEST(StoreOpenCustomKV, FactoryReturningNothingFails) {
  StoreOptions options;
  options.kv_factory = [] { return std::unique_ptr<KVStore>(); };
  EXPECT_FALSE(Store::Open(options).ok());
}

}  // namespace
}  // namespace settee
