#include "replication/http_endpoint.h"

#include <curl/curl.h>

#include <algorithm>

#include "replication/replication_id.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::replication {

namespace {

// The extra time a long poll's request gets over the feed's own timeout.
constexpr std::chrono::milliseconds kLongpollSlack{30'000};

Status NotCouch(const std::string& where) {
  return Status::BadRequest(where + " is not a CouchDB-compatible server");
}

Status ParseObject(const std::string& body, json::Document* d, const char* what) {
  if (!json::Parse(body, d).ok() || !d->IsObject()) {
    return Status::IOError(std::string("malformed ") + what + " response");
  }
  return Status::OK();
}

Status PerDocStatus(std::string_view error, std::string reason) {
  if (error == "forbidden") return Status::Forbidden(std::move(reason));
  if (error == "unauthorized") return Status::Unauthorized(std::move(reason));
  if (error == "conflict") return Status::Conflict(std::move(reason));
  return Status::BadRequest(std::string(error) + ": " + reason);
}

std::string StringMember(const json::Value& v, const char* name) {
  if (!v.IsObject()) return {};
  auto it = v.FindMember(name);
  return it != v.MemberEnd() && it->value.IsString() ? std::string(json::View(it->value)) : "";
}

void AppendStrings(const json::Value& v, std::vector<std::string>* out) {
  if (!v.IsArray()) return;
  for (const auto& s : v.GetArray()) {
    if (s.IsString()) out->emplace_back(json::View(s));
  }
}

}  // namespace

HttpEndpoint::HttpEndpoint(Url url, HttpEndpointOptions options,
                           std::shared_ptr<views::ViewFunctions> functions)
    : url_(std::move(url)),
      options_(options),
      client_([&] {
        HttpClientOptions http = options.http;
        if (!url_.user.empty()) {
          http.user = url_.user;
          http.password = url_.password;
        }
        return http;
      }()),
      bulk_get_(options.bulk_get),
      functions_(std::move(functions)) {}

ErlTerm HttpEndpoint::IdTerm() const { return RemoteEndpointTerm(url_); }

Result<std::string> HttpEndpoint::Call(std::string_view method, const std::string& rel,
                                       std::string_view body,
                                       std::chrono::milliseconds timeout) {
  auto r = client_.Request(method, url_.Join(rel), body, timeout);
  if (!r.ok()) return r.status();
  Status s = StatusFromResponse(*r);
  if (!s.ok()) return s;
  return std::move(r->body);
}

Result<EndpointInfo> HttpEndpoint::Open(bool create) {
  std::string root = url_.scheme + "://" + url_.host +
                     (url_.port ? ":" + std::to_string(url_.port) : "") + "/";
  auto welcome = client_.Request("GET", root);
  if (!welcome.ok()) return welcome.status();
  json::Document d;
  if (welcome->status >= 500) return StatusFromResponse(*welcome);
  if (!json::Parse(welcome->body, &d).ok() || !d.IsObject()) return NotCouch(root);
  Status s = client_.Login(root);
  if (!s.ok()) return s;
  auto info = Call("GET", "");
  if (!info.ok() && info.status().IsNotFound() && create) {
    auto made = Call("PUT", "");
    if (!made.ok() && made.status().code() != Status::Code::kFileExists) return made.status();
    info = Call("GET", "");
  }
  if (!info.ok()) {
    if (info.status().IsNotFound()) return Status::NotFound("Database does not exist.");
    return info.status();
  }
  s = ParseObject(*info, &d, "database info");
  if (!s.ok()) return s;
  if (!d.HasMember("update_seq")) return NotCouch(url_.WithoutCredentials());
  EndpointInfo out;
  out.db_name = StringMember(d, "db_name");
  out.update_seq = json::Serialize(d["update_seq"]);
  return out;
}

Status HttpEndpoint::Changes(const ChangesRequest& request, ChangesBatch* out) {
  const ChangesFilterSpec* filter = request.filter;
  const bool by_function = filter != nullptr && !filter->function.empty();
  if (by_function && function_for_ != filter) {
    if (!functions_) {
      return Status::BadRequest("a filter function on a remote source needs a JS runtime "
                                "(`settee serve`, `settee run`)");
    }
    // The remote database's name, for req.userCtx.db; its _security is
    // not ours to read (it takes an admin), so req.secObj is empty.
    std::string path = url_.path.substr(0, url_.path.size() - 1);
    std::string db_name = path.substr(path.rfind('/') + 1);
    int decoded_length = 0;
    if (char* decoded = curl_easy_unescape(nullptr, db_name.data(), static_cast<int>(db_name.size()),
                                           &decoded_length)) {
      db_name.assign(decoded, static_cast<size_t>(decoded_length));
      curl_free(decoded);
    }
    function_.emplace(functions_.get(), filter->function, "{}", filter->query_params, db_name,
                      "{}");
    function_for_ = filter;
  }
  out->rows.clear();
  std::string since = request.since;
  for (;;) {
    size_t page_rows = 0;
    // Rows in hand are not held back by a long poll for more.
    Status s = ChangesPage(request, since, out->rows.empty(), out, &page_rows);
    if (!s.ok()) return s;
    // A page the function thinned is not the end of the feed while the
    // server had a whole page to give (a short batch tells the replicator
    // it has caught up): read on until the batch is full, as a local
    // source's filtered scan does.
    if (!by_function || out->rows.size() >= request.limit || page_rows < request.limit) {
      return Status::OK();
    }
    since = out->last_seq;
  }
}

Status HttpEndpoint::ChangesPage(const ChangesRequest& request, const std::string& since_in,
                                 bool may_wait, ChangesBatch* out, size_t* page_rows) {
  std::string since = since_in;
  json::Document seq;
  if (json::Parse(since, &seq).ok() && seq.IsString()) since = json::View(seq);
  std::string rel = "_changes?style=all_docs&since=" + EscapeQuery(since) +
                    "&limit=" + std::to_string(request.limit);
  std::chrono::milliseconds timeout{0};
  if (may_wait && request.wait.count()) {
    rel += "&feed=longpoll&timeout=" + std::to_string(request.wait.count());
    timeout = request.wait + kLongpollSlack;
  }
  Result<std::string> body = std::string();
  const ChangesFilterSpec* filter = request.filter;
  if (filter != nullptr && !filter->selector.empty()) {
    body = Call("POST", rel + "&filter=_selector", "{\"selector\":" + filter->selector + "}", timeout);
  } else if (filter != nullptr && !filter->function.empty()) {
    // The documents come with the feed; the function runs on them here.
    body = Call("GET", rel + "&include_docs=true", {}, timeout);
  } else if (filter != nullptr && !filter->filter.empty()) {
    // The filter's req.query: query_params as query string parameters, as
    // CouchDB's replicator sends them.
    rel += "&filter=" + EscapeQuery(filter->filter);
    json::Document params;
    if (json::Parse(filter->query_params, &params).ok() && params.IsObject()) {
      for (const auto& m : params.GetObject()) {
        std::string value = m.value.IsString() ? std::string(json::View(m.value)) : json::Serialize(m.value);
        rel += "&" + EscapeQuery(json::View(m.name)) + "=" + EscapeQuery(value);
      }
    }
    body = Call("GET", rel, {}, timeout);
  } else if (request.doc_ids) {
    std::string filter = "{\"doc_ids\":";
    json::AppendStringArray(&filter, *request.doc_ids);
    filter += '}';
    body = Call("POST", rel + "&filter=_doc_ids", filter, timeout);
  } else {
    body = Call("GET", rel, {}, timeout);
  }
  if (!body.ok()) return body.status();
  json::Document d;
  Status s = ParseObject(*body, &d, "_changes");
  if (!s.ok()) return s;
  if (!d.HasMember("results") || !d["results"].IsArray() || !d.HasMember("last_seq")) {
    return Status::IOError("malformed _changes response");
  }
  *page_rows = d["results"].Size();
  for (const auto& row : d["results"].GetArray()) {
    if (!row.IsObject() || !row.HasMember("id") || !row["id"].IsString()) {
      return Status::IOError("malformed _changes row");
    }
    if (filter != nullptr && !filter->function.empty()) {
      if (!row.HasMember("doc") || !row["doc"].IsObject()) {
        return Status::IOError("_changes row without the doc include_docs asked for");
      }
      auto passes = function_->Passes(json::Serialize(row["doc"]), json::View(row["id"]));
      if (!passes.ok()) return passes.status();
      if (!*passes) continue;
    }
    Change& c = out->rows.emplace_back();
    c.id = json::View(row["id"]);
    if (row.HasMember("seq")) c.seq = json::Serialize(row["seq"]);
    if (row.HasMember("deleted") && row["deleted"].IsBool()) c.deleted = row["deleted"].GetBool();
    if (row.HasMember("changes") && row["changes"].IsArray()) {
      for (const auto& ch : row["changes"].GetArray()) {
        std::string rev = StringMember(ch, "rev");
        if (!rev.empty()) c.revs.push_back(std::move(rev));
      }
    }
  }
  out->last_seq = json::Serialize(d["last_seq"]);
  return Status::OK();
}

Status HttpEndpoint::RevsDiff(const std::vector<RevsDiffRequest>& request,
                              std::vector<RevsDiffResult>* out) {
  out->clear();
  std::string body = "{";
  for (size_t i = 0; i < request.size(); ++i) {
    if (i) body += ',';
    json::AppendQuoted(&body, request[i].id);
    body += ':';
    json::AppendStringArray(&body, request[i].revs);
  }
  body += '}';
  auto r = Call("POST", "_revs_diff", body);
  if (!r.ok()) return r.status();
  json::Document d;
  Status s = ParseObject(*r, &d, "_revs_diff");
  if (!s.ok()) return s;
  for (const auto& m : d.GetObject()) {
    RevsDiffResult& result = out->emplace_back();
    result.id = json::View(m.name);
    if (!m.value.IsObject()) continue;
    if (m.value.HasMember("missing")) AppendStrings(m.value["missing"], &result.missing);
    if (m.value.HasMember("possible_ancestors")) {
      AppendStrings(m.value["possible_ancestors"], &result.possible_ancestors);
    }
  }
  return Status::OK();
}

Status HttpEndpoint::FetchRevs(const std::vector<RevsDiffResult>& missing, DocBatch* out) {
  if (bulk_get_.value_or(true)) {
    bool unsupported = false;
    Status s = FetchWithBulkGet(missing, out, &unsupported);
    if (!unsupported) {
      if (s.ok()) bulk_get_ = true;
      return s;
    }
    bulk_get_ = false;
  }
  return FetchWithOpenRevs(missing, out);
}

Status HttpEndpoint::FetchWithBulkGet(const std::vector<RevsDiffResult>& missing,
                                      DocBatch* out, bool* unsupported) {
  std::string body = "{\"docs\":[";
  bool first = true;
  for (const RevsDiffResult& m : missing) {
    for (const std::string& rev : m.missing) {
      if (!first) body += ',';
      first = false;
      body += "{\"id\":";
      json::AppendQuoted(&body, m.id);
      body += ",\"rev\":";
      json::AppendQuoted(&body, rev);
      if (!m.possible_ancestors.empty()) {
        // Bodies the target has (CouchDB's replicator sends the same).
        body += ",\"atts_since\":";
        json::AppendStringArray(&body, m.possible_ancestors);
      }
      body += '}';
    }
  }
  body += "]}";
  auto r = client_.Request("POST", url_.Join("_bulk_get?revs=true&latest=true&attachments=true"), body);
  if (!r.ok()) return r.status();
  // Servers without _bulk_get (CouchDB 1.x, old pouchdb-server) say so with
  // 404, 405 or 400; only when we have not seen it work yet.
  if (!bulk_get_ && (r->status == 404 || r->status == 405 || r->status == 400)) {
    *unsupported = true;
    return Status::OK();
  }
  Status s = StatusFromResponse(*r);
  if (!s.ok()) return s;
  json::Document d;
  s = ParseObject(r->body, &d, "_bulk_get");
  if (!s.ok()) return s;
  if (!d.HasMember("results") || !d["results"].IsArray()) {
    return Status::IOError("malformed _bulk_get response");
  }
  for (const auto& result : d["results"].GetArray()) {
    if (!result.IsObject() || !result.HasMember("docs") || !result["docs"].IsArray()) continue;
    for (const auto& item : result["docs"].GetArray()) {
      if (item.IsObject() && item.HasMember("ok") && item["ok"].IsObject()) {
        out->Append(json::Serialize(item["ok"]));
      }
    }
  }
  return Status::OK();
}

Status HttpEndpoint::FetchWithOpenRevs(const std::vector<RevsDiffResult>& missing,
                                       DocBatch* out) {
  for (const RevsDiffResult& m : missing) {
    if (m.missing.empty()) continue;
    std::string revs;
    json::AppendStringArray(&revs, m.missing);
    std::string rel = EscapeDocId(m.id) + "?revs=true&latest=true&attachments=true&open_revs=" +
                      EscapeQuery(revs);
    if (!m.possible_ancestors.empty()) {
      std::string since;
      json::AppendStringArray(&since, m.possible_ancestors);
      rel += "&atts_since=" + EscapeQuery(since);
    }
    auto r = Call("GET", rel);
    if (!r.ok()) {
      if (r.status().IsNotFound()) continue;  // gone from the source meanwhile
      return r.status();
    }
    json::Document d;
    if (!json::Parse(*r, &d).ok() || !d.IsArray()) {
      return Status::IOError("malformed open_revs response");
    }
    for (const auto& item : d.GetArray()) {
      if (item.IsObject() && item.HasMember("ok") && item["ok"].IsObject()) {
        out->Append(json::Serialize(item["ok"]));
      }
    }
  }
  return Status::OK();
}

namespace {
constexpr std::string_view kBulkDocsHead = "{\"new_edits\":false,\"docs\":";
constexpr std::string_view kBulkDocsTail = "}";
}  // namespace

Status HttpEndpoint::WriteDocs(const DocBatch& docs, std::vector<DocUpdateResult>* failures) {
  failures->clear();
  const std::vector<std::string>& all = docs.docs();
  // Requests of at most max_request_bytes, counting the envelope, the
  // brackets and the commas: a batch of documents with attachment bodies
  // can pass what the target reads whole (settee's --max-request-size,
  // CouchDB's max_http_request_size).
  const size_t cap = std::max<size_t>(options_.max_request_bytes, 1);
  const size_t envelope = kBulkDocsHead.size() + 2 + kBulkDocsTail.size();
  size_t i = 0;
  while (i < all.size()) {
    size_t end = i + 1, bytes = envelope + all[i].size();
    while (end < all.size() && bytes + 1 + all[end].size() <= cap) bytes += 1 + all[end++].size();
    Status s = WriteDocRange(docs, i, end, failures);
    if (!s.ok()) return s;
    i = end;
  }
  return Status::OK();
}

Status HttpEndpoint::WriteDocRange(const DocBatch& batch, size_t begin, size_t end,
                                   std::vector<DocUpdateResult>* failures) {
  const std::vector<std::string>& docs = batch.docs();
  const bool single = end - begin == 1;
  // A document too big for one request goes as multipart/related when it
  // has attachment bodies to stream; one without any goes in a _bulk_docs
  // of its own, as CouchDB's replicator sends it (the target may take it).
  bool tried_multipart = false;
  if (single && docs[begin].size() > options_.max_request_bytes) {
    auto sent = PutMultipart(docs[begin], failures);
    if (!sent.ok()) return sent.status();
    if (*sent) return Status::OK();
    tried_multipart = true;
  }
  std::string body(kBulkDocsHead);
  batch.AppendText(begin, end, &body);
  body += kBulkDocsTail;
  auto r = Call("POST", "_bulk_docs", body);
  if (!r.ok() && r.status().code() == Status::Code::kTooLarge) {
    std::string().swap(body);
    // The target reads less than we sent: halves, down to one document
    // each, which goes as multipart/related when it has bodies, and is
    // otherwise a failure of that document (CouchDB counts a 413 as one).
    if (single) {
      if (!tried_multipart) {
        auto sent = PutMultipart(docs[begin], failures);
        if (!sent.ok()) return sent.status();
        if (*sent) return Status::OK();
      }
      json::Document d;
      (void)json::Parse(docs[begin], &d);
      DocUpdateResult& f = failures->emplace_back();
      f.id = d.IsObject() ? StringMember(d, "_id") : std::string();
      f.rev = d.IsObject() ? StringMember(d, "_rev") : std::string();
      f.status = r.status();
      return Status::OK();
    }
    const size_t mid = begin + (end - begin) / 2;
    Status s = WriteDocRange(batch, begin, mid, failures);
    return s.ok() ? WriteDocRange(batch, mid, end, failures) : s;
  }
  if (!r.ok()) return r.status();
  json::Document d;
  if (!json::Parse(*r, &d).ok() || !d.IsArray()) {
    return Status::IOError("malformed _bulk_docs response");
  }
  // CouchDB lists only failures for new_edits=false; PouchDB lists every doc.
  for (const auto& item : d.GetArray()) {
    std::string error = StringMember(item, "error");
    if (error.empty()) continue;
    DocUpdateResult& f = failures->emplace_back();
    f.id = StringMember(item, "id");
    f.rev = StringMember(item, "rev");
    f.status = PerDocStatus(error, StringMember(item, "reason"));
  }
  return Status::OK();
}

// One document as CouchDB's replicator sends a document with attachments:
// PUT ?new_edits=false, multipart/related, the JSON first with each inline
// body's entry marked "follows", then the bodies in the entries' order.
// The target streams the bodies into storage, so the request is not held
// to its limit on bodies read whole. A document the target still refuses
// is a failure of that document, as in _bulk_docs.
Result<bool> HttpEndpoint::PutMultipart(const std::string& doc_json,
                                        std::vector<DocUpdateResult>* failures) {
  std::string id, rev, header;
  std::vector<std::pair<std::string, std::string>> parts;  // content type, bytes
  {
    json::Document d;
    if (!json::Parse(doc_json, &d).ok() || !d.IsObject()) {
      return Status::Internal("replicated document is not a JSON object");
    }
    id = StringMember(d, "_id");
    rev = StringMember(d, "_rev");
    auto atts = d.FindMember("_attachments");
    if (atts != d.MemberEnd() && atts->value.IsObject()) {
      for (auto& entry : atts->value.GetObject()) {
        json::Value& att = entry.value;
        if (!att.IsObject()) continue;
        auto data = att.FindMember("data");
        if (data == att.MemberEnd() || !data->value.IsString()) continue;
        std::string bytes;
        if (!Base64Decode(json::View(data->value), &bytes)) {
          return Status::Internal("replicated attachment body is not base64");
        }
        att.RemoveMember("data");
        // Inline data is always the identity bytes (CouchDB gunzips it
        // too), so the part is sent as such: an entry that kept its
        // `encoding` would have the target gunzip plain bytes, and the
        // digest of an encoded entry is the peer's of the encoded bytes,
        // which the target would check the identity part against.
        auto encoding = att.FindMember("encoding");
        if (encoding != att.MemberEnd() &&
            !(encoding->value.IsString() && json::View(encoding->value) == "identity")) {
          att.RemoveMember("digest");
        }
        att.RemoveMember("encoding");
        att.RemoveMember("encoded_length");
        att.RemoveMember("length");
        att.AddMember("length", static_cast<uint64_t>(bytes.size()), d.GetAllocator());
        att.AddMember("follows", true, d.GetAllocator());
        parts.emplace_back(StringMember(att, "content_type"), std::move(bytes));
      }
    }
    if (parts.empty()) return false;  // nothing to stream: the caller uses _bulk_docs
    header = json::Serialize(d);
  }  // the parsed copy (base64 included) is freed before the body is built
  const std::string boundary = RandomUuidHex();
  const std::string delimiter = "\r\n--" + boundary + "\r\n";
  size_t size = header.size() + 2 * delimiter.size() + 64;
  for (const auto& [type, bytes] : parts) size += delimiter.size() + type.size() + 20 + bytes.size();
  std::string body;
  body.reserve(size);
  body += "--" + boundary + "\r\nContent-Type: application/json\r\n\r\n";
  body += header;
  std::string().swap(header);
  for (auto& [type, bytes] : parts) {
    body += delimiter;
    if (!type.empty()) body += "Content-Type: " + type + "\r\n";
    body += "\r\n";
    body += bytes;
    std::string().swap(bytes);  // each body is held once: in the request
  }
  body += "\r\n--" + boundary + "--";
  // No cap on the whole request (a big body over a slow link takes what it
  // takes); it fails when the transfer stalls for request_timeout.
  auto r = client_.Request("PUT", url_.Join(EscapeDocId(id) + "?new_edits=false"), body,
                           HttpClient::kUntilIdle, "application/json",
                           "multipart/related; boundary=\"" + boundary + "\"");
  if (!r.ok()) return r.status();
  Status s = StatusFromResponse(*r);
  if (s.ok()) return true;
  switch (s.code()) {
    case Status::Code::kForbidden:
    case Status::Code::kUnauthorized:
    case Status::Code::kConflict:
    case Status::Code::kBadRequest:
    case Status::Code::kTooLarge: {
      DocUpdateResult& f = failures->emplace_back();
      f.id = id;
      f.rev = rev;
      f.status = std::move(s);
      return true;
    }
    default:
      return s;
  }
}

Result<std::string> HttpEndpoint::GetLocal(std::string_view id) {
  return Call("GET", EscapeDocId(id));
}

Status HttpEndpoint::PutLocal(std::string_view id, std::string_view json_text) {
  auto r = Call("PUT", EscapeDocId(id), json_text);
  if (r.ok() || !r.status().IsConflict()) return r.status();
  // PouchDB keeps MVCC on _local documents: write over the current rev.
  auto current = GetLocal(id);
  if (!current.ok()) return current.status();
  json::Document d;
  if (!json::Parse(*current, &d).ok() || !d.IsObject()) {
    return Status::IOError("malformed local document");
  }
  std::string body = "{\"_rev\":";
  json::AppendQuoted(&body, StringMember(d, "_rev"));
  if (json_text.size() > 2) body += ',';
  body += json_text.substr(1);
  r = Call("PUT", EscapeDocId(id), body);
  return r.ok() ? Status::OK() : r.status();
}

}  // namespace settee::replication
