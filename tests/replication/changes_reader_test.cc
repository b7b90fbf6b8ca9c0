// ChangesReader: read-ahead bounded by `limit`, order, the end of a one-shot
// feed, errors after the batches read before them, and Interrupt().
#include "replication/changes_reader.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "replication/local_endpoint.h"
#include "tests/storage/store_test_util.h"

namespace settee::replication {
namespace {

using namespace std::chrono_literals;

// A local endpoint that counts its Changes calls and fails from call
// `fail_at` on.
class CountingEndpoint : public LocalEndpoint {
 public:
  CountingEndpoint(Store* store, std::string name, std::atomic<int>* calls, int fail_at)
      : LocalEndpoint(store, std::move(name)), calls_(calls), fail_at_(fail_at) {}
  Status Changes(const ChangesRequest& request, ChangesBatch* out) override {
    int n = ++*calls_;
    if (fail_at_ > 0 && n >= fail_at_) return Status::IOError("source went away");
    return LocalEndpoint::Changes(request, out);
  }

 private:
  std::atomic<int>* calls_;
  int fail_at_;
};

class ChangesReaderTest : public ::testing::Test {
 protected:
  ChangesReaderTest() : store_(StoreOptions::Backend::kMemory) {
    auto db = store_->CreateDatabase("src");
    EXPECT_TRUE(db.ok());
    std::string docs = "[";
    for (int i = 0; i < 95; ++i) docs += (i ? "," : "") + std::string(R"({"_id":"d)") + std::to_string(100 + i) + "\"}";
    docs += "]";
    std::vector<DocUpdateResult> results;
    EXPECT_TRUE((*db)->BulkDocsArray(docs, {}, &results).ok());
  }

  std::unique_ptr<ChangesReader> Reader(uint64_t limit, int fail_at = 0) {
    auto source = std::make_unique<CountingEndpoint>(store_.get(), "src", &calls_, fail_at);
    EXPECT_TRUE(source->Open(false).ok());
    ChangesReaderOptions o;
    o.batch_size = 10;
    o.limit = limit;
    return std::make_unique<ChangesReader>(std::move(source), o);
  }

  // Waits up to 2 s for `calls_` to reach `n`.
  bool CallsReach(int n) {
    for (int i = 0; i < 200 && calls_ < n; ++i) std::this_thread::sleep_for(10ms);
    return calls_ >= n;
  }

  settee::testing::TempStore store_;
  std::atomic<int> calls_{0};
};

TEST_F(ChangesReaderTest, ReadsAheadUpToTheLimitAndNoFurther) {
  auto reader = Reader(3);
  ChangesBatch batch;
  ASSERT_TRUE(reader->Next(&batch).ok());
  EXPECT_EQ(batch.rows.front().id, "d100");
  // While batch 1 is "being written", batches 2 and 3 are read; not 4.
  EXPECT_TRUE(CallsReach(3));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls_, 3);
  // Done with batch 1 (the next Next): one more may be read.
  ASSERT_TRUE(reader->Next(&batch).ok());
  EXPECT_EQ(batch.rows.front().id, "d110");
  EXPECT_TRUE(CallsReach(4));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls_, 4);
  // The rest, in order, ending with the short batch.
  int rows = 20;
  std::string last = "d119";
  while (rows < 95) {
    ASSERT_TRUE(reader->Next(&batch).ok());
    for (const Change& c : batch.rows) {
      EXPECT_LT(last, c.id);
      last = c.id;
    }
    rows += static_cast<int>(batch.rows.size());
  }
  EXPECT_EQ(rows, 95);
  EXPECT_EQ(batch.rows.size(), 5u);
  EXPECT_EQ(calls_, 10);  // nothing read after the short batch
}

TEST_F(ChangesReaderTest, LimitOneReadsNothingAhead) {
  auto reader = Reader(1);
  ChangesBatch batch;
  ASSERT_TRUE(reader->Next(&batch).ok());
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(calls_, 1);
  ASSERT_TRUE(reader->Next(&batch).ok());
  EXPECT_TRUE(CallsReach(2));
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(calls_, 2);
}

TEST_F(ChangesReaderTest, AnErrorComesAfterTheBatchesReadBeforeIt) {
  auto reader = Reader(5, /*fail_at=*/3);
  ChangesBatch batch;
  ASSERT_TRUE(reader->Next(&batch).ok());
  ASSERT_TRUE(reader->Next(&batch).ok());
  EXPECT_EQ(batch.rows.front().id, "d110");
  Status s = reader->Next(&batch);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
}

TEST_F(ChangesReaderTest, InterruptWakesAWaitingNext) {
  auto source = std::make_unique<LocalEndpoint>(store_.get(), "src");
  ASSERT_TRUE(source->Open(false).ok());
  ChangesReaderOptions o;
  o.batch_size = 1000;
  o.since = "95";  // caught up: a continuous reader long-polls
  o.continuous = true;
  o.wait = 60s;
  ChangesReader reader(std::move(source), o);
  ChangesBatch batch;
  ASSERT_TRUE(reader.Next(&batch).ok());  // the first, empty, batch
  EXPECT_TRUE(batch.rows.empty());
  std::thread stopper([&] {
    std::this_thread::sleep_for(50ms);
    reader.Interrupt();
  });
  auto t0 = std::chrono::steady_clock::now();
  Status s = reader.Next(&batch);
  stopper.join();
  EXPECT_EQ(s.code(), Status::Code::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
}

}  // namespace
}  // namespace settee::replication
