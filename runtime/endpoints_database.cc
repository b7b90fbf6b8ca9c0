// Database-level endpoints: /db itself, _all_docs (and /queries) and its
// _design_docs / _local_docs siblings, _bulk_docs, _bulk_get, _revs_diff, _missing_revs,
// _compact, _ensure_full_commit, _revs_limit, _security.
#include <algorithm>
#include <ctime>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "replication/replicator_doc_check.h"
#include "runtime/couch_error.h"
#include "runtime/couch_rev.h"
#include "runtime/endpoint_helpers.h"
#include "runtime/log.h"
#include "runtime/users_db.h"
#include "storage/document.h"
#include "util/couch_json.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

////////////////////////////////////////////////////////////////////////////////
// /db

Status PutDb(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  const std::string& name = ctx.params[0];
  if (!IsValidDatabaseName(name)) {
    // Same message as RequestContext::OpenDb gives.
    ctx.params.resize(1);
    auto probe = ctx.OpenDb();
    return probe.status();
  }
  auto db = ctx.server.store()->CreateDatabase(name);
  if (!db.ok()) {
    if (db.status().code() == Status::Code::kFileExists) {
      return Status(Status::Code::kFileExists,
                    "The database could not be created, the file already exists.");
    }
    return db.status();
  }
  // CouchDB 3's default_security = admin_only, written out so that
  // GET _security shows it and a later explicit object replaces it.
  s = (*db)->SetSecurity(kDefaultSecurityJson);
  if (!s.ok()) return s;
  ctx.res.AddHeader("Location", AbsoluteUrl(ctx, "/" + http::PercentEncode(name)));
  return ctx.SendJson(201, R"({"ok":true})");
}

Status DeleteDb(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  if (ctx.req.HasParam("rev")) {
    return Status::BadRequest(
        "You tried to DELETE a database with a ?rev= parameter. Did you mean to DELETE a "
        "document instead?");
  }
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  s = ctx.server.store()->DeleteDatabase(ctx.params[0]);
  if (s.IsNotFound()) return Status::NotFound("Database does not exist.");
  if (!s.ok()) return s;
  return ctx.SendJson(200, R"({"ok":true})");
}

Status GetDb(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  auto info = (*db)->Info();
  if (!info.ok()) return info.status();
  return ctx.SendJson(200, DbInfoJson(*info, ctx.server.TaskRunningOn(db->get())));
}

}  // namespace

std::string DbInfoJson(const DatabaseInfo& i, bool compact_running) {
  return R"({"db_name":)" + json::Quote(i.db_name) +
         // CouchDB 3 gives purge_seq as a string (an opaque clustered
         // sequence); settee's is the count of purge requests.
         R"(,"purge_seq":")" + std::to_string(i.purge_seq) + "\"" +
         R"(,"update_seq":)" + std::to_string(i.update_seq) +
         R"(,"sizes":{"file":)" + std::to_string(i.sizes_file) +
         R"(,"external":)" + std::to_string(i.sizes_external) +
         R"(,"active":)" + std::to_string(i.sizes_active) +
         R"(},"props":{},"doc_del_count":)" + std::to_string(i.doc_del_count) +
         R"(,"doc_count":)" + std::to_string(i.doc_count) +
         R"(,"disk_format_version":8,"compact_running":)" + (compact_running ? "true" : "false") +
         R"(,"cluster":{"q":1,"n":1,"w":1,"r":1},"instance_start_time":"0"})";
}

