#include "replication/jobs.h"

#include <ctime>

#include "replication/local_endpoint.h"
#include "replication/replication_id.h"
#include "storage/mango_selector.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::replication {

namespace {

Status ParseEndpoint(const json::Value& v, const char* which, EndpointSpec* out) {
  if (v.IsString()) {
    out->name = json::View(v);
    return Status::OK();
  }
  if (!v.IsObject() || !v.HasMember("url") || !v["url"].IsString()) {
    return Status::BadRequest(std::string(which) + " must be a string or an object with a url");
  }
  out->name = json::View(v["url"]);
  if (v.HasMember("headers") && v["headers"].IsObject()) {
    for (const auto& h : v["headers"].GetObject()) {
      std::string_view name = json::View(h.name);
      if (name.size() != 13 || !h.value.IsString()) continue;
      bool authorization = true;
      for (size_t i = 0; i < name.size(); ++i) {
        authorization &= std::tolower(static_cast<unsigned char>(name[i])) == "authorization"[i];
      }
      std::string_view value = json::View(h.value);
      std::string decoded;
      if (authorization && value.starts_with("Basic ") &&
          Base64Decode(value.substr(6), &decoded) && decoded.find(':') != std::string::npos) {
        out->user = decoded.substr(0, decoded.find(':'));
        out->password = decoded.substr(decoded.find(':') + 1);
      }
    }
  }
  if (v.HasMember("auth") && v["auth"].IsObject() && v["auth"].HasMember("basic")) {
    const json::Value& basic = v["auth"]["basic"];
    if (basic.IsObject() && basic.HasMember("username") && basic["username"].IsString() &&
        basic.HasMember("password") && basic["password"].IsString()) {
      out->user = json::View(basic["username"]);
      out->password = json::View(basic["password"]);
    }
  }
  return Status::OK();
}

bool GetBool(const json::Document& d, const char* name, bool* out, Status* error) {
  auto it = d.FindMember(name);
  if (it == d.MemberEnd()) return false;
  if (!it->value.IsBool()) {
    *error = Status::BadRequest(std::string("`") + name + "` must be a boolean");
    return false;
  }
  *out = it->value.GetBool();
  return true;
}

}  // namespace

Result<ReplicationRequest> ParseReplicationRequest(std::string_view json_text) {
  json::Document d;
  Status s = json::Parse(json_text, &d);
  if (!s.ok()) return s;
  if (!d.IsObject()) return Status::BadRequest("Request body must be a JSON object");
  ReplicationRequest r;
  GetBool(d, "cancel", &r.cancel, &s);
  GetBool(d, "continuous", &r.options.continuous, &s);
  GetBool(d, "create_target", &r.options.create_target, &s);
  if (!s.ok()) return s;
  if (d.HasMember("replication_id") && d["replication_id"].IsString()) {
    r.replication_id = json::View(d["replication_id"]);
  }
  if (r.cancel && !r.replication_id.empty()) return r;
  if (!d.HasMember("source")) return Status::BadRequest("Missing `source` field");
  if (!d.HasMember("target")) return Status::BadRequest("Missing `target` field");
  s = ParseEndpoint(d["source"], "source", &r.source);
  if (s.ok()) s = ParseEndpoint(d["target"], "target", &r.target);
  if (!s.ok()) return s;
  if (d.HasMember("doc_ids")) {
    const json::Value& ids = d["doc_ids"];
    if (!ids.IsArray()) return Status::BadRequest("`doc_ids` should be a list of strings");
    std::vector<std::string> list;
    for (const auto& id : ids.GetArray()) {
      if (!id.IsString()) return Status::BadRequest("`doc_ids` should be a list of strings");
      list.emplace_back(json::View(id));
    }
    r.options.doc_ids = std::move(list);
  }
  if (d.HasMember("since_seq")) r.options.since_seq = json::Serialize(d["since_seq"]);
  for (const char* name : {"worker_batch_size", "batch_size"}) {
    if (!d.HasMember(name)) continue;
    if (!d[name].IsUint64() || d[name].GetUint64() == 0) {
      return Status::BadRequest(std::string("`") + name + "` must be a positive integer");
    }
    r.options.batch_size = d[name].GetUint64();
  }
  if (d.HasMember("batches_limit")) {
    if (!d["batches_limit"].IsUint64() || d["batches_limit"].GetUint64() == 0) {
      return Status::BadRequest("`batches_limit` must be a positive integer");
    }
    r.options.batches_limit = d["batches_limit"].GetUint64();
  }
  if (d.HasMember("retries_per_request")) {
    if (!d["retries_per_request"].IsInt() || d["retries_per_request"].GetInt() < 0) {
      return Status::BadRequest("`retries_per_request` must be a non-negative integer");
    }
    r.options.retries = d["retries_per_request"].GetInt();
  }
  // CouchDB's couch_replicator_filters:parse: one of filter, doc_ids and
  // selector; filter is "ddoc/name" (settee runs no _view filters here).
  auto has = [&](const char* name) { return d.HasMember(name) && !d[name].IsNull(); };
  if (has("filter") + has("selector") + has("doc_ids") > 1) {
    return Status::BadRequest("`selector`, `filter` and `doc_ids` fields are mutually exclusive");
  }
  if (has("filter")) {
    if (!d["filter"].IsString()) return Status::BadRequest("`filter` must be a string");
    std::string filter(json::View(d["filter"]));
    size_t slash = filter.find('/');
    if (filter.starts_with("_") || slash == std::string::npos || slash == 0 || slash + 1 == filter.size()) {
      return Status::BadRequest("Invalid filter. Must match `ddocname/filtername` or `_design/ddocname/filtername`");
    }
    if (filter.starts_with("_design/")) filter = filter.substr(8);
    ChangesFilterSpec spec;
    spec.filter = std::move(filter);
    if (has("query_params")) {
      if (!d["query_params"].IsObject()) return Status::BadRequest("`query_params` should be an object");
      spec.query_params = json::Serialize(d["query_params"]);
    }
    r.options.filter = std::move(spec);
  } else if (has("selector")) {
    if (!d["selector"].IsObject()) return Status::BadRequest("`selector` must be a JSON object");
    auto valid = mango::Selector::Parse(d["selector"]);  // bad operators fail now, not in the job
    if (!valid.ok()) return valid.status();
    ChangesFilterSpec spec;
    spec.selector = json::Serialize(d["selector"]);
    r.options.filter = std::move(spec);
  }
  return r;
}

