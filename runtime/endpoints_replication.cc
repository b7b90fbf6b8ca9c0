// Replication endpoints: POST /_replicate, GET /_scheduler/jobs and
// /_scheduler/docs, replication entries in /_active_tasks, and the
// _replicator database. The jobs themselves are replication/'s
// (ReplicationJobs, ReplicatorDb); this file only translates HTTP.
#include <boost/fiber/future.hpp>

#include "replication/jobs.h"
#include "replication/replicator_db.h"
#include "runtime/couch_server.h"
#include "runtime/users_db.h"
#include "util/json.h"

namespace settee {

namespace {

using replication::Iso8601;
using replication::ReplicationJob;
using replication::ReplicationJobs;
using replication::ReplicationStats;
using replication::ReplicatorDb;

// Owned by the routes' closures; destroyed with the CouchServer (the
// _replicator watcher first, then every job, cancelled and joined).
struct ReplicationService {
  explicit ReplicationService(Store* store) : jobs(store), replicator_db(store, &jobs) {}
  ReplicationJobs jobs;
  ReplicatorDb replicator_db;
};

void AppendStats(std::string* out, const ReplicationStats& s) {
  *out += "\"docs_read\":" + std::to_string(s.docs_read) +
          ",\"docs_written\":" + std::to_string(s.docs_written) +
          ",\"doc_write_failures\":" + std::to_string(s.doc_write_failures) +
          ",\"missing_revisions_found\":" + std::to_string(s.missing_found) +
          ",\"revisions_checked\":" + std::to_string(s.missing_checked) +
          ",\"changes_pending\":" + std::to_string(s.changes_pending) +
          ",\"source_seq\":" + s.source_seq +
          ",\"checkpointed_source_seq\":" + s.checkpointed_source_seq;
}

std::string ActiveTask(ReplicationJob& job) {
  auto& r = job.replicator();
  ReplicationStats s = r.Stats();
  std::string out = "{\"type\":\"replication\",\"node\":\"nonode@nohost\",\"pid\":";
  json::AppendQuoted(&out, "<settee." + job.job_id() + ">");
  out += ",\"replication_id\":";
  json::AppendQuoted(&out, job.job_id());
  out += ",\"database\":";
  out += job.doc_id().empty() ? "null" : "\"_replicator\"";
  out += ",\"doc_id\":";
  out += job.doc_id().empty() ? "null" : json::Quote(job.doc_id());
  out += ",\"user\":null,\"source\":";
  json::AppendQuoted(&out, r.source_name());
  out += ",\"target\":";
  json::AppendQuoted(&out, r.target_name());
  out += ",\"continuous\":";
  out += r.options().continuous ? "true" : "false";
  out += ",\"checkpoint_interval\":0,\"started_on\":" + std::to_string(s.started_on) +
         ",\"updated_on\":" + std::to_string(s.updated_on) + ",\"process_status\":";
  json::AppendQuoted(&out, replication::StateName(s.state));
  out += ",";
  AppendStats(&out, s);
  out += "}";
  return out;
}

std::string SchedulerJob(ReplicationJob& job) {
  auto& r = job.replicator();
  ReplicationStats s = r.Stats();
  std::string out = "{\"database\":";
  out += job.doc_id().empty() ? "null" : "\"_replicator\"";
  out += ",\"id\":";
  json::AppendQuoted(&out, job.job_id());
  out += ",\"pid\":";
  json::AppendQuoted(&out, "<settee." + job.job_id() + ">");
  out += ",\"source\":";
  json::AppendQuoted(&out, r.source_name());
  out += ",\"target\":";
  json::AppendQuoted(&out, r.target_name());
  out += ",\"user\":null,\"doc_id\":";
  out += job.doc_id().empty() ? "null" : json::Quote(job.doc_id());
  out += ",\"node\":\"nonode@nohost\",\"start_time\":";
  json::AppendQuoted(&out, Iso8601(job.start_time()));
  out += ",\"history\":[";
  if (s.retries) {
    out += "{\"timestamp\":" + json::Quote(Iso8601(s.updated_on)) +
           ",\"type\":\"crashed\",\"reason\":" + json::Quote(s.error.reason()) + "},";
  }
  out += "{\"timestamp\":" + json::Quote(Iso8601(job.start_time())) +
         ",\"type\":\"started\"},{\"timestamp\":" + json::Quote(Iso8601(job.start_time())) +
         ",\"type\":\"added\"}],\"info\":{";
  AppendStats(&out, s);
  out += "}}";
  return out;
}

// The answer to a finished one-shot _replicate, as CouchDB gives it: the
// checkpoint history, with "no_changes" when this run had nothing to record.
std::string OneShotResult(const ReplicationStats& s) {
  std::string out = "{\"ok\":true";
  if (!s.session_id.empty()) out += ",\"session_id\":" + json::Quote(s.session_id);
  else out += ",\"no_changes\":true";
  out += ",\"source_last_seq\":" + s.checkpointed_source_seq;
  out += ",\"replication_id_version\":4,\"history\":" + s.checkpoint_history + "}";
  return out;
}

Status PostReplicate(ReplicationService& service, RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  s = ctx.CheckJsonBody();
  if (!s.ok()) return s;
  auto request = replication::ParseReplicationRequest(ctx.req.body);
  if (!request.ok()) return request.status();
  if (request->cancel) {
    std::string id = request->replication_id;
    if (id.empty()) {
      // Off the loop: a filtered replication fetches its filter's code from
      // the source, which may be this very server.
      auto r = ctx.server.workers().Run([&] { return service.jobs.MakeReplicator(*request); });
      if (!r.ok()) return r.status();
      id = (*r)->job_id();
    }
    s = service.jobs.Cancel(id);
    if (!s.ok()) return s;
    return ctx.SendJson(200, "{\"ok\":true,\"_local_id\":" + json::Quote(id) + "}");
  }
  auto job = ctx.server.workers().Run([&] { return service.jobs.Start(*request); });
  if (!job.ok()) return job.status();
  if (request->options.continuous) {
    return ctx.SendJson(202, "{\"ok\":true,\"_local_id\":" + json::Quote((*job)->job_id()) + "}");
  }
  // One-shot: this fiber waits for the job's thread; its loop serves on.
  auto promise = std::make_shared<boost::fibers::promise<Status>>();
  boost::fibers::future<Status> done = promise->get_future();
  (*job)->OnDone([promise](const Status& result) { promise->set_value(result); });
  s = done.get();
  if (!s.ok()) return s;
  return ctx.SendJson(200, OneShotResult((*job)->replicator().Stats()));
}

Status GetSchedulerJobs(ReplicationService& service, RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  auto jobs = service.jobs.Running();
  std::string out = "{\"total_rows\":" + std::to_string(jobs.size()) + ",\"offset\":0,\"jobs\":[";
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (i) out += ",";
    out += SchedulerJob(*jobs[i]);
  }
  out += "]}";
  return ctx.SendJson(200, out);
}

Status GetSchedulerDocs(ReplicationService& service, RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  auto docs = service.replicator_db.Docs();
  const std::string* only = ctx.params.empty() ? nullptr : &ctx.params[0];
  std::string rows;
  size_t n = 0;
  for (const auto& d : docs) {
    if (only && d.doc_id != *only) continue;
    std::string row = "{\"database\":\"_replicator\",\"doc_id\":" + json::Quote(d.doc_id) +
                      ",\"id\":" + (d.job_id.empty() ? "null" : json::Quote(d.job_id)) +
                      ",\"node\":\"nonode@nohost\",\"source\":" + json::Quote(d.source) +
                      ",\"target\":" + json::Quote(d.target) +
                      ",\"state\":" + json::Quote(d.state) +
                      ",\"error_count\":" + std::to_string(d.error_count) +
                      ",\"start_time\":" + json::Quote(Iso8601(d.start_time)) +
                      ",\"last_updated\":" + json::Quote(Iso8601(d.last_updated)) + ",\"info\":";
    if (!d.reason.empty()) {
      row += "{\"error\":" + json::Quote(d.reason) + "}";
    } else {
      row += "{";
      AppendStats(&row, d.stats);
      row += "}";
    }
    row += "}";
    if (only) return ctx.SendJson(200, row);
    if (n++) rows += ",";
    rows += row;
  }
  if (only) return Status::NotFound("missing");
  return ctx.SendJson(200, "{\"docs\":[" + rows + "],\"offset\":0,\"total_rows\":" +
                               std::to_string(n) + "}");
}

}  // namespace

