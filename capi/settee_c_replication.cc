// The C API's replication calls (include/settee/settee.h, "Replication")
// over replication/jobs.h: a settee_replication is a handle to one
// ReplicationJob of the store's ReplicationJobs (c_api_internal.h says how
// closing stops them). Errors as in settee_c.cc.
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "capi/c_api_internal.h"
#include "replication/jobs.h"
#include "util/json.h"

using settee::Status;
using settee::replication::ReplicationJob;
using settee::replication::ReplicationState;
using settee::replication::ReplicationStats;
using namespace settee_c;  // NOLINT: the C functions below are this module's surface

namespace {

settee_replication_state ToC(ReplicationState s) {
  switch (s) {
    case ReplicationState::kInitializing: return SETTEE_REPLICATION_INITIALIZING;
    case ReplicationState::kRunning: return SETTEE_REPLICATION_RUNNING;
    case ReplicationState::kPaused: return SETTEE_REPLICATION_PAUSED;
    case ReplicationState::kRetrying: return SETTEE_REPLICATION_RETRYING;
    case ReplicationState::kCompleted: return SETTEE_REPLICATION_COMPLETED;
    case ReplicationState::kFailed: return SETTEE_REPLICATION_FAILED;
    case ReplicationState::kCancelled: return SETTEE_REPLICATION_CANCELLED;
  }
  return SETTEE_REPLICATION_FAILED;
}

// settee.h's names (CouchDB's StateName folds paused into "running").
const char* StateName(settee_replication_state s) {
  switch (s) {
    case SETTEE_REPLICATION_INITIALIZING: return "initializing";
    case SETTEE_REPLICATION_RUNNING: return "running";
    case SETTEE_REPLICATION_PAUSED: return "paused";
    case SETTEE_REPLICATION_RETRYING: return "retrying";
    case SETTEE_REPLICATION_COMPLETED: return "completed";
    case SETTEE_REPLICATION_FAILED: return "failed";
    case SETTEE_REPLICATION_CANCELLED: return "cancelled";
  }
  return "failed";
}

// The _replicate body: `options_json`'s members with source and target.
settee_code RequestBody(const char* source, const char* target, const char* options_json,
                        std::string* out, settee_error* err) {
  namespace json = settee::json;
  json::Document d;
  Status s = json::Parse(options_json ? options_json : "{}", &d);
  if (!s.ok()) return Fail(err, s);
  if (!d.IsObject()) return Fail(err, SETTEE_ERR_BAD_REQUEST, "options_json must be a JSON object");
  for (const char* name : {"source", "target", "cancel", "replication_id"}) {
    if (d.HasMember(name)) {
      return Fail(err, SETTEE_ERR_BAD_REQUEST,
                  std::string("options_json must not have `") + name + "`: it is an argument or a call");
    }
  }
  auto& a = d.GetAllocator();
  d.AddMember("source", json::Value(source, a), a);
  d.AddMember("target", json::Value(target, a), a);
  *out = json::Serialize(d);
  return SETTEE_OK;
}

std::string StatusJson(ReplicationJob& job, settee_replication_state state) {
  namespace json = settee::json;
  auto& r = job.replicator();
  ReplicationStats s = r.Stats();
  std::string out = "{\"replication_id\":";
  json::AppendQuoted(&out, job.job_id());
  out += ",\"source\":";
  json::AppendQuoted(&out, r.source_name());
  out += ",\"target\":";
  json::AppendQuoted(&out, r.target_name());
  out += ",\"continuous\":";
  out += r.options().continuous ? "true" : "false";
  out += ",\"state\":\"";
  out += StateName(state);
  out += "\",\"docs_read\":" + std::to_string(s.docs_read) +
         ",\"docs_written\":" + std::to_string(s.docs_written) +
         ",\"doc_write_failures\":" + std::to_string(s.doc_write_failures) +
         ",\"missing_revisions_found\":" + std::to_string(s.missing_found) +
         ",\"revisions_checked\":" + std::to_string(s.missing_checked) +
         ",\"changes_pending\":" + std::to_string(s.changes_pending) +
         ",\"start_seq\":" + s.start_seq + ",\"source_seq\":" + s.source_seq +
         ",\"checkpointed_source_seq\":" + s.checkpointed_source_seq +
         ",\"retries\":" + std::to_string(s.retries);
  if (!s.error.ok()) {
    out += ",\"error\":{\"error\":";
    json::AppendQuoted(&out, s.error.ErrorName());
    out += ",\"reason\":";
    json::AppendQuoted(&out, s.error.reason());
    out += "}";
  }
  out += "}";
  return out;
}

// True once the handle's store is closed or closing.
bool Closed(settee_replication* h) {
  StoreLock lock(h->state.get());
  return !h->state->store || h->state->closing;
}

// A replication call's view of its handle: the job, with the store held
// open (shared) until it goes out of scope, so that no reference to the
// job outlives a close (its endpoints hold the store's databases).
class JobCall {
 public:
  explicit JobCall(settee_replication* h) : lock_(h->state.get()) {
    if (h->state->store && !h->state->closing) job_ = h->job.get();
  }
  ReplicationJob* job() const { return job_; }