////////////////////////////////////////////////////////////////////////////////

ReplicationJob::ReplicationJob(std::unique_ptr<Replicator> replicator, std::string doc_id)
    : replicator_(std::move(replicator)),
      job_id_(replicator_->job_id()),
      doc_id_(std::move(doc_id)),
      start_time_(static_cast<int64_t>(std::time(nullptr))) {}

ReplicationJob::~ReplicationJob() {
  if (thread_.joinable() && thread_.get_id() == std::this_thread::get_id()) {
    // The last reference went away on the job's own thread (in an OnDone
    // callback): it has finished its work; let it end on its own.
    thread_.detach();
  } else if (thread_.joinable()) {
    replicator_->Cancel();
    thread_.join();
  }
}

void ReplicationJob::Main() {
  Status s = replicator_->Run();
  std::vector<std::function<void(const Status&)>> callbacks;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
    result_ = s;
    callbacks.swap(on_done_);
  }
  cv_.notify_all();
  for (auto& fn : callbacks) fn(s);
}

bool ReplicationJob::done() const {
  std::lock_guard<std::mutex> lock(mu_);
  return done_;
}

Status ReplicationJob::result() const {
  std::lock_guard<std::mutex> lock(mu_);
  return result_;
}

void ReplicationJob::OnDone(std::function<void(const Status&)> fn) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!done_) {
    on_done_.push_back(std::move(fn));
    return;
  }
  Status s = result_;
  lock.unlock();
  fn(s);
}

Status ReplicationJob::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return done_; });
  return result_;
}

////////////////////////////////////////////////////////////////////////////////

ReplicationJobs::ReplicationJobs(Store* store) : store_(store) {}

ReplicationJobs::~ReplicationJobs() {
  std::vector<std::shared_ptr<ReplicationJob>> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs.swap(jobs_);
  }
  for (auto& job : jobs) job->replicator().Cancel();
  for (auto& job : jobs) {
    if (job->thread_.joinable()) job->thread_.join();
  }
}

Status SetFilterFunction(ReplicationRequest* request, std::string source,
                         std::string query_params) {
  if (request->options.filter || request->options.doc_ids) {
    return Status::BadRequest("`selector`, `filter` and `doc_ids` fields are mutually exclusive");
  }
  json::Document params;
  if (!json::Parse(query_params, &params).ok() || !params.IsObject()) {
    return Status::BadRequest("`query_params` should be an object");
  }
  ChangesFilterSpec spec;
  spec.function = std::move(source);
  spec.query_params = std::move(query_params);
  request->options.filter = std::move(spec);
  return Status::OK();
}

Result<std::string> FetchFilterCode(const Endpoint& source, const std::string& filter) {
  size_t slash = filter.find('/');
  std::string ddoc_id = "_design/" + filter.substr(0, slash);
  std::string name = filter.substr(slash + 1);
  auto reader = source.Clone();
  auto opened = reader->Open(false);
  if (!opened.ok()) return opened.status();
  auto ddoc = reader->GetLocal(ddoc_id);
  if (!ddoc.ok()) {
    return Status(ddoc.status().code(), "Couldn't fetch the filter " + filter + " from the source: " +
                                            ddoc.status().reason());
  }
  json::Document d;
  if (!json::Parse(*ddoc, &d).ok() || !d.IsObject() || !d.HasMember("filters") || !d["filters"].IsObject() ||
      !d["filters"].HasMember(name.c_str()) || !d["filters"][name.c_str()].IsString()) {
    return Status::NotFound("Couldn't find the filter " + filter + " in the source's " + ddoc_id);
  }
  return TrimFilterCode(json::View(d["filters"][name.c_str()]));
}

