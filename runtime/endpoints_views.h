// The views endpoints (storage/views.h over HTTP):
//   GET|POST /db/_design/{ddoc}/_view/{view}      (POST: "keys" and options in the body;
//                                                  the query string's options win)
//   POST     /db/_design/{ddoc}/_view/{view}/queries (each object's options win)
//   GET      /db/_design/{ddoc}/_info
//   POST     /db/_view_cleanup                     (db admins)
//   POST     /db/_temp_view                        (db admins; PouchDB's ad hoc queries)
//   /db/_changes?filter=_view&view=ddoc/view and filter=ddoc/name (design-doc
//   "filters"): each change's document runs through the map or filter
//   function on the isolate pool.
// Queries run on the server's worker pool, so a view update (map functions
// on the isolate threads) never blocks an event loop.
#pragma once

#include <memory>

#include "runtime/couch_server.h"
#include "storage/validate_functions.h"
#include "storage/view_functions.h"

namespace settee {

// `functions` runs JavaScript (shared by every route; nullptr serves
// Mango "query" indexes only).
void RegisterViewEndpoints(CouchServer& server, std::shared_ptr<views::ViewFunctions> functions);

// Installs `functions` on the server's store to run validate_doc_update for
// every write. A write validated on an event-loop thread (HTTP endpoints
// write inline) waits for the functions on the server's worker pool, so
// the loop serves other connections meanwhile; elsewhere (a worker, a
// replication thread) the functions are called directly.
void InstallValidateFunctions(CouchServer& server,
                              std::shared_ptr<validation::ValidateFunctions> functions);

}  // namespace settee