namespace {

// POST /db: a new document, id from the body or generated.
Status PostDb(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  json::Document doc;
  Status s = ctx.ParseBody(&doc);
  if (!s.ok()) return s;
  if (!doc.IsObject()) return Status::BadRequest("Document must be a JSON object");
  auto id = doc.FindMember("_id");
  if (id != doc.MemberEnd() && id->value.IsString() &&
      json::View(id->value).substr(0, 8) == "_design/") {
    s = ctx.CheckAccess(**db, true);
    if (!s.ok()) return s;
  }
  std::string text = ctx.req.body;
  // The body's _rev read as CouchDB's couch_doc:from_json_obj reads it
  // (ParseCouchRev), as _bulk_docs does: one no stored revision can be is
  // the update's conflict, after the before_doc_update rules below.
  bool names_nothing = false;
  auto rev = doc.FindMember("_rev");
  if (rev != doc.MemberEnd() && rev->value.IsString() &&
      !(id != doc.MemberEnd() && id->value.IsString() && IsLocalDocId(json::View(id->value)))) {
    CouchRev parsed = ParseCouchRev(json::View(rev->value));
    if (parsed.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
    names_nothing = parsed.kind == CouchRev::Kind::kNamesNothing;
    if (!names_nothing && parsed.text != json::View(rev->value)) {
      rev->value = json::StringValue(parsed.text, doc.GetAllocator());
      text = json::Serialize(doc);
    }
  }
  if (ctx.params[0] == kUsersDbName) {
    std::string docid = id != doc.MemberEnd() && id->value.IsString() ? std::string(json::View(id->value)) : "";
    s = PrepareUserDoc(docid, &text, UsersWriterOf(ctx.user, ctx.CheckAccess(**db, true).ok(), **db));
    if (!s.ok()) return s;
  }
  if (ctx.params[0] == replication::kReplicatorDbName) {
    std::string docid = id != doc.MemberEnd() && id->value.IsString() ? std::string(json::View(id->value)) : "";
    s = PrepareReplicatorWrite(ctx, **db, docid, &doc, &text);
    if (!s.ok()) return s;
  }
  if (names_nothing) return Status::Conflict();
  UpdateOptions opts;
  opts.user = &ctx.user;
  auto r = ctx.server.RunWrite([&] { return (*db)->Put("", text, opts); });
  if (!r.ok()) return r.status();
  if (!r->status.ok()) return r->status;
  std::string out;
  AppendUpdateResult(&out, *r, false);
  ctx.res.AddHeader("Location", AbsoluteUrl(ctx, "/" + http::PercentEncode(ctx.params[0]) + "/" +
                                                     EncodeDocIdForPath(r->id)));
  ctx.res.AddHeader("ETag", RevETag(r->rev));
  bool batch = ctx.Param("batch") != nullptr && *ctx.Param("batch") == "ok";
  return ctx.SendJson(batch ? 202 : 201, out);
}

////////////////////////////////////////////////////////////////////////////////
// _all_docs, _design_docs, _local_docs

enum class DocsKind { kAll, kDesign, kLocal };

// One query of the family: `params` stands for its query string, `keys_body`
// for a body's "keys" array (or nullptr). Appends the answer to *out.
Status RunAllDocs(RequestContext& ctx, Database& db, DocsKind kind, QueryParams params,
                  const json::Value* keys_body, std::string* out) {
  http::HttpRequest synthetic;
  synthetic.method = "GET";
  synthetic.params = std::move(params);
  RequestContext sub(ctx.server, synthetic, ctx.res);
  AllDocsOptions opts;
  bool want_update_seq = false;
  Status s = ParseAllDocsOptions(sub, keys_body, &opts, &want_update_seq);
  if (!s.ok()) return s;
  // A design-docs query over the whole namespace already returns every
  // design document: its total_rows needs no second scan.
  const bool whole_design_range = kind == DocsKind::kDesign && !opts.keys && !opts.start_key && !opts.end_key &&
                                  opts.skip == 0 && opts.limit == std::numeric_limits<uint64_t>::max();
  if (kind == DocsKind::kDesign && !opts.keys) {
    // Clamp the range to "_design/" <= id < "_design0".
    const std::string lo = "_design/", hi = "_design0";
    auto& low = opts.descending ? opts.end_key : opts.start_key;
    auto& high = opts.descending ? opts.start_key : opts.end_key;
    if (!low || *low < lo) low = lo;
    if (!high || *high >= hi) {
      high = hi;
      if (!opts.descending) opts.inclusive_end = false;
    }
  }
  AllDocsResult result;
  s = kind == DocsKind::kLocal ? db.LocalDocs(opts, &result) : db.AllDocs(opts, &result);
  if (!s.ok()) return s;
  if (kind == DocsKind::kDesign && !opts.keys) {
    // total_rows counts the design documents (couch_mrview's
    // get_total_rows for the _design namespace), not every document; a keys
    // query counts every document (fabric_view_all_docs).
    if (whole_design_range) {
      result.total_rows = result.rows.size();
    } else {
      AllDocsOptions all;
      all.start_key = "_design/";
      all.end_key = "_design0";
      all.inclusive_end = false;
      AllDocsResult designs;
      s = db.AllDocs(all, &designs);
      if (!s.ok()) return s;
      result.total_rows = designs.rows.size();
    }
  }
  AllDocsMeta meta = kind == DocsKind::kLocal ? AllDocsMeta::kLocal
                     : opts.keys               ? AllDocsMeta::kKeys
                                               : AllDocsMeta::kRange;
  *out += AllDocsJson(result, want_update_seq, meta);
  return Status::OK();
}

// GET|POST /db/_all_docs (_design_docs, _local_docs). A POST body's members
// are options as the query string's are, and the query string wins
// (couch_mrview_http:parse_body_and_query parses the body, then the query
// string over it): PouchDB-style {"keys":[..]} and {"include_docs":true,
// "limit":2} alike.
Status AllDocsCommon(RequestContext& ctx, DocsKind kind) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  if (ctx.req.method != "POST") {
    std::string out;
    Status s = RunAllDocs(ctx, **db, kind, ctx.req.params, nullptr, &out);
    if (!s.ok()) return s;
    return ctx.SendJson(200, out);
  }
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  const json::Value* keys_body = nullptr;
  if (auto k = body.FindMember("keys"); k != body.MemberEnd()) {
    // chttpd_db's db_req checks this before it reads any option.
    if (!k->value.IsArray()) return Status::BadRequest("`keys` body member must be an array.");
    keys_body = &k->value;
  }
  QueryParams body_params;
  s = ObjectOptionsToParams(body, &body_params);
  if (!s.ok()) return s;
  std::string out;
  s = RunAllDocs(ctx, **db, kind, LayerParams(body_params, ctx.req.params), keys_body, &out);
  if (!s.ok()) return s;
  return ctx.SendJson(200, out);
}

// POST /db/_all_docs/queries {"queries":[{options}...]} (and _design_docs,
// _local_docs): each object's options over the query string's, as
// chttpd_db:multi_all_docs_view parses them; the query string's `keys` is
// not carried into the objects (parse_params resets keys).
Status AllDocsQueries(RequestContext& ctx, DocsKind kind) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  auto queries = body.FindMember("queries");
  if (queries == body.MemberEnd() || !queries->value.IsArray()) {
    return Status::BadRequest("`queries` member must be an array.");
  }
  QueryParams outer;
  for (const auto& p : ctx.req.params) {
    if (p.first != "keys") outer.push_back(p);
  }
  std::string out = R"({"results":[)";
  bool first = true;
  for (const auto& q : queries->value.GetArray()) {
    if (!q.IsObject()) return Status::BadRequest("Each query must be a JSON object");
    const json::Value* keys = nullptr;
    if (auto k = q.FindMember("keys"); k != q.MemberEnd()) keys = &k->value;
    QueryParams own;
    s = ObjectOptionsToParams(q, &own);
    if (!s.ok()) return s;
    if (!first) out += ",\n";
    first = false;
    s = RunAllDocs(ctx, **db, kind, LayerParams(outer, own), keys, &out);
    if (!s.ok()) return s;
  }
  out += "]}";
  return ctx.SendJson(200, out);
}

