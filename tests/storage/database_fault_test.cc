// The document database when its KVStore fails: a failed commit must leave no
// trace (no counters moved, no listener woken, no document visible) and must
// be reported to every writer whose documents were in it.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "settee/store.h"

namespace settee {
namespace {

// Forwards to a memory store; fails every Write while fail_writes is set.
class FaultyKV : public KVStore {
 public:
  explicit FaultyKV(std::atomic<bool>* fail_writes)
      : base_(NewMemoryStore()), fail_writes_(fail_writes) {}
  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override {
    return base_->Get(o, k, v);
  }
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override {
    if (fail_writes_->load()) return Status::IOError("injected write failure");
    return base_->Write(o, b);
  }
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& o) override {
    return base_->NewIterator(o);
  }
  std::shared_ptr<const KVSnapshot> GetSnapshot() override { return base_->GetSnapshot(); }
  uint64_t ApproximateSize(std::string_view b, std::string_view e) override {
    return base_->ApproximateSize(b, e);
  }
  void CompactRange(std::string_view b, std::string_view e) override { base_->CompactRange(b, e); }
  std::string_view BackendName() const override { return "faulty-memory"; }

 private:
  std::unique_ptr<KVStore> base_;
  std::atomic<bool>* fail_writes_;
};

class DatabaseFaultTest : public ::testing::Test {
 protected:
  DatabaseFaultTest() {
    StoreOptions options;
    options.kv_factory = [this] { return std::make_unique<FaultyKV>(&fail_writes_); };
    auto store = Store::Open(options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    db_ = *store_->CreateDatabase("faulty");
  }

  std::atomic<bool> fail_writes_{false};
  std::unique_ptr<Store> store_;
  std::shared_ptr<Database> db_;
};

TEST_F(DatabaseFaultTest, FailedCommitLeavesNoTrace) {
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

TEST_F(DatabaseFaultTest, EveryWriterOfAFailedGroupSeesTheError) {
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

TEST(StoreOpenCustomKV, FactoryReturningNothingFails) {
  StoreOptions options;
  options.kv_factory = [] { return std::unique_ptr<KVStore>(); };
  EXPECT_FALSE(Store::Open(options).ok());
}

}  // namespace
}  // namespace settee
