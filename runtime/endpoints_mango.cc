// Mango (storage/mango.h) over HTTP:
//   POST   /db/_index                          (db admins: it writes a design doc)
//   GET    /db/_index
//   DELETE /db/_index/{ddoc}/{type}/{name}     (db admins; type json)
//   POST   /db/_find
//   POST   /db/_explain
//   GET|POST /db/_changes?filter=_selector     (the selector in the POST body)
// Finds run on the worker pool: building an index maps every document.
#include <algorithm>
#include <array>

#include "runtime/couch_error.h"
#include "runtime/couch_server.h"
#include "runtime/endpoint_helpers.h"
#include "storage/mango.h"
#include "storage/mango_selector.h"

namespace settee {

namespace {

// mango_opts:validate_find and validate_idx_create: a body member that is
// none of CouchDB's options is 400 invalid_key (a misplaced
// partial_filter_selector must not make a plain index). HTTP only: PouchDB's
// own find() and createIndex() ignore unknown members. The first unknown
// member, or empty; a body without `required` is left to the parser, as
// CouchDB reports a missing required key first.
template <size_t N>
std::string UnknownKey(std::string_view body, const char* required, const std::array<std::string_view, N>& known) {
  json::Document d;
  if (!json::Parse(body, &d).ok() || !d.IsObject() || !d.HasMember(required)) return {};
  for (auto& m : d.GetObject()) {
    if (std::find(known.begin(), known.end(), json::View(m.name)) == known.end()) {
      return std::string(json::View(m.name));
    }
  }
  return {};
}

Status InvalidKey(RequestContext& ctx, const std::string& key) {
  return ctx.SendJson(400, ErrorJson("invalid_key", "Invalid key " + key + " for this request."));
}

constexpr std::array<std::string_view, 6> kIndexKeys = {"index", "type", "name", "ddoc", "w", "partitioned"};
// allow_fallback: CouchDB 3.4's.
constexpr std::array<std::string_view, 15> kFindKeys = {
    "selector", "use_index", "bookmark", "limit", "skip", "sort", "fields", "partition",
    "r", "conflicts", "stale", "update", "stable", "execution_stats", "allow_fallback"};

Status CreateIndex(RequestContext& ctx) {
  auto db = ctx.OpenDb(/*admin=*/true);
  if (!db.ok()) return db.status();
  Status s = ctx.CheckJsonBody();
  if (!s.ok()) return s;
  if (std::string bad = UnknownKey(ctx.req.body, "index", kIndexKeys); !bad.empty()) return InvalidKey(ctx, bad);
  std::string out;
  Store* store = ctx.server.store();
  // Building the index maps every document: off the event loop.
  s = ctx.server.workers().Run([&] { return mango::CreateIndex(*store, **db, ctx.req.body, &out); });
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

Status ListIndexes(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  std::string out;
  Status s = mango::ListIndexes(**db, &out);
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

Status DeleteIndex(RequestContext& ctx) {
  auto db = ctx.OpenDb(/*admin=*/true);
  if (!db.ok()) return db.status();
  // /{db}/_index/{ddoc}/{type}/{name}: mango_httpd matches the type too,
  // and settee has json indexes only.
  if (ctx.params[2] != "json") return Status::NotFound("Index not found");
  std::string out;
  Status s = ctx.server.RunWrite([&] { return mango::DeleteIndex(**db, ctx.params[1], ctx.params[3], &out); });
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

Status Find(RequestContext& ctx, bool explain) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  Status s = ctx.CheckJsonBody();
  if (!s.ok()) return s;
  if (std::string bad = UnknownKey(ctx.req.body, "selector", kFindKeys); !bad.empty()) return InvalidKey(ctx, bad);
  std::string out;
  Store* store = ctx.server.store();
  ReplicatorReadFilter filter(ctx, **db);
  views::AfterDocRead after_read;
  if (filter.active()) {
    after_read = [&filter](std::string_view docid, std::string* doc) { filter.Apply(docid, doc); };
  }
  s = ctx.server.workers().Run([&] {
    return explain ? mango::Explain(*store, **db, ctx.req.body, &out)
                   : mango::Find(*store, **db, ctx.req.body, &out, after_read);
  });
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

// _changes?filter=_selector with {"selector": {..}} in the POST body: the
// changes whose winning revision the selector matches.
Result<ChangesFilter> SelectorFilter(RequestContext&, Database&, const std::string&,
                                     const json::Value* body) {
  const json::Value* sel = nullptr;
  if (body != nullptr && body->IsObject()) {
    if (auto it = body->FindMember("selector"); it != body->MemberEnd()) sel = &it->value;
  }
  if (sel == nullptr) return Status::BadRequest("Selector must be specified in POST payload");
  auto parsed = mango::Selector::Parse(*sel);
  if (!parsed.ok()) return parsed.status();
  ChangesFilter f;
  f.needs_docs = true;
  f.accept = [selector = std::move(parsed).value()](const ChangeRow& row) {
    json::Document doc;
    return json::Parse(row.doc, &doc).ok() && doc.IsObject() && selector.Matches(doc);
  };
  return f;
}

}  // namespace

void RegisterMangoEndpoints(CouchServer& server) {
  Router& r = server.router();
  r.Add("POST", "/{db}/_index", CreateIndex);
  r.Add("GET,HEAD", "/{db}/_index", ListIndexes);
  // Any type: a text index's path is "Index not found", not a document's
  // attachment.
  r.Add("DELETE", "/{db}/_index/{ddoc}/{type}/{name}", DeleteIndex);
  r.Add("DELETE", "/{db}/_index/_design/{ddoc}/{type}/{name}", DeleteIndex);
  r.Add("POST", "/{db}/_find", [](RequestContext& c) { return Find(c, false); });
  r.Add("POST", "/{db}/_explain", [](RequestContext& c) { return Find(c, true); });
  server.SetChangesFilter("_selector", SelectorFilter);
}

}  // namespace settee
