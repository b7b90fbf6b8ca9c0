// PoolJob: blocking work a binding runs for an isolate on libuv's thread
// pool (compressing, waiting for a child process), answered through a
// ListenNotify feed: the binding starts it under a feed id chosen by JS,
// hooks.onFeed(feedId) runs once it is done, and JS then asks for the answer,
// which the binding takes with TakeFinishedPoolJob.
//
// Thread safety: Run() is called once, on a pool thread; what it writes is
// visible to the isolate's thread once TakeFinishedPoolJob returns the job.
// Start and Take are called on the isolate's own thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace settee::js {

class IsolateThread;

class PoolJob {
 public:
  virtual ~PoolJob() = default;
  // The blocking work, on a pool thread.
  virtual void Run() = 0;

 private:
  friend class PoolJobRunner;  // pool_job.cc: sets and reads done_
  std::atomic<bool> done_{false};
};

// Runs `job` on `t`'s loop's thread pool; hooks.onFeed(feed_id) runs on `t`
// once it is done (at once, on this thread, if the pool refuses it).
void StartPoolJob(IsolateThread* t, uint64_t feed_id, std::shared_ptr<PoolJob> job);

// The job started under `feed_id` once it is done, its feed then closed;
// nullptr while it runs or if there is none.
std::shared_ptr<PoolJob> TakeFinishedPoolJob(IsolateThread* t, uint64_t feed_id);

}  // namespace settee::js
