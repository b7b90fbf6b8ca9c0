// The `native.db*` functions behind js/prelude/pouchdb.js's PouchDB class. Each is a
// thin synchronous translation onto settee::Database (include/settee/
// database.h): JS values in, JSON text through the engine, V8 values out.
// Errors are thrown as PouchDB-shaped errors (IsolateThread::MakeError).
// Options arrive as JSON text (js/prelude/pouchdb.js drops callbacks from them).
#include <cstring>
#include <algorithm>
#include <limits>
#include <optional>

#include <v8-container.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>
#include <v8-template.h>

#include "js/attachment_values.h"
#include "js/body_jobs.h"
#include "js/convert.h"
#include "js/doc_shapes.h"
#include "js/doc_split.h"
#include "js/isolate_thread.h"
#include "util/couch_json.h"
#include "util/digest.h"
#include "util/http_status.h"
#include "settee/store.h"
#include "storage/document.h"
#include "storage/mango_selector.h"
#include "util/json.h"

namespace settee::js {

namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

IsolateThread* Self(const Args& args) { return IsolateThread::From(args.GetIsolate()); }

// The database behind handle args[0], or nullptr with a JS error thrown.
// Borrowed for this call (IsolateThread::Db).
Database* DbArg(const Args& args) {
  IsolateThread* t = Self(args);
  int h = args[0]->IsInt32() ? args[0].As<v8::Int32>()->Value() : -1;
  auto db = t->Db(h);
  if (!db) t->ThrowStatus(Status::NotFound("database handle is closed"));
  return db;
}

bool Fail(const Args& args, const Status& s) {
  Self(args)->ThrowStatus(s);
  return false;
}

// Parses options JSON text in args[i] (undefined = no options).
bool OptsArg(const Args& args, int i, json::Document* doc) {
  if (args[i]->IsUndefined() || args[i]->IsNull()) {
    doc->SetObject();
    return true;
  }
  Status s = json::Parse(ToUtf8(args.GetIsolate(), args[i]), doc);
  if (s.ok() && !doc->IsObject()) s = Status::BadRequest("options must be an object");
  return s.ok() || Fail(args, s);
}

bool Bool(const json::Value& o, const char* key, bool dflt = false) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd()) return dflt;
  if (it->value.IsBool()) return it->value.GetBool();
  if (it->value.IsString()) return json::View(it->value) == "true";
  if (it->value.IsNumber()) return it->value.GetDouble() != 0;
  return dflt;
}

std::string String(const json::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsString() ? std::string(json::View(it->value)) : std::string();
}

bool Has(const json::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && !it->value.IsNull();
}

uint64_t Uint(const json::Value& o, const char* key, uint64_t dflt) {
  auto it = o.FindMember(key);
  if (it == o.MemberEnd()) return dflt;
  if (it->value.IsNumber()) {
    double d = it->value.GetDouble();
    return d <= 0 ? 0 : (d >= 1.8e19 ? dflt : static_cast<uint64_t>(d));
  }
  if (it->value.IsString()) {
    try {
      return std::stoull(std::string(json::View(it->value)));
    } catch (...) {
      return dflt;
    }
  }
  return dflt;
}

// The attachment read options of a get/open_revs options object.
void AttachmentOpts(const json::Value& o, GetOptions* opts) {
  opts->attachments = Bool(o, "attachments");
  opts->att_encoding_info = Bool(o, "att_encoding_info");
  auto since = o.FindMember("atts_since");
  if (since != o.MemberEnd() && since->value.IsArray()) {
    for (const auto& r : since->value.GetArray()) {
      if (r.IsString()) opts->atts_since.emplace_back(json::View(r));
    }
  }
}

// The bytes of an ArrayBufferView or ArrayBuffer argument; false if it is
// neither.
bool BytesArg(v8::Local<v8::Value> v, std::string_view* out) {
  if (v->IsArrayBufferView()) {
    auto view = v.As<v8::ArrayBufferView>();
    const char* base = static_cast<const char*>(view->Buffer()->GetBackingStore()->Data());
    *out = std::string_view(base == nullptr ? "" : base + view->ByteOffset(), view->ByteLength());
    return true;
  }
  if (v->IsArrayBuffer()) {
    auto ab = v.As<v8::ArrayBuffer>();
    const char* base = static_cast<const char*>(ab->GetBackingStore()->Data());
    *out = std::string_view(base == nullptr ? "" : base, ab->ByteLength());
    return true;
  }
  return false;
}

// The whole decoded body of `reader`, read straight into a new ArrayBuffer.
Status ReadAttachmentBytes(v8::Isolate* isolate, AttachmentReader& reader,
                           v8::Local<v8::Uint8Array>* out) {
  const uint64_t length = reader.info().length;
  auto ab = v8::ArrayBuffer::New(isolate, length);
  char* dst = static_cast<char*>(ab->GetBackingStore()->Data());
  uint64_t at = 0;
  Status s = reader.Read(0, length, [&](std::string_view piece) {
    if (at + piece.size() > length) return false;  // the header lied: stop
    std::memcpy(dst + at, piece.data(), piece.size());
    at += piece.size();
    return true;
  });
  if (s.ok() && at != length) s = Status::Corruption("attachment body shorter than its length");
  if (s.ok()) *out = v8::Uint8Array::New(ab, 0, length);
  return s;
}

// Returns the parsed value, or an empty handle with the exception pending.
void ReturnJson(const Args& args, std::string_view json) {
  v8::Local<v8::Value> v;
  if (JsonToV8(args.GetIsolate()->GetCurrentContext(), json).ToLocal(&v)) args.GetReturnValue().Set(v);
}

