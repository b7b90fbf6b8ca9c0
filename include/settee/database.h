// Database: one CouchDB-compatible document database inside a Store.
//
// Documents cross this API as JSON text. Inputs are the documents as a client
// sends them (with _id, _rev, _deleted, _revisions, ...); outputs are the JSON
// objects CouchDB would return for the same request (with _id and _rev first).
// Semantics follow CouchDB 3's document API (https://docs.couchdb.org/, "API
// Reference"): revision trees, deterministic revision ids "N-<32 hex>", the
// winning-revision rule, conflicts, deletions as tombstones, per-database
// update sequences.
//
// Documents whose id starts with "_local/" are local documents: kept with a
// "0-N" revision and no history, never in AllDocs, Changes or replication.
//
// Thread safety: every method may be called from any thread concurrently.
// Writes to one database are serialized internally (one revision check and
// sequence assignment at a time); reads never wait for writes; different
// databases never block each other. Handles are shared_ptr's obtained from a
// Store, which must outlive them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {

////////////////////////////////////////////////////////////////////////////////
// Writing

// Who writes, as CouchDB's validate_doc_update functions see it (their
// userCtx argument, with the database's name added as "db").
struct UserContext {
  std::string name;  // empty: anonymous (null)
  std::vector<std::string> roles;
};

struct UpdateOptions {
  // true: normal edits; _rev must name the current leaf (else kConflict).
  // false: replicator mode; the doc's _revisions (or _rev) history is merged
  // into the tree as given and conflicts are never an error.
  bool new_edits = true;
  // The writer, for the database's validate_doc_update functions; must
  // outlive the call. nullptr: the embedding application itself, which
  // CouchDB's functions see as a server admin ({"name":null,"roles":["_admin"]}).
  const UserContext* user = nullptr;
  // true: a _local document's _rev (or the rev its _revisions name) must be
  // its current revision, none for a new one, else kConflict, checked in
  // the write itself, so two writers of one _local document cannot both
  // pass. PouchDB's rule (its JS API sets this); CouchDB 3 checks nothing
  // and keeps a _local document's last write (the HTTP API leaves it false).
  bool check_local_revs = false;
};

// The outcome for one document of a write.
struct DocUpdateResult {
  std::string id;
  std::string rev;  // the new revision (new_edits) or the given one
  Status status;    // per-document error, e.g. kConflict
};

////////////////////////////////////////////////////////////////////////////////
// Reading one document

struct GetOptions {
  std::string rev;                 // a specific revision; empty = the winner
  bool revs = false;               // add _revisions {start, ids}
  bool revs_info = false;          // add _revs_info [{rev, status}]
  bool conflicts = false;          // add _conflicts (if any)
  bool deleted_conflicts = false;  // add _deleted_conflicts (if any)
  bool local_seq = false;          // add _local_seq
  bool latest = false;             // with rev/open_revs: the leaf(s) descending from it
  // Attachment bodies inline as base64 "data" (CouchDB's attachments=true).
  bool attachments = false;
  // With attachments: bodies only for attachments changed after the newest of
  // these revisions found in the returned revision's history (stubs for the
  // rest), as CouchDB's atts_since.
  std::vector<std::string> atts_since;
  // Entries of gzip-stored bodies carry "encoding" and "encoded_length".
  bool att_encoding_info = false;
  // With attachments: the entries that would carry "data" say
  // "follows":true (with their length) instead, for a multipart response
  // that sends the bodies after the document (OpenAttachment()).
  bool attachments_follow = false;
};

// One element of an open_revs answer.
struct OpenRevResult {
  std::string rev;
  bool found = false;  // false: "missing"
  std::string doc;     // JSON of the revision when found
};

////////////////////////////////////////////////////////////////////////////////
// _all_docs

