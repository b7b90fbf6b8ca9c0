// CouchServer: the CouchDB HTTP API over a settee Store. It is the
// HttpHandler of an HttpServer: for each request it applies CORS, identifies
// the user, routes, runs the endpoint, maps a returned error Status to a
// CouchDB error response and logs the exchange.
//
// Endpoints live in facet files, each registering its routes:
//   endpoints_server.cc    /, /_all_dbs, /_uuids, /_up, /_active_tasks, /_session
//   endpoints_database.cc  /db, _all_docs, _bulk_docs, _bulk_get, _revs_diff, ...
//   endpoints_document.cc  /db/docid, /db/_design/x, /db/_local/x
//   endpoints_changes.cc   /db/_changes (normal, longpoll, continuous, eventsource)
//   endpoints_purge.cc     /db/_purge, /db/_purged_infos_limit
//   endpoints_node.cc      /_membership, /_node/{node}/_config (NodeConfig)
// Other modules mount theirs with router().Add() and SetChangesFilter()
// before the server starts (for `settee serve`: AddServeExtension() in
// runtime/serve_command.h).
//
// Thread safety: after construction and route registration, Handle() runs
// concurrently on every loop thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/auth.h"
#include "runtime/http_server.h"
#include "runtime/node_config.h"
#include "runtime/router.h"
#include "runtime/users_db.h"
#include "runtime/worker_pool.h"
#include "settee/database.h"
#include "settee/store.h"
#include "util/json.h"

namespace settee::views {
class ViewFunctions;
}  // namespace settee::views

namespace settee {

struct CouchServerOptions {
  // Server admins (name, password). Empty = admin party.
  std::vector<std::pair<std::string, std::string>> admins;
  // Key for AuthSession cookies; random per process when empty.
  std::string cookie_secret;
  int64_t session_timeout_s = 600;
  // Origins allowed by CORS ("*" for any); empty disables CORS headers.
  std::vector<std::string> cors_origins;
  // Threads for blocking work (fsync'd writes, compaction).
  int worker_threads = 2;
  // Log every request at info level (otherwise at debug level).
  bool log_requests = true;
  // Largest count accepted by /_uuids.
  int max_uuids = 1000;
  // Design-document code (views' map/reduce, filters, validate_doc_update),
  // for the serve extension that runs it (runtime/main.cc): isolate
  // threads (0: one per core, at most 16) and the time budget of one call
  // (CouchDB's os_process_timeout).
  int view_threads = 0;
  int view_timeout_ms = 5000;
  // The node's name in /_membership and /_node/{node} (which also takes
  // "_local"): what a CouchDB started without a node name calls itself.
  std::string node_name = "nonode@nohost";
  // Refuse to remove the last server admin through /_node/../_config
  // (`settee serve` bound beyond loopback, where admin party is refused).
  bool keep_an_admin = false;
  // A request body read whole and sent with Content-Encoding: gzip is
  // decoded before its handler runs, as CouchDB does; one that decodes past
  // this many bytes is 413 (`settee serve`: --max-request-size).
  uint64_t max_decoded_body_bytes = 64u << 20;
};

class CouchServer;

// Everything an endpoint needs about one request.
class RequestContext {
 public:
  RequestContext(CouchServer& server, http::HttpRequest& req, http::HttpResponse& res)
      : server(server), req(req), res(res) {}

  CouchServer& server;
  http::HttpRequest& req;
  http::HttpResponse& res;
  std::vector<std::string> params;  // route captures
  UserCtx user;

  // The database named by params[0], after checking the name, existence and
  // the user's access (members; db admins when `admin`).
  Result<std::shared_ptr<Database>> OpenDb(bool admin = false);
  // Access check alone for an open database.
  Status CheckAccess(Database& db, bool admin);
  // Requires a server admin.
  Status RequireServerAdmin();

  // Sends a JSON body with CouchDB's headers. Always returns OK so endpoints
  // can `return ctx.SendJson(...)`.
  Status SendJson(int status, std::string_view body);

