// The check of a document written to the _replicator database, as CouchDB 3
// makes it: the validate_doc_update function of the _design/_replicator
// document it installs (couch_replicator_js_functions.hrl), run before the
// document is stored. A malformed replication document is refused with
// kForbidden and CouchDB's reason, so it is never stored (and never reaches
// the watcher, replication/replicator_db.h).
//
// Exempt, as in CouchDB: design and _local documents (validate_doc_update
// does not run on them), writers with the "_replicator" role and documents
// whose "_replication_state" is "failed" (the replicator pays them no
// attention). Server admins (role "_admin") may leave out "user_ctx" and
// give any name and roles in it; anyone else must give a "user_ctx" whose
// name is their own and whose roles they hold, and may delete only a
// document whose stored "user_ctx.name" is their own.
//
// Thread safety: free functions.
#pragma once

#include <string>
#include <string_view>

#include "settee/database.h"
#include "settee/status.h"
#include "util/json.h"

namespace settee::replication {

// The database whose writes are checked (ReplicatorDb::kName).
constexpr std::string_view kReplicatorDbName = "_replicator";

// Checks `doc` (a JSON object, the document as sent) about to be written to
// _replicator as `docid` by `user`. `old` is the stored revision the write
// edits (validate_doc_update's oldDoc: the one its _rev names), or nullptr
// when it names none; only a deletion reads it. OK, or kForbidden with
// CouchDB's reason for the first rule it breaks, in CouchDB's order.
Status CheckReplicatorDoc(std::string_view docid, const json::Value& doc, const UserContext& user,
                          const json::Value* old);

// Whether CheckReplicatorDoc reads `old` for `doc`: a deletion ("_deleted"
// true) naming a revision ("_rev"). A rev-less deletion is left to the write
// (a conflict for a live document, as in CouchDB, where it fails before
// validate_doc_update).
bool ReplicatorCheckNeedsOld(const json::Value& doc);

// CouchDB's before_doc_update for _replicator (couch_replicator_docs), run
// before the check above: a document without an "owner" member gets one,
// the writer's name (null for an anonymous writer); one whose "owner" is not
// the writer's name is refused with kForbidden "Can't update replication
// documents from other users." unless `db_admin` (a server admin or one of
// the database's _security admins), whose null "owner" becomes their name
// and any other is kept. Design documents and writers with the "_replicator"
// role pass untouched (_local documents do not: CouchDB's fabric runs it
// over them too). `a` allocates the added member;
// *changed (when given) is set when `doc` was changed.
Status StampReplicatorOwner(std::string_view docid, json::Value* doc, json::Allocator& a, const UserContext& user,
                            bool db_admin, bool* changed = nullptr);

// CouchDB's after_doc_read for _replicator (couch_replicator_docs), which
// couch_db runs on every document it opens for a reader: whether `user`
// reading `doc` (a document as stored, docid `docid`) sees it stripped of
// credentials. Not when `db_admin` (a server admin or one of the database's
// _security admins), nor for a design or _local document (those are not
// opened through the hook), nor when the document's "owner" is the reader's
// name (null for an anonymous reader; a document without one is stripped).
bool ReplicatorReadIsStripped(std::string_view docid, const json::Value& doc, const UserContext& user,
                              bool db_admin);

// CouchDB's strip_credentials over the "source" and "target" members of
// `doc`: a URL string loses its "user:password@" (the first match of
// http(s)://[^:]+:[^@]+@, as CouchDB's regex finds it), an endpoint object
// its "headers" and "auth" members. `a` allocates the shortened strings.
// Whether anything changed.
bool StripReplicatorCredentials(json::Value* doc, json::Allocator& a);

// The URL rule of StripReplicatorCredentials, on one string.
std::string StripUrlCredentials(std::string_view url);

}  // namespace settee::replication