// One requested key of an _all_docs `keys` list. Only a string names a
// document; any other JSON value a client sends (a number, null, an array)
// names none, and is kept as its JSON text so that its not_found row can give
// it back exactly as sent.
struct AllDocsKey {
  // Implicit: a document id is the usual key.
  AllDocsKey(std::string id) : text(std::move(id)) {}  // NOLINT(runtime/explicit)
  AllDocsKey(const char* id) : text(id) {}             // NOLINT(runtime/explicit)
  static AllDocsKey NotAString(std::string json) {
    AllDocsKey k(std::move(json));
    k.is_string = false;
    return k;
  }

  std::string text;       // the doc id, or the JSON text of a non-string key
  bool is_string = true;
};

struct AllDocsOptions {
  // Doc ids, compared bytewise. A range whose start lies beyond its end (in
  // the direction of `descending`) holds no rows; it is not an error (CouchDB
  // 3 answers such an _all_docs query with no rows).
  std::optional<std::string> start_key;
  std::optional<std::string> end_key;
  bool inclusive_end = true;
  bool descending = false;
  uint64_t skip = 0;
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  // When set, exactly these keys in this order (reversed when descending),
  // deleted and missing ids too; start/end keys are then ignored.
  std::optional<std::vector<AllDocsKey>> keys;
  bool include_docs = false;
  bool conflicts = false;  // with include_docs
  // With include_docs: attachment bodies inline, encoding info, as
  // GetOptions::attachments / att_encoding_info.
  bool attachments = false;
  bool att_encoding_info = false;
};

struct AllDocsRow {
  std::string id;
  std::string rev;       // the winning revision
  bool deleted = false;  // only with keys: the doc exists but is deleted
  Status error;          // only with keys: kNotFound for unknown ids
  std::string doc;       // include_docs: the JSON body ("null" when deleted)
  // Only for a requested key that is not a string (AllDocsKey::NotAString):
  // its JSON text, the row's "key"; `id` is then empty.
  std::string key_json;
};

struct AllDocsResult {
  uint64_t total_rows = 0;  // doc_count (live docs)
  uint64_t offset = 0;      // rows before the first returned
  uint64_t update_seq = 0;
  std::vector<AllDocsRow> rows;
};

////////////////////////////////////////////////////////////////////////////////
// _changes

struct ChangesOptions {
  uint64_t since = 0;
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  bool descending = false;
  bool include_docs = false;
  bool all_docs_style = false;  // style=all_docs: every leaf, not just the winner
  bool conflicts = false;       // with include_docs
  // With include_docs: as GetOptions::attachments / att_encoding_info.
  bool attachments = false;
  bool att_encoding_info = false;
  std::optional<std::vector<std::string>> doc_ids;  // filter=_doc_ids
  // Only changes with seq <= until (a view update reads a seq range per
  // share). A feed cut short by it reports until as its last seq.
  uint64_t until = std::numeric_limits<uint64_t>::max();
};

struct ChangeRow {
  uint64_t seq = 0;
  std::string id;
  std::vector<std::string> revs;  // winner first
  bool deleted = false;           // the winner is deleted
  std::string doc;                // include_docs
};

////////////////////////////////////////////////////////////////////////////////
// Replication helpers

struct RevsDiffRequest {
  std::string id;
  std::vector<std::string> revs;
};
struct RevsDiffResult {
  std::string id;
  std::vector<std::string> missing;
  std::vector<std::string> possible_ancestors;
};

struct BulkGetRequest {
  std::string id;
  std::string rev;  // empty = the winner, or every leaf (all_leaves)
  // Attachment bodies inline except those unchanged since the newest of
  // these revisions, which stay stubs (GetOptions::atts_since; implies
  // attachments), per document as in CouchDB's _bulk_get items.
  std::vector<std::string> atts_since;
  // With no rev: every leaf, deleted ones too, as CouchDB's _bulk_get reads
  // an item without one (open_revs=all; a missing document is not_found
  // "missing"), instead of the winner, as PouchDB's bulkGet does (a
  // deleted one is not_found "deleted").
  bool all_leaves = false;
};
struct BulkGetOptions {
  bool revs = false;
  bool latest = false;
  bool attachments = false;  // as GetOptions::attachments
  bool att_encoding_info = false;
};
// One {"ok":doc} or {"error":{id,rev,error,reason}} item of a _bulk_get answer.
struct BulkGetItem {
  std::string rev;
  Status status;
  std::string doc;  // JSON when status.ok()
};
struct BulkGetResult {
  std::string id;
  std::vector<BulkGetItem> docs;
};

