/* settee.h: the C API of settee, for applications in C and for other
 * languages' foreign-function interfaces. A thin shim over the C++ API in
 * settee/store.h, settee/database.h and settee/js_runtime.h, as LiteCore's C
 * API is over its C++ one: each function converts its arguments, calls one
 * C++ method and converts the result; no exception ever crosses it.
 *
 *   settee_store_options o;
 *   settee_store_options_init(&o);
 *   o.backend = SETTEE_BACKEND_MEMORY;
 *   settee_store* store = NULL;
 *   settee_error err = SETTEE_ERROR_INIT;
 *   if (settee_store_open(&o, &store, &err) != SETTEE_OK) {
 *     fprintf(stderr, "%s: %s\n", settee_code_name(err.code), err.message);
 *     settee_error_clear(&err);
 *   }
 *
 * Conventions
 * -----------
 * Errors: every fallible function returns a settee_code (SETTEE_OK = 0) and,
 * when `err` is not NULL, fills *err with the same code and a message. The
 * codes are CouchDB's error kinds (settee_code_name() gives "not_found",
 * "conflict", ...) plus SETTEE_ERR_INVALID_ARGUMENT (a NULL where a value is
 * required, a bad option, text that is not UTF-8) and SETTEE_ERR_CLOSED (a
 * handle whose store or runtime was closed). Bad input never crashes.
 *
 * Strings: every `const char*` argument is NUL-terminated UTF-8 and is only
 * read during the call. JSON arguments are JSON text.
 *
 * Ownership (who frees what):
 *   - `char*` results (JSON, revisions, ids) are allocated by settee and
 *     owned by the caller: free each with settee_free(). On error the
 *     out-pointer is set to NULL.
 *   - A settee_error's message is owned by the error: settee_error_clear()
 *     frees it (and is needed before reusing the error, or it leaks).
 *   - Handles (settee_store, settee_db, settee_runtime, settee_replication)
 *     are owned by the caller and freed with their *_free function, in any
 *     order. Closing a store (settee_store_close, or settee_store_free) also
 *     closes every settee_db and settee_runtime opened on it and cancels its
 *     replications: their calls then fail with SETTEE_ERR_CLOSED, but they
 *     must still be freed. Passing a handle after
 *     its *_free is undefined behaviour, like any use after free.
 *   - Pointers handed to callbacks are valid only during the callback.
 *
 * Thread safety: every function may be called from any thread at once, on
 * the same or different handles. Callbacks run on the thread noted at each
 * function. A callback may call back into its store (read, write) but must
 * not close the store or a runtime on it: settee_store_close and
 * settee_runtime_close fail there with SETTEE_ERR_INVALID_OPERATION, and a
 * *_free that would have to close does nothing (free after the callback).
 */
#ifndef SETTEE_SETTEE_H_
#define SETTEE_SETTEE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SETTEE_EXPORT __attribute__((visibility("default")))
#else
#define SETTEE_EXPORT
#endif

/* ---------------------------------------------------------------- Errors */

