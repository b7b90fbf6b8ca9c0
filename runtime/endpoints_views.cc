#include "runtime/endpoints_views.h"

#include "runtime/endpoint_helpers.h"
#include "storage/views.h"
#include "util/json.h"

namespace settee {

namespace {

using Functions = std::shared_ptr<views::ViewFunctions>;

// The options of a POST body or of one /queries object as query-string
// parameters: CouchDB parses a decoded body with parse_params(.., [decoded]),
// which checks JSON values by their JSON type (a "10" is no integer), so the
// _all_docs family's reading of a body is used; its `keys` is carried as JSON.
Status ObjectToParams(const json::Value& object, QueryParams* out) {
  Status s = ObjectOptionsToParams(object, out);
  if (!s.ok()) return s;
  if (auto k = object.FindMember("keys"); k != object.MemberEnd()) {
    out->emplace_back("keys", json::Serialize(k->value));
  }
  return Status::OK();
}

// A POST's options: the body's, then the query string's over them
// (couch_mrview_http:parse_body_and_query parses the body first).
Status BodyThenQuery(RequestContext& ctx, const json::Value& body, json::Document* out) {
  QueryParams own;
  Status s = ObjectToParams(body, &own);
  if (!s.ok()) return s;
  return views::QueryStringToOptions(LayerParams(own, ctx.req.params), out);
}

// One object of /queries: its options over the query string's
// (couch_mrview_http:multi_query_view parses each over the query string's
// args, which lose their `keys`).
Status QueryThenObject(RequestContext& ctx, const json::Value& object, json::Document* out) {
  QueryParams outer;
  for (const auto& p : ctx.req.params) {
    if (p.first != "keys") outer.push_back(p);
  }
  QueryParams own;
  Status s = ObjectToParams(object, &own);
  if (!s.ok()) return s;
  return views::QueryStringToOptions(LayerParams(outer, own), out);
}

Status RunQuery(RequestContext& ctx, Database& db, const Functions& fns, const std::string& ddoc,
                const std::string& view, const json::Value& options, std::string* out) {
  auto q = views::ParseViewQuery(options);
  if (!q.ok()) return q.status();
  ReplicatorReadFilter filter(ctx, db);
  if (filter.active()) {
    q->after_read = [&filter](std::string_view docid, std::string* doc) { filter.Apply(docid, doc); };
  }
  Store* store = ctx.server.store();
  return ctx.server.workers().Run(
      [&] { return views::Query(*store, db, fns.get(), ddoc, view, *q, out); });
}

Status QueryView(RequestContext& ctx, const Functions& fns) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  json::Document options;
  Status s;
  if (ctx.req.method == "POST") {
    json::Document body;
    s = ctx.ParseObjectBody(&body);
    if (!s.ok()) return s;
    // chttpd_view:handle_view_req's checks of the body, before any option.
    if (body.HasMember("queries")) {
      return Status::BadRequest("The `queries` parameter is no longer supported at this endpoint");
    }
    if (auto k = body.FindMember("keys"); k != body.MemberEnd() && !k->value.IsArray()) {
      return Status::BadRequest("`keys` member must be an array.");
    }
    s = BodyThenQuery(ctx, body, &options);
  } else {
    s = views::QueryStringToOptions(ctx.req.params, &options);
  }
  if (!s.ok()) return s;
  std::string out;
  s = RunQuery(ctx, **db, fns, ctx.params[1], ctx.params[2], options, &out);
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

// {"queries":[{options}..]} -> {"results":[answer..]}
Status QueryViewMulti(RequestContext& ctx, const Functions& fns) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  auto queries = body.FindMember("queries");
  if (queries == body.MemberEnd() || !queries->value.IsArray()) {
    return Status(Status::Code::kQueryParseError, "`queries` member must be an array.");
  }
  std::string out = "{\"results\":[";
  bool first = true;
  for (auto& q : queries->value.GetArray()) {
    if (!q.IsObject()) return Status(Status::Code::kQueryParseError, "Each query must be a JSON object");
    json::Document options;
    s = QueryThenObject(ctx, q, &options);
    if (!s.ok()) return s;
    std::string one;
    s = RunQuery(ctx, **db, fns, ctx.params[1], ctx.params[2], options, &one);
    if (!s.ok()) return s;
    if (!first) out.push_back(',');
    first = false;
    out += one;
  }
  out += "]}";
  return ctx.SendJson(200, out);
}

Status TempView(RequestContext& ctx, const Functions& fns) {
  auto db = ctx.OpenDb(/*admin=*/true);
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  auto map = body.FindMember("map");
  if (map == body.MemberEnd() || !map->value.IsString()) {
    return Status(Status::Code::kBadRequest, "`map` must be a string");
  }
  std::string reduce;
  if (auto r = body.FindMember("reduce"); r != body.MemberEnd() && !r->value.IsNull()) {
    if (!r->value.IsString()) return Status(Status::Code::kBadRequest, "`reduce` must be a string");
    reduce = std::string(json::View(r->value));
  }
  std::string language = "javascript";
  if (auto l = body.FindMember("language"); l != body.MemberEnd() && l->value.IsString()) {
    language = std::string(json::View(l->value));
  }
  if (language != "javascript") {
    return Status(Status::Code::kBadRequest, "unsupported language: " + language);
  }
  json::Document options;
  s = views::QueryStringToOptions(ctx.req.params, &options);
  if (!s.ok()) return s;
  if (auto k = body.FindMember("keys"); k != body.MemberEnd()) {
    options.AddMember("keys", json::Value(k->value, options.GetAllocator()), options.GetAllocator());
  }
  auto q = views::ParseViewQuery(options);
  if (!q.ok()) return q.status();
  views::DesignDoc temp =
      views::TempDesignDoc(language, std::string(json::View(map->value)), std::move(reduce));
  std::string out;
  s = ctx.server.workers().Run([&] { return views::TempQuery(**db, fns.get(), temp, *q, &out); });
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

Status ViewCleanup(RequestContext& ctx) {
  auto db = ctx.OpenDb(/*admin=*/true);
  if (!db.ok()) return db.status();
  Status s = ctx.CheckJsonBody(/*require_json_type=*/true);
  if (!s.ok() && s.code() == Status::Code::kBadContentType) return s;
  Store* store = ctx.server.store();
  s = ctx.server.workers().Run([&] { return views::Cleanup(*store, **db); });
  if (!s.ok()) return s;
  return ctx.SendJson(202, R"({"ok":true})");
}

Status DesignInfo(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  std::string out;
  Status s = views::Info(*ctx.server.store(), **db, ctx.params[1], &out);
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

// A changes filter that maps each change's document through `code` (one
// map function) and keeps those that emit: filter=_view runs the view's map,
// filter=ddoc/name wraps the filter function in a map that emits when it
// returns true, with the request object CouchDB passes (query, method,
// headers, body, userCtx, secObj).
Result<ChangesFilter> MapFilter(const Functions& fns, views::MapCode code) {
  ChangesFilter f;
  f.needs_docs = true;
  // One Map() per chunk of rows (the pool splits it over its threads), run
  // by the changes endpoint on a worker, never per row on the loop thread.
  f.accept_batch = [fns, code = std::move(code)](const std::vector<ChangeRow>& rows,
                                                 std::vector<bool>* pass) {
    pass->assign(rows.size(), false);
    std::vector<std::string> docs;
    docs.reserve(rows.size());
    for (const ChangeRow& r : rows) docs.push_back(r.doc);
    std::string out;
    Status s = fns->Map(code, docs, &out);
    if (!s.ok()) return s;
    json::Document d;
    s = json::Parse(out, &d);
    if (!s.ok()) return s;
    if (!d.IsArray() || d.Size() != rows.size()) return Status::Internal("filter results do not match");
    // Per document [[emits..]]: anything emitted passes; a deleted
    // document (no body) has no emits.
    for (rapidjson::SizeType i = 0; i < d.Size(); ++i) {
      const json::Value& per = d[i];
      (*pass)[i] = per.IsArray() && per.Size() > 0 && per[0].IsArray() && per[0].Size() > 0;
    }
    return Status::OK();
  };
  return f;
}

Result<ChangesFilter> ViewFilter(RequestContext& ctx, Database& db, const Functions& fns,
                                 const json::Value* body) {
  const std::string* view = ctx.Param("view");
  std::string name;
  if (view != nullptr) {
    name = *view;
  } else if (body != nullptr && body->IsObject() && body->HasMember("view") && (*body)["view"].IsString()) {
    name = std::string(json::View((*body)["view"]));
  }
  size_t slash = name.find('/');
  if (slash == std::string::npos) {
    return Status::BadRequest("`view` filter parameter is not provided.");
  }
  auto ddoc = db.Get("_design/" + name.substr(0, slash));
  if (!ddoc.ok()) return ddoc.status();
  auto parsed = views::ParseDesignDoc("_design/" + name.substr(0, slash), *ddoc);
  if (!parsed.ok()) return parsed.status();
  const views::ViewDef* v = parsed->Find(name.substr(slash + 1));
  if (v == nullptr) return Status::NotFound("missing_named_view");
  views::MapCode code = parsed->code;
  code.maps = {parsed->code.maps[v->map_index]};
  return MapFilter(fns, std::move(code));
}

Result<ChangesFilter> DesignFilter(RequestContext& ctx, Database& db, const Functions& fns,
                                   const std::string& filter, const json::Value* body) {
  size_t slash = filter.find('/');
  std::string id = "_design/" + filter.substr(0, slash);
  auto ddoc = db.Get(id);
  if (!ddoc.ok()) return ddoc.status();
  json::Document d;
  Status s = json::Parse(*ddoc, &d);
  if (!s.ok()) return s;
  auto filters = d.FindMember("filters");
  std::string name = filter.substr(slash + 1);
  if (filters == d.MemberEnd() || !filters->value.IsObject() || !filters->value.HasMember(name.c_str()) ||
      !filters->value[name.c_str()].IsString()) {
    return Status::NotFound("missing json key: " + name);
  }
  // The request object of CouchDB's filter functions.
  std::string req = "{\"method\":";
  json::AppendQuoted(&req, ctx.req.method);
  req += ",\"query\":{";
  bool first = true;
  for (const auto& [k, v] : ctx.req.params) {
    if (!first) req += ',';
    first = false;
    json::AppendQuoted(&req, k);
    req += ':';
    json::AppendQuoted(&req, v);
  }
  req += "},\"headers\":{},\"body\":";
  req += body != nullptr ? json::Serialize(*body) : std::string("\"undefined\"");
  req += ",\"userCtx\":{\"db\":";
  json::AppendQuoted(&req, db.name());
  req += ",\"name\":";
  req += ctx.user.name.empty() ? std::string("null") : json::Quote(ctx.user.name);
  req += ",\"roles\":";
  json::AppendStringArray(&req, ctx.user.roles);
  req += "},\"secObj\":" + db.Security() + "}";
  views::MapCode code;
  code.ddoc = *ddoc;
  code.maps = {"function (doc) { if ((" + std::string(json::View(filters->value[name.c_str()])) +
               "\n)(doc, " + req + ")) emit(null, null); }"};
  return MapFilter(fns, std::move(code));
}

}  // namespace

namespace {

class OffLoopValidate final : public validation::ValidateFunctions {
 public:
  OffLoopValidate(WorkerPool& workers, std::shared_ptr<validation::ValidateFunctions> inner)
      : workers_(workers), inner_(std::move(inner)) {}

  Status Validate(const validation::ValidatorSet& set,
                  const std::vector<validation::ValidateCall>& calls, std::string_view user_ctx,
                  std::string_view sec_obj, std::vector<Status>* results) override {
    if (WorkerPool::OnWorkerThread()) return inner_->Validate(set, calls, user_ctx, sec_obj, results);
    return workers_.Run([&] { return inner_->Validate(set, calls, user_ctx, sec_obj, results); });
  }
  Status Compile(const std::vector<std::string>& sources, size_t* failed) override {
    if (WorkerPool::OnWorkerThread()) return inner_->Compile(sources, failed);
    return workers_.Run([&] { return inner_->Compile(sources, failed); });
  }

 private:
  WorkerPool& workers_;
  const std::shared_ptr<validation::ValidateFunctions> inner_;
};

}  // namespace

void InstallValidateFunctions(CouchServer& server,
                              std::shared_ptr<validation::ValidateFunctions> functions) {
  validation::SetValidateFunctions(
      *server.store(), std::make_shared<OffLoopValidate>(server.workers(), std::move(functions)));
}

void RegisterViewEndpoints(CouchServer& server, std::shared_ptr<views::ViewFunctions> functions) {
  server.SetViewFunctions(functions);
  Router& r = server.router();
  r.Add("GET,HEAD,POST", "/{db}/_design/{ddoc}/_view/{view}",
        [functions](RequestContext& c) { return QueryView(c, functions); });
  r.Add("POST", "/{db}/_design/{ddoc}/_view/{view}/queries",
        [functions](RequestContext& c) { return QueryViewMulti(c, functions); });
  r.Add("GET,HEAD", "/{db}/_design/{ddoc}/_info", DesignInfo);
  r.Add("POST", "/{db}/_view_cleanup", ViewCleanup);
  r.Add("POST", "/{db}/_temp_view", [functions](RequestContext& c) { return TempView(c, functions); });
  server.SetChangesFilter("_view", [functions](RequestContext& c, Database& db, const std::string&,
                                               const json::Value* body) {
    return ViewFilter(c, db, functions, body);
  });
  server.SetChangesFilter("*", [functions](RequestContext& c, Database& db, const std::string& filter,
                                           const json::Value* body) {
    return DesignFilter(c, db, functions, filter, body);
  });
}

}  // namespace settee