////////////////////////////////////////////////////////////////////////////////
// Attachments

// One attachment of one revision, as its entry and stored body describe it.
struct AttachmentInfo {
  std::string docid;
  std::string rev;  // the revision it was read from
  std::string name;
  std::string content_type;
  std::string digest;  // "md5-<base64>" (or the digest a replicating peer gave)
  uint64_t revpos = 0;
  uint64_t length = 0;  // decoded length
  bool gzip = false;    // stored gzip-encoded (CouchDB's "encoding":"gzip")
  uint64_t encoded_length = 0;
  // Database::GetWithAttachments: its decoded bytes follow (else a stub).
  bool follows = false;
};

// Receives the attachments of a revision from Database::GetWithAttachments().
// Its calls come on the calling thread, during that call.
class AttachmentBodySink {
 public:
  virtual ~AttachmentBodySink() = default;
  // Every attachment of the revision, in document order, before any body.
  // The bodies of those marked `follows` come next, in the order they are
  // stored in (one forward pass through the store), not document order:
  // each body's pieces in a row, one body after another.
  virtual Status Entries(const std::vector<AttachmentInfo>& atts) = 0;
  // Consecutive decoded bytes of atts[i]: a view valid during the call only.
  // An error stops the read and is what GetWithAttachments() returns.
  virtual Status Piece(size_t i, std::string_view bytes) = 0;
};

// An attachment opened for reading, pinned to the snapshot it was opened in:
// later writes and compaction do not change what it reads. Not thread-safe;
// may outlive the Database handle only while the Store lives.
class AttachmentReader {
 public:
  virtual ~AttachmentReader() = default;
  virtual const AttachmentInfo& info() const = 0;
  // Calls `sink` with consecutive pieces of the decoded bytes [offset,
  // offset + count) (clipped to the body), a chunk at a time, until done or
  // it returns false. Memory stays bounded whatever the body's size.
  virtual Status Read(uint64_t offset, uint64_t count,
                      const std::function<bool(std::string_view)>& sink) = 0;
  // The stored bytes as they are (gzip bytes when info().gzip).
  virtual Status ReadEncoded(const std::function<bool(std::string_view)>& sink) = 0;
};

// An attachment body written a piece at a time (Database::NewAttachmentWriter:
// an upload streamed from a socket). Bytes go to storage in chunks as they
// come, their MD5 digest and (for compressible types) gzip encoding computed
// on the way, so a body of any size costs a few chunks of memory. Commit()
// then adds the attachment to the document as PutAttachment() would. A
// writer destroyed without a successful Commit() deletes what it stored:
// an interrupted upload leaves nothing behind. Not thread-safe; must not
// outlive the Database it came from.
class AttachmentWriter {
 public:
  virtual ~AttachmentWriter() = default;
  // Appends decoded bytes. An error ends the writer (destroy it).
  virtual Status Write(std::string_view piece) = 0;
  // Bytes written so far.
  virtual uint64_t length() const = 0;
  // Ends the body and writes the document's new revision: errors as
  // PutAttachment() (kConflict when `rev` is no longer a current leaf).
  // Once only.
  virtual Result<DocUpdateResult> Commit() = 0;
};

