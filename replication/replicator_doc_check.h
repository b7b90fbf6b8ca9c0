// The check of a document written to the _replicator database, as CouchDB 3
// makes it: the validate_doc_update function of the _design/_replicator
// document it installs (couch_replicator_js_functions.hrl), run before the
// document is stored. A malformed replication document is refused with
// kForbidden and CouchDB's reason, so it is never stored (and never reaches
// the watcher, replication/replicator_db.h).
//
// Exempt, as in CouchDB: design and _local documents (validate_doc_update
// does not run on them), writers with the "_replicator" role, documents whose
// "_replication_state" is "failed" (the replicator pays them no attention),
// and deletions. Server admins (role "_admin") may leave out "user_ctx" and
// give any name and roles in it; anyone else must give a "user_ctx" whose
// name is their own and whose roles they hold.
//
// Thread safety: free functions.
#pragma once

#include <string_view>

#include "settee/database.h"
#include "settee/status.h"
#include "util/json.h"

namespace settee::replication {

// The database whose writes are checked (ReplicatorDb::kName).
constexpr std::string_view kReplicatorDbName = "_replicator";

// Checks `doc` (a JSON object, the document as sent) about to be written to
// _replicator as `docid` by `user`. OK, or kForbidden with CouchDB's reason
// for the first rule it breaks, in CouchDB's order.
Status CheckReplicatorDoc(std::string_view docid, const json::Value& doc, const UserContext& user);

// The same over the document's JSON text. Text that is not a JSON object
// passes: the write itself refuses it with its own error.
Status CheckReplicatorDoc(std::string_view docid, std::string_view doc_json, const UserContext& user);

}  // namespace settee::replication
