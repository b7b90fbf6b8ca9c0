// Replicator: one replication from a source Endpoint to a target Endpoint,
// by the CouchDB replication protocol (replication/protocol.rst):
//
//   read both checkpoints (_local/<id>) -> resume seq
//   loop: _changes (style=all_docs, batch_size rows) -> target _revs_diff
//         -> fetch missing revs with history from the source
//         -> write them to the target with new_edits=false
//         -> checkpoint on the target, then the source
//
// The first three steps run on the changes reader's thread, batches ahead
// (changes_reader.h, up to batches_limit), the writes and checkpoints on
// Run()'s thread.
//
// One-shot replications end when the source has nothing more; continuous
// ones then wait on the source's changes feed until cancelled. Failed
// requests are retried from the last checkpoint with exponential backoff
// (bounded for one-shot jobs by `retries`). For a one-shot job, errors no
// retry can fix (a missing database, bad credentials, a bad request) end
// it; a continuous job retries through all but a bad request, as CouchDB
// 3's scheduler does. A document the target refuses (403/401) is counted
// in doc_write_failures and reported (kDenied), never retried.
//
// Thread safety: Run() is called once, on the thread that is to do the work
// (it blocks); Cancel() and Stats() may be called from any thread at any
// time. The listener runs on Run()'s thread and must be quick.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "replication/changes_reader.h"
#include "replication/checkpoint.h"
#include "replication/endpoint.h"
#include "settee/status.h"

namespace settee::replication {

struct ReplicationOptions {
  bool continuous = false;
  bool create_target = false;
  uint64_t batch_size = 100;  // _changes rows per batch (PouchDB's default)
  // Batches read from the source and not yet written, at most (PouchDB's
  // batches_limit, default 10): the source's _changes is read ahead by
  // that many batches while earlier ones are fetched and written. 1: no
  // read-ahead.
  uint64_t batches_limit = 10;
  std::optional<std::string> since_seq;  // JSON text; overrides the checkpoints
  std::optional<std::vector<std::string>> doc_ids;
  // Only the changes a design-document filter ("ddoc/name", with
  // query_params) or a Mango selector passes (one of doc_ids, filter and
  // selector at most). `filter_code` is the filter function's source as
  // the source has it (ReplicationJobs fetches it): part of the id.
  std::optional<ChangesFilterSpec> filter;
  std::string filter_code;
  // One-shot: failed attempts in a row before the job fails. Continuous
  // jobs retry for ever.
  int retries = 5;
  std::chrono::milliseconds initial_backoff{500};
  std::chrono::milliseconds max_backoff{60'000};
  // Continuous: how long one wait on the source's feed lasts.
  std::chrono::milliseconds feed_wait{10'000};
  // Whose store computes the replication id (CouchDB: the server uuid).
  std::string server_uuid;
};

enum class ReplicationState {
  kInitializing,
  kRunning,
  kPaused,    // continuous and caught up: waiting for changes
  kRetrying,  // an attempt failed; waiting to retry
  kCompleted,
  kFailed,
  kCancelled,
};
std::string_view StateName(ReplicationState state);  // "running", "crashing", ...

struct ReplicationStats {
  ReplicationState state = ReplicationState::kInitializing;
  Status error;  // the last error (kFailed: why)
  uint64_t docs_read = 0;
  uint64_t docs_written = 0;
  uint64_t doc_write_failures = 0;
  uint64_t missing_checked = 0;  // revisions asked about in _revs_diff
  uint64_t missing_found = 0;    // revisions the target lacked
  uint64_t changes_pending = 0;  // source update_seq minus the seq reached, when numeric
  std::string start_seq = "0";   // JSON text
  std::string source_seq = "0";  // the source's update_seq when last seen
  std::string checkpointed_source_seq = "0";
  std::string session_id;        // the last checkpoint's
  std::string checkpoint_history = "[]";  // JSON array, newest first
  int64_t started_on = 0;        // unix seconds
  int64_t updated_on = 0;
  uint64_t retries = 0;          // failed attempts so far
};

struct ReplicationEvent {
  enum class Kind {
    kActive,    // (re)started working
    kChange,    // a batch was written and checkpointed
    kPaused,    // continuous, caught up (or waiting to retry: `error` set)
    kDenied,    // the target refused a document (counted, not retried)
    kComplete,  // one-shot finished, or the job was cancelled
    kError,     // the job failed for good
  };
  Kind kind;
  ReplicationStats stats;
  // kChange: the ids of the batch's changes; kDenied: the refused one.
  std::vector<std::string> doc_ids;
  // kChange: the documents written, as one JSON array (with _revisions).
  std::string docs_json;
  Status error;  // kDenied, kError, kPaused after a failure
};

class Replicator {
 public:
  using Listener = std::function<void(const ReplicationEvent&)>;

  Replicator(std::unique_ptr<Endpoint> source, std::unique_ptr<Endpoint> target,
             ReplicationOptions options);
  ~Replicator();

  // The replication id (CouchDB 3's base id: checkpoints are _local/<id>)
  // and the job id (with +continuous / +create_target).
  const std::string& id() const { return id_; }
  std::string job_id() const;
  std::string source_name() const { return source_->Describe(); }
  std::string target_name() const { return target_->Describe(); }
  const ReplicationOptions& options() const { return options_; }

  // Set before Run().
  void SetListener(Listener listener) { listener_ = std::move(listener); }

  // Replicates until done (one-shot), cancelled or failed for good. The
  // result: OK when completed or cancelled, else the error that ended it.
  Status Run();

  void Cancel();
  bool cancelled() const { return cancelled_; }

  ReplicationStats Stats() const;

 private:
  // One attempt: open both sides, resume from the checkpoints and replicate
  // until caught up (one-shot) or cancelled. `progressed` is set once a
  // batch has been checkpointed (a later failure then resets the backoff).
  Status Attempt(bool* progressed);
  // On the changes reader's thread: asks `target` which revisions of
  // `batch` it lacks and fetches them from `source` (both endpoints of that
  // thread).
  static Status PrepareBatch(Endpoint& source, Endpoint& target, const ChangesBatch& batch,
                             PreparedBatch* out);
  // Writes a prepared batch to the target and counts it.
  Status WriteBatch(const PreparedBatch& batch);
  Status Checkpoint(const std::string& seq);
  void SetState(ReplicationState state);
  void Emit(ReplicationEvent::Kind kind, std::vector<std::string> doc_ids = {},
            Status error = Status::OK());
  // Sleeps up to `d`; false if cancelled meanwhile.
  bool SleepUnlessCancelled(std::chrono::milliseconds d);

  std::unique_ptr<Endpoint> source_;
  std::unique_ptr<Endpoint> target_;
  ReplicationOptions options_;
  std::string id_;
  Listener listener_;

  std::atomic<bool> cancelled_{false};
  std::mutex cancel_mu_;
  ChangesReader* reader_ = nullptr;  // the attempt's, under cancel_mu_ (Cancel wakes it)
  std::condition_variable cancel_cv_;

  mutable std::mutex stats_mu_;
  ReplicationStats stats_;

  // Run()'s thread only:
  std::string history_ = "[]";  // as of the last checkpoint
  std::optional<CheckpointHistory> session_history_;  // the attempt's
  std::string start_time_;
  std::string attempt_start_seq_;
  bool source_checkpoints_ = true;  // off once the source refuses them (403)
  std::string batch_docs_;          // the last batch's documents, for kChange
};

}  // namespace settee::replication
