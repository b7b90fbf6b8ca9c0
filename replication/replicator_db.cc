#include "replication/replicator_db.h"

#include <algorithm>
#include <ctime>

#include "util/json.h"

namespace settee::replication {

namespace {

std::string Describe(const EndpointSpec& spec) {
  if (!IsRemote(spec.name)) return spec.name;
  auto url = ParseUrl(spec.name);
  return url.ok() ? url->WithoutCredentials() : spec.name;
}

std::string StatsJson(const ReplicationStats& s) {
  std::string out = "{\"revisions_checked\":" + std::to_string(s.missing_checked) +
                    ",\"missing_revisions_found\":" + std::to_string(s.missing_found) +
                    ",\"docs_read\":" + std::to_string(s.docs_read) +
                    ",\"docs_written\":" + std::to_string(s.docs_written) +
                    ",\"changes_pending\":" + std::to_string(s.changes_pending) +
                    ",\"doc_write_failures\":" + std::to_string(s.doc_write_failures) +
                    ",\"checkpointed_source_seq\":" + s.checkpointed_source_seq + "}";
  return out;
}

// Whether a document's job runs as a server admin: no user_ctx (only an
// admin may leave it out, replication/replicator_doc_check.h) or "_admin"
// among its roles.
bool RunsAsServerAdmin(const json::Value& doc) {
  auto ctx = doc.FindMember("user_ctx");
  if (ctx == doc.MemberEnd() || ctx->value.IsNull()) return true;
  if (!ctx->value.IsObject()) return false;
  auto roles = ctx->value.FindMember("roles");
  if (roles == ctx->value.MemberEnd() || !roles->value.IsArray()) return false;
  for (const auto& role : roles->value.GetArray()) {
    if (role.IsString() && json::View(role) == "_admin") return true;
  }
  return false;
}

// CouchDB 3 runs a document's job as its user_ctx through HTTP endpoints
// only (couch_replicator_docs:parse_rep_db refuses a bare database name
// with local_endpoints_not_supported), so the databases' _security applies
// to it. settee's local endpoints read and write the engine directly: they
// are kept for jobs that run as a server admin, who may read and write
// every database anyway; anyone else's would pass by _security.
Status CheckLocalEndpoints(const json::Value& doc, const ReplicationRequest& request) {
  if (IsRemote(request.source.name) && IsRemote(request.target.name)) return Status::OK();
  if (RunsAsServerAdmin(doc)) return Status::OK();
  return Status::Forbidden("local_endpoints_not_supported");
}

}  // namespace

std::string Iso8601(int64_t t) {
  std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm;
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ReplicatorDb::ReplicatorDb(Store* store, ReplicationJobs* jobs) : store_(store), jobs_(jobs) {}

ReplicatorDb::~ReplicatorDb() {
  {
    std::lock_guard<std::mutex> lock(wake_mu_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  std::vector<std::shared_ptr<ReplicationJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [id, entry] : entries_) {
      if (entry.job) jobs.push_back(entry.job);
    }
  }
  // Their end-of-job callbacks use this object: wait for them (unlocked,
  // since the callbacks take mu_).
  for (auto& job : jobs) job->replicator().Cancel();
  for (auto& job : jobs) (void)job->Wait();
}

void ReplicatorDb::Start() {
  watcher_ = std::thread([this] { Watch(); });
}

void ReplicatorDb::WaitForWake(std::optional<uint64_t> seen_seq) {
  std::unique_lock<std::mutex> lock(wake_mu_);
  // Only a seq past the one read wakes: the listener reports nothing until
  // the first write after the watcher attached (latest_seq_ 0 then).
  wake_cv_.wait_for(lock, kWatchSlice,
                    [&] { return stop_ || (seen_seq && latest_seq_ > *seen_seq); });
}

void ReplicatorDb::Watch() {
  uint64_t since = 0;
  uint64_t listener = 0;
  auto forget = [&] {
    if (db_ && listener) db_->RemoveChangeListener(listener);
    db_.reset();
    listener = 0;
  };
  while (!stop_) {
    if (!db_) {
      // Like CouchDB 3, settee does not create _replicator; it starts
      // following it once someone does.
      auto db = store_->OpenDatabase(kName);
      if (!db.ok()) {
        WaitForWake(std::nullopt);
        continue;
      }
      db_ = std::move(*db);
      since = 0;
      {
        // A database made again counts from 0: forget the old one's seqs.
        std::lock_guard<std::mutex> lock(wake_mu_);
        latest_seq_ = 0;
      }
      listener = db_->AddChangeListener([this](uint64_t seq) {
        {
          std::lock_guard<std::mutex> lock(wake_mu_);
          // Notifications can arrive out of order (writers on several
          // threads): the latest never goes back.
          latest_seq_ = std::max(latest_seq_, seq);
        }
        wake_cv_.notify_all();
      });
    }
    ChangesOptions options;
    options.since = since;
    options.include_docs = true;
    std::vector<ChangeRow> rows;
    uint64_t last = since;
    ++watch_passes_;
    Status s = db_->Changes(
        options,
        [&rows](const ChangeRow& row) {
          rows.push_back(row);
          return true;
        },
        &last);
    if (!s.ok()) {  // deleted: forget it and wait for it to come back
      forget();
      continue;
    }
    for (const ChangeRow& row : rows) OnDoc(row);
    since = last;
    if (db_->UpdateSeq() == since) WaitForWake(since);
  }
  forget();
}

void ReplicatorDb::OnDoc(const ChangeRow& row) {
  if (row.id.starts_with("_design/")) return;
  const std::string rev = row.revs.empty() ? "" : row.revs.front();
  std::shared_ptr<ReplicationJob> old_job;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = entries_.find(row.id);
    if (it != entries_.end()) {
      if (it->second.rev == rev) return;  // our own write-back, or seen
      old_job = std::move(it->second.job);
      if (row.deleted) entries_.erase(it);
    }
  }
  if (old_job) old_job->replicator().Cancel();
  if (row.deleted) return;

  json::Document doc;
  if (!json::Parse(row.doc, &doc).ok() || !doc.IsObject()) return;
  Entry entry;
  entry.rev = rev;
  entry.final_state.doc_id = row.id;
  entry.final_state.last_updated = static_cast<int64_t>(std::time(nullptr));
  if (doc.HasMember("_replication_state") && doc["_replication_state"].IsString()) {
    std::string state(json::View(doc["_replication_state"]));
    if (state == "completed" || state == "failed") {
      entry.final_state.state = state;
      if (doc.HasMember("_replication_state_reason") &&
          doc["_replication_state_reason"].IsString()) {
        entry.final_state.reason = json::View(doc["_replication_state_reason"]);
      }
      std::lock_guard<std::mutex> lock(mu_);
      entries_[row.id] = std::move(entry);
      return;
    }
  }
  auto request = ParseReplicationRequest(row.doc);
  if (request.ok()) {
    entry.final_state.source = Describe(request->source);
    entry.final_state.target = Describe(request->target);
    if (Status s = CheckLocalEndpoints(doc, *request); !s.ok()) request = s;
  }
  Result<std::shared_ptr<ReplicationJob>> job =
      request.ok() ? jobs_->Start(*request, {}, row.id) : Result<std::shared_ptr<ReplicationJob>>(request.status());
  if (!job.ok()) {
    entry.final_state.state = "failed";
    entry.final_state.reason = job.status().reason();
    {
      std::lock_guard<std::mutex> lock(mu_);
      entries_[row.id] = std::move(entry);
    }
    WriteBack(row.id, rev, false, job.status(), {});
    return;
  }
  entry.job = *job;
  entry.final_state.job_id = (*job)->job_id();
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries_[row.id] = entry;
  }
  std::weak_ptr<ReplicationJob> weak = *job;
  (*job)->OnDone([this, doc_id = row.id, rev, weak](const Status& s) {
    auto job = weak.lock();
    if (!job || job->replicator().cancelled()) return;
    ReplicationStats stats = job->replicator().Stats();
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(doc_id);
      if (it == entries_.end() || it->second.rev != rev) return;
      it->second.final_state.state = s.ok() ? "completed" : "failed";
      it->second.final_state.reason = s.ok() ? "" : s.reason();
      it->second.final_state.stats = stats;
      it->second.final_state.last_updated = static_cast<int64_t>(std::time(nullptr));
      it->second.job.reset();
    }
    WriteBack(doc_id, rev, s.ok(), s, stats);
  });
}