/* DO NOT CHANGE THESE VALUES: applications and bindings compile them in. */
typedef enum settee_code {
  SETTEE_OK = 0,
  SETTEE_ERR_BAD_REQUEST = 1,             /* bad_request */
  SETTEE_ERR_ILLEGAL_DOCID = 2,           /* illegal_docid */
  SETTEE_ERR_ILLEGAL_DATABASE_NAME = 3,   /* illegal_database_name */
  SETTEE_ERR_DOC_VALIDATION = 4,          /* doc_validation */
  SETTEE_ERR_QUERY_PARSE = 5,             /* query_parse_error */
  SETTEE_ERR_INVALID_DESIGN_DOC = 6,      /* invalid_design_doc */
  SETTEE_ERR_COMPILATION = 7,             /* compilation_error */
  SETTEE_ERR_UNAUTHORIZED = 8,            /* unauthorized */
  SETTEE_ERR_FORBIDDEN = 9,               /* forbidden */
  SETTEE_ERR_NOT_FOUND = 10,              /* not_found */
  SETTEE_ERR_CONFLICT = 11,               /* conflict */
  SETTEE_ERR_FILE_EXISTS = 12,            /* file_exists */
  SETTEE_ERR_MISSING_STUB = 13,           /* missing_stub */
  SETTEE_ERR_PRECONDITION_FAILED = 14,    /* precondition_failed */
  SETTEE_ERR_DOCUMENT_TOO_LARGE = 15,     /* document_too_large */
  SETTEE_ERR_TOO_LARGE = 16,              /* too_large */
  SETTEE_ERR_ATTACHMENT_TOO_LARGE = 17,   /* attachment_too_large */
  SETTEE_ERR_BAD_CONTENT_TYPE = 18,       /* bad_content_type */
  SETTEE_ERR_NOT_ACCEPTABLE = 19,         /* not_acceptable */
  SETTEE_ERR_RANGE_NOT_SATISFIABLE = 20,  /* requested_range_not_satisfiable */
  SETTEE_ERR_TIMEOUT = 21,                /* timeout (a JS call ran over) */
  SETTEE_ERR_NO_USABLE_INDEX = 22,        /* no_usable_index */
  SETTEE_ERR_INVALID_OPERATION = 23,      /* not possible in the current state */
  SETTEE_ERR_IO = 24,                     /* storage failure */
  SETTEE_ERR_CORRUPTION = 25,             /* stored data could not be decoded */
  SETTEE_ERR_INTERNAL = 26,               /* unknown_error; also a JS exception */
  SETTEE_ERR_INVALID_OPERATOR = 27,       /* invalid_operator (a Mango selector's) */
  SETTEE_ERR_REDUCE_OVERFLOW = 28,        /* reduce_overflow_error */
  SETTEE_ERR_INVALID_ARGUMENT = 100,      /* NULL, bad option, not UTF-8 */
  SETTEE_ERR_CLOSED = 101,                /* the handle's store/runtime is closed */
  SETTEE_ERR_UNSUPPORTED = 102            /* left out of this build (JS) */
} settee_code;

typedef struct settee_error {
  settee_code code;
  char* message; /* NULL when code is SETTEE_OK; freed by settee_error_clear */
} settee_error;

#define SETTEE_ERROR_INIT {SETTEE_OK, NULL}

/* CouchDB's name for the code ("not_found", ...; "ok", "invalid_argument",
 * "closed", "unsupported"). Static storage; never NULL. */
SETTEE_EXPORT const char* settee_code_name(int code);

/* Frees err->message and resets *err to SETTEE_ERROR_INIT. NULL is fine. */
SETTEE_EXPORT void settee_error_clear(settee_error* err);

/* Frees a string settee returned. NULL is fine. */
SETTEE_EXPORT void settee_free(void* p);

/* "0.1.0". Static storage. */
SETTEE_EXPORT const char* settee_version(void);

/* ----------------------------------------------------------------- Store */

typedef struct settee_store settee_store;
typedef struct settee_db settee_db;

typedef enum settee_backend {
  SETTEE_BACKEND_LEVELDB = 0, /* on disk, in the directory `path` */
  SETTEE_BACKEND_MEMORY = 1   /* gone when the store closes */
} settee_backend;

typedef struct settee_store_options {
  settee_backend backend;
  const char* path; /* LevelDB directory (created if missing); required for LevelDB */
  int sync;         /* non-zero: fsync every write before acknowledging it */
  uint64_t max_document_size; /* bytes of one document's JSON; 0 = 8 MiB */
  uint32_t revs_limit;        /* revs_limit of new databases; 0 = 1000 */
  /* Design-document JavaScript (map and reduce functions of views,
   * validate_doc_update, replication filters) runs on isolate threads of
   * the store's own, started when first needed (never, if no database has
   * such code). Ignored by a build without the JS runtime. */
  int view_threads;         /* isolate threads; 0 = one per core, at most 4 */
  uint32_t view_timeout_ms; /* cap per call into that code; 0 = 5000 (CouchDB's) */
  int view_jitless;         /* non-zero: V8 without JIT, if these threads are
                               the first of the process to start V8 */
} settee_store_options;

/* Fills *options with the defaults (LevelDB, path NULL, no sync). */
SETTEE_EXPORT void settee_store_options_init(settee_store_options* options);