// A document whose "follows" attachments' bodies arrive one after another
// (Database::NewDocBodiesWriter: a multipart/related PUT read from a socket,
// as CouchDB's replicator sends it). Each body goes to storage in chunks as
// it comes, so a document with bodies of any size costs a few chunks of
// memory; Commit() then writes the document as PutWithBodies() would. A
// writer destroyed without a successful Commit() deletes every body it
// stored: a truncated or malformed upload leaves nothing behind. Not
// thread-safe; must not outlive the Database it came from.
class DocBodiesWriter {
 public:
  virtual ~DocBodiesWriter() = default;
  // Starts the body of the next "follows" entry, in the document's order.
  // kBadRequest when every entry has its body.
  virtual Status BeginBody() = 0;
  // Appends bytes of the current body as sent: gzip bytes when its entry
  // says "encoding":"gzip" (decoded on the way), else the body itself.
  virtual Status Write(std::string_view piece) = 0;
  // Ends the current body: kBadRequest if it is not the length its entry
  // gives, not its digest, or not valid gzip.
  virtual Status EndBody() = 0;
  // Writes the document: kBadRequest if an entry's body never came, else
  // the errors of Put(). Once only.
  virtual Result<DocUpdateResult> Commit() = 0;
};

////////////////////////////////////////////////////////////////////////////////
// Purge

// One document of a purge (CouchDB's POST /db/_purge: {"docid": [revs]}).
struct PurgeRequest {
  std::string id;
  std::vector<std::string> revs;  // "N-hash" each
};

// What a purge removed of one requested document: the requested revisions
// that were leaves of its tree (others, and unknown documents, are ignored,
// as CouchDB does), in request order.
struct PurgeResult {
  std::string id;
  std::vector<std::string> purged;
  // Every revision that left the tree: the purged leaves and their
  // ancestors no other leaf shared, newest generation first (PouchDB's
  // purge() answers these as deletedRevs).
  std::vector<std::string> removed;
  // The document had no revision left and is gone.
  bool doc_removed = false;
};

////////////////////////////////////////////////////////////////////////////////

struct DatabaseInfo {
  std::string db_name;
  uint64_t doc_count = 0;      // live docs, design docs included, local excluded
  uint64_t doc_del_count = 0;  // docs whose winner is deleted
  uint64_t update_seq = 0;
  uint64_t purge_seq = 0;
  uint64_t sizes_active = 0;    // bytes of live data
  uint64_t sizes_external = 0;  // bytes of live JSON bodies
  uint64_t sizes_file = 0;      // bytes on disk (approximate)
};

// A _bulk_docs request body, {"docs": [...], "new_edits": bool}, parsed once
// (Database::ParseBulkDocsBody) and then written (Database::BulkDocs), so a
// server can check the request in between (design documents need an admin)
// without parsing it twice. Move-only; not tied to a thread.
class BulkDocsBody {
 public:
  struct Parsed;  // the storage engine's

  BulkDocsBody();
  explicit BulkDocsBody(std::unique_ptr<Parsed> parsed);
  ~BulkDocsBody();
  BulkDocsBody(BulkDocsBody&&) noexcept;
  BulkDocsBody& operator=(BulkDocsBody&&) noexcept;

  // The body's "new_edits", if it has one.
  std::optional<bool> new_edits() const;
  // True if some document's _id starts with "_design/".
  bool has_design_docs() const;
  // The engine's parse (nullptr once moved from).
  Parsed* parsed() const { return parsed_.get(); }

 private:
  std::unique_ptr<Parsed> parsed_;
};

class Database {
 public:
  Database() = default;
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  virtual ~Database() = default;

  virtual const std::string& name() const = 0;

  //////// Writing:
  //
  // Every write of a document that is neither a design nor a _local
  // document runs the validate_doc_update functions of the database's
  // design documents first (CouchDB's semantics: newDoc, oldDoc, userCtx
  // from options.user, secObj from Security()), through the functions the
  // embedder installed on the Store (storage/validate_functions.h). A
  // refused document fails with kForbidden or kUnauthorized (the thrown
  // message as reason), or kInternal for any other throw; in a bulk write
  // that is its own result, the others are written. A database with no such
  // function pays one atomic load per write for the check.

  // Creates or updates one document. `docid`, when non-empty, overrides the
  // body's _id (PUT /db/docid); with neither, a UUID is generated (POST).
  // Errors: kBadRequest (not a JSON object, bad _rev), kIllegalDocId,
  // kDocValidation (unknown _ member), kConflict, kNotFound (deleting a
  // missing doc), kDocumentTooLarge.
  virtual Result<DocUpdateResult> Put(std::string_view docid, std::string_view json,
                                      const UpdateOptions& options = {}) = 0;