// Serializes a JS document, throwing a bad_request PouchDB error on failure.
// `doc` is JSON text already (js/prelude/pouchdb.js's fast path) or a JS value.
bool DocToJson(const Args& args, v8::Local<v8::Value> doc, std::string* out) {
  v8::Isolate* isolate = args.GetIsolate();
  if (doc->IsString()) {
    StringToUtf8(isolate, doc.As<v8::String>(), out);
    return true;
  }
  Status s;
  {
    v8::TryCatch tc(isolate);
    s = V8ToJson(isolate->GetCurrentContext(), doc, out);
    if (s.ok()) return true;
    if (tc.HasCaught()) {
      tc.ReThrow();  // a toJSON() or getter threw: keep its error
      return false;
    }
  }
  // Thrown outside the TryCatch above, which would swallow it.
  std::string reason = s.reason();
  if (reason.rfind("value", 0) == 0) reason = "doc" + reason.substr(5);
  return Fail(args, Status::BadRequest(reason));
}

void AppendError(std::string* out, const Status& s, int http) {
  *out += "\"status\":" + std::to_string(http) + ",\"name\":";
  json::AppendQuoted(out, s.ErrorName());
  *out += ",\"message\":";
  json::AppendQuoted(out, s.reason());
  *out += ",\"error\":true,\"reason\":";
  json::AppendQuoted(out, s.reason());
}

int Http(const Status& s) { return HttpStatusFor(s.code()); }

v8::Local<v8::Array> Pair(v8::Isolate* isolate, std::string_view a, std::string_view b) {
  v8::Local<v8::Value> items[] = {ToV8String(isolate, a), ToV8String(isolate, b)};
  return v8::Array::New(isolate, items, 2);
}

//////// open / close / destroy / info

void DbOpen(const Args& args) {
  IsolateThread* t = Self(args);
  Store* store = t->store();
  if (!store) {
    Fail(args, Status(Status::Code::kInvalidOperation, "no settee store is attached to this isolate"));
    return;
  }
  std::string name = ToUtf8(args.GetIsolate(), args[0]);
  auto db = store->OpenDatabase(name);
  if (!db.ok() && db.status().IsNotFound()) {
    db = store->CreateDatabase(name);
    // Another isolate may have created it first.
    if (!db.ok() && db.status().code() == Status::Code::kFileExists) db = store->OpenDatabase(name);
  }
  if (!db.ok()) {
    Fail(args, db.status());
    return;
  }
  args.GetReturnValue().Set(t->OpenDb(std::move(db.value())));
}

void DbClose(const Args& args) {
  if (args[0]->IsInt32()) Self(args)->CloseDb(args[0].As<v8::Int32>()->Value());
}

void DbDestroy(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  IsolateThread* t = Self(args);
  Status s = t->store()->DeleteDatabase(db->name());
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  t->CloseDb(args[0].As<v8::Int32>()->Value());
}

void DbInfo(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  auto info = db->Info();
  if (!info.ok()) {
    Fail(args, info.status());
    return;
  }
  std::string out = "{\"db_name\":";
  json::AppendQuoted(&out, info->db_name);
  out += ",\"doc_count\":" + std::to_string(info->doc_count) +
         ",\"doc_del_count\":" + std::to_string(info->doc_del_count) +
         ",\"update_seq\":" + std::to_string(info->update_seq) +
         ",\"purge_seq\":" + std::to_string(info->purge_seq) +
         ",\"sizes\":{\"active\":" + std::to_string(info->sizes_active) +
         ",\"external\":" + std::to_string(info->sizes_external) +
         ",\"file\":" + std::to_string(info->sizes_file) + "}}";
  ReturnJson(args, out);
}

void DbCompact(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  Status s = db->Compact();
  if (!s.ok()) Fail(args, s);
}

// dbCompactDocs(h, ids): the non-leaf bodies of these documents go
// (PouchDB's auto_compaction, run by js/prelude/pouchdb.js after a write).
void DbCompactDocs(const Args& args) {
  auto db = DbArg(args);
  if (!db || !args[1]->IsArray()) return;
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Array> list = args[1].As<v8::Array>();
  std::vector<std::string> ids;
  ids.reserve(list->Length());
  for (uint32_t i = 0; i < list->Length(); ++i) {
    v8::Local<v8::Value> v;
    if (!list->Get(ctx, i).ToLocal(&v)) return;
    if (v->IsString()) ids.push_back(ToUtf8(isolate, v));
  }
  Status s = db->CompactDocuments(ids);
  if (!s.ok()) Fail(args, s);
}

// dbPurge(h, id, rev): pouchdb-core 9's purge(docId, rev) on the engine:
// {"ok":true,"deletedRevs":[leaf, its unshared ancestors...],
// "documentWasRemovedCompletely":bool}; {"notLeaf":true} or {"noRev":true}
// for the two refusals pouchdb-merge's findPathToLeaf makes (the prelude
// rejects with its message, as PouchDB does); a missing document fails
// with 404 "missing".
//
// The purge itself decides whether `rev` is a leaf (one step: no other
// isolate's write can come between a check and the purge); a refusal is
// told apart afterwards from the document's record alone (no body is
// read). Unlike PouchDB, a refused purge is still logged as a purge info,
// as CouchDB's _purge logs every request.
void DbPurge(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  const std::string id = ToUtf8(isolate, args[1]);
  const std::string rev = ToUtf8(isolate, args[2]);
  std::vector<PurgeResult> out;
  Status s = db->Purge({{id, {rev}}}, &out);
  if (!s.ok() || out.empty()) {
    Fail(args, s.ok() ? Status::Internal("purge gave no result") : s);
    return;
  }
  if (out[0].purged.empty()) {
    Database::WinnerBuffers buffers;
    std::string_view winner_rev, body;
    s = db->GetWinner(id, &buffers, &winner_rev, &body);
    if (s.IsNotFound() && s.reason() == "deleted") s = Status::OK();  // a tombstone is a document
    if (s.code() == Status::Code::kInvalidOperation) s = Status::NotFound("missing");  // _local
    if (!s.ok()) {
      Fail(args, s);
      return;
    }
    std::vector<RevsDiffResult> diff;
    s = db->RevsDiff({{id, {rev}}}, &diff);
    if (!s.ok()) {
      Fail(args, s);
      return;
    }
    ReturnJson(args, diff.empty() ? R"({"notLeaf":true})" : R"({"noRev":true})");
    return;
  }
  std::string json = R"({"ok":true,"deletedRevs":)";
  json::AppendStringArray(&json, out[0].removed);
  json += R"(,"documentWasRemovedCompletely":)";
  json += out[0].doc_removed ? "true}" : "false}";
  ReturnJson(args, json);
}

