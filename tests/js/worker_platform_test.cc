// js/worker_platform.h: worker tasks and jobs run on the platform's own
// threads, posting never waits for a worker, and the destructor stops them.
#include "js/worker_platform.h"

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <libplatform/libplatform.h>

namespace settee::js {
namespace {

class CountTask : public v8::Task {
 public:
  CountTask(std::atomic<int>* done, std::mutex* mu, std::set<std::thread::id>* on) : done_(done), mu_(mu), on_(on) {}
  void Run() override {
    {
      std::lock_guard<std::mutex> lock(*mu_);
      on_->insert(std::this_thread::get_id());
    }
    done_->fetch_add(1);
  }

 private:
  std::atomic<int>* done_;
  std::mutex* mu_;
  std::set<std::thread::id>* on_;
};

std::unique_ptr<WorkerPlatform> MakePlatform(int workers) {
  return std::make_unique<WorkerPlatform>(v8::platform::NewDefaultPlatform(1), workers);
}

bool WaitFor(const std::atomic<int>& n, int want) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (n.load() < want) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(WorkerPlatform, TasksFromSeveralThreadsAllRunOnTheWorkers) {
  auto platform = MakePlatform(2);
  EXPECT_EQ(platform->NumberOfWorkerThreads(), 2);
  std::atomic<int> done{0};
  std::mutex mu;
  std::set<std::thread::id> on;
  std::vector<std::thread> posters;
  for (int p = 0; p < 4; ++p) {
    posters.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) platform->CallOnWorkerThread(std::make_unique<CountTask>(&done, &mu, &on));
    });
  }
  for (auto& t : posters) t.join();
  ASSERT_TRUE(WaitFor(done, 4000));
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_GE(on.size(), 1u);
  EXPECT_LE(on.size(), 2u);  // only the platform's two workers ran them
  EXPECT_EQ(on.count(std::this_thread::get_id()), 0u);
}

// Tasks posted while every worker is busy queue behind it, in order, and
// run once it is free.
class BlockTask : public v8::Task {
 public:
  explicit BlockTask(std::atomic<bool>* release, std::atomic<int>* started = nullptr)
      : release_(release), started_(started) {}
  void Run() override {
    if (started_) started_->fetch_add(1);
    while (!release_->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

 private:
  std::atomic<bool>* release_;
  std::atomic<int>* started_;
};

TEST(WorkerPlatform, TasksQueueBehindABusyWorker) {
  auto platform = MakePlatform(1);
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  std::mutex mu;
  std::set<std::thread::id> on;
  platform->CallOnWorkerThread(std::make_unique<BlockTask>(&release));
  for (int i = 0; i < 100; ++i) platform->CallOnWorkerThread(std::make_unique<CountTask>(&done, &mu, &on));
  EXPECT_EQ(done.load(), 0);  // the one worker is still held
  release = true;
  EXPECT_TRUE(WaitFor(done, 100));
}

// A job (libplatform's job state over this platform's workers) runs every
// work item, on the workers and on the joining thread.
class CountJob : public v8::JobTask {
 public:
  explicit CountJob(std::atomic<int>* left) : left_(left) {}
  void Run(v8::JobDelegate* delegate) override {
    while (!delegate->ShouldYield()) {
      int n = left_->load();
      if (n <= 0) return;
      if (left_->compare_exchange_weak(n, n - 1)) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  size_t GetMaxConcurrency(size_t) const override { return static_cast<size_t>(std::max(left_->load(), 0)); }

 private:
  std::atomic<int>* left_;
};

TEST(WorkerPlatform, JobsRunToTheEnd) {
  auto platform = MakePlatform(2);
  std::atomic<int> left{500};
  auto handle = platform->PostJob(v8::TaskPriority::kUserVisible, std::make_unique<CountJob>(&left));
  handle->Join();
  EXPECT_EQ(left.load(), 0);
}

// Counts its runs, and its destructions without a run (a dropped task).
class DropCountTask : public v8::Task {
 public:
  DropCountTask(std::atomic<int>* ran, std::atomic<int>* dropped) : ran_(ran), dropped_(dropped) {}
  ~DropCountTask() override {
    if (!ran_once_) dropped_->fetch_add(1);
  }
  void Run() override {
    ran_once_ = true;
    ran_->fetch_add(1);
  }

 private:
  std::atomic<int>* ran_;
  std::atomic<int>* dropped_;
  bool ran_once_ = false;
};

TEST(WorkerPlatform, TheDestructorStopsWorkersWithTasksStillQueued) {
  std::atomic<bool> release{false};
  std::atomic<int> ran{0}, dropped{0};
  std::thread releaser;
  {
    auto platform = MakePlatform(2);
    std::atomic<int> started{0};
    for (int i = 0; i < 2; ++i) platform->CallOnWorkerThread(std::make_unique<BlockTask>(&release, &started));
    ASSERT_TRUE(WaitFor(started, 2));  // both workers held
    for (int i = 0; i < 50; ++i) platform->CallOnWorkerThread(std::make_unique<DropCountTask>(&ran, &dropped));
    // The workers are let go only once the destructor has dropped the
    // queued tasks, however late it gets to them.
    releaser = std::thread([&] {
      WaitFor(dropped, 50);
      release = true;
    });
  }  // drops the queued tasks, then joins the workers once their tasks end
  releaser.join();
  EXPECT_EQ(dropped.load(), 50);
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace settee::js
