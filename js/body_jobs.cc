#include "js/body_jobs.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include <v8-platform.h>

#include "js/v8_init.h"
#include "storage/doc_record.h"

namespace settee::js {

struct BodyJobs::State {
  struct Job {
    IncomingDoc* doc;
    std::string_view body;
    // Threw on a worker (an exception must not leave the worker's task):
    // the owner does it again in WaitRunning, where one can propagate.
    bool failed = false;  // written before `finished` counts it (mu)
  };
  std::vector<Job> jobs;
  std::shared_ptr<void> keep;  // dropped by the owner's Wait(), on its thread
  std::atomic<size_t> next{0};  // the next job to take
  std::mutex mu;
  std::condition_variable all_done;
  size_t finished = 0;  // guarded by mu
};

namespace {

class DrainTask : public v8::Task {
 public:
  explicit DrainTask(std::function<void()> run) : run_(std::move(run)) {}
  void Run() override { run_(); }

 private:
  std::function<void()> run_;
};

}  // namespace

size_t BodyJobs::MinBodyBytes() { return kCompressBodyBytes; }

void BodyJobs::Drain(State& s) {
  // Every thread takes jobs in turn until none is left: the worker those
  // it reaches first, the owner at Wait() the rest.
  for (;;) {
    const size_t i = s.next.fetch_add(1, std::memory_order_relaxed);
    if (i >= s.jobs.size()) return;
    State::Job& job = s.jobs[i];
    try {
      if (!HoldBodyCompressed(job.body, job.doc)) job.doc->body.assign(job.body);
    } catch (...) {
      job.failed = true;
    }
    std::lock_guard<std::mutex> l(s.mu);
    if (++s.finished == s.jobs.size()) s.all_done.notify_all();
  }
}

void BodyJobs::Add(IncomingDoc* doc, std::string_view body) {
  if (!queued_) queued_ = std::make_shared<State>();
  queued_->jobs.push_back({doc, body});
}

void BodyJobs::Start(std::shared_ptr<void> keep) {
  WaitRunning();
  if (!queued_) return;
  running_ = std::move(queued_);
  running_->keep = std::move(keep);
  // The task holds the state until it has run, which may be after Wait()
  // has done every job itself.
  std::shared_ptr<State> state = running_;
  V8WorkerPlatform()->CallOnWorkerThread(std::make_unique<DrainTask>([state] { Drain(*state); }));
}

void BodyJobs::Wait() {
  WaitRunning();
  // Jobs added but never started are run here, so none is lost.
  if (queued_) {
    Drain(*queued_);
    queued_.reset();
  }
}

void BodyJobs::WaitRunning() {
  if (!running_) return;
  Drain(*running_);
  {
    std::unique_lock<std::mutex> l(running_->mu);
    running_->all_done.wait(l, [&] { return running_->finished == running_->jobs.size(); });
  }
  for (State::Job& job : running_->jobs) {
    if (!job.failed) continue;
    job.doc->body.clear();  // whatever the failed attempt left
    job.doc->snappy_body.clear();
    job.doc->body_size = 0;
    job.doc->first_rev_hash.clear();
    if (!HoldBodyCompressed(job.body, job.doc)) job.doc->body.assign(job.body);
  }
  // The worker's task may hold the state a little longer; the bytes' owner
  // is let go here, on the owner's thread.
  running_->keep.reset();
  running_.reset();
}

}  // namespace settee::js
