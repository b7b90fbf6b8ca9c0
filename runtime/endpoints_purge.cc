// Purge endpoints, as CouchDB 3's chttpd_db answers them:
//   POST    /{db}/_purge                 {"docid": [revs]} -> 201 {"purge_seq":null,"purged":{..}}
//   GET|PUT /{db}/_purged_infos_limit    (and the _purge_infos_limit spelling)
// Database admins only, as purging rewrites history. The [purge] limits
// come from the node's configuration (runtime/node_config.h), so
// PUT /_node/_local/_config/purge/... changes them live.
#include <string>
#include <vector>

#include "runtime/couch_rev.h"
#include "runtime/couch_server.h"
#include "runtime/node_config.h"

namespace settee {

namespace {

Status PostPurge(RequestContext& ctx) {
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  std::vector<PurgeRequest> request;
  size_t nrevs = 0;
  for (auto& m : body.GetObject()) {
    PurgeRequest r;
    r.id.assign(json::View(m.name));
    // CouchDB parses every rev (couch_doc:parse_revs, ParseCouchRev):
    // anything but a list of strings it takes is a bad rev. One no stored
    // revision can be counts toward the limit and purges nothing.
    if (!m.value.IsArray()) return Status::BadRequest("Invalid rev format");
    for (auto& rev : m.value.GetArray()) {
      CouchRev parsed = rev.IsString() ? ParseCouchRev(json::View(rev)) : CouchRev{};
      if (parsed.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
      if (parsed.kind == CouchRev::Kind::kStorable) r.revs.push_back(std::move(parsed.text));
    }
    nrevs += m.value.Size();
    request.push_back(std::move(r));
  }
  const NodeConfig& config = ctx.server.config();
  if (request.size() > config.GetUInt("purge", "max_document_id_number", 100)) {
    return Status::BadRequest("Exceeded maximum number of documents.");
  }
  if (nrevs > config.GetUInt("purge", "max_revisions_number", 1000)) {
    return Status::BadRequest("Exceeded maximum number of revisions.");
  }
  std::vector<PurgeResult> results;
  s = ctx.server.RunWrite([&] { return (*db)->Purge(request, &results); });
  if (!s.ok()) return s;
  std::string out = R"({"purge_seq":null,"purged":{)";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out += ',';
    json::AppendQuoted(&out, results[i].id);
    out += ':';
    json::AppendStringArray(&out, results[i].purged);
  }
  out += "}}";
  return ctx.SendJson(201, out);
}

Status GetPurgedInfosLimit(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  return ctx.SendJson(200, std::to_string((*db)->PurgedInfosLimit()));
}

Status PutPurgedInfosLimit(RequestContext& ctx) {
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = json::Parse(ctx.req.body, &body);  // any content type, as _revs_limit
  if (!s.ok() || !body.IsUint64() || body.GetUint64() < 1) {
    return Status::BadRequest("`purge_infos_limit` must be positive integer");
  }
  s = (*db)->SetPurgedInfosLimit(body.GetUint64());
  if (!s.ok()) return s;
  return ctx.SendJson(200, R"({"ok":true})");
}

}  // namespace

void RegisterPurgeEndpoints(CouchServer& server) {
  Router& r = server.router();
  r.Add("POST", "/{db}/_purge", PostPurge);
  for (const char* path : {"/{db}/_purged_infos_limit", "/{db}/_purge_infos_limit"}) {
    r.Add("GET,HEAD", path, GetPurgedInfosLimit);
    r.Add("PUT", path, PutPurgedInfosLimit);
  }
}

}  // namespace settee