/* Opens (creating if needed) a store. On success *out is a new handle, free it
 * with settee_store_free(). Errors: INVALID_ARGUMENT (NULL options or out, an
 * unknown backend, LevelDB without a path), IO (the directory cannot be
 * used, or another process holds it). */
SETTEE_EXPORT settee_code settee_store_open(const settee_store_options* options,
                                            settee_store** out, settee_error* err);

/* Closes the store: stops its runtimes, closes its databases' handles and the
 * backend. Idempotent. INVALID_OPERATION from inside one of its callbacks. */
SETTEE_EXPORT settee_code settee_store_close(settee_store* store, settee_error* err);

/* Closes the store if it is open, then frees the handle. NULL is fine. */
SETTEE_EXPORT void settee_store_free(settee_store* store);

/* Creates a database. ILLEGAL_DATABASE_NAME unless the name matches
 * ^[a-z][a-z0-9_$()+/-]*$; FILE_EXISTS if it exists. With `out` non-NULL,
 * *out gets a handle to it (free with settee_db_free). */
SETTEE_EXPORT settee_code settee_db_create(settee_store* store, const char* name,
                                           settee_db** out, settee_error* err);

/* Opens an existing database; NOT_FOUND if there is none. */
SETTEE_EXPORT settee_code settee_db_open(settee_store* store, const char* name,
                                         settee_db** out, settee_error* err);

/* Deletes a database and its documents; NOT_FOUND if there is none. Its open
 * handles then fail with NOT_FOUND. */
SETTEE_EXPORT settee_code settee_db_destroy(settee_store* store, const char* name,
                                            settee_error* err);

/* *json_out = the sorted names as a JSON array, e.g. ["a","b"]. */
SETTEE_EXPORT settee_code settee_store_list_dbs(settee_store* store, char** json_out,
                                                settee_error* err);

/* ------------------------------------------------------------- Databases */

/* Frees a database handle (the database itself stays). NULL is fine. */
SETTEE_EXPORT void settee_db_free(settee_db* db);

/* *json_out = the database's info as CouchDB's GET /db returns it
 * ({"db_name":..,"doc_count":..,"update_seq":..,...}). */
SETTEE_EXPORT settee_code settee_db_info(settee_db* db, char** json_out, settee_error* err);

/* Creates or updates a document (PUT /db/docid, or POST /db with docid NULL
 * and no _id in the body: a UUID is made). `json` is the document object;
 * its _rev names the revision it replaces. *id_out (if not NULL) gets the
 * id, *rev_out (if not NULL) the new revision. Errors: BAD_REQUEST (not a
 * JSON object), ILLEGAL_DOCID, DOC_VALIDATION, CONFLICT,
 * DOCUMENT_TOO_LARGE; for a design document, as CouchDB checks one before
 * it stores it, INVALID_DESIGN_DOC (a field of the wrong type, a view
 * without a map) and COMPILATION (a map or reduce function that does not
 * compile, in a build with the JS runtime). */
SETTEE_EXPORT settee_code settee_db_put(settee_db* db, const char* docid, const char* json,
                                        char** id_out, char** rev_out, settee_error* err);

typedef struct settee_get_options {
  const char* rev; /* a revision; NULL = the winner */
  int revs;        /* non-zero: add _revisions */
  int conflicts;   /* non-zero: add _conflicts */
} settee_get_options;

/* *json_out = the document (with _id and _rev). `options` may be NULL.
 * NOT_FOUND with message "missing" or "deleted". */
SETTEE_EXPORT settee_code settee_db_get(settee_db* db, const char* docid,
                                        const settee_get_options* options, char** json_out,
                                        settee_error* err);

/* Deletes revision `rev` of a document (a tombstone revision is added);
 * *rev_out (if not NULL) gets the tombstone's revision. CONFLICT if `rev`
 * is not a current leaf, NOT_FOUND if there is no such document. */
SETTEE_EXPORT settee_code settee_db_delete(settee_db* db, const char* docid, const char* rev,
                                           char** rev_out, settee_error* err);