Result<std::unique_ptr<Endpoint>> ReplicationJobs::MakeEndpoint(const EndpointSpec& spec,
                                                                const HttpEndpointOptions& http) {
  if (IsRemote(spec.name)) {
    auto url = ParseUrl(spec.name);
    if (!url.ok()) return url.status();
    if (url->user.empty() && !spec.user.empty()) {
      url->user = spec.user;
      url->password = spec.password;
    }
    return std::unique_ptr<Endpoint>(std::make_unique<HttpEndpoint>(
        std::move(*url), http, view_functions_ ? view_functions_() : nullptr));
  }
  if (!IsValidDatabaseName(spec.name)) {
    return Status(Status::Code::kIllegalDatabaseName,
                  "Name: '" + spec.name +
                      "'. Only lowercase characters (a-z), digits (0-9), and any of the "
                      "characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.");
  }
  return std::unique_ptr<Endpoint>(std::make_unique<LocalEndpoint>(
      store_, spec.name, view_functions_ ? view_functions_() : nullptr,
      local_write_checks_ ? local_write_checks_(spec.name) : nullptr));
}

Result<std::unique_ptr<Replicator>> ReplicationJobs::MakeReplicator(
    const ReplicationRequest& request) {
  auto source = MakeEndpoint(request.source, request.http);
  if (!source.ok()) return source.status();
  auto target = MakeEndpoint(request.target, request.http);
  if (!target.ok()) return target.status();
  ReplicationOptions options = request.options;
  options.server_uuid = store_->uuid();
  if (options.filter && !options.filter->filter.empty()) {
    // The filter's code is part of the replication id (CouchDB fetches it
    // from the source the same way, before the job starts).
    auto code = FetchFilterCode(**source, options.filter->filter);
    if (!code.ok()) return code.status();
    options.filter_code = std::move(*code);
  } else if (options.filter && !options.filter->function.empty()) {
    // PouchDB runs such a function on the changes it reads; settee runs it
    // where a local source's design-document filters run, on the documents
    // a remote source's feed carries (HttpEndpoint).
    options.filter_code = TrimFilterCode(options.filter->function);
  }
  return std::make_unique<Replicator>(std::move(*source), std::move(*target), options);
}

Result<std::shared_ptr<ReplicationJob>> ReplicationJobs::Start(const ReplicationRequest& request,
                                                               Replicator::Listener listener,
                                                               std::string doc_id,
                                                               bool join_running) {
  auto replicator = MakeReplicator(request);
  if (!replicator.ok()) return replicator.status();
  // A cancelled run of the same replication that is still stopping would
  // write its last checkpoint (the same _local document) over this one's:
  // it ends first (a cancel interrupts it within moments).
  std::vector<std::shared_ptr<ReplicationJob>> stopping;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& job : jobs_) {
      if (job->job_id() == (*replicator)->job_id() && !job->done() && job->replicator().cancelled()) {
        stopping.push_back(job);
      }
    }
  }
  // A cancelled run's outcome is its own (it reports to its own callers).
  for (auto& job : stopping) (void)job->Wait();
  std::lock_guard<std::mutex> lock(mu_);
  ReapLocked();
  for (auto& job : jobs_) {
    if (join_running && job->job_id() == (*replicator)->job_id() && !job->done() &&
        !job->replicator().cancelled()) {
      return job;
    }
  }
  if (listener) (*replicator)->SetListener(std::move(listener));
  auto job = std::make_shared<ReplicationJob>(std::move(*replicator), std::move(doc_id));
  job->thread_ = std::thread([raw = job.get()] { raw->Main(); });
  jobs_.push_back(job);
  return job;
}

std::shared_ptr<ReplicationJob> ReplicationJobs::Find(std::string_view id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& job : jobs_) {
    // A cancelled job still stopping is gone for its callers, as CouchDB's
    // scheduler removes it at once (a second cancel is a 404).
    if (job->done() || job->replicator().cancelled()) continue;
    if (job->job_id() == id || job->replicator().id() == id) return job;
  }
  return nullptr;
}

Status ReplicationJobs::Cancel(std::string_view id) {
  auto job = Find(id);
  if (!job) return Status::NotFound("Replication `" + std::string(id) + "` not found");
  job->replicator().Cancel();
  return Status::OK();
}

std::vector<std::shared_ptr<ReplicationJob>> ReplicationJobs::Running() {
  std::lock_guard<std::mutex> lock(mu_);
  ReapLocked();
  std::vector<std::shared_ptr<ReplicationJob>> running;
  for (auto& job : jobs_) {
    if (!job->replicator().cancelled()) running.push_back(job);  // as Find: gone once cancelled
  }
  return running;
}

void ReplicationJobs::ReapLocked() {
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if ((*it)->done()) {
      if ((*it)->thread_.joinable()) (*it)->thread_.join();
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace settee::replication
