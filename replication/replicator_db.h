// ReplicatorDb: the _replicator database run as CouchDB 3's scheduler runs
// it. Each document {"source","target",...} (the fields of POST
// /_replicate) starts a job; a new revision restarts it, deleting the
// document cancels it. When a one-shot job completes, or any job fails for
// good, the outcome is written back to its document, as CouchDB 3 does:
//   "_replication_state": "completed" | "failed",
//   "_replication_state_time": "<ISO 8601>",
//   "_replication_stats": {...}            (completed)
//   "_replication_state_reason": "..."     (failed)
// and documents in those states are not started again. A document that
// cannot be parsed fails at once with the reason.
//
// Thread safety: all methods may be called from any thread. One watcher
// thread follows the database's changes. `store` and `jobs` must outlive
// this object.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "replication/jobs.h"

namespace settee::replication {

// One row of /_scheduler/docs.
struct ReplicatorDocState {
  std::string doc_id;
  std::string job_id;  // "" when no job runs for it
  std::string state;   // running | pending | crashing | completed | failed
  std::string source, target;  // without credentials
  std::string reason;  // failed / crashing: why
  ReplicationStats stats;
  int64_t start_time = 0;
  int64_t last_updated = 0;
  uint64_t error_count = 0;
};

class ReplicatorDb {
 public:
  static constexpr const char* kName = "_replicator";
  // The longest the watcher sleeps between passes when no write wakes it.
  static constexpr std::chrono::milliseconds kWatchSlice{200};

  ReplicatorDb(Store* store, ReplicationJobs* jobs);
  // Stops watching and cancels the jobs it started.
  ~ReplicatorDb();

  // Starts following _replicator (once it exists: like CouchDB 3, settee
  // does not create it).
  void Start();

  std::vector<ReplicatorDocState> Docs();

  // How many times the watcher has read the database's changes (for tests).
  uint64_t watch_passes() const { return watch_passes_.load(); }

 private:
  struct Entry {
    std::string rev;  // the revision the job was started for
    std::shared_ptr<ReplicationJob> job;
    ReplicatorDocState final_state;  // when no job runs
  };

  void Watch();
  // Waits (a bounded slice) for stop, or for the change listener to report
  // a seq past `seen_seq`.
  void WaitForWake(std::optional<uint64_t> seen_seq);
  void OnDoc(const ChangeRow& row);
  void WriteBack(const std::string& doc_id, const std::string& rev, bool completed,
                 const Status& error, const ReplicationStats& stats);

  Store* const store_;
  ReplicationJobs* const jobs_;
  std::shared_ptr<Database> db_;  // the watcher thread's
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  std::atomic<bool> stop_{false};  // set under wake_mu_
  uint64_t latest_seq_ = 0;  // guarded by wake_mu_: from the change listener
  std::atomic<uint64_t> watch_passes_{0};
  std::thread watcher_;
  std::mutex mu_;
  std::map<std::string, Entry> entries_;  // guarded by mu_
};

// "2026-12-01T08:36:24Z" for unix time `t`.
std::string Iso8601(int64_t t);

}  // namespace settee::replication