  // Deletes `docid` at leaf `rev` (a tombstone revision is added).
  // `options.user` is for validate_doc_update; new_edits must be true.
  virtual Result<DocUpdateResult> Delete(std::string_view docid, std::string_view rev,
                                         const UpdateOptions& options = {}) = 0;

  // Applies many documents (each a JSON object) in order, as one atomic batch
  // for the database. Every document is parsed and checked first, as CouchDB
  // and PouchDB do: the first one that fails Put()'s checks (kBadRequest,
  // kIllegalDocId, kDocValidation, kDocumentTooLarge), or that lacks both
  // _rev and _revisions when !options.new_edits, fails the whole call with
  // its error and nothing is written. Otherwise `results` gets one entry per
  // document, with the per-document outcomes of writing (kConflict, ...).
  // The returned Status is non-OK only when nothing was written.
  virtual Status BulkDocs(const std::vector<std::string_view>& docs, const UpdateOptions& options,
                          std::vector<DocUpdateResult>* results) = 0;
  // BulkDocs() with the documents as one JSON array text (the "docs" of a
  // _bulk_docs body, or JSON.stringify of an array), parsed in one pass
  // instead of split first. Errors as in BulkDocs() (max_document_size
  // applies to each document's stored body, inline attachments not counted). kBadRequest,
  // and nothing written, if `docs` is not a JSON array.
  virtual Status BulkDocsArray(std::string_view docs, const UpdateOptions& options,
                               std::vector<DocUpdateResult>* results) = 0;
  // Parses a _bulk_docs request body for BulkDocs(BulkDocsBody, ...).
  // kBadRequest, with CouchDB's reason, for a body that is not JSON or not
  // an object, lacks a "docs" array, has a non-boolean "new_edits", or holds
  // a document that is not an object.
  virtual Result<BulkDocsBody> ParseBulkDocsBody(std::string_view body) = 0;
  // Writes a parsed body's documents, as BulkDocsArray() would. The body's
  // own "new_edits" is for the caller to apply to `options`.
  virtual Status BulkDocs(BulkDocsBody body, const UpdateOptions& options,
                          std::vector<DocUpdateResult>* results) = 0;

  //////// Attachments:

  // Adds or replaces attachment `name` of `docid` with `data` (the decoded
  // bytes, taken by value so that a caller holding a large body can move it
  // in rather than have it copied), creating the document when `rev` is empty and it does not exist
  // (or is deleted). kConflict when `rev` is not a current leaf, when the
  // document does not exist with `rev` given, or exists without it.
  virtual Result<DocUpdateResult> PutAttachment(std::string_view docid, std::string_view name,
                                                std::string_view rev,
                                                std::string_view content_type,
                                                std::string data,
                                                const UpdateOptions& options = {}) = 0;
  // PutAttachment() with the body written through the returned writer, a
  // piece at a time, and the revision written by its Commit(). The checks
  // that need no body (the id, the name, `rev` being a current leaf or the
  // document absent without one) are made here, so a doomed upload fails
  // before its body is read; the revision check is made again at Commit().
  virtual Result<std::unique_ptr<AttachmentWriter>> NewAttachmentWriter(
      std::string_view docid, std::string_view name, std::string_view rev,
      std::string_view content_type, const UpdateOptions& options = {}) = 0;
  // Removes attachment `name` at leaf `rev`: kConflict for a rev that is
  // not a leaf (or none), kNotFound when the revision lacks the attachment.
  virtual Result<DocUpdateResult> DeleteAttachment(std::string_view docid, std::string_view name,
                                                   std::string_view rev,
                                                   const UpdateOptions& options = {}) = 0;
  // Opens attachment `name` of revision `rev` (empty: the winner) for
  // reading. kNotFound "missing"/"deleted" for the document, kNotFound
  // "Document is missing attachment" for the name.
  virtual Result<std::unique_ptr<AttachmentReader>> OpenAttachment(std::string_view docid,
                                                                   std::string_view name,
                                                                   std::string_view rev = {}) = 0;
  // Put() of a document whose _attachments entries marked "follows" take
  // their bodies from `bodies`, in the order of those entries (a
  // multipart/related PUT). A body whose entry says "encoding":"gzip" is
  // gzip bytes. kBadRequest when the counts differ.
  virtual Result<DocUpdateResult> PutWithBodies(std::string_view docid, std::string_view json,
                                                std::vector<std::string> bodies,
                                                const UpdateOptions& options = {}) = 0;
  // PutWithBodies() with the bodies written as they arrive (DocBodiesWriter).
  // The document's JSON is checked here, before any body is read.
  virtual Result<std::unique_ptr<DocBodiesWriter>> NewDocBodiesWriter(
      std::string_view docid, std::string_view json, const UpdateOptions& options = {}) = 0;