// dbSetRevsLimit(h, n): PouchDB's revs_limit option (the database's
// _revs_limit: later writes keep at most n revisions of history).
void DbSetRevsLimit(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  double n = args[1]->IsNumber() ? args[1].As<v8::Number>()->Value() : 0;
  if (!(n >= 1 && n <= std::numeric_limits<uint32_t>::max())) {
    Fail(args, Status::BadRequest("revs_limit must be a positive integer"));
    return;
  }
  Status s = db->SetRevsLimit(static_cast<uint32_t>(n));
  if (!s.ok()) Fail(args, s);
}

void DbUpdateSeq(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  args.GetReturnValue().Set(static_cast<double>(db->UpdateSeq()));
}

//////// documents

// dbPut(h, doc, replicator_mode) -> [id, rev]
void DbPut(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  std::string json;
  if (!DocToJson(args, args[1], &json)) return;
  UpdateOptions opts;
  opts.new_edits = !args[2]->IsTrue();
  opts.check_local_revs = true;  // PouchDB's _local rule (UpdateOptions)
  auto r = db->Put({}, json, opts);
  if (!r.ok()) {
    Fail(args, r.status());
    return;
  }
  if (!r->status.ok()) {
    Fail(args, r->status);
    return;
  }
  args.GetReturnValue().Set(Pair(args.GetIsolate(), r->id, r->rev));
}

// dbRemove(h, id, rev) -> [id, rev]
void DbRemove(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  UpdateOptions opts;
  opts.check_local_revs = true;  // PouchDB's _local rule (UpdateOptions)
  auto r = db->Delete(ToUtf8(isolate, args[1]), ToUtf8(isolate, args[2]), opts);
  if (!r.ok()) {
    Fail(args, r.status());
    return;
  }
  if (!r->status.ok()) {
    Fail(args, r->status);
    return;
  }
  args.GetReturnValue().Set(Pair(isolate, r->id, r->rev));
}

// dbGet(h, id, optsJson?) -> doc
void DbGet(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  GetOptions opts;
  bool binary = false;
  if (!args[2]->IsUndefined()) {
    json::Document o;
    if (!OptsArg(args, 2, &o)) return;
    opts.rev = String(o, "rev");
    opts.revs = Bool(o, "revs");
    opts.revs_info = Bool(o, "revs_info");
    opts.conflicts = Bool(o, "conflicts");
    opts.deleted_conflicts = Bool(o, "deleted_conflicts");
    opts.local_seq = Bool(o, "local_seq");
    opts.latest = Bool(o, "latest");
    if (Bool(o, "meta")) opts.conflicts = opts.deleted_conflicts = opts.revs_info = true;
    AttachmentOpts(o, &opts);
    binary = Bool(o, "binary");
  }
  // The id is converted into a reused buffer: db.get is the hot path.
  thread_local std::string id;
  v8::Isolate* isolate = args.GetIsolate();
  if (args[1]->IsString()) {
    StringToUtf8(isolate, args[1].As<v8::String>(), &id);
  } else {
    id = ToUtf8(isolate, args[1]);
  }
  if (opts.attachments) {
    // Bodies become Uint8Arrays or base64 strings straight from the store.
    Status error;
    v8::Local<v8::Value> doc;
    if (GetDocWithAttachments(isolate, *db, id, opts, binary, &error).ToLocal(&doc)) {
      args.GetReturnValue().Set(doc);
    } else if (!error.ok()) {
      Fail(args, error);
    }
    return;
  }
  auto r = db->Get(id, opts);
  if (!r.ok()) {
    Fail(args, r.status());
    return;
  }
  ReturnJson(args, *r);
}