////////////////////////////////////////////////////////////////////////////////
// _bulk_docs, _bulk_get, _revs_diff, _missing_revs

// The "new_edits" query parameter, which overrides the body's.
Status NewEditsParam(RequestContext& ctx, UpdateOptions* opts) {
  if (ctx.Param("new_edits") == nullptr) return Status::OK();
  bool v = true;
  Status s = ctx.BoolParam("new_edits", &v);
  if (s.ok()) opts->new_edits = v;
  return s;
}

// Each document's _rev read as CouchDB's couch_doc:from_json_obj reads it
// (ParseCouchRev) rather than by the engine's RevId::Parse, whose refusals
// the parse leaves as the documents' statuses (IncomingDoc::rev_text). One
// CouchDB cannot parse refuses the request (its first bad document does);
// "+1-x" or "01-x" is "1-x"; one no stored revision can be ("1-", "0-a")
// is its document's conflict, as CouchDB's update answers a revision the
// document does not have, or with new_edits=false its own refusal (settee
// cannot store it); unless the document has _revisions, which CouchDB reads
// in its place. A _local document's "0-N" is the engine's. The walk reads
// one string length a document that names no revision.
void ReadCouchRevs(bool new_edits, BulkDocsBody::Parsed* parsed) {
  for (size_t i = 0; i < parsed->docs.size(); ++i) {
    IncomingDoc& doc = parsed->docs[i];
    if (doc.rev_text.empty() || IsLocalDocId(doc.id)) continue;
    Status& status = parsed->statuses[i];
    CouchRev rev = ParseCouchRev(doc.rev_text);
    switch (rev.kind) {
      case CouchRev::Kind::kMalformed:
        // Before the size check that may have failed it: CouchDB parses first.
        status = Status::BadRequest("Invalid rev format");
        break;
      case CouchRev::Kind::kStorable: {
        if (doc.rev && rev.text == doc.rev_text) break;
        const bool refused = !doc.rev;
        doc.rev.emplace();
        if (!RevId::Parse(rev.text, &*doc.rev)) {
          status = Status::Internal("a storable revision the engine cannot parse");
          break;
        }
        doc.rev_text = std::move(rev.text);
        if (refused) status = Status::OK();
        break;
      }
      case CouchRev::Kind::kNamesNothing:
        // RevId::Parse refused it, the parse's last check.
        status = Status::OK();
        if (!doc.revisions) {
          parsed->refusals.push_back(
              {i, new_edits ? Status::Conflict() : UnstorableRevError(doc.rev_text)});
        }
        doc.rev_text = std::move(rev.text);
        break;
    }
  }
}

Status SendBulkDocsResults(RequestContext& ctx, const std::vector<DocUpdateResult>& results,
                           const UpdateOptions& opts) {
  std::string out = "[";
  bool first = true;
  for (const DocUpdateResult& r : results) {
    // Replicated writes answer only their failures (PROTOCOL.md §0.3).
    if (!opts.new_edits && r.status.ok()) continue;
    if (!first) out += ",\n";
    first = false;
    AppendUpdateResult(&out, r, !opts.new_edits);
  }
  out += "]";
  return ctx.SendJson(201, out);
}

