// Mango: CouchDB's _index/_find/_explain (and pouchdb-find's
// createIndex/getIndexes/deleteIndex/find/explain) over the view machinery
// of storage/views.h.
//
// A JSON index is a view of a design document with language "query" whose
// map is {"fields": {"a": "asc", ...}[, "partial_filter_selector": {..}]}:
// mapped in C++ (IndexFunctions(), no JavaScript), it emits the array of the
// document's values of those fields when the document has all of them.
// _find picks an index whose fields every match must have (and, with a
// sort, whose leading fields are the sort fields), turns the selector's
// conditions on those fields into a key range, reads the documents of the
// rows in range and keeps those the whole selector matches. With no usable
// index it scans _all_docs and says so in "warning", as CouchDB does.
//
// Every function takes and gives CouchDB's JSON bodies. Errors carry
// CouchDB's kinds: kBadRequest, kInvalidOperator, kNoUsableIndex,
// kNotFound.
//
// Thread safety: every function may be called from any thread at once.
#pragma once

#include <string>
#include <string_view>

#include "settee/database.h"
#include "settee/store.h"
#include "storage/view_functions.h"
#include "storage/view_query.h"

namespace settee::mango {

// The mapper of language "query" indexes (thread-safe, process-wide).
views::ViewFunctions& IndexFunctions();

// POST /db/_index: {"index":{"fields":[..],"partial_filter_selector":{}},
// "ddoc":..,"name":..,"type":"json"} -> {"result":"created"|"exists","id","name"}.
// A created index is built at once (as PouchDB does), so the first _find
// does not pay for it.
Status CreateIndex(Store& store, Database& db, std::string_view body, std::string* out);

// GET /db/_index -> {"total_rows":N,"indexes":[{"ddoc","name","type","def"}..]}.
Status ListIndexes(Database& db, std::string* out);

// DELETE /db/_index/{ddoc}/json/{name} -> {"ok":true}. `ddoc` with or
// without "_design/". kNotFound if there is no such index.
Status DeleteIndex(Database& db, std::string_view ddoc, std::string_view name, std::string* out);

// POST /db/_find -> {"docs":[..],"bookmark":".."[,"warning"][,"execution_stats"]}.
Status Find(Store& store, Database& db, std::string_view body, std::string* out);
// The same, with `after_read` (when set) rewriting each candidate document
// before the selector sees it.
Status Find(Store& store, Database& db, std::string_view body, std::string* out,
            const views::AfterDocRead& after_read);

// POST /db/_explain -> the plan Find would follow.
Status Explain(Store& store, Database& db, std::string_view body, std::string* out);

}  // namespace settee::mango
