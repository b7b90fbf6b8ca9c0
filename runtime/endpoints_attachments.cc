// Attachment endpoints: GET/HEAD/PUT/DELETE /db/{doc}/{att} (and under
// _design/), with Range, ETag and gzip; multipart/related documents in and
// out for the document endpoints (runtime/attachment_http.h).
//
// Bodies go to the socket a chunk at a time from an AttachmentReader, so a
// read holds a chunk or two of memory whatever the attachment's size.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <optional>

#include "replication/replicator_doc_check.h"
#include "runtime/attachment_http.h"
#include "runtime/couch_error.h"
#include "runtime/couch_rev.h"
#include "runtime/endpoint_helpers.h"
#include "runtime/multipart.h"
#include "runtime/users_db.h"
#include "storage/attachment_store.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

bool IsDesignId(std::string_view id) { return id.substr(0, 8) == "_design/"; }

// CouchDB's attachment ETag: the digest's base64, quoted.
std::string DigestETag(std::string_view digest) {
  if (digest.substr(0, 4) == "md5-") digest.remove_prefix(4);
  return "\"" + std::string(digest) + "\"";
}

struct ByteRange {
  uint64_t first = 0;
  uint64_t last = 0;  // inclusive
};

// Parses "bytes=a-b,c-,-n" against a body of `length` bytes. nullopt: no
// usable Range header (the whole body is sent). *unsatisfiable: a range
// starts past the end.
std::optional<std::vector<ByteRange>> ParseRanges(const std::string* header, uint64_t length,
                                                  bool* unsatisfiable) {
  *unsatisfiable = false;
  if (header == nullptr) return std::nullopt;
  std::string_view v(*header);
  if (v.substr(0, 6) != "bytes=") return std::nullopt;
  v.remove_prefix(6);
  std::vector<ByteRange> out;
  while (!v.empty()) {
    size_t comma = v.find(',');
    std::string_view spec = v.substr(0, comma);
    v = comma == std::string_view::npos ? std::string_view() : v.substr(comma + 1);
    while (!spec.empty() && spec.front() == ' ') spec.remove_prefix(1);
    while (!spec.empty() && spec.back() == ' ') spec.remove_suffix(1);
    size_t dash = spec.find('-');
    if (dash == std::string_view::npos) return std::nullopt;
    auto number = [](std::string_view s, uint64_t* n) {
      if (s.empty() || s.size() > 19) return false;
      *n = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return false;
        *n = *n * 10 + static_cast<uint64_t>(c - '0');
      }
      return true;
    };
    uint64_t a = 0, b = 0;
    ByteRange r;
    if (dash == 0) {  // the last b bytes
      if (!number(spec.substr(1), &b)) return std::nullopt;
      if (b == 0 || length == 0) {
        *unsatisfiable = true;
        return out;
      }
      r.first = length - std::min(b, length);
      r.last = length - 1;
    } else {
      if (!number(spec.substr(0, dash), &a)) return std::nullopt;
      if (dash + 1 == spec.size()) {
        b = UINT64_MAX;
      } else if (!number(spec.substr(dash + 1), &b)) {
        return std::nullopt;
      }
      if (b < a) return std::nullopt;  // syntactically invalid: ignored (RFC 7233)
      if (a >= length) {
        *unsatisfiable = true;
        return out;
      }
      r.first = a;
      r.last = std::min(b, length - 1);
    }
    out.push_back(r);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

Status RangeNotSatisfiable(RequestContext& ctx, uint64_t length) {
  ctx.res.AddHeader("Content-Range", "bytes */" + std::to_string(length));
  return ctx.SendJson(416,
                      R"({"error":"requested_range_not_satisfiable","reason":"Requested range not satisfiable"})");
}

// Streams decoded bytes [first, last] of `reader` as response pieces.
bool StreamRange(RequestContext& ctx, AttachmentReader& reader, uint64_t first, uint64_t count,
                 Status* error) {
  bool peer_ok = true;
  *error = reader.Read(first, count, [&](std::string_view piece) {
    peer_ok = ctx.res.WriteChunk(piece);
    return peer_ok;
  });
  return peer_ok && error->ok();
}

// An attachment request's revision read as couch_doc:parse_rev reads it
// (ParseCouchRev): *rev becomes the engine's spelling. One no stored
// revision can be gets `names_nothing`, what one the document does not have
// gets from the engine.
Status CheckAttachmentRev(std::string* rev, Status names_nothing) {
  if (rev->empty()) return Status::OK();
  CouchRev parsed = ParseCouchRev(*rev);
  switch (parsed.kind) {
    case CouchRev::Kind::kMalformed:
      return Status::BadRequest("Invalid rev format");
    case CouchRev::Kind::kNamesNothing:
      return names_nothing;
    case CouchRev::Kind::kStorable:
      *rev = std::move(parsed.text);
      return Status::OK();
  }
  return Status::OK();
}

// The revision an attachment PUT or DELETE names (QueryOrHeaderRev), in the
// engine's spelling (empty if none); one no stored revision can be is the
// write's conflict.
Status AttachmentWriteRev(const RequestContext& ctx, std::string* rev) {
  std::optional<CouchRev> named;
  Status s = QueryOrHeaderRev(ctx, &named);
  if (!s.ok()) return s;
  if (!named) return Status::OK();
  if (named->kind == CouchRev::Kind::kNamesNothing) return Status::Conflict();
  *rev = std::move(named->text);
  return Status::OK();
}

Status GetAttachment(RequestContext& ctx, std::string_view prefix) {
  auto db = ctx.OpenDb();
  if (!db.ok()) return db.status();
  const std::string docid = std::string(prefix) + ctx.params.at(1);
  const std::string& name = ctx.params.at(2);
  // parse_doc_query parses ?rev= (the last one) before the document is
  // opened; couch_doc_open finds no revision no stored one can be.
  std::string rev;
  if (const std::string* r = ctx.LastParam("rev")) rev = *r;
  Status s = CheckAttachmentRev(&rev, Status::NotFound("missing"));
  if (!s.ok()) return s;
  // CouchDB opens the document with the reader's user_ctx first (through
  // after_doc_read): another's user document gives its attachments when a
  // public field of it is left, else not found.
  std::optional<std::vector<std::string>> public_fields;
  s = UsersDocReadFields(ctx, **db, docid, &public_fields);
  if (!s.ok()) return s;
  if (public_fields) {
    GetOptions gopts;
    gopts.rev = rev;
    auto doc = (*db)->Get(docid, gopts);
    if (!doc.ok()) return doc.status();
    s = StripToPublicFields(*public_fields, &*doc);
    if (!s.ok()) return s;
  }
  auto opened = (*db)->OpenAttachment(docid, name, rev);
  if (!opened.ok()) return opened.status();
  AttachmentReader& reader = **opened;
  const AttachmentInfo& info = reader.info();
  const std::string etag = DigestETag(info.digest);
  ctx.res.AddHeader("ETag", etag);
  ctx.res.AddHeader("Cache-Control", "must-revalidate");
  const std::string* inm = ctx.req.Header("if-none-match");
  if (inm != nullptr && *inm == etag) {
    ctx.res.Send(304, "", "");
    return Status::OK();
  }
  ctx.res.AddHeader("Accept-Ranges", "bytes");
  bool unsatisfiable = false;
  auto ranges = ParseRanges(ctx.req.Header("range"), info.length, &unsatisfiable);
  if (unsatisfiable) return RangeNotSatisfiable(ctx, info.length);
  Status error;
  if (ranges && ranges->size() == 1) {
    const ByteRange& r = ranges->front();
    ctx.res.AddHeader("Content-Range", "bytes " + std::to_string(r.first) + "-" +
                                           std::to_string(r.last) + "/" +
                                           std::to_string(info.length));
    if (!ctx.res.StartFixed(206, info.content_type, r.last - r.first + 1)) return Status::OK();
    if (ctx.req.method != "HEAD") StreamRange(ctx, reader, r.first, r.last - r.first + 1, &error);
    ctx.res.EndChunked();
    return Status::OK();  // the head is out: an error can only cut the body short
  }
  if (ranges) {
    // Several ranges: multipart/byteranges, each part with its Content-Range.
    const std::string boundary = RandomUuidHex();
    if (!ctx.res.StartChunked(206, "multipart/byteranges; boundary=" + boundary)) {
      return Status::OK();
    }
    if (ctx.req.method == "HEAD") return Status::OK();
    bool first_part = true;
    for (const ByteRange& r : *ranges) {
      std::string head = first_part ? "" : "\r\n";
      first_part = false;
      head += MultipartPartHead(
          boundary, {{"Content-Type", info.content_type},
                     {"Content-Range", "bytes " + std::to_string(r.first) + "-" +
                                           std::to_string(r.last) + "/" +
                                           std::to_string(info.length)}});
      if (!ctx.res.WriteChunk(head)) return Status::OK();
      if (!StreamRange(ctx, reader, r.first, r.last - r.first + 1, &error)) return Status::OK();
    }
    ctx.res.WriteChunk(MultipartClose(boundary));
    ctx.res.EndChunked();
    return Status::OK();
  }
  // The stored gzip bytes as they are, for clients that take them.
  const std::string* accept_encoding = ctx.req.Header("accept-encoding");
  if (info.gzip && accept_encoding != nullptr &&
      accept_encoding->find("gzip") != std::string::npos) {
    ctx.res.AddHeader("Content-Encoding", "gzip");
    if (!ctx.res.StartFixed(200, info.content_type, info.encoded_length)) return Status::OK();
    if (ctx.req.method != "HEAD") {
      reader.ReadEncoded([&](std::string_view piece) { return ctx.res.WriteChunk(piece); }).ok();
    }
    ctx.res.EndChunked();
    return Status::OK();
  }
  if (!ctx.res.StartFixed(200, info.content_type, info.length)) return Status::OK();
  if (ctx.req.method != "HEAD") StreamRange(ctx, reader, 0, info.length, &error);
  ctx.res.EndChunked();
  return Status::OK();
}

Status SendAttachmentWritten(RequestContext& ctx, const DocUpdateResult& r, int status) {
  std::string out;
  AppendUpdateResult(&out, r, false);
  ctx.res.AddHeader("ETag", RevETag(r.rev));
  return ctx.SendJson(status, out);
}

Status ContentMd5Mismatch(RequestContext& ctx) {
  return ctx.SendJson(400, R"({"error":"content_md5_mismatch","reason":"Possible message corruption."})");
}

// The request's Content-Encoding, as CouchDB takes it: identity (or none),
// or gzip, whose body is decoded on the way in; anything else is 415.
Result<bool> GzipEncodedUpload(const RequestContext& ctx) {
  const std::string* h = ctx.req.Header("content-encoding");
  if (h == nullptr) return false;
  std::string e = *h;
  std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
  if (e.empty() || e == "identity") return false;
  if (e == "gzip") return true;
  return Status(Status::Code::kBadContentType, "Only gzip and identity content-encodings are supported");
}

// CouchDB's reason for a body that is not gzip (couch_httpd:maybe_decompress).
Status NotGzip() { return Status::BadRequest("Request body is not properly gzipped."); }

// A Content-Encoding: gzip upload decoded a piece at a time into `sink`, the
// decoded bytes counted against the attachment size limit: the request's
// limit applies to the bytes sent, and gzip of zeros decodes ~1000 to 1.
// The one decode path of attachment uploads, streamed or buffered, so the
// same request gets the same answer at any size.
class GzipUpload {
 public:
  GzipUpload(uint64_t max_bytes, std::function<Status(std::string_view)> sink)
      : max_bytes_(max_bytes), sink_(std::move(sink)) {}

  Status Feed(std::string_view piece) {
    Status written;
    bool stopped = false;
    const bool ok = inflater_.Feed(piece, [&](std::string_view decoded) {
      decoded_ += decoded.size();
      written = decoded_ > max_bytes_ ? TooLarge() : sink_(decoded);
      return written.ok();
    }, &stopped);
    if (!written.ok()) return written;
    return ok ? Status::OK() : NotGzip();
  }
  // After the last piece: NotGzip unless every gzip member ended.
  Status Finish() const { return inflater_.done() ? Status::OK() : NotGzip(); }

 private:
  // As the request parser refuses a streamed body past the same limit.
  static Status TooLarge() { return {Status::Code::kAttachmentTooLarge, "Attachment is too large"}; }

  const uint64_t max_bytes_;
  const std::function<Status(std::string_view)> sink_;
  GzipInflater inflater_;
  uint64_t decoded_ = 0;
};

// The body as it comes off the socket, into an AttachmentWriter a piece at a
// time: memory stays at the connection's input buffer and a chunk or two of
// the writer's, whatever the size. A body cut short drops the writer, which
// deletes what it stored.
Result<DocUpdateResult> PutStreamedAttachment(RequestContext& ctx, Database& db,
                                              const std::string& docid, const std::string& name,
                                              const std::string& rev,
                                              const std::string& content_type,
                                              const UpdateOptions& opts, bool gzipped,
                                              bool* md5_mismatch) {
  auto writer = db.NewAttachmentWriter(docid, name, rev, content_type, opts);
  if (!writer.ok()) return writer.status();
  const std::string* content_md5 = ctx.req.Header("content-md5");
  std::optional<Md5> md5;
  if (content_md5 != nullptr) md5.emplace();
  std::optional<GzipUpload> gzip;
  if (gzipped) {
    gzip.emplace(ctx.server.store()->options().max_attachment_size,
                 [&](std::string_view decoded) { return (*writer)->Write(decoded); });
  }
  Status s = ctx.req.body_reader->Read([&](std::string_view piece) {
    if (md5) md5->Update(piece);  // Content-MD5 is of the bytes sent
    return gzip ? gzip->Feed(piece) : (*writer)->Write(piece);
  });
  if (!s.ok()) return s;
  if (gzip) {
    s = gzip->Finish();
    if (!s.ok()) return s;
  }
  if (md5 && *content_md5 != Base64Encode(md5->FinishRaw())) {
    *md5_mismatch = true;
    return Status::BadRequest("content_md5_mismatch");
  }
  return ctx.server.RunWrite([&] { return (*writer)->Commit(); });
}

// couch_users_db's before_doc_update and the _auth validate function run
// on an attachment's write into _users too, on the document it makes: the
// revision `rev` (engine spelling) names with the attachment changed,
// which neither reads, or, without one, a new document of nothing but the
// attachment ("doc.type must be user") unless a live one makes the write a
// conflict. A revision not stored is left to the write's own error.
Status CheckUsersAttachmentWrite(RequestContext& ctx, Database& db, const std::string& docid,
                                 const std::string& rev) {
  if (ctx.params[0] != kUsersDbName || IsDesignId(docid)) return Status::OK();
  GetOptions opts;
  opts.rev = rev;
  auto stored = db.Get(docid, opts);
  std::string body;
  if (rev.empty()) {
    if (stored.ok()) return Status::OK();
    body = "{}";
  } else {
    if (!stored.ok()) return Status::OK();
    body = std::move(*stored);
  }
  return PrepareUserDoc(docid, &body, UsersWriterOf(ctx.user, ctx.CheckAccess(db, true).ok(), db));
}

Status PutAttachment(RequestContext& ctx, std::string_view prefix) {
  const std::string docid = std::string(prefix) + ctx.params.at(1);
  const std::string& name = ctx.params.at(2);
  auto db = ctx.OpenDb(IsDesignId(docid));
  if (!db.ok()) return db.status();
  const std::string* type = ctx.req.Header("content-type");
  const std::string content_type = type != nullptr && !type->empty() ? *type : "application/octet-stream";
  UpdateOptions opts;
  opts.user = &ctx.user;
  auto gzipped = GzipEncodedUpload(ctx);
  if (!gzipped.ok()) return gzipped.status();
  std::string rev;
  Status checked = AttachmentWriteRev(ctx, &rev);
  if (!checked.ok()) return checked;
  checked = CheckUsersAttachmentWrite(ctx, **db, docid, rev);
  if (!checked.ok()) return checked;
  bool md5_mismatch = false;
  auto put = [&]() -> Result<DocUpdateResult> {
    if (ctx.req.body_reader != nullptr) {
      return PutStreamedAttachment(ctx, **db, docid, name, rev, content_type, opts, *gzipped,
                                   &md5_mismatch);
    }
    // A request without a body (or a server that buffers every body).
    if (const std::string* md5 = ctx.req.Header("content-md5")) {
      md5_mismatch = *md5 != Base64Encode(Md5Raw(ctx.req.body));
      if (md5_mismatch) return Status::BadRequest("content_md5_mismatch");
    }
    if (*gzipped) {
      std::string decoded;
      GzipUpload gzip(ctx.server.store()->options().max_attachment_size,
                      [&](std::string_view piece) {
                        decoded.append(piece);
                        return Status::OK();
                      });
      Status s = gzip.Feed(ctx.req.body);
      if (s.ok()) s = gzip.Finish();
      if (!s.ok()) return s;
      ctx.req.body = std::move(decoded);
    }
    return ctx.server.RunWrite([&] {
      return (*db)->PutAttachment(docid, name, rev, content_type, std::move(ctx.req.body), opts);
    });
  };
  auto r = put();
  if (md5_mismatch) return ContentMd5Mismatch(ctx);
  if (!r.ok()) return r.status();
  ctx.res.AddHeader("Location",
                    AbsoluteUrl(ctx, "/" + http::PercentEncode(ctx.params[0]) + "/" +
                                         EncodeDocIdForPath(docid) + "/" + http::PercentEncode(name)));
  return SendAttachmentWritten(ctx, *r, 201);
}

Status DeleteAttachment(RequestContext& ctx, std::string_view prefix) {
  const std::string docid = std::string(prefix) + ctx.params.at(1);
  auto db = ctx.OpenDb(IsDesignId(docid));
  if (!db.ok()) return db.status();
  std::string rev;
  Status s = AttachmentWriteRev(ctx, &rev);
  if (!s.ok()) return s;
  // Without a rev the write is a conflict or not found, checked no further.
  if (!rev.empty()) s = CheckUsersAttachmentWrite(ctx, **db, docid, rev);
  if (!s.ok()) return s;
  UpdateOptions opts;
  opts.user = &ctx.user;
  auto r = ctx.server.RunWrite(
      [&] { return (*db)->DeleteAttachment(docid, ctx.params.at(2), rev, opts); });
  if (!r.ok()) return r.status();
  return SendAttachmentWritten(ctx, *r, 200);
}

void AddAttachmentRoutes(Router& r, const std::string& pattern, std::string prefix) {
  r.Add("GET,HEAD", pattern, [prefix](RequestContext& c) { return GetAttachment(c, prefix); });
  r.Add("PUT", pattern, [prefix](RequestContext& c) { return PutAttachment(c, prefix); },
        Router::BodyMode::kStreamed);
  r.Add("DELETE", pattern, [prefix](RequestContext& c) { return DeleteAttachment(c, prefix); });
}

// The "follows" entries of a document's JSON, in order: name, type, length.
struct Follows {
  std::string name;
  std::string content_type;
  uint64_t length = 0;
};
std::vector<Follows> FollowsOf(const std::string& doc_json) {
  std::vector<Follows> out;
  if (doc_json.find("\"follows\":true") == std::string::npos) return out;
  json::Document d;
  if (!json::Parse(doc_json, &d).ok() || !d.IsObject()) return out;
  auto atts = d.FindMember("_attachments");
  if (atts == d.MemberEnd() || !atts->value.IsObject()) return out;
  for (const auto& m : atts->value.GetObject()) {
    auto f = m.value.FindMember("follows");
    if (f == m.value.MemberEnd() || !f->value.IsBool() || !f->value.GetBool()) continue;
    Follows& x = out.emplace_back();
    x.name.assign(json::View(m.name));
    auto ct = m.value.FindMember("content_type");
    if (ct != m.value.MemberEnd() && ct->value.IsString()) x.content_type.assign(json::View(ct->value));
    auto len = m.value.FindMember("length");
    if (len != m.value.MemberEnd() && len->value.IsUint64()) x.length = len->value.GetUint64();
  }
  return out;
}

std::string RevOf(const std::string& doc_json) {
  json::Document d;
  if (!json::Parse(doc_json, &d).ok() || !d.IsObject()) return {};
  auto r = d.FindMember("_rev");
  return r != d.MemberEnd() && r->value.IsString() ? std::string(json::View(r->value)) : "";
}

std::string QuoteHeaderValue(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// Writes the parts of a multipart/related document with `boundary`: the
// JSON, then each follows body. False when the peer is gone or a body
// could not be read (the response is then cut short).
bool WriteRelatedParts(RequestContext& ctx, Database& db, const std::string& docid,
                       const std::string& doc_json, const std::vector<Follows>& follows,
                       const std::string& boundary) {
  if (!ctx.res.WriteChunk(MultipartPartHead(boundary, {{"Content-Type", "application/json"}}))) {
    return false;
  }
  if (!ctx.res.WriteChunk(doc_json)) return false;
  const std::string rev = RevOf(doc_json);
  for (const Follows& f : follows) {
    auto reader = db.OpenAttachment(docid, f.name, rev);
    if (!reader.ok()) return false;
    std::string head = "\r\n" + MultipartPartHead(boundary,
                                                  {{"Content-Disposition",
                                                    "attachment; filename=" + QuoteHeaderValue(f.name)},
                                                   {"Content-Type", f.content_type},
                                                   {"Content-Length", std::to_string(f.length)}});
    if (!ctx.res.WriteChunk(head)) return false;
    Status error;
    if (!StreamRange(ctx, **reader, 0, f.length, &error)) return false;
  }
  return ctx.res.WriteChunk(MultipartClose(boundary));
}

}  // namespace

bool Accepts(const RequestContext& ctx, std::string_view type) {
  const std::string* accept = ctx.req.Header("accept");
  return accept != nullptr && accept->find(type) != std::string::npos;
}

Status ParseAttachmentOptions(RequestContext& ctx, GetOptions* opts) {
  // As CouchDB's other document read flags; the last atts_since wins.
  opts->attachments = ctx.FlagParam("attachments");
  opts->att_encoding_info = ctx.FlagParam("att_encoding_info");
  // parse_doc_query decodes it as it does open_revs, and reads it with
  // couch_doc:parse_revs: a revision no stored one can be is kept (it is no
  // ancestor, so every body is sent).
  json::Document since;
  const std::string* since_text = ctx.LastParam("atts_since");
  if (since_text != nullptr) {
    if (!json::Parse(*since_text, &since).ok()) return Status::BadRequest("invalid UTF-8 JSON");
    if (!since.IsArray()) return Status::BadRequest("Invalid list of revisions");
    for (const auto& r : since.GetArray()) {
      CouchRev rev = r.IsString() ? ParseCouchRev(json::View(r)) : CouchRev{};
      if (rev.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
      opts->atts_since.push_back(std::move(rev.text));
    }
    opts->attachments = true;  // CouchDB: atts_since implies attachments
  }
  return Status::OK();
}

Status SendDocMultipartRelated(RequestContext& ctx, Database& db, const std::string& docid,
                               GetOptions opts, const std::function<Status(std::string* doc_json)>& after_read) {
  opts.attachments_follow = true;
  auto doc = db.Get(docid, opts);
  if (!doc.ok()) return doc.status();
  ReplicatorReadFilter(ctx, db).Apply(docid, &*doc);
  if (after_read) {
    Status s = after_read(&*doc);
    if (!s.ok()) return s;
  }
  const std::vector<Follows> follows = FollowsOf(*doc);
  const std::string boundary = RandomUuidHex();
  const std::string rev = RevOf(*doc);
  if (!rev.empty()) ctx.res.AddHeader("ETag", RevETag(rev));
  if (!ctx.res.StartChunked(200, "multipart/related; boundary=\"" + boundary + "\"")) {
    return Status::OK();
  }
  if (ctx.req.method == "HEAD") return Status::OK();
  if (WriteRelatedParts(ctx, db, docid, *doc, follows, boundary)) ctx.res.EndChunked();
  return Status::OK();
}

bool WriteOpenRevPart(RequestContext& ctx, Database& db, const std::string& docid,
                      const std::string& doc_json, const std::string& boundary) {
  const std::vector<Follows> follows = FollowsOf(doc_json);
  if (follows.empty()) {
    return ctx.res.WriteChunk(MultipartPartHead(boundary, {{"Content-Type", "application/json"}})) &&
           ctx.res.WriteChunk(doc_json) && ctx.res.WriteChunk("\r\n");
  }
  const std::string inner = RandomUuidHex();
  return ctx.res.WriteChunk(MultipartPartHead(
             boundary, {{"Content-Type", "multipart/related; boundary=\"" + inner + "\""}})) &&
         WriteRelatedParts(ctx, db, docid, doc_json, follows, inner) &&
         ctx.res.WriteChunk("\r\n");
}

namespace {

// The parts of a multipart/related document PUT as they arrive: the first
// is the document's JSON, held until it ends (then the writer checks it and
// learns which entries follow); each later one streams into the writer.
class DocPartsHandler final : public MultipartPartHandler {
 public:
  // The JSON part is held whole: at most what a body read whole may be.
  static constexpr size_t kMaxDocPartBytes = 64u << 20;

  // `check`, when set, may refuse the document part before it is written,
  // or change its JSON.
  DocPartsHandler(Database& db, const std::string& docid, const UpdateOptions& opts,
                  std::function<Status(std::string* doc_json)> check = {})
      : db_(db), docid_(docid), opts_(opts), check_(std::move(check)) {}

  Status PartBegin(const MultipartPart&) override {
    return writer_ ? writer_->BeginBody() : Status::OK();
  }
  Status PartData(std::string_view bytes) override {
    if (writer_) return writer_->Write(bytes);
    if (doc_json_.size() + bytes.size() > kMaxDocPartBytes) {
      return Status(Status::Code::kDocumentTooLarge, "Document part too large");
    }
    doc_json_.append(bytes);
    return Status::OK();
  }
  Status PartEnd() override {
    if (writer_) return writer_->EndBody();
    if (check_) {
      Status s = check_(&doc_json_);
      if (!s.ok()) return s;
    }
    auto w = db_.NewDocBodiesWriter(docid_, doc_json_, opts_);
    if (!w.ok()) return w.status();
    writer_ = std::move(*w);
    std::string().swap(doc_json_);
    return Status::OK();
  }

  // Null until the document part has ended.
  DocBodiesWriter* writer() { return writer_.get(); }

 private:
  Database& db_;
  const std::string& docid_;
  const UpdateOptions& opts_;
  std::function<Status(std::string*)> check_;
  std::string doc_json_;
  std::unique_ptr<DocBodiesWriter> writer_;
};

}  // namespace

Status PutDocMultipart(RequestContext& ctx, Database& db, const std::string& docid,
                       const UpdateOptions& opts,
                       const std::function<Status(std::string* doc_json)>& check_doc,
                       DocUpdateResult* result) {
  const std::string* type = ctx.req.Header("content-type");
  std::string boundary;
  if (type == nullptr || !MultipartBoundary(*type, &boundary)) {
    return Status::BadRequest("Malformed multipart body: no boundary");
  }
  UpdateOptions with_user = opts;
  with_user.user = &ctx.user;
  const bool replicator_db = ctx.params[0] == replication::kReplicatorDbName;
  const bool users_db = ctx.params[0] == kUsersDbName;
  UsersWriter writer;
  if (users_db) {
    // The JSON part meets what a JSON PUT's body does: before_doc_update
    // and validate_doc_update run on every update, whoever writes it.
    writer = UsersWriterOf(ctx.user, ctx.CheckAccess(db, true).ok(), db);
    writer.new_edits = opts.new_edits;
  }
  auto check = [&](std::string* doc_json) {
    Status s = check_doc ? check_doc(doc_json) : Status::OK();
    if (!s.ok()) return s;
    if (users_db) return PrepareUserDoc(docid, doc_json, writer);
    if (!replicator_db) return s;
    // Not an object: the write refuses it with its own error.
    json::Document doc;
    if (!json::Parse(*doc_json, &doc).ok() || !doc.IsObject()) return Status::OK();
    return PrepareReplicatorWrite(ctx, db, docid, &doc, doc_json);
  };
  DocPartsHandler parts(db, docid, with_user, std::move(check));
  MultipartStreamParser parser(boundary, &parts);
  // Streamed off the socket when the server let the route take it so (the
  // bodies go to storage a chunk at a time), else from the buffered body.
  Status s = ctx.req.body_reader != nullptr
                 ? ctx.req.body_reader->Read([&](std::string_view piece) { return parser.Feed(piece); })
                 : parser.Feed(ctx.req.body);
  if (s.ok()) s = parser.Finish();
  if (!s.ok()) return s;
  if (parts.writer() == nullptr) return Status::BadRequest("Malformed multipart body: no document part");
  auto r = ctx.server.RunWrite([&] { return parts.writer()->Commit(); });
  if (!r.ok()) return r.status();
  *result = std::move(*r);
  return Status::OK();
}

void RegisterAttachmentEndpoints(CouchServer& server) {
  Router& r = server.router();
  AddAttachmentRoutes(r, "/{db}/{docid}/{*att}", "");
  AddAttachmentRoutes(r, "/{db}/_design/{ddoc}/{*att}", "_design/");
  // As CouchDB 3 (chttpd_db:db_req): any attachment path under _local/.
  r.Add("GET,HEAD,PUT,DELETE,POST,COPY", "/{db}/_local/{id}/{*att}", [](RequestContext&) {
    return Status::BadRequest("_local documents do not accept attachments.");
  });
}

}  // namespace settee