// A _bulk_docs body for a system database whose documents are checked one
// by one before the write (_users, _replicator): the engine's checks of the
// body and the options, then the body as a DOM for the walk.
struct CheckedBulkDocs {
  UpdateOptions opts;
  bool has_design_docs = false;
  json::Document body;
  // Each document (an object: the engine has checked that) with its _id, or
  // "" when it has none.
  std::vector<std::pair<std::string, json::Value*>> docs;
  // Per document: its refusal, from its _rev (ReadCouchRevsInDom), if any.
  std::vector<std::optional<Status>> refusals;
};

// ReadCouchRevs for documents written from a DOM: a malformed _rev refuses
// the request; a storable one is rewritten in the engine's spelling; one no
// stored revision can be is its document's refusal, or dropped when
// _revisions names the revision in its place.
Status ReadCouchRevsInDom(CheckedBulkDocs* checked) {
  checked->refusals.assign(checked->docs.size(), std::nullopt);
  for (size_t i = 0; i < checked->docs.size(); ++i) {
    auto& [docid, d] = checked->docs[i];
    auto rev = d->FindMember("_rev");
    if (rev == d->MemberEnd() || !rev->value.IsString() || IsLocalDocId(docid)) continue;
    CouchRev parsed = ParseCouchRev(json::View(rev->value));
    switch (parsed.kind) {
      case CouchRev::Kind::kMalformed:
        return Status::BadRequest("Invalid rev format");
      case CouchRev::Kind::kStorable:
        rev->value = json::StringValue(parsed.text, checked->body.GetAllocator());
        break;
      case CouchRev::Kind::kNamesNothing:
        if (d->HasMember("_revisions")) {
          d->EraseMember(rev);
          break;
        }
        checked->refusals[i] = checked->opts.new_edits ? Status::Conflict()
                                                       : UnstorableRevError(json::View(rev->value));
        rev->value = json::StringValue(parsed.text, checked->body.GetAllocator());
        break;
    }
  }
  return Status::OK();
}
Status ParseCheckedBulkDocs(RequestContext& ctx, Database& db, CheckedBulkDocs* out) {
  Status s = ctx.CheckJsonBody();
  if (!s.ok()) return s;
  auto checked = db.ParseBulkDocsBody(ctx.req.body);
  if (!checked.ok()) return checked.status();
  if (checked->new_edits()) out->opts.new_edits = *checked->new_edits();
  s = NewEditsParam(ctx, &out->opts);
  if (!s.ok()) return s;
  out->has_design_docs = checked->has_design_docs();
  s = ctx.ParseObjectBody(&out->body);
  if (!s.ok()) return s;
  // The engine has checked this shape; the guards keep a disagreement
  // between the two parsers an error rather than a RapidJSON assertion.
  auto docs = out->body.FindMember("docs");
  if (docs == out->body.MemberEnd() || !docs->value.IsArray()) {
    return Status::Internal("_bulk_docs body parsed differently twice");
  }
  for (auto& d : docs->value.GetArray()) {
    if (!d.IsObject()) return Status::Internal("_bulk_docs body parsed differently twice");
    auto id = d.FindMember("_id");
    out->docs.emplace_back(id != d.MemberEnd() && id->value.IsString() ? std::string(json::View(id->value)) : "", &d);
  }
  return ReadCouchRevsInDom(out);
}

// Writes a checked _bulk_docs body whose documents `check` passes one by one
// (the system databases' rules): `check` gets each document with its _id
// and the text to write, its serialization, which it may change. A refusal
// CouchDB's validate_doc_update would give (kForbidden) or a conflict is
// answered in the document's place ({"id","error","reason"}) and the others
// are written, as CouchDB does; any other error fails the whole request, as
// a before_doc_update error does there.
using BulkDocCheck = std::function<Status(const std::string& docid, const json::Value& doc, std::string* text)>;
Status WriteCheckedBulkDocs(RequestContext& ctx, Database& db, CheckedBulkDocs& checked, const BulkDocCheck& check) {
  UpdateOptions& opts = checked.opts;
  if (checked.has_design_docs) {
    Status s = ctx.CheckAccess(db, true);
    if (!s.ok()) return s;
  }
  std::vector<DocUpdateResult> results;
  std::vector<std::string> texts;
  std::vector<size_t> written;  // the index in `results` of each of `texts`
  for (size_t i = 0; i < checked.docs.size(); ++i) {
    auto& [docid, d] = checked.docs[i];
    DocUpdateResult& r = results.emplace_back();
    std::string text = json::Serialize(*d);
    r.status = check(docid, *d, &text);
    // A revision no stored one can be: CouchDB's update finds the conflict
    // after before_doc_update and before validate_doc_update.
    bool refused = checked.refusals[i].has_value();
    if (refused && (r.status.ok() || r.status.code() == Status::Code::kForbidden)) {
      r.status = std::move(*checked.refusals[i]);
      if (docid.empty()) docid = SequentialUuidHex();
    } else {
      refused = false;
    }
    if (r.status.ok()) {
      texts.push_back(std::move(text));
      written.push_back(results.size() - 1);
      continue;
    }
    if (!refused && r.status.code() != Status::Code::kForbidden && !r.status.IsConflict()) return r.status;
    r.id = std::move(docid);
    // A replicated revision's refusal names it, as the engine's do.
    auto rev = d->FindMember("_rev");
    if (!opts.new_edits && rev != d->MemberEnd() && rev->value.IsString()) r.rev = json::View(rev->value);
  }
  if (!texts.empty()) {
    std::vector<DocUpdateResult> out;
    std::vector<std::string_view> views(texts.begin(), texts.end());
    opts.user = &ctx.user;
    Status s = ctx.server.RunWrite([&] { return db.BulkDocs(views, opts, &out); });
    if (!s.ok()) return s;
    if (out.size() != written.size()) return Status::Internal("_bulk_docs gave no result for a document");
    for (size_t k = 0; k < out.size(); ++k) results[written[k]] = std::move(out[k]);
  }
  return SendBulkDocsResults(ctx, results, opts);
}

