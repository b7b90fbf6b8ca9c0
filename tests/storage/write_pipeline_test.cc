// WritePipeline: batches are written in ticket order, a read waits only for
// the batches in flight that write its key, and a failure fails the batches
// after it until TakeFailure. Run under ThreadSanitizer too (see
// docs/architecture.md, Tests).
#include "storage/write_pipeline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace settee {
namespace {

KVWriteBatch BatchOf(std::initializer_list<const char*> keys) {
  KVWriteBatch batch;
  for (const char* k : keys) batch.Put(k, "v");
  return batch;
}

// Stage B of many writers: each takes a ticket under the "writer lock" and
// then writes outside it; the writes must happen in ticket order.
TEST(WritePipelineTest, BatchesAreWrittenInTicketOrder) {
  WritePipeline pipeline;
  std::mutex writer_mu;
  std::vector<uint64_t> written;  // in write order; guarded by the pipeline's order
  constexpr int kThreads = 4;
  constexpr int kBatches = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kBatches; ++i) {
        uint64_t ticket;
        {
          std::lock_guard<std::mutex> lock(writer_mu);
          ticket = pipeline.Enqueue(BatchOf({"k"}));
        }
        ASSERT_TRUE(pipeline.WaitTurn(ticket, i % 7 == 0));  // some sleep at once
        written.push_back(ticket);  // a data race (TSan) if two ran at once
        pipeline.Finish(ticket, true);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_EQ(static_cast<size_t>(kThreads * kBatches), written.size());
  for (size_t i = 0; i < written.size(); ++i) ASSERT_EQ(i, written[i]);
  std::lock_guard<std::mutex> lock(writer_mu);
  EXPECT_TRUE(pipeline.Idle());
}

TEST(WritePipelineTest, ReadWaitsOnlyForABatchThatWritesItsKey) {
  WritePipeline pipeline;
  std::mutex writer_mu;
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(writer_mu);
    ticket = pipeline.Enqueue(BatchOf({"a", "c"}));
    EXPECT_FALSE(pipeline.Idle());
    pipeline.BeforeRead("b");  // returns at once: nothing in flight writes "b"
  }
  std::atomic<bool> finished{false};
  std::atomic<bool> read_done{false};
  std::thread reader([&] {
    std::lock_guard<std::mutex> lock(writer_mu);
    pipeline.BeforeRead("c");
    EXPECT_TRUE(finished.load());  // it waited for the batch
    read_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(read_done.load());
  ASSERT_TRUE(pipeline.WaitTurn(ticket, false));
  finished = true;
  pipeline.Finish(ticket, true);
  reader.join();
  EXPECT_TRUE(read_done.load());
}

// Keys outside the filter are not remembered: a read of one waits for every
// batch in flight, as the pipeline cannot tell which write it.
TEST(WritePipelineTest, AReadOfAKeyNotRememberedWaitsForEveryBatch) {
  WritePipeline pipeline([](std::string_view key) { return key.substr(0, 1) == "r"; });
  std::mutex writer_mu;
  uint64_t ticket;
  {
    std::lock_guard<std::mutex> lock(writer_mu);
    ticket = pipeline.Enqueue(BatchOf({"r1", "x1"}));
    pipeline.BeforeRead("r2");  // remembered and not written: no wait
  }
  std::atomic<bool> finished{false};
  std::thread reader([&] {
    std::lock_guard<std::mutex> lock(writer_mu);
    pipeline.BeforeRead("y");  // not remembered: waits for the batch
    EXPECT_TRUE(finished.load());
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(pipeline.WaitTurn(ticket, false));
  finished = true;
  pipeline.Finish(ticket, true);
  reader.join();
}

TEST(WritePipelineTest, DrainWaitsForEveryBatch) {
  WritePipeline pipeline;
  std::mutex writer_mu;
  std::vector<uint64_t> tickets;
  {
    std::lock_guard<std::mutex> lock(writer_mu);
    for (int i = 0; i < 3; ++i) tickets.push_back(pipeline.Enqueue(BatchOf({"x"})));
  }
  std::atomic<int> finished{0};
  std::thread writer([&] {
    for (uint64_t t : tickets) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      ASSERT_TRUE(pipeline.WaitTurn(t, false));
      ++finished;
      pipeline.Finish(t, true);
    }
  });
  {
    std::lock_guard<std::mutex> lock(writer_mu);
    pipeline.Drain();
    EXPECT_EQ(3, finished.load());
    EXPECT_TRUE(pipeline.Idle());
  }
  writer.join();
}

TEST(WritePipelineTest, AFailureFailsTheBatchesAfterItUntilTaken) {
  WritePipeline pipeline;
  std::mutex writer_mu;
  std::unique_lock<std::mutex> lock(writer_mu);
  EXPECT_FALSE(pipeline.TakeFailure());
  const uint64_t first = pipeline.Enqueue(BatchOf({"a"}));
  const uint64_t second = pipeline.Enqueue(BatchOf({"b"}));
  lock.unlock();

  ASSERT_TRUE(pipeline.WaitTurn(first, false));
  pipeline.Finish(first, false);  // its write failed
  EXPECT_FALSE(pipeline.WaitTurn(second, false));  // built on it: not written
  pipeline.Finish(second, false);

  lock.lock();
  EXPECT_TRUE(pipeline.TakeFailure());  // the writer restores its state once
  EXPECT_FALSE(pipeline.TakeFailure());
  const uint64_t third = pipeline.Enqueue(BatchOf({"c"}));
  lock.unlock();
  EXPECT_TRUE(pipeline.WaitTurn(third, false));
  pipeline.Finish(third, true);
}

}  // namespace
}  // namespace settee