// dbGetFlat(h, id) -> [shape, values...] | doc: db.get(id) without options.
// A flat document comes as its shape and values (js/doc_shapes.h), which
// js/prelude/pouchdb.js builds into the object; any other as dbGet's doc.
// The engine hands over the winner's revision and body (Database::GetWinner)
// into buffers reused call to call: no JSON text of the whole document is
// built for a flat one, and none scanned again.
void DbGetFlat(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  thread_local std::string id;  // reused: db.get is the hot path
  thread_local Database::WinnerBuffers buffers;
  // A big document's buffers are let go after the call rather than held by
  // the thread for good.
  struct Trim {
    ~Trim() {
      constexpr size_t kKeep = 64 << 10;
      if (buffers.key.capacity() > kKeep) std::string().swap(buffers.key);
      if (buffers.record.capacity() > kKeep) std::string().swap(buffers.record);
      if (buffers.body.capacity() > kKeep) std::string().swap(buffers.body);
    }
  } trim;
  v8::Isolate* isolate = args.GetIsolate();
  // js/prelude/pouchdb.js calls it only with a string (anything else goes
  // through db.get's checks to dbGet).
  if (!args[1]->IsString()) {
    Fail(args, Status::BadRequest("dbGetFlat takes a string id"));
    return;
  }
  v8::Local<v8::String> id_string = args[1].As<v8::String>();
  StringToUtf8(isolate, id_string, &id);
  if (IsLocalDocId(id)) {  // GetWinner does not take them
    auto r = db->Get(id, GetOptions());
    if (!r.ok()) {
      Fail(args, r.status());
      return;
    }
    ReturnJson(args, *r);
    return;
  }
  std::string_view rev, body;
  Status s = db->GetWinner(id, &buffers, &rev, &body);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  v8::Local<v8::Array> flat;
  if (FlatDocValuesOf(isolate, id_string, id, rev, body).ToLocal(&flat)) {
    args.GetReturnValue().Set(flat);
    return;
  }
  // Not flat: the text Database::Get gives.
  std::string json;
  couch_json::OpenDocJson(&json, id, rev, false, body);
  json.push_back('}');
  ReturnJson(args, json);
}

// docShapeNames(shape) -> [name...]: the member names of a dbGetFlat shape.
void DocShapeNamesFn(const Args& args) {
  uint32_t index = args[0]->IsUint32() ? args[0].As<v8::Uint32>()->Value() : UINT32_MAX;
  auto names = DocShapeNames(args.GetIsolate(), index);
  if (!names) {
    Fail(args, Status(Status::Code::kInternal, "no such document shape"));
    return;
  }
  args.GetReturnValue().Set(*names);
}

// dbOpenRevs(h, id, optsJson) -> [{ok: doc} | {missing: rev}]
void DbOpenRevs(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  json::Document o;
  if (!OptsArg(args, 2, &o)) return;
  std::vector<std::string> revs;
  auto it = o.FindMember("open_revs");
  if (it != o.MemberEnd() && it->value.IsArray()) {
    for (auto& r : it->value.GetArray()) {
      if (!r.IsString()) {
        Fail(args, Status::BadRequest("Invalid rev format"));
        return;
      }
      revs.emplace_back(json::View(r));
    }
    if (revs.empty()) {
      args.GetReturnValue().Set(v8::Array::New(args.GetIsolate()));
      return;
    }
  } else if (!(it != o.MemberEnd() && it->value.IsString() && json::View(it->value) == "all")) {
    // The server's reason for the same (CouchDB's couch_doc:parse_revs).
    Fail(args, Status::BadRequest("Invalid list of revisions"));
    return;
  }
  GetOptions opts;
  opts.revs = Bool(o, "revs");
  opts.latest = Bool(o, "latest");
  opts.conflicts = Bool(o, "conflicts");
  AttachmentOpts(o, &opts);
  std::vector<OpenRevResult> out;
  Status s = db->GetOpenRevs(ToUtf8(args.GetIsolate(), args[1]), revs, opts, &out);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  std::string text = "[";
  for (size_t i = 0; i < out.size(); ++i) {
    if (i) text += ',';
    couch_json::AppendOpenRev(&text, out[i]);
  }
  text += "]";
  ReturnJson(args, text);
}

// What dbBulkDocs returns: results[], or [id, rev, ...] when every document
// succeeded in normal mode.
void ReturnBulkResults(const Args& args, const std::vector<DocUpdateResult>& results,
                       bool new_edits) {
  v8::Isolate* isolate = args.GetIsolate();
  bool all_ok = true;
  for (auto& r : results) all_ok = all_ok && r.status.ok();
  if (all_ok && new_edits) {
    // The common case as a flat [id, rev, id, rev, ...] array; js/prelude/pouchdb.js
    // shapes the {ok, id, rev} objects (cheaper than JSON text + parse).
    std::vector<v8::Local<v8::Value>> flat;
    flat.reserve(results.size() * 2);
    for (auto& r : results) {
      flat.push_back(ToV8String(isolate, r.id));
      flat.push_back(ToV8String(isolate, r.rev));
    }
    args.GetReturnValue().Set(v8::Array::New(isolate, flat.data(), flat.size()));
    return;
  }
  std::string out = "[";
  bool first = true;
  for (auto& r : results) {
    // Replicator mode reports only the failures, as PouchDB and CouchDB do.
    if (!new_edits && r.status.ok()) continue;
    if (!first) out += ',';
    first = false;
    if (r.status.ok()) {
      couch_json::AppendUpdateResult(&out, r, false);
      continue;
    }
    // PouchDB's error shape, not CouchDB's.
    out += '{';
    AppendError(&out, r.status, Http(r.status));
    out += ",\"id\":";
    json::AppendQuoted(&out, r.id);
    if (!r.rev.empty()) {
      out += ",\"rev\":";
      json::AppendQuoted(&out, r.rev);
    }
    out += '}';
  }
  out += ']';
  ReturnJson(args, out);
}