// _bulk_docs into _users: each document is checked and its password hashed
// (PrepareUserDoc) before the write. A non-admin's write to another user's
// document fails the request with not_found, as couch_users_db's
// before_doc_update throws it for the whole request.
Status BulkDocsToUsers(RequestContext& ctx, Database& db) {
  CheckedBulkDocs checked;
  Status s = ParseCheckedBulkDocs(ctx, db, &checked);
  if (!s.ok()) return s;
  UsersWriter writer = UsersWriterOf(ctx.user, ctx.CheckAccess(db, true).ok(), db);
  writer.new_edits = checked.opts.new_edits;
  return WriteCheckedBulkDocs(ctx, db, checked, [&](const std::string& docid, const json::Value&, std::string* text) {
    return PrepareUserDoc(docid, text, writer);
  });
}

// _bulk_docs into _replicator: each document is stamped with its owner as
// CouchDB's before_doc_update does, which fails the whole request for
// another user's document, then checked as CouchDB's _replicator
// validate_doc_update checks it (replication/replicator_doc_check.h).
Status BulkDocsToReplicator(RequestContext& ctx, Database& db) {
  CheckedBulkDocs checked;
  Status s = ParseCheckedBulkDocs(ctx, db, &checked);
  if (!s.ok()) return s;
  const bool db_admin = ctx.CheckAccess(db, true).ok();
  for (auto& [docid, d] : checked.docs) {
    s = replication::StampReplicatorOwner(docid, d, checked.body.GetAllocator(), ctx.user, db_admin);
    if (!s.ok()) return s;
  }
  return WriteCheckedBulkDocs(ctx, db, checked, [&](const std::string& docid, const json::Value& doc, std::string*) {
    return CheckReplicatorWrite(ctx, db, docid, doc);
  });
}

Status BulkDocs(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  if (ctx.params[0] == kUsersDbName) return BulkDocsToUsers(ctx, **db);
  if (ctx.params[0] == replication::kReplicatorDbName) return BulkDocsToReplicator(ctx, **db);
  Status s = ctx.CheckJsonBody();
  if (!s.ok()) return s;
  // The body is parsed once, by the engine; the checks read what it found.
  auto body = (*db)->ParseBulkDocsBody(ctx.req.body);
  if (!body.ok()) return body.status();
  UpdateOptions opts;
  if (body->new_edits()) opts.new_edits = *body->new_edits();
  s = NewEditsParam(ctx, &opts);
  if (!s.ok()) return s;
  if (body->has_design_docs()) {
    s = ctx.CheckAccess(**db, true);
    if (!s.ok()) return s;
  }
  ReadCouchRevs(opts.new_edits, body->parsed());
  std::vector<DocUpdateResult> results;
  opts.user = &ctx.user;
  s = ctx.server.RunWrite([&] { return (*db)->BulkDocs(std::move(*body), opts, &results); });
  if (!s.ok()) return s;
  return SendBulkDocsResults(ctx, results, opts);
}

