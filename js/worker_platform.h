// The process's v8::Platform: libplatform's default platform for everything
// but the worker threads, which are settee's own.
//
// Why: V8 posts tasks to its worker threads from the isolate threads in
// every young-generation GC (the minor mark-compactor's marking and
// evacuation jobs, array-buffer sweeping). libplatform's worker queue wakes
// a worker through a pthread condition variable, and glibc's
// pthread_cond_signal can block the signalling thread until workers it woke
// before have run (it quiesces the old group of waiters:
// __condvar_quiesce_and_switch_g1). While the isolate threads hold the
// cores, those workers wait for a CPU, and so the isolate that posts sleeps
// until a worker has been scheduled: off-CPU stacks of `settee bench
// --threads 1,2` put most of the isolate threads' sleep in their loops
// there. Here a post pushes the task under a mutex held for the push alone
// and wakes a worker through a semaphore, whose post never waits for
// another thread.
//
// Ownership: owns `inner` and its worker threads; the destructor stops and
// joins them (tasks still queued are dropped). settee's one platform
// (v8_init.h) is never destroyed.
// Thread safety: every method may be called from any thread, as
// v8::Platform requires.
#pragma once

#include <semaphore.h>

#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <v8-platform.h>

namespace settee::js {

class WorkerPlatform final : public v8::Platform {
 public:
  // `inner` keeps the foreground task runners (so the isolates' message
  // loops are pumped through it: v8::platform::PumpMessageLoop(inner(),
  // ...)), delayed worker tasks, clocks and tracing. `workers` (>= 1)
  // threads run the worker tasks and jobs.
  WorkerPlatform(std::unique_ptr<v8::Platform> inner, int workers);
  ~WorkerPlatform() override;
  WorkerPlatform(const WorkerPlatform&) = delete;
  WorkerPlatform& operator=(const WorkerPlatform&) = delete;

  v8::Platform* inner() const { return inner_.get(); }

  v8::PageAllocator* GetPageAllocator() override { return inner_->GetPageAllocator(); }
  v8::ZoneBackingAllocator* GetZoneBackingAllocator() override { return inner_->GetZoneBackingAllocator(); }
  void OnCriticalMemoryPressure() override { inner_->OnCriticalMemoryPressure(); }
  bool OnCriticalMemoryPressure(size_t length) override { return inner_->OnCriticalMemoryPressure(length); }
  int NumberOfWorkerThreads() override { return static_cast<int>(threads_.size()); }
  std::shared_ptr<v8::TaskRunner> GetForegroundTaskRunner(v8::Isolate* isolate) override {
    return inner_->GetForegroundTaskRunner(isolate);
  }
  void CallOnWorkerThread(std::unique_ptr<v8::Task> task) override;
  void CallDelayedOnWorkerThread(std::unique_ptr<v8::Task> task, double delay_in_seconds) override {
    inner_->CallDelayedOnWorkerThread(std::move(task), delay_in_seconds);
  }
  bool IdleTasksEnabled(v8::Isolate* isolate) override { return inner_->IdleTasksEnabled(isolate); }
  std::unique_ptr<v8::JobHandle> PostJob(v8::TaskPriority priority, std::unique_ptr<v8::JobTask> job_task) override;
  double MonotonicallyIncreasingTime() override { return inner_->MonotonicallyIncreasingTime(); }
  double CurrentClockTimeMillis() override { return inner_->CurrentClockTimeMillis(); }
  StackTracePrinter GetStackTracePrinter() override { return inner_->GetStackTracePrinter(); }
  v8::TracingController* GetTracingController() override { return inner_->GetTracingController(); }
  void DumpWithoutCrashing() override { inner_->DumpWithoutCrashing(); }
  v8::HighAllocationThroughputObserver* GetHighAllocationThroughputObserver() override {
    return inner_->GetHighAllocationThroughputObserver();
  }

 private:
  void Work();

  std::unique_ptr<v8::Platform> inner_;
  std::mutex mu_;
  std::deque<std::unique_ptr<v8::Task>> tasks_;  // a null task stops one worker
  sem_t ready_;                                  // one post per queued task
  std::vector<std::thread> threads_;
};

}  // namespace settee::js
