#include "js/pool_job.h"

#include <uv.h>

#include <functional>
#include <map>
#include <utility>

#include "js/isolate_thread.h"

namespace settee::js {

namespace {

// The jobs of this isolate thread's feeds.
thread_local std::map<uint64_t, std::shared_ptr<PoolJob>> jobs;

}  // namespace

class PoolJobRunner {
 public:
  // The pool's handle on a job: alive until the loop has seen the work
  // end, even if JS stopped listening (the isolate reset) before that.
  struct Queued {
    uv_work_t work;
    std::shared_ptr<PoolJob> job;
    std::function<void()> wake;
  };
  static void Finish(Queued* q) {
    q->job->Run();
    q->job->done_.store(true, std::memory_order_release);
    q->wake();
  }
  static bool Done(const PoolJob& job) { return job.done_.load(std::memory_order_acquire); }
};

void StartPoolJob(IsolateThread* t, uint64_t feed_id, std::shared_ptr<PoolJob> job) {
  using Queued = PoolJobRunner::Queued;
  auto* queued = new Queued{};
  queued->job = job;
  queued->wake = t->ListenNotify(feed_id, [feed_id] { jobs.erase(feed_id); });
  queued->work.data = queued;
  jobs[feed_id] = std::move(job);
  const int rc = uv_queue_work(
      t->loop(), &queued->work,
      [](uv_work_t* w) { PoolJobRunner::Finish(static_cast<Queued*>(w->data)); },
      [](uv_work_t* w, int) { delete static_cast<Queued*>(w->data); });
  if (rc != 0) {
    // No pool: the work runs here, late rather than never.
    PoolJobRunner::Finish(queued);
    delete queued;
  }
}

std::shared_ptr<PoolJob> TakeFinishedPoolJob(IsolateThread* t, uint64_t feed_id) {
  auto it = jobs.find(feed_id);
  if (it == jobs.end() || !PoolJobRunner::Done(*it->second)) return nullptr;
  std::shared_ptr<PoolJob> job = it->second;
  t->Unlisten(feed_id);  // erases it from `jobs`
  return job;
}

}  // namespace settee::js