void RegisterReplicationEndpoints(CouchServer& server) {
  auto service = std::make_shared<ReplicationService>(server.store());
  // Registered later (RegisterViewEndpoints, an extension), so asked for at
  // each job; the _replicator watcher waits for the end of setup, or jobs
  // found at start-up would run before design-document filters can.
  service->jobs.SetViewFunctionsProvider([&server] { return server.view_functions(); });
  // Jobs with a local endpoint run as a server admin (ReplicatorDb and
  // /_replicate see to it); into _users, each replicated revision meets
  // couch_users_db's before_doc_update (its password hashed) and the _auth
  // validate function as an admin's write does, as CouchDB runs both on
  // replicated updates too.
  service->jobs.SetLocalWriteChecks([](std::string_view db_name) -> replication::LocalWriteCheck {
    if (db_name != kUsersDbName) return nullptr;
    return [](Database& db, std::string_view docid, std::string* json) {
      UsersWriter writer;  // a server admin
      writer.db = &db;
      writer.new_edits = false;
      return PrepareUserDoc(docid, json, writer);
    };
  });
  server.AddStartHook([service] { service->replicator_db.Start(); });
  Router& r = server.router();
  r.Add("POST", "/_replicate",
        [service](RequestContext& ctx) { return PostReplicate(*service, ctx); });
  r.Add("GET,HEAD", "/_scheduler/jobs",
        [service](RequestContext& ctx) { return GetSchedulerJobs(*service, ctx); });
  r.Add("GET,HEAD", "/_scheduler/docs",
        [service](RequestContext& ctx) { return GetSchedulerDocs(*service, ctx); });
  r.Add("GET,HEAD", "/_scheduler/docs/_replicator/{docid}",
        [service](RequestContext& ctx) { return GetSchedulerDocs(*service, ctx); });
  server.AddTaskSource([service] {
    std::vector<std::string> tasks;
    for (auto& job : service->jobs.Running()) tasks.push_back(ActiveTask(*job));
    return tasks;
  });
}

}  // namespace settee