  // The checks ParseBody() makes before parsing: a JSON content type (if
  // `require_json_type`) and a non-empty body.
  Status CheckJsonBody(bool require_json_type = true) const;
  // Parses the request body as JSON. kBadContentType unless the content type
  // is JSON (when `require_json_type`), kBadRequest on malformed JSON.
  Status ParseBody(json::Document* doc, bool require_json_type = true);
  // ParseBody(), then kBadRequest unless the body is a JSON object.
  Status ParseObjectBody(json::Document* doc);

  //////// Query parameters:
  // The first value of a repeated parameter, as chttpd:qs_value reads one.
  const std::string* Param(std::string_view name) const { return req.Param(name); }
  // The last value, as the parsers that fold over the whole query string
  // (chttpd_db:parse_doc_query) end with it.
  const std::string* LastParam(std::string_view name) const;
  // A document read's flag (revs, conflicts, attachments, ...) as
  // chttpd_db:parse_doc_query reads it: on when any of its values is exactly
  // "true"; another value, or a later "false", turns nothing off.
  bool FlagParam(std::string_view name) const;
  // "true" / "false"; anything else is kQueryParseError.
  Status BoolParam(std::string_view name, bool* out) const;
  Status UIntParam(std::string_view name, uint64_t* out) const;
  // One `value` of parameter `name` read as UIntParam reads it.
  static Status UIntValue(std::string_view name, const std::string& value, uint64_t* out);
  // The parameter parsed as JSON; *present says whether it was given.
  Status JsonParam(std::string_view name, json::Document* out, bool* present) const;
};

// A _changes filter contributed by another module (filter=_selector from
// Mango, filter=_view and filter=ddoc/name from the JS views). Built once per
// request; accept() sees each row, with the winner's body in row.doc when
// needs_docs (the endpoint strips it again unless the client asked for docs).
// A filter that runs code elsewhere (JavaScript on isolate threads) gives
// accept_batch instead: the endpoint hands it the rows a chunk at a time on
// the server's worker pool, and it sets (*pass)[i] for rows[i].
struct ChangesFilter {
  bool needs_docs = false;
  std::function<bool(const ChangeRow& row)> accept;
  std::function<Status(const std::vector<ChangeRow>& rows, std::vector<bool>* pass)> accept_batch;
};
// `filter` is the filter= value; `body` the POST body (nullptr for GET).
// Errors are answered as-is (404 for a missing design doc, 400 ...).
using ChangesFilterFactory = std::function<Result<ChangesFilter>(
    RequestContext& ctx, Database& db, const std::string& filter, const json::Value* body)>;

class CouchServer final : public http::HttpHandler {
 public:
  // `store` must outlive the server. Registers the built-in endpoints.
  CouchServer(Store* store, const CouchServerOptions& options);
  ~CouchServer() override;

  // Ends setup: runs the start hooks (background work such as the
  // _replicator watcher), which may use whatever setup registered (the JS
  // view runtime of an extension). Call once, after every extension and
  // before serving.
  void Start();
  // Registers background work for Start() (setup time only).
  void AddStartHook(std::function<void()> hook) { start_hooks_.push_back(std::move(hook)); }

  Store* store() const { return store_; }
  const CouchServerOptions& options() const { return options_; }
  const Authenticator& auth() const { return auth_; }
  Router& router() { return router_; }
  // The node's configuration in CouchDB's terms (/_node/{node}/_config).
  // The server defines what it owns (admins, purge limits, log level...);
  // `settee serve` adds the listener's and the store's settings.
  NodeConfig& config() { return config_; }
  WorkerPool& workers() { return workers_; }

  // Runs a database operation that may block (sync writes, compaction) off
  // the loop thread when the store fsyncs; inline otherwise.
  template <typename F>
  auto RunWrite(F&& fn) -> std::invoke_result_t<F> {
    if (store_->options().sync) return workers_.Run(std::forward<F>(fn));
    return fn();
  }