// dbBulkDocs(h, docs, replicator_mode): `docs` is either the whole array as
// one JSON text (JSON.stringify(docs), parsed by the engine in one pass) or
// an array whose items are JSON strings or values for the validating
// serializer.
void DbBulkDocs(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  UpdateOptions opts;
  opts.new_edits = !args[2]->IsTrue();
  opts.check_local_revs = true;  // PouchDB's _local rule (UpdateOptions)
  std::vector<DocUpdateResult> results;
  Status s;
  if (args[1]->IsString()) {
    std::string text;
    if (!DocToJson(args, args[1], &text)) return;
    s = db->BulkDocsArray(text, opts, &results);
  } else if (args[1]->IsArray()) {
    v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
    auto arr = args[1].As<v8::Array>();
    std::vector<std::string> bodies(arr->Length());
    for (uint32_t i = 0; i < bodies.size(); ++i) {
      v8::Local<v8::Value> doc;
      if (!arr->Get(ctx, i).ToLocal(&doc)) return;
      if (!DocToJson(args, doc, &bodies[i])) return;
    }
    std::vector<std::string_view> views(bodies.begin(), bodies.end());
    s = db->BulkDocs(views, opts, &results);
  } else {
    s = Status::BadRequest("Missing JSON list of 'docs'");
  }
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  ReturnBulkResults(args, results, opts.new_edits);
}

// Writes documents already in the engine's split form (dbBulkDocsSplit,
// dbBulkDocsEncoded) and returns their results as dbBulkDocs does.
void WriteSplitDocs(const Args& args, Database* db, std::unique_ptr<BulkDocsBody::Parsed> parsed,
                    bool new_edits) {
  UpdateOptions opts;
  opts.new_edits = new_edits;
  opts.check_local_revs = true;  // PouchDB's _local rule (UpdateOptions)
  std::vector<DocUpdateResult> results;
  Status s = db->BulkDocs(BulkDocsBody(std::move(parsed)), opts, &results);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  ReturnBulkResults(args, results, opts.new_edits);
}

// dbBulkDocsSplit(h, docs, replicator_mode): bulkDocs of an array of plain
// JSON objects, split by js/doc_split.h without JSON text. Returns undefined,
// having written nothing, when some document is not plain: the caller then
// takes dbBulkDocs.
void DbBulkDocsSplit(const Args& args) {
  auto db = DbArg(args);
  if (!db || !args[1]->IsArray()) return;
  auto parsed = std::make_unique<BulkDocsBody::Parsed>();
  if (SplitPlainDocs(args.GetIsolate()->GetCurrentContext(), args[1].As<v8::Array>(), &parsed->docs,
                     &parsed->statuses) != SplitOutcome::kDone) {
    return;  // not plain, or a getter threw (its exception is pending)
  }
  WriteSplitDocs(args, db, std::move(parsed), !args[2]->IsTrue());
}

// dbBulkDocsEncoded(h, bytes, meta, strs, nums, count, replicator_mode, part):
// bulkDocs of documents js/prelude/doc_encode.js encoded (the layout is
// BuildEncodedDocs's, js/doc_split.h), handed over in parts. `part`'s bit 0
// marks the first part (what an abandoned batch left is dropped), bit 1 the
// last: a part before the last is completed into the documents this thread
// holds and answers true; the last one writes them all and answers as
// dbBulkDocs does. A first part of no documents that is not the last drops
// what is held. Returns undefined, holding nothing and having written
// nothing, if a part does not add up.
//
// A part's big new bodies are compressed and hashed on a worker thread
// (js/body_jobs.h) while JS encodes the next part, so a part's `bytes` are
// read until the next call returns: the encoder writes consecutive parts
// into two buffers in turn.
void DbBulkDocsEncoded(const Args& args) {
  // One isolate per thread, and the encoder is not re-entered (a getter
  // that writes meanwhile takes the other paths): one batch at a time.
  thread_local std::unique_ptr<BulkDocsBody::Parsed> held;
  thread_local std::unique_ptr<BodyJobs> jobs;  // the held documents' big bodies
  if (jobs) jobs->Wait();  // before anything held is touched
  const uint32_t part = args[7]->IsUint32() ? args[7].As<v8::Uint32>()->Value() : 3;
  const bool first = (part & 1) != 0;
  const bool last = (part & 2) != 0;
  if (first) held.reset();
  auto db = DbArg(args);
  if (!db || !args[1]->IsUint8Array() || !args[2]->IsInt32Array() || !args[3]->IsArray() ||
      !args[4]->IsFloat64Array() || !args[5]->IsUint32()) {
    held.reset();
    return;
  }
  const uint32_t count = args[5].As<v8::Uint32>()->Value();
  if (first && !last && count == 0) {
    args.GetReturnValue().Set(true);
    return;
  }
  if (!jobs) {
    // Waited for and let go with the isolate (its buffers with it), on
    // this thread; without an IsolateThread the bodies are done in line.
    if (IsolateThread* t = IsolateThread::From(args.GetIsolate())) {
      jobs = std::make_unique<BodyJobs>();
      t->AtDispose([] {
        jobs.reset();
        held.reset();
      });
    }
  }
  auto view_of = [](v8::Local<v8::Value> v) {
    auto view = v.As<v8::ArrayBufferView>();
    auto* base = static_cast<const char*>(view->Buffer()->Data());
    return std::string_view(base == nullptr ? "" : base + view->ByteOffset(), base == nullptr ? 0 : view->ByteLength());
  };
  const std::string_view bytes = view_of(args[1]);
  const std::string_view meta = view_of(args[2]);
  const std::string_view nums = view_of(args[4]);
  if (!held) held = std::make_unique<BulkDocsBody::Parsed>();
  if (BuildEncodedDocs(args.GetIsolate()->GetCurrentContext(), bytes,
                       {reinterpret_cast<const int32_t*>(meta.data()), meta.size() / sizeof(int32_t)},
                       args[3].As<v8::Array>(),
                       {reinterpret_cast<const double*>(nums.data()), nums.size() / sizeof(double)}, count,
                       &held->docs, &held->statuses, jobs.get()) != SplitOutcome::kDone) {
    held.reset();
    return;
  }
  if (jobs) jobs->Start(args[1].As<v8::Uint8Array>()->Buffer()->GetBackingStore());
  if (!last) {
    args.GetReturnValue().Set(true);
    return;
  }
  if (jobs) jobs->Wait();  // this thread takes its share of the last part's
  WriteSplitDocs(args, db, std::move(held), !args[6]->IsTrue());
}