/* Writes the JSON array `docs_json` of documents in one batch (POST
 * /db/_bulk_docs). new_edits = 0 stores the given revisions as a replicator
 * does. *results_json = CouchDB's answer: one [{"ok":true,"id":..,"rev":..}]
 * or [{"id":..,"error":..,"reason":..}] per document, in order. A document's
 * own failure is in its row; the call fails only when nothing was written
 * (BAD_REQUEST: not an array). */
SETTEE_EXPORT settee_code settee_db_bulk_docs(settee_db* db, const char* docs_json,
                                              int new_edits, char** results_json,
                                              settee_error* err);

typedef struct settee_all_docs_options {
  const char* start_key; /* first id (NULL: from the start) */
  const char* end_key;   /* last id (NULL: to the end) */
  int exclusive_end;     /* non-zero: leave end_key out */
  int descending;
  uint64_t skip;
  uint64_t limit;        /* 0 = no limit */
  int include_docs;
  const char* const* keys; /* with n_keys > 0: exactly these ids, in order */
  size_t n_keys;
} settee_all_docs_options;

/* *json_out = CouchDB's _all_docs answer, {"total_rows":N,"offset":N,
 * "rows":[{"id":..,"key":..,"value":{"rev":..},"doc":..}]}. `options`
 * may be NULL (all rows, ascending, no docs). */
SETTEE_EXPORT settee_code settee_db_all_docs(settee_db* db, const settee_all_docs_options* options,
                                             char** json_out, settee_error* err);

typedef struct settee_change {
  uint64_t seq;
  const char* id;
  const char* const* revs; /* n_revs revisions, the winner first */
  size_t n_revs;
  int deleted;             /* the winner is a deletion */
  const char* doc;         /* the winner's JSON with include_docs, else NULL */
} settee_change;

/* Return non-zero to go on, zero to stop. */
typedef int (*settee_change_fn)(void* context, const settee_change* change);

typedef struct settee_changes_options {
  uint64_t since;    /* changes after this sequence */
  uint64_t limit;    /* 0 = no limit */
  int descending;
  int include_docs;
} settee_changes_options;

/* Calls `fn` on the calling thread for each change after options->since, one
 * per document at its latest sequence, in order, until it returns 0 or the
 * limit is reached. *last_seq (if not NULL) gets the sequence of the last
 * change delivered (`since` when none). `options` may be NULL. */
SETTEE_EXPORT settee_code settee_db_changes(settee_db* db, const settee_changes_options* options,
                                            settee_change_fn fn, void* context,
                                            uint64_t* last_seq, settee_error* err);

/* Live changes: `fn` is called with the new update sequence after each
 * committed write to the database, on the writing thread, while a database
 * lock is held: it must be quick and must not call into this database (post
 * to a queue; read the changes from another thread with settee_db_changes).
 * It is called once with UINT64_MAX when the database is deleted. *id_out
 * names the listener for settee_db_unlisten. */
typedef void (*settee_update_fn)(void* context, uint64_t update_seq);
SETTEE_EXPORT settee_code settee_db_listen(settee_db* db, settee_update_fn fn, void* context,
                                           uint64_t* id_out, settee_error* err);

/* Removes a listener; once this returns it is not running and never will be
 * again. Freeing the handle or closing the store removes its listeners too.
 * NOT_FOUND for an unknown id. */
SETTEE_EXPORT settee_code settee_db_unlisten(settee_db* db, uint64_t id, settee_error* err);

/* ----------------------------------------------------------- Attachments */

/* Adds or replaces attachment `name` of document `docid` with the `size`
 * bytes at `data` (PUT /db/docid/name): `rev` is the document's current
 * revision, or NULL to create the document with just this attachment.
 * `content_type` NULL means "application/octet-stream". The bytes are
 * copied; `data` may be NULL only when `size` is 0. *rev_out (if not NULL)
 * gets the new revision. Errors: CONFLICT (`rev` is not the current leaf,
 * or NULL for a document that exists), ILLEGAL_DOCID, INVALID_ARGUMENT. */
