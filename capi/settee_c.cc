// The C API (include/settee/settee.h): errors, stores and databases, over
// the C++ API (include/settee/store.h, database.h). The handles' design is
// in c_api_internal.h; the JS runtime's calls are in settee_c_js.cc.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include "capi/c_api_internal.h"
#include "replication/jobs.h"

using settee::Status;

namespace settee_c {

thread_local const void* t_callback_of = nullptr;
thread_local const void* t_locked_store = nullptr;
thread_local bool t_in_listener = false;

namespace {

struct CodePair {
  settee_code c;
  Status::Code cpp;
};
constexpr CodePair kCodes[] = {
    {SETTEE_OK, Status::Code::kOk},
    {SETTEE_ERR_BAD_REQUEST, Status::Code::kBadRequest},
    {SETTEE_ERR_ILLEGAL_DOCID, Status::Code::kIllegalDocId},
    {SETTEE_ERR_ILLEGAL_DATABASE_NAME, Status::Code::kIllegalDatabaseName},
    {SETTEE_ERR_DOC_VALIDATION, Status::Code::kDocValidation},
    {SETTEE_ERR_QUERY_PARSE, Status::Code::kQueryParseError},
    {SETTEE_ERR_INVALID_DESIGN_DOC, Status::Code::kInvalidDesignDoc},
    {SETTEE_ERR_COMPILATION, Status::Code::kCompilationError},
    {SETTEE_ERR_UNAUTHORIZED, Status::Code::kUnauthorized},
    {SETTEE_ERR_FORBIDDEN, Status::Code::kForbidden},
    {SETTEE_ERR_NOT_FOUND, Status::Code::kNotFound},
    {SETTEE_ERR_CONFLICT, Status::Code::kConflict},
    {SETTEE_ERR_FILE_EXISTS, Status::Code::kFileExists},
    {SETTEE_ERR_MISSING_STUB, Status::Code::kMissingStub},
    {SETTEE_ERR_PRECONDITION_FAILED, Status::Code::kPreconditionFailed},
    {SETTEE_ERR_DOCUMENT_TOO_LARGE, Status::Code::kDocumentTooLarge},
    {SETTEE_ERR_TOO_LARGE, Status::Code::kTooLarge},
    {SETTEE_ERR_ATTACHMENT_TOO_LARGE, Status::Code::kAttachmentTooLarge},
    {SETTEE_ERR_BAD_CONTENT_TYPE, Status::Code::kBadContentType},
    {SETTEE_ERR_NOT_ACCEPTABLE, Status::Code::kNotAcceptable},
    {SETTEE_ERR_RANGE_NOT_SATISFIABLE, Status::Code::kRangeNotSatisfiable},
    {SETTEE_ERR_TIMEOUT, Status::Code::kTimeout},
    {SETTEE_ERR_NO_USABLE_INDEX, Status::Code::kNoUsableIndex},
    {SETTEE_ERR_INVALID_OPERATION, Status::Code::kInvalidOperation},
    {SETTEE_ERR_IO, Status::Code::kIOError},
    {SETTEE_ERR_CORRUPTION, Status::Code::kCorruption},
    {SETTEE_ERR_INTERNAL, Status::Code::kInternal},
    {SETTEE_ERR_INVALID_OPERATOR, Status::Code::kInvalidOperator},
    {SETTEE_ERR_REDUCE_OVERFLOW, Status::Code::kReduceOverflow},
};

settee_code ToC(Status::Code code) {
  for (const CodePair& p : kCodes) {
    if (p.cpp == code) return p.c;
  }
  return SETTEE_ERR_INTERNAL;  // a kind newer than this table
}

char* Dup(std::string_view s) {
  char* p = static_cast<char*>(std::malloc(s.size() + 1));
  if (!p) return nullptr;
  std::memcpy(p, s.data(), s.size());
  p[s.size()] = '\0';
  return p;
}

}  // namespace

settee_code Fail(settee_error* err, settee_code code, std::string_view message) {
  if (err) {
    std::free(err->message);
    err->code = code;
    err->message = Dup(message);
  }
  return code;
}

settee_code Fail(settee_error* err, const Status& s) { return Fail(err, ToC(s.code()), s.reason()); }

settee_code Ok(settee_error* err) {
  if (err) {
    std::free(err->message);
    err->code = SETTEE_OK;
    err->message = nullptr;
  }
  return SETTEE_OK;
}

// Sets *out (when out is not NULL) to a copy of s.
void Give(char** out, std::string_view s) {
  if (out) *out = Dup(s);
}

settee_code InvalidArgument(settee_error* err, const char* what) {
  return Fail(err, SETTEE_ERR_INVALID_ARGUMENT, what);
}

settee_code Utf8Arg(const char* s, const char* name, settee_error* err) {
  if (!s) return Fail(err, SETTEE_ERR_INVALID_ARGUMENT, std::string(name) + " is NULL");
  if (!simdjson::validate_utf8(s, std::strlen(s))) {
    return Fail(err, SETTEE_ERR_INVALID_ARGUMENT, std::string(name) + " is not valid UTF-8");
  }
  return SETTEE_OK;
}

settee_code OptionalUtf8Arg(const char* s, const char* name, settee_error* err) {
  return s ? Utf8Arg(s, name, err) : SETTEE_OK;
}

void StoreState::Close() {
  // The isolate and replication threads are joined without the mutex held:
  // a runtime's callback may be in a database call, waiting for it.
  std::vector<std::shared_ptr<settee::JsRuntime>> stopping;
  std::unique_ptr<settee::replication::ReplicationJobs> replicating;
  {
    std::unique_lock lock(mu);
    closing = true;
    for (settee_runtime* r : runtimes) {
      if (r->rt) stopping.push_back(std::move(r->rt));
    }
    std::lock_guard<std::mutex> registry(registry_mu);
    replicating = std::move(jobs);
  }
  for (auto& rt : stopping) rt->Shutdown();
  replicating.reset();  // cancels every replication and joins its thread
  std::unique_lock lock(mu);
  for (settee_replication* r : replications) r->job.reset();
  for (settee_db* d : dbs) {
    if (d->db) {
      std::lock_guard<std::mutex> lock(d->listeners_mu);
      for (uint64_t id : d->listeners) d->db->RemoveChangeListener(id);
      d->listeners.clear();
    }
    d->db.reset();
  }
  view_functions.reset();
  store.reset();
}

StoreState::~StoreState() { Close(); }

namespace {

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(JsonWriter& w, std::string_view k) { w.Key(k.data(), static_cast<rapidjson::SizeType>(k.size())); }
void Str(JsonWriter& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Raw(JsonWriter& w, std::string_view json) {
  w.RawValue(json.data(), json.size(), rapidjson::kObjectType);
}

std::string_view Text(const rapidjson::StringBuffer& b) { return {b.GetString(), b.GetSize()}; }

settee_code OpenDb(settee_store* store, const char* name, settee_db** out, bool create,
                   settee_error* err) {
  if (out) *out = nullptr;
  if (!store) return InvalidArgument(err, "store is NULL");
  SETTEE_C_CHECK(Utf8Arg(name, "name", err));
  if (!create && !out) return InvalidArgument(err, "out is NULL");
  return Guarded(err, [&] {
    std::shared_ptr<StoreState> state = store->state;
    StoreLock lock(state.get());
    if (!state->store) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    auto db = create ? state->store->CreateDatabase(name) : state->store->OpenDatabase(name);
    if (!db.ok()) return Fail(err, db.status());
    if (out) {
      auto h = std::make_unique<settee_db>();
      h->state = state;
      h->db = std::move(*db);
      std::lock_guard<std::mutex> registry(state->registry_mu);
      state->dbs.insert(h.get());
      *out = h.release();
    }
    return Ok(err);
  });
}

}  // namespace

}  // namespace settee_c

using namespace settee_c;  // NOLINT: the C functions below are this module's surface

extern "C" {

//////// Errors and memory

const char* settee_code_name(int code) {
  switch (code) {
    case SETTEE_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case SETTEE_ERR_CLOSED: return "closed";
    case SETTEE_ERR_UNSUPPORTED: return "unsupported";
    default: break;
  }
  for (const CodePair& p : kCodes) {
    // ErrorName returns views of string literals, so .data() is NUL-terminated.
    if (p.c == code) return Status::ErrorName(p.cpp).data();
  }
  return "unknown_code";
}

void settee_error_clear(settee_error* err) {
  if (!err) return;
  std::free(err->message);
  err->message = nullptr;
  err->code = SETTEE_OK;
}

void settee_free(void* p) { std::free(p); }

const char* settee_version(void) { return SETTEE_VERSION_STRING; }

//////// Store

void settee_store_options_init(settee_store_options* options) {
  if (!options) return;
  *options = settee_store_options{};
  options->backend = SETTEE_BACKEND_LEVELDB;
}

settee_code settee_store_open(const settee_store_options* options, settee_store** out,
                              settee_error* err) {
  if (!out) return InvalidArgument(err, "out is NULL");
  *out = nullptr;
  if (!options) return InvalidArgument(err, "options is NULL");
  settee::StoreOptions o;
  switch (options->backend) {
    case SETTEE_BACKEND_LEVELDB:
      if (!options->path || !*options->path) {
        return InvalidArgument(err, "the LevelDB backend needs a path");
      }
      SETTEE_C_CHECK(Utf8Arg(options->path, "path", err));
      o.backend = settee::StoreOptions::Backend::kLevelDB;
      o.path = options->path;
      break;
    case SETTEE_BACKEND_MEMORY:
      o.backend = settee::StoreOptions::Backend::kMemory;
      break;
    default:
      return InvalidArgument(err, "unknown backend");
  }
  o.sync = options->sync != 0;
  if (options->max_document_size) o.max_document_size = options->max_document_size;
  if (options->revs_limit) o.default_revs_limit = options->revs_limit;
  if (options->view_threads < 0 || options->view_threads > 64) {
    return InvalidArgument(err, "view_threads must be 0..64");
  }
  return Guarded(err, [&] {
    auto store = settee::Store::Open(o);
    if (!store.ok()) return Fail(err, store.status());
    auto h = std::make_unique<settee_store>();
    h->state = std::make_shared<StoreState>();
    h->state->view_functions = MakeViewFunctions(store->get(), *options);
    h->state->store = std::move(*store);
    *out = h.release();
    return Ok(err);
  });
}

settee_code settee_store_close(settee_store* store, settee_error* err) {
  if (!store) return InvalidArgument(err, "store is NULL");
  if (InCallbackOf(store->state.get()) || t_in_listener) {
    return Fail(err, SETTEE_ERR_INVALID_OPERATION, "a store cannot be closed from its callbacks");
  }
  return Guarded(err, [&] {
    store->state->Close();
    return Ok(err);
  });
}

void settee_store_free(settee_store* store) {
  if (!store) return;
  // From inside a callback the close would wait for the call that is
  // running; the handle is then left for the caller to free afterwards.
  if (settee_store_close(store, nullptr) != SETTEE_OK) return;
  delete store;
}

settee_code settee_db_create(settee_store* store, const char* name, settee_db** out,
                             settee_error* err) {
  return OpenDb(store, name, out, /*create=*/true, err);
}

settee_code settee_db_open(settee_store* store, const char* name, settee_db** out,
                           settee_error* err) {
  return OpenDb(store, name, out, /*create=*/false, err);
}

settee_code settee_db_destroy(settee_store* store, const char* name, settee_error* err) {
  if (!store) return InvalidArgument(err, "store is NULL");
  SETTEE_C_CHECK(Utf8Arg(name, "name", err));
  if (t_in_listener) {
    return Fail(err, SETTEE_ERR_INVALID_OPERATION, "a change listener must not call into the store");
  }
  return Guarded(err, [&] {
    StoreLock lock(store->state.get());
    if (!store->state->store) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    Status s = store->state->store->DeleteDatabase(name);
    return s.ok() ? Ok(err) : Fail(err, s);
  });
}

settee_code settee_store_list_dbs(settee_store* store, char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  if (!store) return InvalidArgument(err, "store is NULL");
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  return Guarded(err, [&] {
    StoreLock lock(store->state.get());
    if (!store->state->store) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    rapidjson::StringBuffer b;
    JsonWriter w(b);
    w.StartArray();
    for (const std::string& name : store->state->store->ListDatabases()) Str(w, name);
    w.EndArray();
    Give(json_out, Text(b));
    return Ok(err);
  });
}

//////// Databases

void settee_db_free(settee_db* db) {
  if (!db) return;
  if (t_in_listener) return;  // RemoveChangeListener would wait for this very call
  std::shared_ptr<StoreState> state = db->state;
  StoreLock lock(state.get());
  if (state->store && db->db) {
    std::lock_guard<std::mutex> l(db->listeners_mu);
    for (uint64_t id : db->listeners) db->db->RemoveChangeListener(id);
  }
  {
    std::lock_guard<std::mutex> registry(state->registry_mu);
    state->dbs.erase(db);
  }
  delete db;
}

settee_code settee_db_info(settee_db* db, char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  return Guarded(err, [&] {
    auto info = call->Info();
    if (!info.ok()) return Fail(err, info.status());
    rapidjson::StringBuffer b;
    JsonWriter w(b);
    w.StartObject();
    Key(w, "db_name"); Str(w, info->db_name);
    Key(w, "doc_count"); w.Uint64(info->doc_count);
    Key(w, "doc_del_count"); w.Uint64(info->doc_del_count);
    Key(w, "update_seq"); w.Uint64(info->update_seq);
    Key(w, "purge_seq"); w.Uint64(info->purge_seq);
    Key(w, "sizes"); w.StartObject();
    Key(w, "active"); w.Uint64(info->sizes_active);
    Key(w, "external"); w.Uint64(info->sizes_external);
    Key(w, "file"); w.Uint64(info->sizes_file);
    w.EndObject();
    w.EndObject();
    Give(json_out, Text(b));
    return Ok(err);
  });
}

settee_code settee_db_put(settee_db* db, const char* docid, const char* json, char** id_out,
                          char** rev_out, settee_error* err) {
  if (id_out) *id_out = nullptr;
  if (rev_out) *rev_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(OptionalUtf8Arg(docid, "docid", err));
  SETTEE_C_CHECK(Utf8Arg(json, "json", err));
  return Guarded(err, [&] {
    auto r = call->Put(docid ? docid : "", json);
    if (!r.ok()) return Fail(err, r.status());
    if (!r->status.ok()) return Fail(err, r->status);
    Give(id_out, r->id);
    Give(rev_out, r->rev);
    return Ok(err);
  });
}

settee_code settee_db_get(settee_db* db, const char* docid, const settee_get_options* options,
                          char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(docid, "docid", err));
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  settee::GetOptions o;
  if (options) {
    SETTEE_C_CHECK(OptionalUtf8Arg(options->rev, "options->rev", err));
    if (options->rev) o.rev = options->rev;
    o.revs = options->revs != 0;
    o.conflicts = options->conflicts != 0;
  }
  return Guarded(err, [&] {
    auto doc = call->Get(docid, o);
    if (!doc.ok()) return Fail(err, doc.status());
    Give(json_out, *doc);
    return Ok(err);
  });
}

settee_code settee_db_delete(settee_db* db, const char* docid, const char* rev, char** rev_out,
                             settee_error* err) {
  if (rev_out) *rev_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(docid, "docid", err));
  SETTEE_C_CHECK(Utf8Arg(rev, "rev", err));
  return Guarded(err, [&] {
    auto r = call->Delete(docid, rev);
    if (!r.ok()) return Fail(err, r.status());
    if (!r->status.ok()) return Fail(err, r->status);
    Give(rev_out, r->rev);
    return Ok(err);
  });
}

