#include "js/worker_platform.h"

#include <algorithm>
#include <pthread.h>

#include <cerrno>

#include <libplatform/libplatform.h>

namespace settee::js {

WorkerPlatform::WorkerPlatform(std::unique_ptr<v8::Platform> inner, int workers) : inner_(std::move(inner)) {
  sem_init(&ready_, 0, 0);
  for (int i = 0; i < std::max(workers, 1); ++i) threads_.emplace_back([this] { Work(); });
}

WorkerPlatform::~WorkerPlatform() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.clear();
    for (size_t i = 0; i < threads_.size(); ++i) tasks_.emplace_back();
  }
  for (size_t i = 0; i < threads_.size(); ++i) sem_post(&ready_);
  for (auto& t : threads_) t.join();
  sem_destroy(&ready_);
}

void WorkerPlatform::CallOnWorkerThread(std::unique_ptr<v8::Task> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  sem_post(&ready_);
}

std::unique_ptr<v8::JobHandle> WorkerPlatform::PostJob(v8::TaskPriority priority,
                                                       std::unique_ptr<v8::JobTask> job_task) {
  // libplatform's job state machine, its worker tasks posted here.
  return v8::platform::NewDefaultJobHandle(this, priority, std::move(job_task), NumberOfWorkerThreads());
}

void WorkerPlatform::Work() {
  // Named so that profiles and /proc/<pid>/task tell V8's helpers (GC,
  // compiles) from the isolate threads.
  pthread_setname_np(pthread_self(), "v8-worker");
  for (;;) {
    while (sem_wait(&ready_) != 0 && errno == EINTR) {
    }
    std::unique_ptr<v8::Task> task;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty()) continue;  // dropped by the destructor
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    if (!task) return;
    task->Run();
  }
}

}  // namespace settee::js