Status BulkGet(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  auto docs = body.FindMember("docs");
  if (docs == body.MemberEnd() || !docs->value.IsArray()) {
    return Status::BadRequest("Missing JSON list of 'docs'.");
  }
  // chttpd_db:bulk_get_parse_doc_query refuses, the first in the query
  // string's order, the parameters that would pick revisions or write: each
  // item of the body names its own.
  for (const auto& [name, value] : ctx.req.params) {
    if (name == "open_revs" || name == "new_edits" || name == "w" || name == "rev" || name == "atts_since") {
      return Status::BadRequest("\"" + name + "\" query parameter is not acceptable");
    }
  }
  BulkGetOptions opts;
  // chttpd_db:bulk_get_parse_doc_query reads these as a document read does.
  opts.revs = ctx.FlagParam("revs");
  opts.latest = ctx.FlagParam("latest");
  opts.attachments = ctx.FlagParam("attachments");
  opts.att_encoding_info = ctx.FlagParam("att_encoding_info");
  for (const char* k : {"revs", "latest"}) {
    auto m = body.FindMember(k);
    if (m != body.MemberEnd() && m->value.IsBool()) {
      (k[0] == 'r' ? opts.revs : opts.latest) = m->value.GetBool();
    }
  }
  // Items the engine cannot take are answered here, in CouchDB's shape
  // (chttpd_db:bulk_get_open_doc_revs1), giving back what was sent as sent.
  std::vector<BulkGetRequest> request;
  std::vector<std::string> refused;  // per item: its error result, or "" for the engine's
  auto refuse = [&](const json::Value* id, const json::Value* rev, const Status& error) {
    std::string id_json = id != nullptr ? json::Serialize(*id) : "null";
    std::string out = R"({"id":)" + id_json + R"(,"docs":[{"error":{"id":)" + id_json;
    out += R"(,"rev":)" + (rev != nullptr ? json::Serialize(*rev) : std::string("null"));
    out += R"(,"error":)" + json::Quote(error.ErrorName());
    out += R"(,"reason":)" + json::Quote(error.reason()) + "}}]}";
    refused.push_back(std::move(out));
  };
  for (const auto& d : docs->value.GetArray()) {
    if (!d.IsObject()) {
      refuse(nullptr, nullptr, Status::BadRequest("Each item must be a JSON object"));
      continue;
    }
    auto id = d.FindMember("id");
    auto rev = d.FindMember("rev");
    const json::Value* rev_value = rev != d.MemberEnd() ? &rev->value : nullptr;
    if (id == d.MemberEnd()) {
      refuse(nullptr, nullptr, Status::BadRequest("document id missed"));
      continue;
    }
    if (!id->value.IsString()) {
      refuse(&id->value, nullptr, Status(Status::Code::kIllegalDocId, "Document id must be a string"));
      continue;
    }
    // chttpd_db:bulk_get_parse_doc_id checks the id, then parses the rev
    // and atts_since (couch_doc:parse_rev, ParseCouchRev); the first error
    // is the item's, naming the value that failed.
    Status valid = ValidateDocId(json::View(id->value));
    if (!valid.ok()) {
      refuse(&id->value, nullptr, valid);
      continue;
    }
    BulkGetRequest r;
    r.id = std::string(json::View(id->value));
    // bulk_get_parse_revs: an item without a rev opens every leaf.
    r.all_leaves = true;
    CouchRev parsed_rev;
    if (rev_value != nullptr) {
      if (rev_value->IsString()) parsed_rev = ParseCouchRev(json::View(*rev_value));
      if (parsed_rev.kind == CouchRev::Kind::kMalformed) {
        refuse(&id->value, rev_value, Status::BadRequest("Invalid rev format"));
        continue;
      }
      r.rev = parsed_rev.text;
    }
    auto since = d.FindMember("atts_since");
    if (since != d.MemberEnd()) {
      if (!since->value.IsArray()) {
        refuse(&id->value, &since->value, Status::BadRequest("att_since value must be array of revs."));
        continue;
      }
      // A revision no stored one can be is kept: it matches none, and
      // still asks for the attachments, as any atts_since does.
      const json::Value* bad = nullptr;
      for (const auto& a : since->value.GetArray()) {
        CouchRev parsed = a.IsString() ? ParseCouchRev(json::View(a)) : CouchRev{};
        if (parsed.kind == CouchRev::Kind::kMalformed) {
          bad = &a;
          break;
        }
        r.atts_since.push_back(std::move(parsed.text));
      }
      if (bad != nullptr) {
        refuse(&id->value, bad, Status::BadRequest("Invalid rev format"));
        continue;
      }
    }
    if (parsed_rev.kind == CouchRev::Kind::kNamesNothing) {
      // open_revs finds no such revision, whether or not the document exists.
      BulkGetResult missing{r.id, {BulkGetItem{parsed_rev.text, Status::NotFound("missing"), {}}}};
      std::string out;
      couch_json::AppendBulkGetResult(&out, missing);
      refused.push_back(std::move(out));
      continue;
    }
    request.push_back(std::move(r));
    refused.emplace_back();
  }
  std::vector<BulkGetResult> results;
  s = (*db)->BulkGet(request, opts, &results);
  if (!s.ok()) return s;
  ReplicatorReadFilter filter(ctx, **db);
  for (BulkGetResult& r : results) {
    for (BulkGetItem& item : r.docs) {
      if (item.status.ok()) filter.Apply(r.id, &item.doc);
    }
  }
  std::string out = R"({"results":[)";
  size_t next = 0;
  for (size_t i = 0; i < refused.size(); ++i) {
    if (i > 0) out += ",\n";
    if (!refused[i].empty()) {
      out += refused[i];
      continue;
    }
    if (next >= results.size()) return Status::Internal("BulkGet returned too few results");
    couch_json::AppendBulkGetResult(&out, results[next++]);
  }
  out += "]}";
  return ctx.SendJson(200, out);
}