  // Registers the factory for filter=`name` ("_selector", "_view"), or with
  // name "*" for design-doc filters ("ddoc/name"), replacing any earlier
  // one of that name. Setup time only, like router().Add(). _doc_ids and
  // _design are built in; so is _selector (Mango, endpoints_mango.cc).
  void SetChangesFilter(std::string name, ChangesFilterFactory factory);
  // The factory for a filter= value, or nullptr.
  const ChangesFilterFactory* FindChangesFilter(std::string_view filter) const;

  // Tasks shown by /_active_tasks (compactions in progress). A task may
  // name the database it works on (`db`, not owned: the task's owner keeps
  // it alive until TaskFinished).
  std::string ActiveTasksJson();
  void TaskStarted(const std::string& json_without_braces, uint64_t* id, const Database* db = nullptr);
  void TaskFinished(uint64_t id);
  // Whether a task on `db` (this instance, not a database of the same
  // name created since) is running: POST /{db}/_compact starts one before
  // its 202, and GET /{db} answers `compact_running` from it, which
  // PouchDB's compact() polls until false.
  bool TaskRunningOn(const Database* db);
  // Adds tasks that keep their own state (replication jobs): `source` is
  // called by each ActiveTasksJson() for its JSON objects. Setup time only;
  // it runs on any loop thread.
  using TaskSource = std::function<std::vector<std::string>()>;
  void AddTaskSource(TaskSource source);

  // The JS view runtime, once RegisterViewEndpoints has one (setup time
  // only): filtered replications from local databases run design-document
  // filters with it. Null without the JS runtime.
  void SetViewFunctions(std::shared_ptr<views::ViewFunctions> functions) {
    view_functions_ = std::move(functions);
  }
  const std::shared_ptr<views::ViewFunctions>& view_functions() const { return view_functions_; }

  // http::HttpHandler
  void Handle(http::HttpRequest& request, http::HttpResponse& response) override;
  void HandleParseError(int status, const std::string& reason,
                        http::HttpResponse& response) override;
  // PUTs whose route streams its body (standalone attachments).
  bool StreamsBody(const http::HttpRequest& head) override;

 private:
  // The constructor's: what this server's own options and state are in
  // CouchDB's config sections, and which of them change live.
  void DefineConfig();
  Status Dispatch(RequestContext& ctx);
  // Adds CORS headers; true if the request was a preflight now answered.
  bool ApplyCors(RequestContext& ctx);

  Store* const store_;
  const CouchServerOptions options_;
  UserStore users_;
  Authenticator auth_;
  NodeConfig config_;
  Router router_;
  std::vector<std::pair<std::string, ChangesFilterFactory>> changes_filters_;  // setup only
  std::mutex tasks_mu_;
  uint64_t next_task_id_ = 1;                                  // guarded by tasks_mu_
  struct Task {
    uint64_t id;
    std::string json;  // without braces
    const Database* db;
  };
  std::vector<Task> tasks_;                                     // guarded by tasks_mu_
  std::vector<TaskSource> task_sources_;                        // setup only
  std::shared_ptr<views::ViewFunctions> view_functions_;        // setup only
  std::vector<std::function<void()>> start_hooks_;              // setup only
  // Last, so it is destroyed (its queued work finished) before everything
  // that work may touch.
  WorkerPool workers_;
};

// Route registration, one per facet file.
void RegisterServerEndpoints(CouchServer& server);
void RegisterDatabaseEndpoints(CouchServer& server);
void RegisterDocumentEndpoints(CouchServer& server);
void RegisterChangesEndpoints(CouchServer& server);
// POST /_replicate, /_scheduler/jobs, /_scheduler/docs, the _replicator
// database and replication entries in /_active_tasks.
void RegisterReplicationEndpoints(CouchServer& server);
void RegisterMangoEndpoints(CouchServer& server);  // endpoints_mango.cc
void RegisterPurgeEndpoints(CouchServer& server);  // endpoints_purge.cc
void RegisterNodeEndpoints(CouchServer& server);   // endpoints_node.cc

}  // namespace settee