settee_code settee_db_bulk_docs(settee_db* db, const char* docs_json, int new_edits,
                                char** results_json, settee_error* err) {
  if (results_json) *results_json = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(docs_json, "docs_json", err));
  return Guarded(err, [&] {
    settee::UpdateOptions o;
    o.new_edits = new_edits != 0;
    std::vector<settee::DocUpdateResult> results;
    Status s = call->BulkDocsArray(docs_json, o, &results);
    if (!s.ok()) return Fail(err, s);
    if (results_json) {
      rapidjson::StringBuffer b;
      JsonWriter w(b);
      w.StartArray();
      for (const auto& r : results) {
        w.StartObject();
        if (r.status.ok()) {
          Key(w, "ok"); w.Bool(true);
          Key(w, "id"); Str(w, r.id);
          Key(w, "rev"); Str(w, r.rev);
        } else {
          Key(w, "id"); Str(w, r.id);
          if (!r.rev.empty()) { Key(w, "rev"); Str(w, r.rev); }
          Key(w, "error"); Str(w, r.status.ErrorName());
          Key(w, "reason"); Str(w, r.status.reason());
        }
        w.EndObject();
      }
      w.EndArray();
      Give(results_json, Text(b));
    }
    return Ok(err);
  });
}

settee_code settee_db_all_docs(settee_db* db, const settee_all_docs_options* options,
                               char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  settee::AllDocsOptions o;
  if (options) {
    if (options->start_key) {
      SETTEE_C_CHECK(Utf8Arg(options->start_key, "options->start_key", err));
      o.start_key = options->start_key;
    }
    if (options->end_key) {
      SETTEE_C_CHECK(Utf8Arg(options->end_key, "options->end_key", err));
      o.end_key = options->end_key;
    }
    o.inclusive_end = options->exclusive_end == 0;
    o.descending = options->descending != 0;
    o.skip = options->skip;
    if (options->limit) o.limit = options->limit;
    o.include_docs = options->include_docs != 0;
    if (options->n_keys > 0) {
      if (!options->keys) return InvalidArgument(err, "options->keys is NULL with n_keys > 0");
      o.keys.emplace();
      for (size_t i = 0; i < options->n_keys; ++i) {
        SETTEE_C_CHECK(Utf8Arg(options->keys[i], "a key in options->keys", err));
        o.keys->push_back(options->keys[i]);
      }
    }
  }
  return Guarded(err, [&] {
    settee::AllDocsResult result;
    Status s = call->AllDocs(o, &result);
    if (!s.ok()) return Fail(err, s);
    rapidjson::StringBuffer b;
    JsonWriter w(b);
    w.StartObject();
    Key(w, "total_rows"); w.Uint64(result.total_rows);
    Key(w, "offset"); w.Uint64(result.offset);
    Key(w, "rows"); w.StartArray();
    for (const auto& row : result.rows) {
      w.StartObject();
      if (!row.error.ok()) {  // only with keys: an unknown id
        Key(w, "key"); Str(w, row.id);
        Key(w, "error"); Str(w, row.error.ErrorName());
        w.EndObject();
        continue;
      }
      Key(w, "id"); Str(w, row.id);
      Key(w, "key"); Str(w, row.id);
      Key(w, "value"); w.StartObject();
      Key(w, "rev"); Str(w, row.rev);
      if (row.deleted) { Key(w, "deleted"); w.Bool(true); }
      w.EndObject();
      if (o.include_docs) {
        Key(w, "doc");
        if (row.doc.empty() || row.doc == "null") w.Null();
        else Raw(w, row.doc);
      }
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
    Give(json_out, Text(b));
    return Ok(err);
  });
}

settee_code settee_db_changes(settee_db* db, const settee_changes_options* options,
                              settee_change_fn fn, void* context, uint64_t* last_seq,
                              settee_error* err) {
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  if (!fn) return InvalidArgument(err, "fn is NULL");
  settee::ChangesOptions o;
  if (options) {
    o.since = options->since;
    if (options->limit) o.limit = options->limit;
    o.descending = options->descending != 0;
    o.include_docs = options->include_docs != 0;
  }
  return Guarded(err, [&] {
    uint64_t last = o.since;
    std::vector<const char*> revs;
    InCallback in_callback(call.store());
    Status s = call->Changes(
        o,
        [&](const settee::ChangeRow& row) {
          revs.clear();
          for (const auto& r : row.revs) revs.push_back(r.c_str());
          settee_change c{};
          c.seq = row.seq;
          c.id = row.id.c_str();
          c.revs = revs.data();
          c.n_revs = revs.size();
          c.deleted = row.deleted ? 1 : 0;
          c.doc = o.include_docs ? row.doc.c_str() : nullptr;
          return fn(context, &c) != 0;
        },
        &last);
    if (!s.ok()) return Fail(err, s);
    if (last_seq) *last_seq = last;
    return Ok(err);
  });
}

settee_code settee_db_listen(settee_db* db, settee_update_fn fn, void* context, uint64_t* id_out,
                             settee_error* err) {
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  if (!fn) return InvalidArgument(err, "fn is NULL");
  if (!id_out) return InvalidArgument(err, "id_out is NULL");
  return Guarded(err, [&] {
    const void* store = call.store();
    std::lock_guard<std::mutex> lock(db->listeners_mu);
    uint64_t id = call->AddChangeListener([fn, context, store](uint64_t seq) {
      InCallback in_callback(store);
      t_in_listener = true;
      fn(context, seq);
      t_in_listener = false;
    });
    db->listeners.insert(id);
    *id_out = id;
    return Ok(err);
  });
}

settee_code settee_db_unlisten(settee_db* db, uint64_t id, settee_error* err) {
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  return Guarded(err, [&] {
    std::lock_guard<std::mutex> lock(db->listeners_mu);
    if (db->listeners.erase(id) == 0) return Fail(err, SETTEE_ERR_NOT_FOUND, "no such listener");
    call->RemoveChangeListener(id);
    return Ok(err);
  });
}

}  // extern "C"