 private:
  StoreLock lock_;
  ReplicationJob* job_ = nullptr;
};

}  // namespace

extern "C" {

settee_code settee_replication_start(settee_store* store, const char* source, const char* target,
                                     const char* options_json, settee_replication** out,
                                     settee_error* err) {
  if (!out) return InvalidArgument(err, "out is NULL");
  *out = nullptr;
  if (!store) return InvalidArgument(err, "store is NULL");
  SETTEE_C_CHECK(Utf8Arg(source, "source", err));
  SETTEE_C_CHECK(Utf8Arg(target, "target", err));
  SETTEE_C_CHECK(OptionalUtf8Arg(options_json, "options_json", err));
  if (t_in_listener) {
    return Fail(err, SETTEE_ERR_INVALID_OPERATION, "a change listener must not call into the store");
  }
  return Guarded(err, [&] {
    std::string body;
    SETTEE_C_CHECK(RequestBody(source, target, options_json, &body, err));
    auto request = settee::replication::ParseReplicationRequest(body);
    if (!request.ok()) return Fail(err, request.status());
    std::shared_ptr<StoreState> state = store->state;
    StoreLock lock(state.get());
    if (!state->store || state->closing) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    settee::replication::ReplicationJobs* jobs;
    {
      std::lock_guard<std::mutex> registry(state->registry_mu);
      if (!state->jobs) {
        state->jobs = std::make_unique<settee::replication::ReplicationJobs>(state->store.get());
        // Filter functions of a local source run on the store's view threads.
        state->jobs->SetViewFunctionsProvider([functions = state->view_functions] { return functions; });
      }
      jobs = state->jobs.get();  // lives until Close, which waits for this call's lock
    }
    auto job = jobs->Start(*request);
    if (!job.ok()) return Fail(err, job.status());
    auto h = std::make_unique<settee_replication>();
    h->state = state;
    h->job = *job;
    h->end = std::make_shared<ReplicationEnd>();
    (*job)->OnDone([end = h->end](const Status& result) {
      {
        std::lock_guard<std::mutex> l(end->mu);
        end->done = true;
        end->result = result;
      }
      end->cv.notify_all();
    });
    std::lock_guard<std::mutex> registry(state->registry_mu);
    state->replications.insert(h.get());
    *out = h.release();
    return Ok(err);
  });
}

settee_code settee_replication_status(settee_replication* rep, int* state_out, char** json_out,
                                      settee_error* err) {
  if (json_out) *json_out = nullptr;
  if (!rep) return InvalidArgument(err, "rep is NULL");
  return Guarded(err, [&] {
    JobCall call(rep);
    ReplicationJob* job = call.job();
    if (!job) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    settee_replication_state state = ToC(job->replicator().Stats().state);
    if (state_out) *state_out = state;
    if (json_out) Give(json_out, StatusJson(*job, state));
    return Ok(err);
  });
}

settee_code settee_replication_wait(settee_replication* rep, uint32_t timeout_ms, settee_error* err) {
  if (!rep) return InvalidArgument(err, "rep is NULL");
  if (Closed(rep)) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
  return Guarded(err, [&] {
    ReplicationEnd& end = *rep->end;
    std::unique_lock<std::mutex> lock(end.mu);
    auto done = [&] { return end.done; };
    if (timeout_ms == 0) {
      end.cv.wait(lock, done);
    } else if (!end.cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), done)) {
      return Fail(err, SETTEE_ERR_TIMEOUT, "the replication is still running");
    }
    Status result = end.result;
    lock.unlock();
    // A close cancels the replication, which then ends "ok": say why.
    if (Closed(rep)) return Fail(err, SETTEE_ERR_CLOSED, "the store was closed");
    return result.ok() ? Ok(err) : Fail(err, result);
  });
}

settee_code settee_replication_cancel(settee_replication* rep, settee_error* err) {
  if (!rep) return InvalidArgument(err, "rep is NULL");
  return Guarded(err, [&] {
    JobCall call(rep);
    if (!call.job()) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    call.job()->replicator().Cancel();
    return Ok(err);
  });
}

void settee_replication_free(settee_replication* rep) {
  if (!rep) return;
  std::shared_ptr<StoreState> state = rep->state;
  {
    // The job goes with the lock held: its endpoints hold the store's
    // databases, which a concurrent close must not free first.
    StoreLock lock(state.get());
    {
      std::lock_guard<std::mutex> registry(state->registry_mu);
      state->replications.erase(rep);
    }
    rep->job.reset();
  }
  delete rep;
}

}  // extern "C"