void ReplicatorDb::WriteBack(const std::string& doc_id, const std::string& rev, bool completed,
                             const Status& error, const ReplicationStats& stats) {
  // Its own handle: db_ belongs to the watcher thread.
  auto db = store_->OpenDatabase(kName);
  if (!db.ok()) return;
  GetOptions get;
  get.rev = rev;
  auto body = (*db)->Get(doc_id, get);
  if (!body.ok()) return;
  json::Document doc;
  if (!json::Parse(*body, &doc).ok() || !doc.IsObject()) return;
  auto& a = doc.GetAllocator();
  for (const char* name : {"_replication_state", "_replication_state_time", "_replication_stats",
                           "_replication_state_reason"}) {
    doc.RemoveMember(name);
  }
  doc.AddMember("_replication_state",
                json::Value(rapidjson::StringRef(completed ? "completed" : "failed")), a);
  doc.AddMember("_replication_state_time",
                json::StringValue(Iso8601(static_cast<int64_t>(std::time(nullptr))), a), a);
  if (completed) {
    json::Document s;
    if (json::Parse(StatsJson(stats), &s).ok()) {
      doc.AddMember("_replication_stats", json::Value(s, a), a);
    }
  } else {
    doc.AddMember("_replication_state_reason", json::StringValue(error.reason(), a), a);
  }
  std::string text = json::Serialize(doc);
  auto put = (*db)->Put(doc_id, text);
  if (!put.ok()) return;  // edited meanwhile: the new revision decides
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(doc_id);
  if (it != entries_.end() && it->second.rev == rev) it->second.rev = put->rev;
}

std::vector<ReplicatorDocState> ReplicatorDb::Docs() {
  std::vector<ReplicatorDocState> out;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [id, entry] : entries_) {
    ReplicatorDocState state = entry.final_state;
    if (entry.job) {
      Replicator& r = entry.job->replicator();
      state.stats = r.Stats();
      state.source = r.source_name();
      state.target = r.target_name();
      state.start_time = entry.job->start_time();
      state.last_updated = state.stats.updated_on;
      state.error_count = state.stats.retries;
      switch (state.stats.state) {
        case ReplicationState::kInitializing: state.state = "pending"; break;
        case ReplicationState::kRetrying:
          state.state = "crashing";
          state.reason = state.stats.error.reason();
          break;
        case ReplicationState::kFailed: state.state = "failed"; break;
        case ReplicationState::kCompleted: state.state = "completed"; break;
        default: state.state = "running"; break;
      }
    }
    out.push_back(std::move(state));
  }
  return out;
}

}  // namespace settee::replication