//////// queries

// allDocs' options (JSON text in args[1], already parsed into `o`).
void AllDocsOpts(const json::Value& o, AllDocsOptions* opts) {
  if (Has(o, "startkey")) opts->start_key = String(o, "startkey");
  if (Has(o, "endkey")) opts->end_key = String(o, "endkey");
  opts->inclusive_end = Bool(o, "inclusive_end", true);
  opts->descending = Bool(o, "descending");
  opts->skip = Uint(o, "skip", 0);
  opts->limit = Uint(o, "limit", opts->limit);
  opts->include_docs = Bool(o, "include_docs");
  opts->conflicts = Bool(o, "conflicts");
  opts->attachments = Bool(o, "attachments");
  opts->att_encoding_info = Bool(o, "att_encoding_info");
  auto kit = o.FindMember("keys");
  if (kit != o.MemberEnd() && kit->value.IsArray()) {
    opts->keys.emplace();
    for (auto& k : kit->value.GetArray()) {
      if (k.IsString()) opts->keys->emplace_back(std::string(json::View(k)));
      else opts->keys->push_back(AllDocsKey::NotAString(json::Serialize(k)));
    }
  }
}

// The JSON text of an allDocs answer, as CouchDB writes it.
std::string AllDocsJson(const AllDocsResult& r, bool update_seq) {
  std::string out = "{\"total_rows\":" + std::to_string(r.total_rows) +
                    ",\"offset\":" + std::to_string(r.offset);
  if (update_seq) out += ",\"update_seq\":" + std::to_string(r.update_seq);
  out += ",\"rows\":[";
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (i) out += ',';
    couch_json::AppendAllDocsRow(&out, r.rows[i]);
  }
  out += "]}";
  return out;
}

// allDocs(h, optsJson)'s options read into `o` and `opts` and its rows into
// `r`; false when the call has been failed (or an exception is pending).
bool AllDocsOf(const Args& args, json::Document* o, AllDocsOptions* opts, AllDocsResult* r) {
  auto db = DbArg(args);
  if (!db) return false;
  if (!OptsArg(args, 1, o)) return false;
  AllDocsOpts(*o, opts);
  Status s = db->AllDocs(*opts, r);
  if (!s.ok()) {
    Fail(args, s);
    return false;
  }
  return true;
}

// dbAllDocs(h, optsJson) -> {total_rows, offset, rows}
void DbAllDocs(const Args& args) {
  json::Document o;
  AllDocsOptions opts;
  AllDocsResult r;
  if (!AllDocsOf(args, &o, &opts, &r)) return;
  ReturnJson(args, AllDocsJson(r, Bool(o, "update_seq")));
}

// dbAllDocsFlat(h, optsJson) -> [total_rows, offset, (id, rev, doc)...] |
// dbAllDocs' answer. Without conflicts, attachments and update_seq, and
// when every row is a live document's (with keys: no missing or deleted
// one, no key that is not a string), which it otherwise answers as
// dbAllDocs, a row is the document's id and winning revision, and its doc
// (include_docs) a flat document's
// [shape, values...] (js/doc_shapes.h) or the parsed object, else
// undefined: js/prelude/pouchdb.js builds the rows with object literals,
// where JSON.parse of the answer's text cost ~0.5 us a row with its
// document (~80% of a 100-row include_docs call, measured in settee run).
// A document it declines (nested values...) is parsed alone: over 100
// nested documents (3 levels, arrays) a call measured 2-4.5% faster than
// answering the whole call as text once a row declines (settee run,
// alternated, load 1.8).
void DbAllDocsFlat(const Args& args) {
  json::Document o;
  AllDocsOptions opts;
  AllDocsResult r;
  if (!AllDocsOf(args, &o, &opts, &r)) return;
  const bool update_seq = Bool(o, "update_seq");
  if (opts.conflicts || opts.attachments || opts.att_encoding_info || update_seq) {
    ReturnJson(args, AllDocsJson(r, update_seq));
    return;
  }
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::vector<v8::Local<v8::Value>> out;
  out.reserve(2 + 3 * r.rows.size());
  out.push_back(v8::Number::New(isolate, static_cast<double>(r.total_rows)));
  out.push_back(v8::Number::New(isolate, static_cast<double>(r.offset)));
  for (const AllDocsRow& row : r.rows) {
    if (!row.error.ok() || row.deleted || !row.key_json.empty()) {  // keys' rows of another form
      ReturnJson(args, AllDocsJson(r, false));
      return;
    }
    v8::Local<v8::String> id = ToV8String(isolate, row.id);
    out.push_back(id);
    out.push_back(ToV8String(isolate, row.rev));
    if (row.doc.empty()) {
      out.push_back(v8::Undefined(isolate));
      continue;
    }
    v8::Local<v8::Array> flat;
    v8::Local<v8::Value> doc;
    if (FlatDocValues(isolate, row.doc, id, row.id).ToLocal(&flat)) {
      out.push_back(flat);
    } else if (JsonToV8(context, row.doc).ToLocal(&doc)) {
      out.push_back(doc);
    } else {
      return;  // the parser's exception is pending
    }
  }
  args.GetReturnValue().Set(v8::Array::New(isolate, out.data(), out.size()));
}

