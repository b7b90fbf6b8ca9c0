// The `native.replicat*` functions behind js/prelude/replication.js
// (PouchDB.replicate, db.replicate.to/from, db.sync). A replication runs as
// a replication/ job on its own thread; its events are queued as JSON and
// the isolate's loop is woken (IsolateThread::ListenNotify) to hand them to
// JS, which emits PouchDB's events. Unlistening the feed (the replication
// ended, or the isolate is being disposed) cancels the job and waits for it.
#include <v8-container.h>
#include <v8-function.h>
#include <v8-primitive.h>

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "js/view_functions_js.h"
#include "replication/jobs.h"
#include "settee/store.h"
#include "util/http_status.h"
#include "util/json.h"

namespace settee::js {

namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;
using replication::ReplicationEvent;

// One registry per isolate pool, shared by its isolates and ended with
// them (IsolatePool::Impl::SharedService): jobs end (cancelled and
// awaited) with the feed that started them or with the registry, so none
// outlives the isolates' store.
// Filter functions of local sources (a design document's, or one given to
// PouchDB.replicate) run on an isolate thread of their own, started at the
// first filtered replication: a job's thread cannot enter the isolate that
// started it, which may be waiting for the job.
replication::ReplicationJobs& JobsFor(IsolateThread* t) {
  Store* store = t->store();
  auto service = t->pool()->SharedService("replication", [store] {
    auto jobs = std::make_shared<replication::ReplicationJobs>(store);
    PoolOptions pool;
    pool.threads = 1;
    pool.store = store;
    auto functions = std::make_shared<PoolViewFunctions>(pool);
    jobs->SetViewFunctionsProvider([functions] { return functions; });
    return std::static_pointer_cast<void>(jobs);
  });
  // The pool keeps the registry until it shuts down, after every isolate
  // (and so every caller) has stopped.
  return *static_cast<replication::ReplicationJobs*>(service.get());
}

// Events of one replication, filled on the job's thread, drained by JS.
struct EventQueue {
  std::mutex mu;
  std::string pending;  // comma-separated JSON objects
};

struct JsReplication {
  std::shared_ptr<replication::ReplicationJob> job;
  std::shared_ptr<EventQueue> events;
};

// Per isolate thread (each isolate has its own OS thread).
thread_local std::unordered_map<uint64_t, JsReplication> replications;

void AppendError(std::string* out, const Status& s) {
  *out += "{\"status\":" + std::to_string(HttpStatusFor(s.code())) + ",\"name\":";
  json::AppendQuoted(out, s.ErrorName());
  *out += ",\"message\":";
  json::AppendQuoted(out, s.reason());
  *out += "}";
}

std::string EventJson(const ReplicationEvent& e, bool cancelled) {
  static const char* kKinds[] = {"active", "change", "paused", "denied", "complete", "error"};
  const auto& s = e.stats;
  std::string out = "{\"kind\":\"";
  out += kKinds[static_cast<int>(e.kind)];
  out += "\",\"docs_read\":" + std::to_string(s.docs_read) +
         ",\"docs_written\":" + std::to_string(s.docs_written) +
         ",\"doc_write_failures\":" + std::to_string(s.doc_write_failures) +
         ",\"last_seq\":" + s.checkpointed_source_seq;
  if (e.kind == ReplicationEvent::Kind::kChange) {
    out += ",\"docs\":";
    out += e.docs_json.empty() ? "[]" : e.docs_json;
  }
  if (e.kind == ReplicationEvent::Kind::kComplete) {
    out += cancelled ? ",\"status\":\"cancelled\"" : ",\"status\":\"complete\"";
  }
  if (!e.error.ok()) {
    out += ",\"error\":";
    AppendError(&out, e.error);
  }
  if (e.kind == ReplicationEvent::Kind::kDenied && !e.doc_ids.empty()) {
    out += ",\"id\":";
    json::AppendQuoted(&out, e.doc_ids[0]);
  }
  out += "}";
  return out;
}

uint64_t FeedArg(const Args& args) {
  return args[0]->IsNumber() ? static_cast<uint64_t>(args[0].As<v8::Number>()->Value()) : 0;
}

// native.replicate(feedId, requestJson[, filterSource, queryParamsJson]):
// starts the job, filtered by the JS function whose source is given;
// throws a PouchDB error for a request it cannot start.
void Replicate(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  if (!t->store()) {
    t->ThrowStatus(Status(Status::Code::kInvalidOperation, "no settee store is attached to this isolate"));
    return;
  }
  uint64_t feed_id = FeedArg(args);
  auto request = replication::ParseReplicationRequest(ToUtf8(args.GetIsolate(), args[1]));
  if (!request.ok()) {
    t->ThrowStatus(request.status());
    return;
  }
  if (args.Length() > 3 && args[2]->IsString()) {
    Status s = replication::SetFilterFunction(&*request, ToUtf8(args.GetIsolate(), args[2]),
                                              ToUtf8(args.GetIsolate(), args[3]));
    if (!s.ok()) {
      t->ThrowStatus(s);
      return;
    }
  }
  auto events = std::make_shared<EventQueue>();
  auto wake = t->ListenNotify(feed_id, [feed_id] {
    auto it = replications.find(feed_id);
    if (it == replications.end()) return;
    JsReplication r = std::move(it->second);
    replications.erase(it);
    if (r.job) {
      r.job->replicator().Cancel();
      (void)r.job->Wait();
    }
  });
  auto job = JobsFor(t)
                 .Start(*request, [events, wake](const ReplicationEvent& e) {
                   // Cancelled jobs report "complete" with status "cancelled".
                   bool cancelled = e.stats.state == replication::ReplicationState::kCancelled;
                   {
                     std::lock_guard<std::mutex> lock(events->mu);
                     if (!events->pending.empty()) events->pending += ',';
                     events->pending += EventJson(e, cancelled);
                   }
                   wake();
                 },
                        /*doc_id=*/{}, /*join_running=*/false);
  if (!job.ok()) {
    t->Unlisten(feed_id);
    t->ThrowStatus(job.status());
    return;
  }
  replications[feed_id] = JsReplication{*job, events};
}

// native.replicationEvents(feedId): the events queued since the last call.
void ReplicationEvents(const Args& args) {
  auto it = replications.find(FeedArg(args));
  std::string text = "[";
  if (it != replications.end()) {
    std::lock_guard<std::mutex> lock(it->second.events->mu);
    text += it->second.events->pending;
    it->second.events->pending.clear();
  }
  text += "]";
  v8::Local<v8::Value> v;
  if (JsonToV8(args.GetIsolate()->GetCurrentContext(), text).ToLocal(&v)) {
    args.GetReturnValue().Set(v);
  }
}

void ReplicationCancel(const Args& args) {
  auto it = replications.find(FeedArg(args));
  if (it != replications.end() && it->second.job) it->second.job->replicator().Cancel();
}

// native.replicationClose(feedId): after the final event.
void ReplicationClose(const Args& args) {
  IsolateThread::From(args.GetIsolate())->Unlisten(FeedArg(args));
}

}  // namespace

void InstallReplicationBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->context();
  SetFn(ctx, native, "replicate", Replicate);
  SetFn(ctx, native, "replicationEvents", ReplicationEvents);
  SetFn(ctx, native, "replicationCancel", ReplicationCancel);
  SetFn(ctx, native, "replicationClose", ReplicationClose);
}

}  // namespace settee::js
