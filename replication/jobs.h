// Replication jobs: what the entry points (POST /_replicate, the
// _replicator database, `settee replicate`, the JS API) start, list and
// cancel. A ReplicationRequest says what to replicate (parsed from CouchDB's
// _replicate / _replicator JSON); ReplicationJobs runs each on a thread of
// its own and keeps the running ones listed for _active_tasks and
// /_scheduler/jobs.
//
// Thread safety: every ReplicationJobs and ReplicationJob method may be
// called from any thread. The Store passed in must outlive the registry.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "replication/http_endpoint.h"
#include "replication/local_endpoint.h"
#include "replication/replicator.h"
#include "settee/store.h"
#include "storage/view_functions.h"

namespace settee::replication {

// One side: a local database name or an http(s) URL, with credentials
// from the URL's userinfo or given apart (Authorization header, "auth").
struct EndpointSpec {
  std::string name;
  std::string user;
  std::string password;
};

struct ReplicationRequest {
  EndpointSpec source;
  EndpointSpec target;
  ReplicationOptions options;
  HttpEndpointOptions http;  // both remote sides
  bool cancel = false;
  std::string replication_id;  // "cancel" by id
};

// Parses a POST /_replicate body or a _replicator document: "source" and
// "target" as a string or {"url", "headers":{"Authorization":"Basic .."}}
// or {"url","auth":{"basic":{"username","password"}}}; "continuous",
// "create_target", "doc_ids", "filter" (a design document's, with
// "query_params"), "selector", "since_seq", "worker_batch_size" (or PouchDB's
// "batch_size"), "batches_limit", "retries_per_request", "cancel",
// "replication_id"; at most one of doc_ids, filter and selector.
// kBadRequest with CouchDB's reasons for anything else it cannot use.
Result<ReplicationRequest> ParseReplicationRequest(std::string_view json_text);

// Filters `request` by a JS filter function (`source`, the function's text)
// with `query_params` (a JSON object text) as its req.query, as PouchDB's
// replicate({filter: fn, query_params}) does: for the JS API, which has the
// function itself; a request body can only name a design document's. The
// function's source stands for its code in the replication id. kBadRequest
// when the request has a filter, selector or doc_ids already.
Status SetFilterFunction(ReplicationRequest* request, std::string source,
                         std::string query_params);

class ReplicationJob {
 public:
  ReplicationJob(std::unique_ptr<Replicator> replicator, std::string doc_id);
  ~ReplicationJob();

  Replicator& replicator() { return *replicator_; }
  const std::string& job_id() const { return job_id_; }
  const std::string& doc_id() const { return doc_id_; }  // _replicator doc, or ""
  int64_t start_time() const { return start_time_; }

  bool done() const;
  // The job's result once done() (OK for completed or cancelled).
  Status result() const;
  // Runs `fn(result)` once when the job ends, on the job's thread (or at
  // once on the caller's if it has ended). Must be quick.
  void OnDone(std::function<void(const Status&)> fn);
  // Blocks a plain thread until the job ends.
  Status Wait();

 private:
  friend class ReplicationJobs;
  void Main();

  std::unique_ptr<Replicator> replicator_;
  std::string job_id_;
  std::string doc_id_;
  int64_t start_time_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;                                     // guarded by mu_
  Status result_;                                         // guarded by mu_
  std::vector<std::function<void(const Status&)>> on_done_;  // guarded by mu_
  std::thread thread_;
};

// The source of design-document filter `filter` ("ddoc/name") as
// `source`'s database has it, trimmed (TrimFilterCode); kNotFound when the
// design document or the filter is missing.
Result<std::string> FetchFilterCode(const Endpoint& source, const std::string& filter);

class ReplicationJobs {
 public:
  explicit ReplicationJobs(Store* store);
  // Cancels every job and waits for their threads.
  ~ReplicationJobs();
  ReplicationJobs(const ReplicationJobs&) = delete;
  ReplicationJobs& operator=(const ReplicationJobs&) = delete;

  // What runs JS filter functions (the server's JS view runtime): a local
  // source's design-document filters and functions, and a function given
  // for a remote source's feed; asked each time an endpoint is made. Set
  // before the first Start(). Without it, such filters are a kBadRequest.
  void SetViewFunctionsProvider(std::function<std::shared_ptr<views::ViewFunctions>()> provider) {
    view_functions_ = std::move(provider);
  }

  // The write check (LocalWriteCheck) of a local target database, by its
  // name: null for none. Asked each time a local endpoint is made; set
  // before the first Start().
  void SetLocalWriteChecks(std::function<LocalWriteCheck(std::string_view db_name)> checks) {
    local_write_checks_ = std::move(checks);
  }

  // An endpoint for `spec`: an http(s) URL or a database of the store.
  Result<std::unique_ptr<Endpoint>> MakeEndpoint(const EndpointSpec& spec,
                                                 const HttpEndpointOptions& http);
  // The Replicator for `request` (not started), with the store's uuid.
  Result<std::unique_ptr<Replicator>> MakeReplicator(const ReplicationRequest& request);

  // Starts `request` on its own thread. If a job with the same job id is
  // running and `join_running`, that job is returned and nothing new starts
  // (as CouchDB answers a repeated _replicate; `listener` is then not
  // installed). `listener` gets the job's events. A cancelled run of the
  // same replication still stopping is waited for first (it would write its
  // last checkpoint over the new run's).
  Result<std::shared_ptr<ReplicationJob>> Start(const ReplicationRequest& request,
                                                Replicator::Listener listener = {},
                                                std::string doc_id = {},
                                                bool join_running = true);

  // The running job with this job id (or base replication id), or nullptr.
  std::shared_ptr<ReplicationJob> Find(std::string_view id);
  // Cancels a running job; kNotFound when none has that id (a job cancelled
  // already counts as none, though its thread may still be stopping).
  Status Cancel(std::string_view id);
  // The jobs running and not cancelled (as Find, a cancelled one still
  // stopping is gone).
  std::vector<std::shared_ptr<ReplicationJob>> Running();

 private:
  void ReapLocked();  // joins the threads of ended jobs

  Store* const store_;
  std::function<std::shared_ptr<views::ViewFunctions>()> view_functions_;  // set up front
  std::function<LocalWriteCheck(std::string_view)> local_write_checks_;    // set up front
  std::mutex mu_;
  std::vector<std::shared_ptr<ReplicationJob>> jobs_;  // guarded by mu_
};

}  // namespace settee::replication