// One document of a _revs_diff or _missing_revs body, its revisions read
// as fabric:get_missing_revs reads them (couch_doc:parse_rev, ParseCouchRev).
struct RevsMapEntry {
  std::string id;
  std::vector<CouchRev> revs;  // kStorable or kNamesNothing, as asked
  bool names_nothing = false;  // some of `revs` no stored revision can be
};

Status ParseRevsMap(RequestContext& ctx, std::vector<RevsMapEntry>* entries) {
  json::Document body;
  Status s = ctx.ParseObjectBody(&body);
  if (!s.ok()) return s;
  for (const auto& m : body.GetObject()) {
    RevsMapEntry e;
    e.id = std::string(json::View(m.name));
    if (!m.value.IsArray()) return Status::BadRequest("Revisions must be a JSON array of strings");
    for (const auto& rev : m.value.GetArray()) {
      if (!rev.IsString()) return Status::BadRequest("Revisions must be a JSON array of strings");
      CouchRev parsed = ParseCouchRev(json::View(rev));
      if (parsed.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
      e.names_nothing |= parsed.kind == CouchRev::Kind::kNamesNothing;
      e.revs.push_back(std::move(parsed));
    }
    entries->push_back(std::move(e));
  }
  return Status::OK();
}

// Whether generation `a` is below `b`, both decimal without leading zeros
// (ParseCouchRev's and the engine's spelling), of any size.
bool GenerationBelow(std::string_view a, std::string_view b) {
  a = a.substr(0, a.find('-'));
  b = b.substr(0, b.find('-'));
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// The engine's answer `engine` (null: nothing missing) for `entry`'s storable
// revisions, with its kNamesNothing ones added as missing, in the order asked.
// Its possible ancestors are then the leaves below any missing generation, as
// couch_db:possible_ancestors finds them: the engine's were found for its
// revisions only.
Status AddNamesNothing(Database& db, const RevsMapEntry& entry, const RevsDiffResult* engine,
                       RevsDiffResult* out) {
  out->id = entry.id;
  for (const CouchRev& rev : entry.revs) {
    const bool missing = rev.kind == CouchRev::Kind::kNamesNothing ||
                         (engine != nullptr && std::find(engine->missing.begin(), engine->missing.end(),
                                                         rev.text) != engine->missing.end());
    if (missing && std::find(out->missing.begin(), out->missing.end(), rev.text) == out->missing.end()) {
      out->missing.push_back(rev.text);
    }
  }
  std::vector<OpenRevResult> leaves;
  Status s = db.GetOpenRevs(entry.id, {}, GetOptions{}, &leaves);
  if (s.IsNotFound()) return Status::OK();
  if (!s.ok()) return s;
  for (const OpenRevResult& leaf : leaves) {
    for (const std::string& missing : out->missing) {
      if (GenerationBelow(leaf.rev, missing)) {
        out->possible_ancestors.push_back(leaf.rev);
        break;
      }
    }
  }
  return Status::OK();
}

// fabric:get_missing_revs for a parsed body: the documents with revisions
// missing, in the body's order.
Status MissingRevsOf(Database& db, const std::vector<RevsMapEntry>& entries, std::vector<RevsDiffResult>* out) {
  std::vector<RevsDiffRequest> request;
  request.reserve(entries.size());
  for (const RevsMapEntry& e : entries) {
    RevsDiffRequest& r = request.emplace_back();
    r.id = e.id;
    for (const CouchRev& rev : e.revs) {
      if (rev.kind == CouchRev::Kind::kStorable) r.revs.push_back(rev.text);
    }
  }
  std::vector<RevsDiffResult> engine;
  Status s = db.RevsDiff(request, &engine);
  if (!s.ok()) return s;
  // The engine answers in request order, leaving out the documents it
  // found nothing missing of.
  size_t next = 0;
  for (const RevsMapEntry& e : entries) {
    RevsDiffResult* found = next < engine.size() && engine[next].id == e.id ? &engine[next++] : nullptr;
    if (!e.names_nothing) {
      if (found != nullptr) out->push_back(std::move(*found));
      continue;
    }
    s = AddNamesNothing(db, e, found, &out->emplace_back());
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status RevsDiff(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  std::vector<RevsMapEntry> entries;
  Status s = ParseRevsMap(ctx, &entries);
  if (!s.ok()) return s;
  std::vector<RevsDiffResult> results;
  s = MissingRevsOf(**db, entries, &results);
  if (!s.ok()) return s;
  std::string out;
  couch_json::AppendRevsDiff(&out, results);
  return ctx.SendJson(200, out);
}

Status MissingRevs(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  std::vector<RevsMapEntry> entries;
  Status s = ParseRevsMap(ctx, &entries);
  if (!s.ok()) return s;
  std::vector<RevsDiffResult> results;
  s = MissingRevsOf(**db, entries, &results);
  if (!s.ok()) return s;
  std::string out = R"({"missing_revs":{)";
  bool first = true;
  for (const RevsDiffResult& r : results) {
    if (r.missing.empty()) continue;
    if (!first) out += ",";
    first = false;
    json::AppendQuoted(&out, r.id);
    out += ":";
    json::AppendStringArray(&out, r.missing);
  }
  out += "}}";
  return ctx.SendJson(200, out);
}

////////////////////////////////////////////////////////////////////////////////
// Maintenance

Status Compact(RequestContext& ctx) {
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  if (ctx.req.ContentType() != "application/json") {
    return Status(Status::Code::kBadContentType, "Content-Type must be application/json");
  }
  std::shared_ptr<Database> handle = *db;
  CouchServer* server = &ctx.server;
  uint64_t task_id = 0;
  std::string now = std::to_string(std::time(nullptr));
  server->TaskStarted(R"("type":"database_compaction","database":)" + json::Quote(handle->name()) +
                          R"(,"progress":0,"started_on":)" + now + R"(,"updated_on":)" + now,
                      &task_id, handle.get());
  // CouchDB compacts in the background and answers at once.
  server->workers().Post([handle, server, task_id] {
    Status s = handle->Compact();
    if (!s.ok()) LogWarning("compaction of %s failed: %s", handle->name().c_str(), s.ToString().c_str());
    server->TaskFinished(task_id);
  });
  return ctx.SendJson(202, R"({"ok":true})");
}

Status EnsureFullCommit(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  return ctx.SendJson(201, R"({"ok":true,"instance_start_time":"0"})");
}

Status GetRevsLimit(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  return ctx.SendJson(200, std::to_string((*db)->RevsLimit()));
}

Status PutRevsLimit(RequestContext& ctx) {
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  json::Document body;
  Status s = json::Parse(ctx.req.body, &body);
  if (!s.ok() || !body.IsUint() || body.GetUint() < 1) {
    return Status::BadRequest("Rev limit has to be an integer");
  }
  s = (*db)->SetRevsLimit(body.GetUint());
  if (!s.ok()) return s;
  return ctx.SendJson(200, R"({"ok":true})");
}

Status GetSecurity(RequestContext& ctx) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  return ctx.SendJson(200, (*db)->Security());
}

Status PutSecurity(RequestContext& ctx) {
  auto db = ctx.OpenDb(true);
  if (!db.ok()) return db.status();
  SecurityObject parsed;
  Status s = SecurityObject::Parse(ctx.req.body, &parsed);
  if (!s.ok()) return s;
  s = (*db)->SetSecurity(ctx.req.body);
  if (!s.ok()) return s;
  return ctx.SendJson(200, R"({"ok":true})");
}

}  // namespace

void RegisterDatabaseEndpoints(CouchServer& server) {
  Router& r = server.router();
  r.Add("PUT", "/{db}", PutDb);
  r.Add("GET,HEAD", "/{db}", GetDb);
  r.Add("DELETE", "/{db}", DeleteDb);
  r.Add("POST", "/{db}", PostDb);
  r.Add("GET,HEAD,POST", "/{db}/_all_docs",
        [](RequestContext& c) { return AllDocsCommon(c, DocsKind::kAll); });
  r.Add("POST", "/{db}/_all_docs/queries", [](RequestContext& c) { return AllDocsQueries(c, DocsKind::kAll); });
  r.Add("POST", "/{db}/_design_docs/queries",
        [](RequestContext& c) { return AllDocsQueries(c, DocsKind::kDesign); });
  r.Add("POST", "/{db}/_local_docs/queries",
        [](RequestContext& c) { return AllDocsQueries(c, DocsKind::kLocal); });
  r.Add("GET,HEAD,POST", "/{db}/_design_docs",
        [](RequestContext& c) { return AllDocsCommon(c, DocsKind::kDesign); });
  r.Add("GET,HEAD,POST", "/{db}/_local_docs",
        [](RequestContext& c) { return AllDocsCommon(c, DocsKind::kLocal); });
  r.Add("POST", "/{db}/_bulk_docs", BulkDocs);
  r.Add("POST", "/{db}/_bulk_get", BulkGet);
  r.Add("POST", "/{db}/_revs_diff", RevsDiff);
  r.Add("POST", "/{db}/_missing_revs", MissingRevs);
  r.Add("POST", "/{db}/_compact", Compact);
  r.Add("POST", "/{db}/_ensure_full_commit", EnsureFullCommit);
  r.Add("GET,HEAD", "/{db}/_revs_limit", GetRevsLimit);
  r.Add("PUT", "/{db}/_revs_limit", PutRevsLimit);
  r.Add("GET,HEAD", "/{db}/_security", GetSecurity);
  r.Add("PUT", "/{db}/_security", PutSecurity);
}

}  // namespace settee