  //////// Reading:

  // The document as JSON. kNotFound with reason "missing" or "deleted".
  virtual Result<std::string> Get(std::string_view docid, const GetOptions& options = {}) = 0;

  // The parts of what Get(docid) without options returns, without building
  // its JSON: the winning revision and the body's JSON text (an object
  // without _id and _rev), as views into *buffers, which the caller may
  // reuse from call to call (no allocation once they have grown). For
  // callers building their own values (the JS API's db.get). kNotFound with
  // reason "missing" or "deleted", as Get(); kInvalidOperation for a _local
  // document's id (use Get()).
  struct WinnerBuffers {
    std::string key;  // the record's key, built here: no allocation per read
    std::string record;
    std::string body;
  };
  virtual Status GetWinner(std::string_view docid, WinnerBuffers* buffers, std::string_view* rev,
                           std::string_view* body) = 0;

  // Get() with the attachments handed to `sink` instead of written into the
  // JSON: the returned document has no "_attachments" member; `sink` gets
  // every attachment (gzip and encoded_length filled in when
  // options.att_encoding_info), then the decoded bodies of those Get() with
  // these options would inline (options.attachments, atts_since). Document
  // and bodies come from one snapshot, each body straight from the stored
  // chunks: for callers building their own values (JS Buffers, multipart
  // parts) without a base64 or JSON round trip.
  virtual Result<std::string> GetWithAttachments(std::string_view docid,
                                                 const GetOptions& options,
                                                 AttachmentBodySink* sink) = 0;

  // open_revs: the given revisions, or every leaf when `revs` is empty.
  // kBadRequest "Invalid rev format" if a given revision is not "N-hash".
  virtual Status GetOpenRevs(std::string_view docid, const std::vector<std::string>& revs,
                             const GetOptions& options, std::vector<OpenRevResult>* out) = 0;

  virtual Status AllDocs(const AllDocsOptions& options, AllDocsResult* out) = 0;

  // Same options and rows as AllDocs over the _local/ documents.
  virtual Status LocalDocs(const AllDocsOptions& options, AllDocsResult* out) = 0;

  // Calls `each` for every change after options.since in seq order (or
  // reverse), one row per document at its latest seq, until it returns false
  // or the limit is reached. *last_seq gets the seq of the last row delivered
  // (options.since when none). Runs on a snapshot: later writes are not seen.
  virtual Status Changes(const ChangesOptions& options,
                         const std::function<bool(const ChangeRow&)>& each,
                         uint64_t* last_seq) = 0;

  // The number of changes, as Changes() lists them (each document once, at
  // its latest seq), with after < seq <= upto (UINT64_MAX: no upper end):
  // what _changes reports as "pending" when a limit cut the feed at `after`.
  // It reads the heads of the change blocks in the range, except that all
  // the changes after the end of a batch whose start was counted last (a
  // replicator reading in batches) cost about as much as the batch.
  virtual Result<uint64_t> CountChanges(uint64_t after, uint64_t upto) = 0;