SETTEE_EXPORT settee_code settee_db_put_attachment(settee_db* db, const char* docid,
                                                   const char* name, const char* rev,
                                                   const char* content_type, const void* data,
                                                   size_t size, char** rev_out,
                                                   settee_error* err);

/* Reads attachment `name` of revision `rev` (NULL: the winner) whole:
 * *data_out gets a copy of its bytes, decoded (free with settee_free; not
 * NULL on success, even for 0 bytes), *size_out their count, and
 * *content_type_out (if not NULL) its content type (free with settee_free).
 * NOT_FOUND: the document is "missing" or "deleted", or the revision has no
 * such attachment. */
SETTEE_EXPORT settee_code settee_db_get_attachment(settee_db* db, const char* docid,
                                                   const char* name, const char* rev,
                                                   void** data_out, size_t* size_out,
                                                   char** content_type_out, settee_error* err);

/* Removes attachment `name` at the current revision `rev`; *rev_out (if not
 * NULL) gets the new revision. CONFLICT: `rev` is not the current leaf;
 * NOT_FOUND: the revision has no such attachment. */
SETTEE_EXPORT settee_code settee_db_delete_attachment(settee_db* db, const char* docid,
                                                      const char* name, const char* rev,
                                                      char** rev_out, settee_error* err);

/* ---------------------------------------------------------------- Mango */

/* Creates a Mango index (POST /db/_index): `index_json` is CouchDB's body,
 * e.g. {"index":{"fields":["type","n"]},"name":"by-type"}. *json_out (if
 * not NULL) = {"result":"created"|"exists","id":..,"name":..}. Errors:
 * BAD_REQUEST (not JSON, or not an index definition). */
SETTEE_EXPORT settee_code settee_db_create_index(settee_db* db, const char* index_json,
                                                 char** json_out, settee_error* err);

/* Runs a Mango query (POST /db/_find): `query_json` is CouchDB's body,
 * {"selector":{..},"fields":[..],"sort":[..],"limit":N,"skip":N,
 * "use_index":..}. *json_out = {"docs":[..],"bookmark":..} (and "warning"
 * when no index could serve it, as CouchDB says). Errors: BAD_REQUEST (not
 * JSON, a bad selector), INVALID_OPERATOR (an unknown or misused
 * $operator), NO_USABLE_INDEX (a sort no index covers). */
SETTEE_EXPORT settee_code settee_db_find(settee_db* db, const char* query_json, char** json_out,
                                         settee_error* err);

/* ----------------------------------------------------------------- Views */

/* Queries view `view` of design document `ddoc` (its name, with or without
 * "_design/"), as GET /db/_design/ddoc/_view/view and PouchDB's
 * db.query('ddoc/view', options) do. `options_json` (NULL: {}) is a JSON
 * object of the query's options as PouchDB and CouchDB spell them, with
 * JSON values: key, keys, startkey/start_key, endkey/end_key,
 * startkey_docid, endkey_docid, inclusive_end, descending, skip, limit,
 * reduce, group, group_level, include_docs, conflicts, update_seq, update
 * (true, false, "lazy") or stale ("ok", "update_after"); unknown members
 * are ignored, as CouchDB does.
 *
 * *json_out = CouchDB's answer: {"total_rows":N,"offset":N,"rows":[{"id",
 * "key","value"[,"doc"]}..]}, or for a view with a reduce (unless
 * "reduce":false) {"rows":[{"key","value"}..]} grouped as the options say.
 * The index is brought up to date first (unless update is false) and kept
 * in the store, so later queries only map what changed.
 *
 * Map and reduce functions in JavaScript run on the store's view threads
 * (settee_store_options); the built-in reduces (_sum, _count, _stats,
 * _approx_count_distinct) and Mango's "query" indexes run in C++.
 * Errors: NOT_FOUND ("missing": no such design document;
 * "missing_named_view"), QUERY_PARSE (a bad option, or one the view does
 * not allow such as include_docs on a reduce), BAD_REQUEST (options_json
 * is not a JSON object), COMPILATION (a function does not compile),
 * TIMEOUT (a function ran past view_timeout_ms), UNSUPPORTED (JavaScript
 * views in a build without the JS runtime). A failed update leaves the
 * index as it was. */
