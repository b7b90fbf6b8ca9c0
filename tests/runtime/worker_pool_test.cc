// runtime/worker_pool.h: Run hands a value or an exception back to the
// calling fiber or thread, and many callers at once each get their own.
#include "runtime/worker_pool.h"

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace settee {
namespace {

TEST(WorkerPool, RunReturnsTheValueAndRethrows) {
  WorkerPool pool(2);
  EXPECT_EQ(pool.Run([] { return std::string("done"); }), "done");
  EXPECT_FALSE(WorkerPool::OnWorkerThread());
  EXPECT_TRUE(pool.Run([] { return WorkerPool::OnWorkerThread(); }));
  EXPECT_THROW(pool.Run([]() -> int { throw std::runtime_error("no"); }), std::runtime_error);
  int side = 0;
  pool.Run([&] { side = 7; });
  EXPECT_EQ(side, 7);
  EXPECT_EQ(pool.size(), 2);
}

// Callers on plain threads, each returning from Run as soon as its value is
// set: the worker may still be inside set_value's notify when the caller's
// frame is gone, so the promise must not live there (it did: a server
// crashed in condition_variable_any::notify_all under the compat suite).
TEST(WorkerPool, ManyCallersReturningAtOnce) {
  WorkerPool pool(2);
  std::atomic<long> sum{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int i = 0; i < 20000; ++i) sum += pool.Run([&] { return t + i; });
    });
  }
  for (auto& c : callers) c.join();
  long want = 0;
  for (int t = 0; t < 4; ++t)
    for (int i = 0; i < 20000; ++i) want += t + i;
  EXPECT_EQ(sum.load(), want);
}

}  // namespace
}  // namespace settee