// dbChanges(h, optsJson) -> {results, last_seq}
void DbChanges(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  json::Document o;
  if (!OptsArg(args, 1, &o)) return;
  ChangesOptions opts;
  opts.since = Uint(o, "since", 0);
  opts.limit = Uint(o, "limit", opts.limit);
  opts.descending = Bool(o, "descending");
  opts.include_docs = Bool(o, "include_docs");
  opts.conflicts = Bool(o, "conflicts");
  opts.attachments = Bool(o, "attachments");
  opts.att_encoding_info = Bool(o, "att_encoding_info");
  opts.all_docs_style = String(o, "style") == "all_docs";
  auto dit = o.FindMember("doc_ids");
  if (dit != o.MemberEnd() && dit->value.IsArray()) {
    opts.doc_ids.emplace();
    for (auto& d : dit->value.GetArray()) {
      if (d.IsString()) opts.doc_ids->emplace_back(json::View(d));
    }
  }
  // PouchDB's `selector` option: the changes whose winning revision the
  // Mango selector matches (CouchDB's filter=_selector). The documents are
  // read to match them, and `limit` counts matching rows, so the engine's
  // limit is lifted and the scan stopped here.
  std::optional<mango::Selector> selector;
  if (auto sit = o.FindMember("selector"); sit != o.MemberEnd()) {
    auto parsed = mango::Selector::Parse(sit->value);
    if (!parsed.ok()) {
      Fail(args, parsed.status());
      return;
    }
    selector.emplace(std::move(parsed).value());
  }
  const bool wants_docs = opts.include_docs;
  const uint64_t limit = opts.limit;
  if (selector) {
    opts.include_docs = true;
    opts.limit = std::numeric_limits<uint64_t>::max();
  }
  uint64_t matched = 0;
  std::string out = "{\"results\":[";
  bool first = true;
  uint64_t last_seq = 0;
  Status s = db->Changes(
      opts,
      [&](const ChangeRow& row) {
        if (selector) {
          json::Document doc;
          if (!json::Parse(row.doc, &doc).ok() || !doc.IsObject() || !selector->Matches(doc)) return true;
        }
        if (!first) out += ',';
        first = false;
        couch_json::AppendChangeRow(&out, row, /*with_doc=*/!selector || wants_docs);
        return !selector || ++matched < limit;
      },
      &last_seq);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  out += "],\"last_seq\":" + std::to_string(last_seq) + "}";
  ReturnJson(args, out);
}

// dbRevsDiff(h, json {id: [revs]}) -> {id: {missing, possible_ancestors?}}
void DbRevsDiff(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  json::Document o;
  if (!OptsArg(args, 1, &o)) return;
  std::vector<RevsDiffRequest> req;
  for (auto& m : o.GetObject()) {
    RevsDiffRequest r;
    r.id = std::string(json::View(m.name));
    if (!m.value.IsArray()) {
      Fail(args, Status::BadRequest("revsDiff expects {id: [revs]}"));
      return;
    }
    for (auto& rev : m.value.GetArray()) {
      if (rev.IsString()) r.revs.emplace_back(json::View(rev));
    }
    req.push_back(std::move(r));
  }
  std::vector<RevsDiffResult> res;
  Status s = db->RevsDiff(req, &res);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  std::string out;
  couch_json::AppendRevsDiff(&out, res);
  ReturnJson(args, out);
}

// dbBulkGet(h, json {docs:[{id, rev?}], revs, latest}) -> {results}
void DbBulkGet(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  json::Document o;
  if (!OptsArg(args, 1, &o)) return;
  std::vector<BulkGetRequest> req;
  auto dit = o.FindMember("docs");
  if (dit == o.MemberEnd() || !dit->value.IsArray()) {
    Fail(args, Status::BadRequest("Missing JSON list of 'docs'"));
    return;
  }
  for (auto& d : dit->value.GetArray()) {
    if (!d.IsObject() || !d.HasMember("id") || !d["id"].IsString()) {
      Fail(args, Status::BadRequest("bulkGet items need a string id"));
      return;
    }
    BulkGetRequest& r = req.emplace_back();
    r.id = json::View(d["id"]);
    r.rev = String(d, "rev");
    if (d.HasMember("atts_since") && d["atts_since"].IsArray()) {
      for (const auto& a : d["atts_since"].GetArray()) {
        if (a.IsString()) r.atts_since.emplace_back(json::View(a));
      }
    }
  }
  BulkGetOptions opts;
  opts.revs = Bool(o, "revs");
  opts.latest = Bool(o, "latest");
  opts.attachments = Bool(o, "attachments");
  opts.att_encoding_info = Bool(o, "att_encoding_info");
  std::vector<BulkGetResult> res;
  Status s = db->BulkGet(req, opts, &res);
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  std::string out = "{\"results\":[";
  for (size_t i = 0; i < res.size(); ++i) {
    if (i) out += ',';
    couch_json::AppendBulkGetResult(&out, res[i]);
  }
  out += "]}";
  ReturnJson(args, out);
}

//////// attachments

// dbPutAttachment(h, id, name, rev, type, bytes | base64) -> [id, rev]
void DbPutAttachment(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  std::string_view bytes;
  std::string decoded;
  if (!BytesArg(args[5], &bytes)) {
    if (!args[5]->IsString() || !Base64Decode(ToUtf8(isolate, args[5]), &decoded)) {
      Fail(args, Status::BadRequest("Attachment data must be a Buffer, a typed array or base64"));
      return;
    }
    bytes = decoded;
  }
  const std::string rev = args[3]->IsString() ? ToUtf8(isolate, args[3]) : std::string();
  auto r = db->PutAttachment(ToUtf8(isolate, args[1]), ToUtf8(isolate, args[2]), rev,
                             args[4]->IsString() ? ToUtf8(isolate, args[4]) : std::string(),
                             decoded.empty() ? std::string(bytes) : std::move(decoded));
  if (!r.ok()) {
    Fail(args, r.status());
    return;
  }
  args.GetReturnValue().Set(Pair(isolate, r->id, r->rev));
}

