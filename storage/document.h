// Parsing and validation of documents as clients send them, and settee's
// revision-id algorithm.
//
// A client's JSON object is split into the CouchDB special members (_id, _rev,
// _deleted, _revisions, _attachments) and the body that is stored: every other
// member, in the order given. Members that CouchDB reads and ignores (_revs_info,
// _conflicts, _deleted_conflicts, _local_seq) are dropped; _access and
// _replication_* are kept in the body; any other _ member is rejected with
// kDocValidation, as CouchDB does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/database.h"
#include "settee/status.h"
#include "storage/rev_tree.h"
#include "util/json.h"

namespace settee {

inline constexpr std::string_view kLocalPrefix = "_local/";
inline constexpr std::string_view kDesignPrefix = "_design/";

inline bool IsLocalDocId(std::string_view id) { return id.substr(0, kLocalPrefix.size()) == kLocalPrefix; }

// A _revisions object: ids[0] has generation `start`, ids[k] has start - k.
struct Revisions {
  uint64_t start = 0;
  std::vector<std::string> ids;
};

// One member of a document's _attachments as the client sent it. Exactly one
// of: a stub (the parent revision's attachment of that name is kept), inline
// data (decoded here), or follows (the body comes in a multipart part).
struct IncomingAttachment {
  std::string name;
  bool stub = false;
  bool follows = false;
  std::string content_type;  // as given; "" when absent
  std::string data;          // the body: decoded inline data, or a part's bytes
  std::string digest;        // as given ("" if none)
  uint64_t revpos = 0;       // as given (0 if none)
  std::string encoding;      // as given; "gzip" with follows: `data` is gzip bytes
  uint64_t length = 0;       // as given: the decoded length (follows)
  // The body is in the AttachmentStore already under `digest`, `length`
  // bytes (a streamed upload): the write stores nothing for it.
  bool staged = false;
};

// The kinds of top-level members whose name starts with '_' (see the top of
// this file): kIgnored ones are dropped, kKept ones stay in the body, kBad
// ones are refused.
enum class SpecialMember { kId, kRev, kDeleted, kRevisions, kIgnored, kKept, kAttachments, kBad };
SpecialMember Classify(std::string_view name);

struct IncomingDoc {
  std::string id;                       // empty when the client gave none
  // _rev as given ("" if none). The parsers set it once the id has passed,
  // and parse it last: a document they failed that has it and no `rev`
  // failed at RevId::Parse, which a caller may read by rules of its own.
  std::string rev_text;
  std::optional<RevId> rev;             // _rev, parsed (not for _local/ docs)
  std::optional<Revisions> revisions;   // _revisions
  bool deleted = false;                 // _deleted
  // A _local document written under UpdateOptions::check_local_revs.
  bool check_local_rev = false;
  std::string body;                     // stored JSON object, no special members
  // _attachments, in the order given; nullopt when the document has none
  // (an update without _attachments drops the parent's attachments).
  std::optional<std::vector<IncomingAttachment>> attachments;
  // A big body may be held compressed instead of in `body` (HoldBodyCompressed):
  // a batch of big documents then holds each one's JSON only while it is
  // built, not all of them until the batch is written. `body` is empty,
  // `snappy_body` holds Snappy's bytes of it, `body_size` its length, and
  // `first_rev_hash` its revision hash as a first revision
  // (ComputeRevHash("", deleted, body)), which is what a new document gets
  // without reading the body again. Whatever needs the JSON calls ExpandBody.
  std::string snappy_body;
  size_t body_size = 0;
  std::string first_rev_hash;
};

// Holds `body` compressed in `doc` (see IncomingDoc) if it is big and that
// saves an eighth, and returns true; false, `doc` untouched, otherwise.
// Only for a document without attachments; `doc->deleted` must be set.
bool HoldBodyCompressed(std::string_view body, IncomingDoc* doc);
// Puts a held compressed body back into `body` (nothing to do otherwise).
Status ExpandBody(IncomingDoc* doc);
// The length of the body, held compressed or not.
inline size_t BodySize(const IncomingDoc& doc) {
  return doc.snappy_body.empty() ? doc.body.size() : doc.body_size;
}

// Parses the value of a document's _attachments member: an object of
// {name: {stub|data|follows ...}}. kBadRequest with CouchDB's reason for a
// malformed entry, bad base64 ("Invalid attachment data for <name>") or a
// name starting with '_'.
Status ParseAttachmentsJson(const json::Value& value, std::vector<IncomingAttachment>* out);

// CouchDB's validate_attachment_sizes: kAttachmentTooLarge (reason: the
// attachment's name) when a body the document carries inline (decoded) is
// larger than `max_bytes`. Bodies staged by a streamed or multipart upload
// are not looked at: their writer bounds them as they are written.
Status CheckAttachmentSizes(const IncomingDoc& doc, uint64_t max_bytes);

// Parses one document. `id_override`, when non-empty, replaces _id (the id in
// a PUT URL). Checks: JSON object, size <= max_size, _id (string, legal),
// _rev format, _revisions shape, special members. Does not check the id when
// none is given (the caller generates one).
Status ParseIncomingDoc(std::string_view json, std::string_view id_override, size_t max_size,
                        IncomingDoc* out);

// Completes a document that a caller split into `out` itself from
// something other than JSON text (js/doc_split.h walks V8 objects): `out`
// holds the id (if the document had one: `saw_id`), `deleted` and the
// stored body, written exactly as the parsers here write it (compact,
// members in order, RapidJSON's number formatting, json::AppendQuoted's
// escapes). Checks the id and parses `rev_text` (the _rev, if any) as
// ParseIncomingDoc does; the size limit is the caller's.
Status FinishSplitDoc(bool saw_id, const std::optional<std::string>& rev_text, IncomingDoc* out);

// Parses a JSON array of documents (the "docs" of _bulk_docs, or what JS
// JSON.stringify gives for an array) in one pass: out[i] and statuses[i] are
// what ParseIncomingDoc gives for element i, except that a document's size
// limit applies to its stored body. kBadRequest, and nothing in the outputs,
// if `json` is not a JSON array.
Status ParseIncomingDocArray(std::string_view json, size_t max_size, std::vector<IncomingDoc>* out,
                             std::vector<Status>* statuses);

// What a _bulk_docs request body says besides its documents.
struct BulkDocsBodyInfo {
  std::optional<bool> new_edits;  // its "new_edits", if given
  bool has_design_docs = false;   // some document's _id starts with "_design/"
};

// Parses a _bulk_docs request body, {"docs": [...], "new_edits": bool}, in
// one pass: out/statuses as ParseIncomingDocArray gives them for "docs".
// kBadRequest, with CouchDB's reason, for a body that is not JSON ("invalid
// UTF-8 JSON") or not an object, lacks "docs" or has it other than an array,
// has a non-boolean "new_edits", or holds a document that is not an object.
Status ParseBulkDocsBody(std::string_view json, size_t max_size, BulkDocsBodyInfo* info,
                         std::vector<IncomingDoc>* out, std::vector<Status>* statuses);

// CouchDB's doc id rule: non-empty; a leading '_' only for "_design/x" and
// "_local/x" (with a non-empty remainder). kIllegalDocId otherwise (kBadRequest
// for a non-string id is reported by the parser).
Status ValidateDocId(std::string_view id);

// settee's deterministic revision hash (32 lowercase hex):
//   xxh3_128( parent_rev "\n" ("1" if deleted else "0") "\n" body )
// in xxHash's canonical byte order (`xxhsum -H2`). XXH3, not CouchDB's MD5:
// revision ids need determinism, not cryptographic strength (MD5 has none
// left either), and MD5 was the largest single cost of a bulk insert after
// parsing (bench/database_bench); XXH3 hashes a small document ~20x faster.
// where parent_rev is "" for a first revision and body is the stored body
// (compact JSON, members in the order the client sent them, special members
// removed). The same edit of the same parent always gets the same id, so
// retried writes are idempotent. Like CouchDB (which hashes the EJSON term)
// and PouchDB (which hashes JSON.stringify of the doc), member order counts.
std::string ComputeRevHash(std::string_view parent_rev, bool deleted, std::string_view body);

// The storage engine's side of a BulkDocsBody: the documents parsed from
// a _bulk_docs body, or split by the caller (FinishSplitDoc). Documents whose
// body exceeds the store's max_document_size are refused when written.
// A document its caller refuses before the write, by rules of its own (the
// HTTP API's reading of _rev, runtime/couch_rev.h): the write answers
// `status` in its place, as it answers a conflict, after the checks that
// refuse the whole request, and writes the others.
struct DocRefusal {
  size_t index;  // in the body's documents
  Status status;
};

struct BulkDocsBody::Parsed {
  BulkDocsBodyInfo info;
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;  // per document: parse errors
  std::vector<DocRefusal> refusals;  // set by the caller; empty as parsed
};

}  // namespace settee