SETTEE_EXPORT settee_code settee_db_query(settee_db* db, const char* ddoc, const char* view,
                                          const char* options_json, char** json_out,
                                          settee_error* err);

/* ----------------------------------------------------------- Replication */

/* A replication from a source to a target by CouchDB's replication
 * protocol (checkpoints in _local/ documents on both sides, so a restart
 * resumes where the last one stopped), on a thread of its own. */
typedef struct settee_replication settee_replication;

typedef enum settee_replication_state {
  SETTEE_REPLICATION_INITIALIZING = 0,
  SETTEE_REPLICATION_RUNNING = 1,
  SETTEE_REPLICATION_PAUSED = 2,    /* continuous, caught up, waiting for changes */
  SETTEE_REPLICATION_RETRYING = 3,  /* an attempt failed; it retries with backoff */
  SETTEE_REPLICATION_COMPLETED = 4, /* one-shot, done */
  SETTEE_REPLICATION_FAILED = 5,    /* ended by an error no retry can mend */
  SETTEE_REPLICATION_CANCELLED = 6
} settee_replication_state;

/* Starts replicating `source` to `target`, each a database of `store` (its
 * name) or a CouchDB-compatible server's database (an http:// or https://
 * URL, credentials as its user:password@). `options_json` (NULL: {}) is a
 * JSON object with the other members of CouchDB's POST /_replicate body:
 * "continuous", "create_target", "doc_ids", "filter" ("ddoc/name", with
 * "query_params"), "selector" (Mango), "since_seq", "batch_size",
 * "batches_limit", "retries_per_request". Returns at once: the work
 * happens on the replication's thread; *out is a new handle (free with
 * settee_replication_free). Starting a replication that is running (same
 * source, target and options) gives a handle to the running one, as
 * CouchDB does. Errors: BAD_REQUEST (options_json is not an object, has
 * "source"/"target"/"cancel", or a bad option), ILLEGAL_DATABASE_NAME, a
 * filter's NOT_FOUND. A missing database or an unreachable server is not
 * an error here: the replication fails (one-shot) or retries (continuous)
 * and its status and settee_replication_wait say why. */
SETTEE_EXPORT settee_code settee_replication_start(settee_store* store, const char* source,
                                                   const char* target, const char* options_json,
                                                   settee_replication** out, settee_error* err);

/* The replication's progress. *state_out (if not NULL) gets its
 * settee_replication_state; *json_out (if not NULL) = {"replication_id",
 * "source","target","continuous","state" ("initializing", "running",
 * "paused", "retrying", "completed", "failed", "cancelled"),"docs_read",
 * "docs_written","doc_write_failures","missing_revisions_found",
 * "revisions_checked","changes_pending","start_seq","source_seq",
 * "checkpointed_source_seq","retries"[,"error":{"error","reason"}]} (the
 * error of a failed replication, or of the last failed attempt). Passwords
 * in URLs are not shown. CLOSED once its store is closed. */
SETTEE_EXPORT settee_code settee_replication_status(settee_replication* rep, int* state_out,
                                                    char** json_out, settee_error* err);

/* Waits up to `timeout_ms` (0: no limit) for the replication to end: a
 * one-shot one completes or fails, a continuous one is cancelled or fails.
 * Returns SETTEE_OK when it completed or was cancelled, the error that
 * ended it when it failed (NOT_FOUND for a missing database, UNAUTHORIZED,
 * ...), TIMEOUT if it is still running, CLOSED if its store was closed
 * (closing cancels every replication and ends the wait). */
SETTEE_EXPORT settee_code settee_replication_wait(settee_replication* rep, uint32_t timeout_ms,
                                                  settee_error* err);

/* Stops the replication (it ends with state CANCELLED, its last batch
 * checkpointed) and returns without waiting for its thread: see
 * settee_replication_wait. Idempotent; OK for one that has ended. */
SETTEE_EXPORT settee_code settee_replication_cancel(settee_replication* rep, settee_error* err);

/* Frees the handle. The replication itself goes on until it ends, is
 * cancelled (through another handle to it) or its store closes: cancel
 * first to stop it. NULL is fine. */