// dbGetAttachment(h, id, name, rev?) -> Uint8Array
void DbGetAttachment(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  const std::string rev = args[3]->IsString() ? ToUtf8(isolate, args[3]) : std::string();
  auto reader = db->OpenAttachment(ToUtf8(isolate, args[1]), ToUtf8(isolate, args[2]), rev);
  v8::Local<v8::Uint8Array> bytes;
  Status s = reader.ok() ? ReadAttachmentBytes(isolate, **reader, &bytes) : reader.status();
  if (!s.ok()) {
    Fail(args, s);
    return;
  }
  // PouchDB's Buffer carries the content type as `type`, as a Blob would.
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  if (bytes->Set(ctx, ToV8String(isolate, "type"), ToV8String(isolate, (*reader)->info().content_type))
          .IsNothing()) {
    return;
  }
  args.GetReturnValue().Set(bytes);
}

// dbRemoveAttachment(h, id, name, rev) -> [id, rev]
void DbRemoveAttachment(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  v8::Isolate* isolate = args.GetIsolate();
  auto r = db->DeleteAttachment(ToUtf8(isolate, args[1]), ToUtf8(isolate, args[2]),
                                args[3]->IsString() ? ToUtf8(isolate, args[3]) : std::string());
  if (!r.ok()) {
    Fail(args, r.status());
    return;
  }
  args.GetReturnValue().Set(Pair(isolate, r->id, r->rev));
}

// base64Encode(bytes) -> string, for attachment data given as bytes.
void Base64EncodeFn(const Args& args) {
  std::string_view bytes;
  if (!BytesArg(args[0], &bytes)) {
    Fail(args, Status::BadRequest("expected a Buffer or typed array"));
    return;
  }
  const std::string text = Base64Encode(bytes);
  v8::Local<v8::String> s;
  if (v8::String::NewFromOneByte(args.GetIsolate(), reinterpret_cast<const uint8_t*>(text.data()),
                                 v8::NewStringType::kNormal, static_cast<int>(text.size()))
          .ToLocal(&s)) {
    args.GetReturnValue().Set(s);
  }
}

//////// live feeds

void DbListen(const Args& args) {
  auto db = DbArg(args);
  if (!db) return;
  uint64_t feed = static_cast<uint64_t>(args[1]->NumberValue(args.GetIsolate()->GetCurrentContext()).FromMaybe(0));
  Self(args)->Listen(Self(args)->SharedDb(args[0].As<v8::Int32>()->Value()), feed);
}

void DbUnlisten(const Args& args) {
  uint64_t feed = static_cast<uint64_t>(args[0]->NumberValue(args.GetIsolate()->GetCurrentContext()).FromMaybe(0));
  Self(args)->Unlisten(feed);
}

// native.dbNameValid(name) -> whether the engine takes `name` as a database
// name as it is (IsValidDatabaseName): pouchdb.js stores other PouchDB
// names escaped, and asks here rather than repeating the rule.
void DbNameValid(const Args& args) {
  args.GetReturnValue().Set(args[0]->IsString() && IsValidDatabaseName(ToUtf8(args.GetIsolate(), args[0])));
}

}  // namespace


void InstallDbBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "dbOpen", DbOpen);
  SetFn(ctx, native, "dbNameValid", DbNameValid);
  SetFn(ctx, native, "dbClose", DbClose);
  SetFn(ctx, native, "dbDestroy", DbDestroy);
  SetFn(ctx, native, "dbInfo", DbInfo);
  SetFn(ctx, native, "dbCompact", DbCompact);
  SetFn(ctx, native, "dbCompactDocs", DbCompactDocs);
  SetFn(ctx, native, "dbPurge", DbPurge);
  SetFn(ctx, native, "dbUpdateSeq", DbUpdateSeq);
  SetFn(ctx, native, "dbSetRevsLimit", DbSetRevsLimit);
  SetFn(ctx, native, "dbPut", DbPut);
  SetFn(ctx, native, "dbRemove", DbRemove);
  SetFn(ctx, native, "dbGet", DbGet);
  SetFn(ctx, native, "dbGetFlat", DbGetFlat);
  SetFn(ctx, native, "dbAllDocsFlat", DbAllDocsFlat);
  SetFn(ctx, native, "docShapeNames", DocShapeNamesFn);
  SetFn(ctx, native, "dbOpenRevs", DbOpenRevs);
  SetFn(ctx, native, "dbBulkDocs", DbBulkDocs);
  SetFn(ctx, native, "dbBulkDocsSplit", DbBulkDocsSplit);
  SetFn(ctx, native, "dbBulkDocsEncoded", DbBulkDocsEncoded);
  SetFn(ctx, native, "dbAllDocs", DbAllDocs);
  SetFn(ctx, native, "dbChanges", DbChanges);
  SetFn(ctx, native, "dbRevsDiff", DbRevsDiff);
  SetFn(ctx, native, "dbBulkGet", DbBulkGet);
  SetFn(ctx, native, "dbPutAttachment", DbPutAttachment);
  SetFn(ctx, native, "dbGetAttachment", DbGetAttachment);
  SetFn(ctx, native, "dbRemoveAttachment", DbRemoveAttachment);
  SetFn(ctx, native, "base64Encode", Base64EncodeFn);
  SetFn(ctx, native, "dbListen", DbListen);
  SetFn(ctx, native, "dbUnlisten", DbUnlisten);
}

}  // namespace settee::js