  virtual Status RevsDiff(const std::vector<RevsDiffRequest>& request,
                          std::vector<RevsDiffResult>* out) = 0;

  virtual Status BulkGet(const std::vector<BulkGetRequest>& request,
                         const BulkGetOptions& options, std::vector<BulkGetResult>* out) = 0;

  virtual Result<DatabaseInfo> Info() = 0;

  //////// Change notification:

  virtual uint64_t UpdateSeq() const = 0;

  // Registers `listener`, called with the new update_seq after each committed
  // write that changed the sequence (and once with UINT64_MAX when the
  // database is deleted). It runs on the writing thread while a database
  // lock is held: it must be quick and must not call back into this database
  // (post to a queue, notify a condition variable, uv_async_send, ...).
  // Returns an id for RemoveChangeListener.
  using ChangeListener = std::function<void(uint64_t update_seq)>;
  virtual uint64_t AddChangeListener(ChangeListener listener) = 0;
  // Once this returns, the listener is not running and will never be called
  // again, so its captures may be destroyed. Must not be called from inside a
  // listener.
  virtual void RemoveChangeListener(uint64_t id) = 0;

  // Blocks the calling thread until UpdateSeq() > since, the timeout passes or
  // the database is deleted. Returns the update_seq then. Not for fibers or
  // event-loop threads: use AddChangeListener there.
  virtual uint64_t WaitForChange(uint64_t since, std::chrono::milliseconds timeout) = 0;

  //////// Purge:

  // Removes the named leaf revisions of each document from its revision
  // tree, with their ancestors that no remaining leaf shares (CouchDB 3's
  // purge). A document left without revisions is gone: no tombstone, not in
  // AllDocs, Changes or indexes, as if it had never been written; one left
  // with some gets a new change (its winner may change). Revisions that are
  // not leaves, and unknown documents, are ignored. Every request is logged
  // as one purge info (purge_seq grows by request.size()) and update_seq
  // grows by at least one, so view and Mango indexes drop the purged rows
  // on their next update. One atomic write; an empty request writes
  // nothing. *out gets one result per distinct id, in first-request order:
  // unlike CouchDB, which applies repeated ids one request after another,
  // settee merges a repeated id's revisions into one purge of that
  // document (each request is still logged). kBadRequest "Invalid rev
  // format" (nothing purged) for a revision that is not "N-hash".
  virtual Status Purge(const std::vector<PurgeRequest>& request,
                       std::vector<PurgeResult>* out) = 0;
  // Purge requests logged so far (DatabaseInfo::purge_seq).
  virtual uint64_t PurgeSeq() const = 0;
  // How many purge infos compaction keeps (CouchDB's purged_infos_limit,
  // default 1000); an index further behind than that rebuilds itself.
  // Unlike CouchDB, which keeps the infos a live index still needs,
  // compaction trims to this limit whatever the indexes need.
  virtual uint64_t PurgedInfosLimit() const = 0;
  // kBadRequest unless limit >= 1.
  virtual Status SetPurgedInfosLimit(uint64_t limit) = 0;

  //////// Maintenance:

  // Drops the bodies of non-leaf revisions, then the attachment bodies no
  // stored revision refers to (purged revisions' among them), trims the
  // purge infos to PurgedInfosLimit(), and reclaims backend space.
  virtual Status Compact() = 0;
  // Compact()'s first step for the given documents only: drops the bodies
  // of their non-leaf revisions (PouchDB's auto_compaction, after each
  // write). Attachment bodies no revision refers to any more stay until
  // Compact(). Missing ids are skipped.
  virtual Status CompactDocuments(const std::vector<std::string>& ids) = 0;

  virtual uint32_t RevsLimit() const = 0;
  // kBadRequest unless limit >= 1.
  virtual Status SetRevsLimit(uint32_t limit) = 0;

  // The _security object as JSON ("{}" when never set).
  virtual std::string Security() const = 0;
  // kBadRequest unless `json` is an object.
  virtual Status SetSecurity(std::string_view json) = 0;
};

}  // namespace settee
