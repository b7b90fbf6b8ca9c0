// FilterFunction: a JavaScript changes filter (`function (doc, req)`) run
// through the ViewFunctions runtime, for filtered replication feeds. A
// local source runs design-document filters and PouchDB-style filter
// functions with it; a remote source runs PouchDB-style functions with it
// on the documents its `_changes?include_docs=true` returns, as PouchDB's
// replicator does in the client (the server cannot run code it never saw).
//
// The function is wrapped in a map function that emits when it returns
// true, with CouchDB's request object as its second argument; a filter
// that throws fails the feed (as in CouchDB and PouchDB), where a map
// function that throws would only skip the document.
//
// Thread safety: none; one per feed. `functions` must outlive it.
#pragma once

#include <string>
#include <string_view>

#include "settee/status.h"
#include "storage/view_functions.h"

namespace settee::replication {

class FilterFunction {
 public:
  // `code` is the function's source; `ddoc` the design document holding it
  // ("{}" for a function given directly: its require() has no modules).
  // `query_params` (a JSON object's text) is req.query; `db_name` and
  // `security` (the _security object's JSON) fill req.userCtx and
  // req.secObj as CouchDB does.
  FilterFunction(views::ViewFunctions* functions, std::string_view code, std::string ddoc,
                 std::string_view query_params, std::string_view db_name,
                 std::string_view security);

  // Whether the document (JSON text, with _id) passes. kInternal naming
  // `doc_id` when the function throws.
  Result<bool> Passes(const std::string& doc, std::string_view doc_id);

 private:
  views::ViewFunctions* functions_;
  views::MapCode code_;
};

}  // namespace settee::replication
