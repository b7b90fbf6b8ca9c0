// Document endpoints: /db/{docid}, /db/_design/{ddoc}, /db/_local/{id} with
// GET/HEAD (all read options, open_revs as JSON or multipart/mixed), PUT,
// DELETE and COPY.
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "replication/replicator_doc_check.h"
#include "runtime/attachment_http.h"
#include "runtime/couch_error.h"
#include "runtime/couch_rev.h"
#include "runtime/endpoint_helpers.h"
#include "runtime/users_db.h"
#include "util/digest.h"
#include "util/couch_json.h"
#include "util/json.h"

namespace settee {

namespace {

// The document id addressed by the route: params[1] is the id or the name
// after "_design/" / "_local/" (set by the route's prefix).
std::string DocIdFor(const RequestContext& ctx, std::string_view prefix) {
  return std::string(prefix) + ctx.params.at(1);
}

bool IsDesignId(std::string_view id) { return id.substr(0, 8) == "_design/"; }

// The top-level _rev of a document serialized by the Database (whose _id and
// _rev come first). A top-level `,"_rev":"` cannot occur inside a string
// value, where quotes are escaped, and precedes any nested object's.
std::string ExtractRev(std::string_view doc) {
  static constexpr std::string_view kKey = ",\"_rev\":\"";
  size_t p = doc.find(kKey);
  if (p == std::string_view::npos) return {};
  p += kKey.size();
  size_t e = doc.find('"', p);
  if (e == std::string_view::npos) return {};
  return std::string(doc.substr(p, e - p));
}

// A write's new_edits as chttpd_db:parse_doc_query folds it: the last
// "true" or "false" decides, and any other value changes nothing.
bool NewEditsParam(const RequestContext& ctx) {
  bool new_edits = true;
  for (const auto& [name, value] : ctx.req.params) {
    if (name == "new_edits" && (value == "true" || value == "false")) new_edits = value == "true";
  }
  return new_edits;
}

bool AcceptsMultipartMixed(const RequestContext& ctx) {
  const std::string* accept = ctx.req.Header("accept");
  return accept != nullptr && accept->find("multipart/mixed") != std::string::npos;
}

Status ParseGetOptions(RequestContext& ctx, GetOptions* opts) {
  // chttpd_db:parse_doc_query folds over the query string: a flag is on
  // when any of its values is "true", and the last `rev` wins.
  opts->revs = ctx.FlagParam("revs");
  opts->revs_info = ctx.FlagParam("revs_info");
  opts->conflicts = ctx.FlagParam("conflicts");
  opts->deleted_conflicts = ctx.FlagParam("deleted_conflicts");
  opts->local_seq = ctx.FlagParam("local_seq");
  opts->latest = ctx.FlagParam("latest");
  if (ctx.FlagParam("meta")) opts->conflicts = opts->deleted_conflicts = opts->revs_info = true;
  if (const std::string* rev = ctx.LastParam("rev")) opts->rev = *rev;
  return ParseAttachmentOptions(ctx, opts);
}

// `public_fields`, when given, strips each revision to those fields (another
// user's document in _users); a revision left empty fails the request with
// not_found, as CouchDB's after_doc_read throws it.
Status SendOpenRevs(RequestContext& ctx, Database& db, const std::string& docid,
                    const GetOptions& opts, const std::optional<std::vector<std::string>>& public_fields) {
  const std::string& spec = *ctx.LastParam("open_revs");
  std::vector<std::string> revs;  // in the engine's spelling (ParseCouchRev)
  std::vector<bool> names_nothing;  // per entry of `revs`: a kNamesNothing revision
  bool any_names_nothing = false;
  const bool all = spec == "all";
  if (!all) {
    // CouchDB's reasons (chttpd_db:parse_doc_query, couch_doc:parse_revs).
    json::Document d;
    if (!json::Parse(spec, &d).ok()) return Status::BadRequest("invalid UTF-8 JSON");
    if (!d.IsArray()) return Status::BadRequest("Invalid list of revisions");
    for (const auto& r : d.GetArray()) {
      if (!r.IsString()) return Status::BadRequest("Invalid rev format");
      CouchRev rev = ParseCouchRev(json::View(r));
      if (rev.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
      names_nothing.push_back(rev.kind == CouchRev::Kind::kNamesNothing);
      any_names_nothing |= names_nothing.back();
      revs.push_back(std::move(rev.text));
    }
  }
  std::vector<OpenRevResult> results;
  const bool multipart = AcceptsMultipartMixed(ctx);
  GetOptions read_opts = opts;
  // Multipart answers send attachment bodies as parts, after each document.
  read_opts.attachments_follow = multipart;
  Status s;
  if (!any_names_nothing) {
    // An empty list asks for no revisions (GetOpenRevs reads it as "all").
    if (all || !revs.empty()) s = db.GetOpenRevs(docid, revs, read_opts, &results);
  } else {
    // Revisions no stored one can be are missing, in their place; the
    // others are read a run at a time (one of them can give several leaves
    // with latest=true).
    std::vector<std::string> run;
    std::vector<OpenRevResult> part;
    for (size_t i = 0; i <= revs.size() && s.ok(); ++i) {
      if (i < revs.size() && !names_nothing[i]) {
        run.push_back(revs[i]);
        continue;
      }
      if (!run.empty()) {
        s = db.GetOpenRevs(docid, run, read_opts, &part);
        for (OpenRevResult& r : part) results.push_back(std::move(r));
        run.clear();
      }
      if (i < revs.size()) results.push_back(OpenRevResult{revs[i], false, {}});
    }
  }
  if (!s.ok()) return s;
  ReplicatorReadFilter filter(ctx, db);
  for (OpenRevResult& r : results) {
    if (!r.found) continue;
    filter.Apply(docid, &r.doc);
    if (public_fields) {
      s = StripToPublicFields(*public_fields, &r.doc);
      if (!s.ok()) return s;
    }
  }
  if (multipart) {
    std::string boundary = RandomUuidHex();
    ctx.res.AddHeader("Cache-Control", "must-revalidate");
    if (!ctx.res.StartChunked(200, "multipart/mixed; boundary=\"" + boundary + "\"")) {
      return Status::OK();
    }
    if (ctx.req.method == "HEAD") return Status::OK();
    for (const OpenRevResult& r : results) {
      bool ok;
      if (r.found) {
        ok = WriteOpenRevPart(ctx, db, docid, r.doc, boundary);
      } else {
        ok = ctx.res.WriteChunk("--" + boundary +
                                "\r\nContent-Type: application/json; error=\"true\"\r\n\r\n{\"missing\":" +
                                json::Quote(r.rev) + "}\r\n");
      }
      if (!ok) return Status::OK();  // the peer is gone, or a body vanished: cut short
    }
    ctx.res.WriteChunk("--" + boundary + "--");
    ctx.res.EndChunked();
    return Status::OK();
  }
  std::string out = "[";
  for (size_t i = 0; i < results.size(); ++i) {
    if (i > 0) out += ",\r\n";
    couch_json::AppendOpenRev(&out, results[i]);
  }
  out += "]";
  return ctx.SendJson(200, out);
}

Status GetDoc(RequestContext& ctx, std::string_view prefix) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  std::string docid = DocIdFor(ctx, prefix);
  // Another's document in _users: only its public fields, when some are
  // configured (couch_users_db:after_doc_read), else not found.
  std::optional<std::vector<std::string>> public_fields;
  Status s = UsersDocReadFields(ctx, **db, docid, &public_fields);
  if (!s.ok()) return s;
  GetOptions opts;
  s = ParseGetOptions(ctx, &opts);
  if (!s.ok()) return s;
  if (!opts.rev.empty() && prefix != "_local/") {
    // parse_doc_query parses ?rev= whatever else is asked; open_revs then
    // ignores it, and a revision no stored one can be is not found.
    CouchRev rev = ParseCouchRev(opts.rev);
    if (rev.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
    if (rev.kind == CouchRev::Kind::kNamesNothing && ctx.Param("open_revs") == nullptr) {
      return Status::NotFound("missing");
    }
    opts.rev = std::move(rev.text);
  }
  if (ctx.Param("open_revs") != nullptr) return SendOpenRevs(ctx, **db, docid, opts, public_fields);
  if (opts.attachments && Accepts(ctx, "multipart/related")) {
    // The stripped document with all its attachments, as CouchDB's
    // send_doc_efficiently sends the #doc after_doc_read gave.
    std::function<Status(std::string*)> strip;
    if (public_fields) {
      strip = [&public_fields](std::string* doc) { return StripToPublicFields(*public_fields, doc); };
    }
    return SendDocMultipartRelated(ctx, **db, docid, opts, strip);
  }
  auto doc = (*db)->Get(docid, opts);
  if (!doc.ok()) return doc.status();
  ReplicatorReadFilter(ctx, **db).Apply(docid, &*doc);
  if (public_fields) {
    s = StripToPublicFields(*public_fields, &*doc);
    if (!s.ok()) return s;
  }
  std::string rev = ExtractRev(*doc);
  if (!rev.empty()) {
    std::string etag = RevETag(rev);
    const std::string* inm = ctx.req.Header("if-none-match");
    if (inm != nullptr && *inm == etag) {
      ctx.res.AddHeader("ETag", etag);
      ctx.res.Send(304, "", "");
      return Status::OK();
    }
    ctx.res.AddHeader("ETag", etag);
  }
  return ctx.SendJson(200, *doc);
}

// couch_doc_from_req's reading of a document PUT's revision, for its JSON
// `body` (the whole body, or a multipart/related one's document part): the
// body's _rev, parsed as parse_rev does, must be `query` (?rev=, parsed;
// null if none), and the body's _rev or else `query` is set against
// If-Match (ExtractHeaderRev). The body then carries the revision named,
// in the engine's spelling. One no stored revision can be is the update's
// conflict, or, with new_edits=false, one settee cannot store; a _local
// document's ("0-N") is its own. Without ?rev= or If-Match, a body that is
// not a JSON object or whose _rev is no string is left to the write's own
// errors, and a _local document's _rev to its write. `body` is parsed only
// when it may hold a _rev to check or one is added.
Status ReconcileBodyRev(const RequestContext& ctx, const CouchRev* query, bool local, bool new_edits,
                        std::string* body) {
  const std::string* if_match = ctx.req.Header("if-match");
  const bool given = query != nullptr || if_match != nullptr;
  if (!given && (local || body->find("\"_rev\"") == std::string::npos)) return Status::OK();
  json::Document doc;
  Status s = json::Parse(*body, &doc);
  if (!s.ok()) return given ? Status::BadRequest("invalid UTF-8 JSON") : Status::OK();
  if (!doc.IsObject()) {
    return given ? Status::BadRequest("Document must be a JSON object") : Status::OK();
  }
  auto it = doc.FindMember("_rev");
  CouchRev body_rev;
  const bool has_body_rev = it != doc.MemberEnd();
  if (has_body_rev) {
    // from_json_obj parses the body's _rev (parse_rev) before
    // couch_doc_from_req compares it with ?rev=.
    if (!it->value.IsString()) return given ? Status::BadRequest("Invalid rev format") : Status::OK();
    body_rev = ParseCouchRev(json::View(it->value));
    if (body_rev.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
    if (query != nullptr && !SameCouchRev(*query, body_rev)) {
      return Status::BadRequest("Document rev from request body and query string have different values");
    }
  }
  std::optional<CouchRev> named;
  s = ExtractHeaderRev(has_body_rev ? &body_rev : query, if_match, &named);
  if (!s.ok()) return s;
  if (!named) return Status::OK();
  if (!local && named->kind == CouchRev::Kind::kNamesNothing) {
    return new_edits ? Status::Conflict() : UnstorableRevError(named->text);
  }
  if (!has_body_rev) {
    doc.AddMember("_rev", json::StringValue(named->text, doc.GetAllocator()), doc.GetAllocator());
  } else if (json::View(it->value) != named->text) {
    it->value = json::StringValue(named->text, doc.GetAllocator());
  } else {
    return Status::OK();
  }
  *body = json::Serialize(doc);
  return Status::OK();
}

// ?rev= of a document PUT, parsed as parse_doc_query does before the body
// is read: *out is null without one, else `storage` holding it.
Status ParseQueryRev(const RequestContext& ctx, CouchRev* storage, const CouchRev** out) {
  *out = nullptr;
  const std::string* q = ctx.Param("rev");
  if (q == nullptr) return Status::OK();
  *storage = ParseCouchRev(*q);
  if (storage->kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
  *out = storage;
  return Status::OK();
}

// {"ok":true,"id","rev"} with the ETag and Location of the written document.
Status SendWritten(RequestContext& ctx, const DocUpdateResult& r, int http_status) {
  std::string out;
  AppendUpdateResult(&out, r, false);
  ctx.res.AddHeader("ETag", RevETag(r.rev));
  ctx.res.AddHeader("Location", AbsoluteUrl(ctx, "/" + http::PercentEncode(ctx.params[0]) + "/" +
                                                     EncodeDocIdForPath(r.id)));
  return ctx.SendJson(http_status, out);
}

Status PutDoc(RequestContext& ctx, std::string_view prefix) {
  std::string docid = DocIdFor(ctx, prefix);
  auto db = ctx.OpenDb(IsDesignId(docid));
  if (!db.ok()) return db.status();
  // CouchDB's per-document rules for _users, which tell writers apart.
  UsersWriter users_writer;
  if (ctx.params[0] == kUsersDbName) users_writer = UsersWriterOf(ctx.user, ctx.CheckAccess(**db, true).ok(), **db);
  std::string ct = ctx.req.ContentType();
  const bool local = prefix == "_local/";
  CouchRev query_storage;
  const CouchRev* query = nullptr;
  if (ct == "multipart/related") {
    UpdateOptions opts;
    opts.new_edits = NewEditsParam(ctx);
    Status s = ParseQueryRev(ctx, &query_storage, &query);
    if (!s.ok()) return s;
    DocUpdateResult r;
    s = PutDocMultipart(ctx, **db, docid, opts,
                        [&](std::string* doc_json) {
                          return ReconcileBodyRev(ctx, query, local, opts.new_edits, doc_json);
                        },
                        &r);
    if (!s.ok()) return s;
    return SendWritten(ctx, r, 201);
  }
  if (ct.substr(0, 10) == "multipart/") {
    return Status(Status::Code::kBadContentType,
                  "multipart document bodies other than multipart/related are not supported");
  }
  std::string body = ctx.req.body;
  if (body.empty()) return Status::BadRequest("Document must be a JSON object");
  UpdateOptions opts;
  opts.new_edits = NewEditsParam(ctx);
  opts.user = &ctx.user;
  {
    Status s = ParseQueryRev(ctx, &query_storage, &query);
    if (s.ok()) s = ReconcileBodyRev(ctx, query, local, opts.new_edits, &body);
    if (!s.ok()) return s;
  }
  if (ctx.params[0] == kUsersDbName) {
    users_writer.new_edits = opts.new_edits;
    Status s = PrepareUserDoc(docid, &body, users_writer);
    if (!s.ok()) return s;
  }
  if (ctx.params[0] == replication::kReplicatorDbName) {
    // Not an object: the write refuses it with its own error.
    json::Document doc;
    if (json::Parse(body, &doc).ok() && doc.IsObject()) {
      Status s = PrepareReplicatorWrite(ctx, **db, docid, &doc, &body);
      if (!s.ok()) return s;
    }
  }
  auto r = ctx.server.RunWrite([&] { return (*db)->Put(docid, body, opts); });
  if (!r.ok()) return r.status();
  if (!r->status.ok()) return r->status;
  bool batch = ctx.Param("batch") != nullptr && *ctx.Param("batch") == "ok";
  return SendWritten(ctx, *r, batch ? 202 : 201);
}

Status DeleteDoc(RequestContext& ctx, std::string_view prefix) {
  std::string docid = DocIdFor(ctx, prefix);
  auto db = ctx.OpenDb(IsDesignId(docid));
  if (!db.ok()) return db.status();
  // chttpd_db's DELETE opens the document (couch_doc_open) before it reads
  // the revision: a missing or deleted one is its 404 whatever the rev or
  // If-Match. Then ?rev= and If-Match are read as couch_doc_from_req reads
  // them (a malformed one is 400, one no stored revision can be the
  // deletion's conflict, as is naming none).
  if (prefix == "_local/") {
    auto doc = (*db)->Get(docid, GetOptions{});
    if (!doc.ok()) return doc.status();
  } else {
    Database::WinnerBuffers buffers;
    std::string_view winner, winner_body;
    Status s = (*db)->GetWinner(docid, &buffers, &winner, &winner_body);
    if (!s.ok()) return s;
  }
  std::string rev;
  {
    std::optional<CouchRev> named;
    Status s = QueryOrHeaderRev(ctx, &named);
    if (!s.ok()) return s;
    if (named && named->kind == CouchRev::Kind::kNamesNothing && prefix != "_local/") {
      return Status::Conflict();
    }
    if (named) rev = std::move(named->text);
  }
  if (ctx.params[0] == kUsersDbName && !ctx.user.IsAdmin()) {
    // The rules a PUT of {"_deleted":true} meets: only a server admin or
    // the owner deletes, a _security admin of _users too only their own.
    std::string body = R"({"_deleted":true,"_rev":)" + json::Quote(rev) + "}";
    const UsersWriter writer = UsersWriterOf(ctx.user, ctx.CheckAccess(**db, true).ok(), **db);
    Status s = rev.empty() ? Status::Conflict() : PrepareUserDoc(docid, &body, writer);
    if (!s.ok()) return s;
  }
  // A _replicator deletion is the PUT of {"_deleted":true} it stands for
  // in CouchDB (chttpd_db's DELETE), so it meets the same rules: the
  // before_doc_update stamp ({"owner": name} in the tombstone) and only an
  // admin or the user the document runs as deleting it. A rev-less DELETE
  // is the write's conflict, as in CouchDB.
  std::string tombstone;
  if (ctx.params[0] == replication::kReplicatorDbName && !rev.empty()) {
    json::Document doc;
    doc.SetObject();
    doc.AddMember("_deleted", true, doc.GetAllocator());
    doc.AddMember("_rev", json::StringValue(rev, doc.GetAllocator()), doc.GetAllocator());
    Status s = PrepareReplicatorWrite(ctx, **db, docid, &doc, &tombstone);
    if (!s.ok()) return s;
  }
  UpdateOptions opts;
  opts.user = &ctx.user;
  auto r = ctx.server.RunWrite([&] {
    return tombstone.empty() ? (*db)->Delete(docid, rev, opts) : (*db)->Put(docid, tombstone, opts);
  });
  if (!r.ok()) return r.status();
  if (!r->status.ok()) return r->status;
  std::string out;
  AppendUpdateResult(&out, *r, false);
  ctx.res.AddHeader("ETag", RevETag(r->rev));
  bool batch = ctx.Param("batch") != nullptr && *ctx.Param("batch") == "ok";
  return ctx.SendJson(batch ? 202 : 200, out);
}

Status CopyDoc(RequestContext& ctx, std::string_view prefix) {
  std::string source = DocIdFor(ctx, prefix);
  // Both revisions are parsed (couch_doc:parse_rev) before the source is
  // opened: a source revision no stored one can be is not found, a
  // destination one the copy's conflict. The source's is ?rev= set against
  // If-Match (extract_header_rev), read before the Destination header as
  // chttpd_db's COPY reads them.
  CouchRev source_rev;
  {
    std::optional<CouchRev> named;
    Status s = QueryOrHeaderRev(ctx, &named);
    if (!s.ok()) return s;
    if (named) source_rev = std::move(*named);
  }
  const std::string* dest_header = ctx.req.Header("destination");
  if (dest_header == nullptr || dest_header->empty()) {
    return Status::BadRequest("Destination header is mandatory for COPY.");
  }
  // chttpd_util:parse_copy_destination_header: a document of this database
  // only, never a URL.
  if (dest_header->rfind("http://", 0) == 0 || dest_header->rfind("https://", 0) == 0) {
    return Status::BadRequest("Destination URL must be relative.");
  }
  // "target" or "target?rev=N-x"; the id may be percent-encoded.
  std::string_view dest_raw(*dest_header);
  std::string dest_rev;
  if (size_t q = dest_raw.find('?'); q != std::string_view::npos) {
    http::HttpRequest tmp;
    tmp.url = std::string(dest_raw);
    if (!tmp.ParseUrl()) return Status::BadRequest("Invalid Destination header");
    if (const std::string* r = tmp.Param("rev")) dest_rev = *r;
    dest_raw = dest_raw.substr(0, q);
  }
  std::string dest;
  if (!http::PercentDecode(dest_raw, &dest, false) || dest.empty()) {
    return Status::BadRequest("Invalid Destination header");
  }
  bool dest_names_nothing = false;
  if (!dest_rev.empty()) {
    CouchRev parsed = ParseCouchRev(dest_rev);
    if (parsed.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
    dest_names_nothing = parsed.kind == CouchRev::Kind::kNamesNothing;
    dest_rev = std::move(parsed.text);
  }
  auto db = ctx.OpenDb(IsDesignId(source) || IsDesignId(dest));
  if (!db.ok()) return db.status();
  // CouchDB copies the source as the requester opens it (couch_doc_open
  // with their user_ctx, through after_doc_read): another's user document
  // stripped to the public fields, a replication document to what
  // ReplicatorReadFilter leaves.
  std::optional<std::vector<std::string>> public_fields;
  Status s = UsersDocReadFields(ctx, **db, source, &public_fields);
  if (!s.ok()) return s;
  UsersWriter users_writer;
  if (ctx.params[0] == kUsersDbName) users_writer = UsersWriterOf(ctx.user, ctx.CheckAccess(**db, true).ok(), **db);
  if (source_rev.kind == CouchRev::Kind::kNamesNothing) return Status::NotFound("missing");
  GetOptions gopts;
  gopts.rev = source_rev.text;
  // The copy gets the attachments' bodies (stored once: same digests).
  gopts.attachments = true;
  auto src = (*db)->Get(source, gopts);
  if (!src.ok()) return src.status();
  if (dest_names_nothing) return Status::Conflict();
  ReplicatorReadFilter(ctx, **db).Apply(source, &*src);
  if (public_fields) {
    s = StripToPublicFields(*public_fields, &*src);
    if (!s.ok()) return s;
  }
  json::Document doc;
  s = json::Parse(*src, &doc);
  if (!s.ok()) return Status::Internal("stored document is not valid JSON");
  doc.RemoveMember("_id");
  doc.RemoveMember("_rev");
  if (!dest_rev.empty()) {
    doc.AddMember("_rev", json::StringValue(dest_rev, doc.GetAllocator()), doc.GetAllocator());
  }
  std::string body = json::Serialize(doc);
  if (ctx.params[0] == kUsersDbName) {
    s = PrepareUserDoc(dest, &body, users_writer);
    if (!s.ok()) return s;
  }
  if (ctx.params[0] == replication::kReplicatorDbName) {
    s = PrepareReplicatorWrite(ctx, **db, dest, &doc, &body);
    if (!s.ok()) return s;
  }
  UpdateOptions opts;
  opts.user = &ctx.user;
  auto r = ctx.server.RunWrite([&] { return (*db)->Put(dest, body, opts); });
  if (!r.ok()) return r.status();
  if (!r->status.ok()) return r->status;
  return SendWritten(ctx, *r, 201);
}

void AddDocRoutes(Router& r, const std::string& pattern, std::string prefix) {
  r.Add("GET,HEAD", pattern, [prefix](RequestContext& c) { return GetDoc(c, prefix); });
  // A multipart/related PUT (a document with its attachments' bodies) is
  // read as it arrives; _local documents keep no attachments.
  r.Add("PUT", pattern, [prefix](RequestContext& c) { return PutDoc(c, prefix); },
        prefix == "_local/" ? Router::BodyMode::kBuffered : Router::BodyMode::kStreamedIfMultipart);
  r.Add("DELETE", pattern, [prefix](RequestContext& c) { return DeleteDoc(c, prefix); });
  r.Add("COPY", pattern, [prefix](RequestContext& c) { return CopyDoc(c, prefix); });
}

}  // namespace

void RegisterDocumentEndpoints(CouchServer& server) {
  Router& r = server.router();
  AddDocRoutes(r, "/{db}/{docid}", "");
  AddDocRoutes(r, "/{db}/_design/{ddoc}", "_design/");
  AddDocRoutes(r, "/{db}/_local/{id}", "_local/");
}

}  // namespace settee