SETTEE_EXPORT void settee_replication_free(settee_replication* rep);

/* ------------------------------------------------------------ JavaScript */

typedef struct settee_runtime settee_runtime;

#define SETTEE_ANY_THREAD (-1)  /* the least busy isolate thread */
#define SETTEE_ALL_THREADS (-2) /* every isolate thread (run_file/run_string) */

/* A report of an uncaught error, an unhandled rejection, a timeout or heap
 * exhaustion, called on the isolate's thread. */
typedef void (*settee_report_fn)(void* context, int thread, const char* text);

typedef struct settee_runtime_options {
  int threads;          /* isolate threads, 1..64; 0 = 1 */
  uint64_t max_heap_mb; /* heap cap per isolate; 0 = V8's default */
  uint32_t timeout_ms;  /* wall-clock cap per call into JS; 0 = none */
  int jitless;          /* non-zero: V8 without JIT (iOS); see below */
  const char* v8_flags; /* extra V8 flags, or NULL */
  settee_report_fn on_error; /* NULL: reports go to stderr */
  void* on_error_context;
  settee_report_fn on_message; /* settee.postMessage(msg) to the host: the
                                  JSON; NULL: dropped */
  void* on_message_context;
} settee_runtime_options;

/* Fills *options with the defaults (one thread, no limits). */
SETTEE_EXPORT void settee_runtime_options_init(settee_runtime_options* options);

/* Starts a JS runtime whose scripts see the store's databases through the
 * PouchDB API (`new PouchDB(name)`). V8 is set up once per process: the V8
 * flags (and jitless) of the first runtime apply to all. Free with
 * settee_runtime_free(). UNSUPPORTED when the library was built without JS. */
SETTEE_EXPORT settee_code settee_runtime_start(settee_store* store,
                                               const settee_runtime_options* options,
                                               settee_runtime** out, settee_error* err);

/* Queues the file as the main module of `thread` (or SETTEE_ALL_THREADS) and
 * returns; settee_runtime_wait() waits for it. NOT_FOUND: unreadable file. */
SETTEE_EXPORT settee_code settee_runtime_run_file(settee_runtime* rt, int thread, const char* path,
                                                  settee_error* err);

/* settee_runtime_run_file() for script text; `name` (may be NULL) names it
 * in stack traces. */
SETTEE_EXPORT settee_code settee_runtime_run_string(settee_runtime* rt, int thread,
                                                    const char* source, const char* name,
                                                    settee_error* err);

/* Blocks until every isolate is idle or a script called process.exit();
 * *exit_code (if not NULL) gets process.exit's code, else 1 if a main script
 * died of an uncaught error, else 0. */
SETTEE_EXPORT settee_code settee_runtime_wait(settee_runtime* rt, int* exit_code,
                                              settee_error* err);

/* Calls the JS function whose source is `fn_source` (e.g. "(x) => x + 1")
 * with JSON.parse(arg_json) (NULL: null) on `thread` (or SETTEE_ANY_THREAD)
 * and blocks; *json_out = JSON of its result (promises awaited). Errors:
 * INTERNAL (the JS exception's stack in the message), TIMEOUT, BAD_REQUEST
 * (the result is not representable as JSON). */
SETTEE_EXPORT settee_code settee_runtime_call(settee_runtime* rt, int thread,
                                              const char* fn_source, const char* arg_json,
                                              char** json_out, settee_error* err);

/* Evaluates a classic script and blocks; *text_out = util.inspect() of its
 * value (like node -p). */
SETTEE_EXPORT settee_code settee_runtime_eval(settee_runtime* rt, int thread, const char* source,
                                              char** text_out, settee_error* err);

/* Stops the isolate threads (running JS is terminated). Idempotent. */
SETTEE_EXPORT settee_code settee_runtime_close(settee_runtime* rt, settee_error* err);

/* Closes the runtime if open, then frees the handle. NULL is fine. */
SETTEE_EXPORT void settee_runtime_free(settee_runtime* rt);

/* Non-zero when this library includes the JS runtime. */
SETTEE_EXPORT int settee_has_js(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SETTEE_SETTEE_H_ */
