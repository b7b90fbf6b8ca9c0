#include "runtime/couch_server.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include "replication/replicator_doc_check.h"
#include "runtime/attachment_http.h"
#include "runtime/couch_error.h"
#include "runtime/log.h"
#include "storage/attachment_store.h"

namespace settee {

namespace {

constexpr std::string_view kCorsAllowMethods = "GET, HEAD, POST, PUT, DELETE, COPY, OPTIONS";
constexpr std::string_view kCorsAllowHeaders =
    "accept, authorization, content-type, origin, referer, x-csrf-token, destination, if-match, "
    "if-none-match";
constexpr std::string_view kCorsExposeHeaders =
    "content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, "
    "x-couch-update-newrev, x-couchdb-body-time";

std::string IllegalDbNameReason(std::string_view name) {
  return "Name: '" + std::string(name) +
         "'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, "
         "), +, -, and / are allowed. Must begin with a letter.";
}

}  // namespace

////////////////////////////////////////////////////////////////////////////////
// RequestContext

// chttpd:verify_is_server_admin throws unauthorized (401) whoever asks: a
// signed-in user too, unlike a database's members check (403 then).
Status RequestContext::RequireServerAdmin() {
  if (user.IsAdmin()) return Status::OK();
  return Status::Unauthorized("You are not a server admin.");
}

Status RequestContext::CheckAccess(Database& db, bool admin) {
  if (user.IsAdmin()) return Status::OK();
  SecurityObject sec;
  std::string text = db.Security();
  // Never set: CouchDB 3's default_security = admin_only.
  if (text.empty() || text == "{}") text = std::string(kDefaultSecurityJson);
  Status s = SecurityObject::Parse(text, &sec);
  if (!s.ok()) return Status::Internal("stored _security object is invalid");
  bool ok = admin ? sec.IsDbAdmin(user) : sec.IsMember(user);
  if (ok) return Status::OK();
  if (user.name.empty()) return Status::Unauthorized("You are not authorized to access this db.");
  return admin ? Status::Forbidden("You are not a db or server admin.")
               : Status::Forbidden("You are not allowed to access this db.");
}

Result<std::shared_ptr<Database>> RequestContext::OpenDb(bool admin) {
  const std::string& name = params.at(0);
  if (!IsValidDatabaseName(name)) {
    return Status(Status::Code::kIllegalDatabaseName, IllegalDbNameReason(name));
  }
  auto db = server.store()->OpenDatabase(name);
  if (!db.ok()) {
    if (db.status().IsNotFound()) return Status::NotFound("Database does not exist.");
    return db.status();
  }
  Status s = CheckAccess(**db, admin);
  if (!s.ok()) return s;
  return db;
}

Status RequestContext::SendJson(int status, std::string_view body) {
  res.AddHeader("Cache-Control", "must-revalidate");
  const bool has_newline = !body.empty() && body.back() == '\n';
  res.Send(status, "application/json", body, has_newline ? "" : "\n");
  return Status::OK();
}

Status RequestContext::CheckJsonBody(bool require_json_type) const {
  if (require_json_type) {
    std::string ct = req.ContentType();
    if (ct != "application/json") {
      return Status(Status::Code::kBadContentType, "Content-Type must be application/json");
    }
  }
  if (req.body.empty()) return Status::BadRequest("Request body is empty; JSON expected.");
  return Status::OK();
}

Status RequestContext::ParseBody(json::Document* doc, bool require_json_type) {
  Status s = CheckJsonBody(require_json_type);
  if (!s.ok()) return s;
  s = json::Parse(req.body, doc);
  if (!s.ok()) return Status::BadRequest("invalid UTF-8 JSON");
  return Status::OK();
}

Status RequestContext::ParseObjectBody(json::Document* doc) {
  Status s = ParseBody(doc);
  if (!s.ok()) return s;
  if (!doc->IsObject()) return Status::BadRequest("Request body must be a JSON object");
  return Status::OK();
}

const std::string* RequestContext::LastParam(std::string_view name) const {
  const std::string* last = nullptr;
  for (const auto& [n, v] : req.params) {
    if (n == name) last = &v;
  }
  return last;
}

bool RequestContext::FlagParam(std::string_view name) const {
  return std::any_of(req.params.begin(), req.params.end(),
                     [&](const auto& p) { return p.first == name && p.second == "true"; });
}

Status RequestContext::BoolParam(std::string_view name, bool* out) const {
  const std::string* v = req.Param(name);
  if (v == nullptr) return Status::OK();
  if (*v != "true" && *v != "false") {
    return Status(Status::Code::kQueryParseError,
                  "Invalid boolean parameter: \"" + std::string(name) + "\"");
  }
  *out = *v == "true";
  return Status::OK();
}

Status RequestContext::UIntParam(std::string_view name, uint64_t* out) const {
  const std::string* v = req.Param(name);
  if (v == nullptr) return Status::OK();
  return UIntValue(name, *v, out);
}

Status RequestContext::UIntValue(std::string_view name, const std::string& value, uint64_t* out) {
  // Accept JSON-ish integers ("10"), reject anything else.
  if (value.empty() || value.size() > 19 ||
      !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Status(Status::Code::kQueryParseError,
                  "Invalid value for integer parameter \"" + std::string(name) + "\": \"" + value + "\"");
  }
  *out = std::stoull(value);
  return Status::OK();
}

Status RequestContext::JsonParam(std::string_view name, json::Document* out,
                                 bool* present) const {
  const std::string* v = req.Param(name);
  *present = v != nullptr;
  if (v == nullptr) return Status::OK();
  Status s = json::Parse(*v, out);
  if (!s.ok()) {
    return Status(Status::Code::kQueryParseError,
                  "Invalid JSON in parameter \"" + std::string(name) + "\"");
  }
  return Status::OK();
}

////////////////////////////////////////////////////////////////////////////////
// CouchServer

CouchServer::CouchServer(Store* store, const CouchServerOptions& options)
    : store_(store),
      options_(options),
      users_(store),
      auth_(options.admins, options.cookie_secret, options.session_timeout_s, &users_),
      workers_(options.worker_threads) {
  // CouchDB's single-node setup creates _users; accounts live there.
  auto users = store_->CreateDatabase(kUsersDbName);
  if (users.ok()) {
    Status s = (*users)->SetSecurity(kDefaultSecurityJson);
    if (!s.ok()) LogWarning("cannot secure _users: %s", s.ToString().c_str());
  } else if (users.status().code() != Status::Code::kFileExists) {
    LogWarning("cannot create _users: %s", users.status().ToString().c_str());
  }
  RegisterServerEndpoints(*this);
  RegisterDatabaseEndpoints(*this);
  RegisterDocumentEndpoints(*this);
  RegisterAttachmentEndpoints(*this);
  RegisterChangesEndpoints(*this);
  RegisterReplicationEndpoints(*this);
  RegisterMangoEndpoints(*this);
  RegisterPurgeEndpoints(*this);
  RegisterNodeEndpoints(*this);
  DefineConfig();
}

void CouchServer::DefineConfig() {
  // [admins]: set and deleted live; shown hashed, as CouchDB shows them.
  NodeConfig::Section admins;
  for (auto& [name, shown] : auth_.AdminHashes()) admins[name] = shown;
  config_.DefineSection("admins", std::move(admins),
                        [this](const std::string& name, const std::string* password, std::string* shown) {
    if (password == nullptr) {
      if (options_.keep_an_admin && auth_.admin_count() <= 1) {
        return Status::BadRequest(
            "settee keeps a server admin while it listens beyond loopback (no admin party)");
      }
      auth_.RemoveAdmin(name);
      return Status::OK();
    }
    if (password->empty()) return Status::BadRequest("An admin password must not be empty");
    // A password, or (as CouchDB takes it) a hash of one, kept as given.
    Status set = auth_.SetAdmin(name, *password);
    if (!set.ok()) return set;
    for (auto& [n, h] : auth_.AdminHashes()) {
      if (n == name) *shown = h;
    }
    return Status::OK();
  });
  // [log] level: live.
  config_.DefineSection("log", {{"level", LogLevelName(GetLogLevel())}},
                        [](const std::string& key, const std::string* value, std::string* shown) {
    if (key != "level") {
      return Status::BadRequest("settee's [log] has only `level`");
    }
    const std::string name = value == nullptr ? "info" : *value;
    LogLevel level;
    if (!ParseCouchLogLevel(name, &level)) return Status::BadRequest("unknown log level: " + name);
    SetLogLevel(level);
    *shown = LogLevelName(level);
    return Status::OK();
  });
  // [purge]: the _purge request limits, read per request (endpoints_purge.cc).
  config_.DefineSection("purge", {{"max_document_id_number", "100"}, {"max_revisions_number", "1000"}},
                        [](const std::string& key, const std::string* value, std::string* shown) {
    if (key != "max_document_id_number" && key != "max_revisions_number") {
      return Status::BadRequest("settee's [purge] has max_document_id_number and max_revisions_number");
    }
    if (value == nullptr) return Status::OK();  // back to the default
    if (value->empty() || value->size() > 18 ||
        !std::all_of(value->begin(), value->end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Status::BadRequest(key + " must be a non-negative integer");
    }
    *shown = *value;
    return Status::OK();
  });
  // Read-only: what the options fixed at startup.
  std::string origins;
  for (const std::string& o : options_.cors_origins) origins += (origins.empty() ? "" : ",") + o;
  config_.Define("httpd", "enable_cors", options_.cors_origins.empty() ? "false" : "true");
  config_.Define("cors", "origins", origins);
  // [chttpd_auth]: the startup options', read-only, and public_fields
  // (couch_users_db: which fields of a user doc others may read; unset by
  // default, as in CouchDB), live and read per request.
  config_.DefineSection("chttpd_auth",
                        {{"timeout", std::to_string(options_.session_timeout_s)}, {"require_valid_user", "false"}},
                        [](const std::string& key, const std::string* value, std::string* shown) {
    if (key != "public_fields") {
      return Status::BadRequest("settee cannot change [chttpd_auth] " + key +
                                " while running: set it with `settee serve` options and restart");
    }
    if (value != nullptr) *shown = *value;
    return Status::OK();
  });
  config_.Define("couchdb", "uuid", store_->uuid());
  config_.Define("couchdb", "max_document_size", std::to_string(store_->options().max_document_size));
  config_.Define("couchdb", "single_node", "true");
  config_.Define("uuids", "max_count", std::to_string(options_.max_uuids));
  config_.Define("query_server_config", "os_process_timeout", std::to_string(options_.view_timeout_ms));
  config_.Define("couchdb", "file_compression", "snappy");
}

CouchServer::~CouchServer() = default;

void CouchServer::Start() {
  std::vector<std::function<void()>> hooks;
  hooks.swap(start_hooks_);
  for (auto& hook : hooks) hook();
}

void CouchServer::SetChangesFilter(std::string name, ChangesFilterFactory factory) {
  // A later registration replaces an earlier one (an extension over a
  // built-in such as Mango's _selector).
  for (auto& [n, f] : changes_filters_) {
    if (n == name) {
      f = std::move(factory);
      return;
    }
  }
  changes_filters_.emplace_back(std::move(name), std::move(factory));
}

const ChangesFilterFactory* CouchServer::FindChangesFilter(std::string_view filter) const {
  const ChangesFilterFactory* wildcard = nullptr;
  for (const auto& [name, factory] : changes_filters_) {
    if (name == filter) return &factory;
    if (name == "*") wildcard = &factory;
  }
  // Design-doc filters are "ddoc/name"; built-in ones start with '_'.
  if (!filter.empty() && filter[0] != '_' && filter.find('/') != std::string_view::npos) {
    return wildcard;
  }
  return nullptr;
}

std::string CouchServer::ActiveTasksJson() {
  std::string out = "[";
  {
    std::lock_guard<std::mutex> lk(tasks_mu_);
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (i > 0) out += ",";
      out += "{" + tasks_[i].json + "}";
    }
  }
  for (const TaskSource& source : task_sources_) {
    for (const std::string& task : source()) {
      if (out.size() > 1) out += ",";
      out += task;
    }
  }
  out += "]";
  return out;
}

void CouchServer::AddTaskSource(TaskSource source) { task_sources_.push_back(std::move(source)); }

void CouchServer::TaskStarted(const std::string& json_without_braces, uint64_t* id, const Database* db) {
  std::lock_guard<std::mutex> lk(tasks_mu_);
  *id = next_task_id_++;
  tasks_.push_back(Task{*id, json_without_braces, db});
}

void CouchServer::TaskFinished(uint64_t id) {
  std::lock_guard<std::mutex> lk(tasks_mu_);
  tasks_.erase(std::remove_if(tasks_.begin(), tasks_.end(), [id](const Task& t) { return t.id == id; }),
               tasks_.end());
}

bool CouchServer::TaskRunningOn(const Database* db) {
  std::lock_guard<std::mutex> lk(tasks_mu_);
  return std::any_of(tasks_.begin(), tasks_.end(), [db](const Task& t) { return t.db == db; });
}

bool CouchServer::ApplyCors(RequestContext& ctx) {
  if (options_.cors_origins.empty()) return false;
  const std::string* origin = ctx.req.Header("origin");
  if (origin == nullptr) return false;
  bool allowed = false;
  for (const std::string& o : options_.cors_origins) {
    allowed = allowed || o == "*" || o == *origin;
  }
  if (!allowed) return false;
  ctx.res.AddHeader("Access-Control-Allow-Origin", *origin);
  ctx.res.AddHeader("Access-Control-Allow-Credentials", "true");
  ctx.res.AddHeader("Vary", "Origin");
  if (ctx.req.method == "OPTIONS" && ctx.req.Header("access-control-request-method") != nullptr) {
    ctx.res.AddHeader("Access-Control-Allow-Methods", kCorsAllowMethods);
    ctx.res.AddHeader("Access-Control-Allow-Headers", kCorsAllowHeaders);
    ctx.res.AddHeader("Access-Control-Max-Age", "600");
    ctx.res.Send(204, "", "");
    return true;
  }
  ctx.res.AddHeader("Access-Control-Expose-Headers", kCorsExposeHeaders);
  return false;
}

namespace {

// CouchDB's maybe_decompress for a body read whole: gzip is decoded (and
// the header dropped, so no handler decodes it again), identity or none is
// kept, anything else is 415.
Status DecodeRequestBody(http::HttpRequest& req, uint64_t max_bytes) {
  auto header = std::find_if(req.headers.begin(), req.headers.end(),
                             [](const auto& h) { return h.first == "content-encoding"; });
  if (header == req.headers.end()) return Status::OK();
  std::string encoding = header->second;
  std::transform(encoding.begin(), encoding.end(), encoding.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (encoding.empty() || encoding == "identity") return Status::OK();
  if (encoding != "gzip") {
    return Status(Status::Code::kBadContentType, header->second + " is not a supported content encoding.");
  }
  std::string decoded;
  GzipInflater inflater;
  bool too_big = false;
  bool ok = inflater.Feed(req.body, [&](std::string_view piece) {
    if (decoded.size() + piece.size() > max_bytes) {
      too_big = true;
      return false;
    }
    decoded.append(piece);
    return true;
  }, &too_big);
  if (too_big) return Status(Status::Code::kTooLarge, "the decoded request body is too large");
  if (!ok || !inflater.done()) return Status::BadRequest("Request body is not properly gzipped.");
  req.body = std::move(decoded);
  req.headers.erase(header);
  return Status::OK();
}

}  // namespace

namespace {

// What CouchDB's chttpd_auth_request checks in _users before any endpoint,
// for a requester who is not a server admin: _all_docs and _changes are the
// server admins' (401 even for a logged-in user, CouchDB's require_admin
// answers unauthorized), anything else needs membership per _security as
// in any database. A member who is not a db admin may then use the
// document endpoints, which apply CouchDB's per-document rules
// (PrepareUserDoc, CheckUserDocRead: sign up, one's own doc only);
// endpoints reading many documents at once, which settee does not filter
// per document, stay the admins'.
Status CheckUsersDbRequest(RequestContext& ctx, const std::vector<std::string>& segments) {
  if (segments.size() < 2) return Status::OK();  // the database itself: its endpoints check
  const std::string& what = segments[1];
  if (what == "_all_docs" || what == "_changes") return Status::Unauthorized("You are not a server admin.");
  auto db = ctx.server.store()->OpenDatabase(kUsersDbName);
  if (!db.ok()) return Status::OK();  // the endpoint answers
  Status s = ctx.CheckAccess(**db, false);
  if (!s.ok() || ctx.CheckAccess(**db, true).ok()) return s;
  if (what == "_design") {
    // Writes meet the endpoints' db-admin check; reads, attachments too, this.
    bool read = ctx.req.method == "GET" || ctx.req.method == "HEAD";
    return read ? CheckUserDocRead(ctx.user, "_design/") : Status::OK();
  }
  if (what == "_bulk_docs" || what == "_security" || what == "_local") return Status::OK();
  if (what[0] == '_') {
    std::string reason = "settee serves /_users/" + what + " to admins only";
    return ctx.user.name.empty() ? Status::Unauthorized(reason) : Status::Forbidden(reason);
  }
  // A document itself, or an attachment read: the endpoint reads it as
  // after_doc_read lets the requester (UsersDocReadFields: one's own, or
  // another's with public fields left). An attachment written: its
  // document's owner's only (before_doc_update's 404 for another's).
  if (segments.size() == 2 || ctx.req.method == "GET" || ctx.req.method == "HEAD") return Status::OK();
  return CheckUserDocRead(ctx.user, what);
}

}  // namespace

Status CouchServer::Dispatch(RequestContext& ctx) {
  if (ApplyCors(ctx)) return Status::OK();

  std::string refreshed;
  auto user = auth_.Authenticate(ctx.req, &refreshed);
  if (!user.ok()) return user.status();
  ctx.user = std::move(*user);
  if (!refreshed.empty()) ctx.res.AddHeader("Set-Cookie", refreshed);

  std::vector<std::string> segments;
  if (!SplitPath(ctx.req.path, &segments)) {
    return Status::BadRequest("Malformed percent-encoding in the URL path");
  }
  Router::Match match;
  switch (router_.Find(ctx.req.method, segments, &match)) {
    case Router::Outcome::kFound:
      break;
    case Router::Outcome::kNotFound:
      return Status::NotFound("missing");
    case Router::Outcome::kMethodNotAllowed:
      ctx.res.AddHeader("Allow", match.allowed);
      SendHttpError(ctx.res, 405, "method_not_allowed", "Only " + match.allowed + " allowed");
      return Status::OK();
  }
  ctx.params = std::move(match.params);
  if (!segments.empty() && segments[0] == kUsersDbName && !ctx.user.IsAdmin()) {
    Status s = CheckUsersDbRequest(ctx, segments);
    if (!s.ok()) return s;
  }
  // chttpd_auth_request keeps _replicator's _all_docs and _changes for
  // server admins too (require_admin: 401 even for a logged-in user); its
  // documents are read one by one, through after_doc_read.
  if (segments.size() >= 2 && segments[0] == replication::kReplicatorDbName && !ctx.user.IsAdmin() &&
      (segments[1] == "_all_docs" || segments[1] == "_changes")) {
    return Status::Unauthorized("You are not a server admin.");
  }
  // Attachment uploads (the streamed routes) decode their own body, however
  // it was read: one path, so Content-MD5 (of the bytes sent), the limit (on
  // the decoded attachment) and the errors do not depend on the body's size.
  if (ctx.req.body_reader == nullptr && !ctx.req.body.empty() &&
      match.body_mode != Router::BodyMode::kStreamed) {
    Status s = DecodeRequestBody(ctx.req, options_.max_decoded_body_bytes);
    if (!s.ok()) return s;
  }
  return (*match.handler)(ctx);
}

void CouchServer::Handle(http::HttpRequest& request, http::HttpResponse& response) {
  auto start = std::chrono::steady_clock::now();
  RequestContext ctx(*this, request, response);
  Status s;
  try {
    s = Dispatch(ctx);
  } catch (const std::bad_alloc&) {
    s = Status::Internal("out of memory");
  } catch (const std::exception& e) {
    s = Status::Internal(e.what());
  }
  if (!s.ok()) {
    if (!response.started()) {
      SendStatusError(response, s);
    } else {
      // Headers already went out (a stream); all we can do is end it.
      response.CloseAfterResponse();
    }
    if (s.code() == Status::Code::kInternal || s.code() == Status::Code::kIOError ||
        s.code() == Status::Code::kCorruption) {
      LogError("%s %s: %s", request.method.c_str(), request.url.c_str(), s.ToString().c_str());
    }
  }
  LogLevel level = options_.log_requests ? LogLevel::kInfo : LogLevel::kDebug;
  if (LogEnabled(level)) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                    .count();
    Log(level, "%s %s %s %d %.3fms", request.peer.c_str(), request.method.c_str(),
        request.url.c_str(), response.status(), ms);
  }
}

bool CouchServer::StreamsBody(const http::HttpRequest& head) {
  if (head.method != "PUT") return false;
  std::vector<std::string> segments;
  Router::Match match;
  if (!SplitPath(head.path, &segments) ||
      router_.Find(head.method, segments, &match) != Router::Outcome::kFound) {
    return false;
  }
  switch (match.body_mode) {
    case Router::BodyMode::kBuffered:
      return false;
    case Router::BodyMode::kStreamed:
      return true;
    case Router::BodyMode::kStreamedIfMultipart:
      return head.ContentType() == "multipart/related";
  }
  return false;
}

void CouchServer::HandleParseError(int status, const std::string& reason,
                                   http::HttpResponse& response) {
  SendHttpError(response, status, ErrorNameForHttpStatus(status), reason);
  LogInfo("rejected request: %d %s", status, reason.c_str());
}

}  // namespace settee
