// Small pieces shared by the endpoint facet files: response fragments in
// CouchDB's exact shapes, and query-option parsing that several endpoints
// accept alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/couch_rev.h"
#include "runtime/couch_server.h"
#include "settee/database.h"
#include "util/couch_json.h"

namespace settee {

using couch_json::AppendUpdateResult;

// The _replicator database's checks of a write of `doc` (a JSON object) as
// `docid` by the requester (replication/replicator_doc_check.h), with the
// stored revision a deletion edits read from `db`. kForbidden with CouchDB's
// reason, kConflict for a deletion naming no stored revision.
Status CheckReplicatorWrite(const RequestContext& ctx, Database& db, std::string_view docid, const json::Value& doc);

// A write of one document to _replicator: CouchDB's before_doc_update
// (replication::StampReplicatorOwner: the writer's "owner" stamped, another
// user's refused with kForbidden) then CheckReplicatorWrite. *text, the
// document's JSON to write, is `doc` serialized again when the stamp changed
// it.
Status PrepareReplicatorWrite(RequestContext& ctx, Database& db, std::string_view docid, json::Document* doc,
                              std::string* text);

// CouchDB's after_doc_read for _replicator, for one request's reads
// (replication::ReplicatorReadIsStripped, StripReplicatorCredentials):
// another user's replication document reaches a reader who is not an admin
// of the database without the credentials in its source and target. As in
// CouchDB (couch_replicator_docs), a stripped document gets a new revision
// id at the same generation, computed over the stripped body on the
// revision's parent, so a client cannot take it for the stored revision.
// Every endpoint that gives documents of _replicator runs what it gives
// through Apply().
class ReplicatorReadFilter {
 public:
  // Inactive unless `db` is _replicator and the requester is not its admin.
  ReplicatorReadFilter(RequestContext& ctx, Database& db);

  bool active() const { return active_; }
  // Rewrites *doc_json, a document of `docid` as read (with its _rev), as
  // the requester may see it. Anything not a JSON object passes unchanged.
  void Apply(std::string_view docid, std::string* doc_json) const;

 private:
  Database& db_;
  const UserContext& user_;
  bool active_ = false;
};

// CouchDB's couch_users_db:after_doc_read for one read of `docid` in `db`
// by the requester, decided before the read. *public_fields stays unset for
// a reader who gets the document whole: `db` is not _users, or the reader
// is its admin, the document's own user, or reads a _local document. For
// another's document it is set to the [chttpd_auth] public_fields when
// some are configured; the reader then gets every revision it reads run
// through StripToPublicFields (404 "missing" when none of them is left), on
// every path that reads it (GET in each form, COPY's source, attachments).
// Otherwise CheckUserDocRead's refusal: kNotFound "missing" for another's
// document, kForbidden for a design document.
Status UsersDocReadFields(RequestContext& ctx, Database& db, std::string_view docid,
                          std::optional<std::vector<std::string>>* public_fields);

// "http://host/db/doc" for Location headers, from the Host header.
std::string AbsoluteUrl(const RequestContext& ctx, std::string_view path);

// Encodes a doc id for a URL path: "_design/x" and "_local/x" keep their
// slash, everything else is percent-encoded.
std::string EncodeDocIdForPath(std::string_view docid);

// Parses the _all_docs family's options from ctx.req.params in order, as
// CouchDB's parse_params folds them: a repeated option ends as its last value
// says (but attachments and att_encoding_info, once true, stay true), and a
// later key parameter replaces an earlier end of the range. Booleans and
// counts are read by views::ParseBooleanText and ParsePosIntText. `keys_body`
// is a POST body's "keys" (or nullptr), which a "keys" parameter overrides.
Status ParseAllDocsOptions(const RequestContext& ctx, const json::Value* keys_body,
                           AllDocsOptions* out, bool* want_update_seq);

using QueryParams = std::vector<std::pair<std::string, std::string>>;

// The view options in `object` (a POST body of the _all_docs family, or one
// object of its /queries) as the query-string parameters they stand for:
// key parameters as JSON text, booleans as "true"/"false", counts as
// digits. CouchDB's parse_params([decoded]) takes true/false or the strings
// "true"/"false" (any case) for a boolean and only a JSON integer >= 0 for a
// count, and only a JSON string for stale/stable/update (whose values the
// query string's parser checks); a doc id bound is its string, or else
// couch_util:to_binary's text of it. An array of character codes is an
// Erlang string and counts as the query string's text would. Anything else
// is kQueryParseError with its reason, which shows the value as Erlang
// prints its decoded term ({[]} for {}). "keys" and members that are no
// view option are left out.
Status ObjectOptionsToParams(const json::Value& object, QueryParams* out);

// `lower` then `upper`, as CouchDB folds one set of options over another
// (a body's, then the query string's over them): the parsers fold the
// parameters in order, so where both give an option, `upper`'s wins.
QueryParams LayerParams(const QueryParams& lower, const QueryParams& upper);

// Which of an _all_docs answer's counts CouchDB 3 gives as null
// (fabric_view_all_docs, couch_mrview's get_total_rows): a `keys` query
// has no offset or update_seq, and the _local namespace counts nothing.
enum class AllDocsMeta { kRange, kKeys, kLocal };

// Serializes an _all_docs result.
std::string AllDocsJson(const AllDocsResult& result, bool include_update_seq,
                        AllDocsMeta meta = AllDocsMeta::kRange);

// GET /db's body for `info` (also each "info" of /_dbs_info); `compact_running`
// from CouchServer::TaskRunningOn.
std::string DbInfoJson(const DatabaseInfo& info, bool compact_running);

// The revision an attachment write or a COPY names, as chttpd_db reads it
// (extract_header_rev(Req, qs_value("rev"))): the first ?rev=, which is 400
// "Invalid rev format" first when malformed, set against If-Match
// (ExtractHeaderRev). *out is left empty when neither is given.
Status QueryOrHeaderRev(const RequestContext& ctx, std::optional<CouchRev>* out);

// ETag value for a revision: the quoted rev.
inline std::string RevETag(std::string_view rev) { return "\"" + std::string(rev) + "\""; }

}  // namespace settee
