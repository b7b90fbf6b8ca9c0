// Views: CouchDB's map/reduce indexes over a settee Database, and the
// queries on them. The one entry point js/ and runtime/ call for
// GET /db/_design/d/_view/v, POST /db/_temp_view, /db/_view_cleanup,
// /db/_design/d/_info and PouchDB's db.query()/viewCleanup().
//
// How a query flows (docs/architecture.md, "Views"):
//  1. the design document is read and parsed (storage/design_doc.h); its
//     signature names its index;
//  2. unless the query says update=false (stale=ok), the index is brought up
//     to the database's update_seq: the changes since the index's seq are
//     read through Database::Changes a seq range per share, where the share
//     is mapped, design documents skipped, the live ones mapped by a
//     ViewFunctions (JavaScript on the isolate threads, or Mango's C++
//     mapper for language "query"), and each document's old rows replaced
//     by its new ones in one KV batch per share, the index's seq moving
//     after each round of shares. Concurrent queries of one index share one update: the others wait
//     for it and find nothing left to do;
//  3. the rows in the query's range are read in collation order from the
//     KVStore (docs/index_key_format.md, "Views"), reduced per group when
//     the view has a reduce, and written as CouchDB's JSON answer.
//
// Persisted indexes live in the store beside their database, under
// 'D' db_id 'v' (docs/storage_format.md), so they survive a restart on
// LevelDB and vanish with the database. A temporary view is built in a
// private memory store and leaves nothing behind.
//
// Thread safety: every function may be called from any thread at once;
// none may be called on a thread that `functions` needs to run (an
// isolate thread waiting on its own pool).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/database.h"
#include "settee/store.h"
#include "storage/design_doc.h"
#include "storage/view_functions.h"
#include "storage/view_query.h"

namespace settee::views {

// Queries view `view` of design document `_design/<ddoc>` of `db` (which
// must belong to `store`). *out gets CouchDB's answer:
//   {"total_rows":N,"offset":N[,"update_seq":N],"rows":[{"id","key","value"[,"doc"]}..]}
// or, reduced, {"rows":[{"key","value"}..]}. `functions` runs JavaScript
// (nullptr: only language "query" indexes can be updated).
// Errors: kNotFound ("missing" for the design doc, "missing_named_view"),
// kQueryParseError for options that do not fit the view (include_docs or
// group on a map view...), whatever the functions report (kCompilationError,
// kTimeout), storage errors. A failed update leaves the index as it was.
Status Query(Store& store, Database& db, ViewFunctions* functions, std::string_view ddoc,
             std::string_view view, const ViewQuery& query, std::string* out);

// Query() for a view given by code: a temporary index is built and dropped.
Status TempQuery(Database& db, ViewFunctions* functions, const DesignDoc& temp,
                 const ViewQuery& query, std::string* out);

// Query() of an already parsed design document (Mango uses its own).
Status QueryDesignDoc(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                      const ViewDef& view, const ViewQuery& query, std::string* out);

// One row of an index, valid during the ScanIndex callback.
struct IndexRow {
  std::string_view id;
  std::string_view key;    // JSON
  std::string_view value;  // JSON
};

// Brings the index of `ddoc` up to date when `update`, then calls `each`
// for the rows of `view` whose encoded key (collation::AppendIndexKey) lies
// in [lower, upper) (upper empty: no bound), in order or in reverse, until
// it returns false. Mango plans its ranges in encoded keys this way.
Status ScanIndex(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                 const ViewDef& view, bool update, const std::string& lower,
                 const std::string& upper, bool descending,
                 const std::function<bool(const IndexRow&)>& each);

// Where an index update's time went (for the benchmark): milliseconds,
// summed over the threads that spent them.
struct UpdateProfile {
  double wall_ms = 0;    // the whole update
  double fan_ms = 0;     // the caller waiting in MapShares (the shares' wall time)
  double read_ms = 0;    // shares reading their changed documents from the store
  // From a share's read to its results' hand-off: the task's JSON text,
  // JSON->V8, the map functions, V8->JSON, and the waits between (a share
  // read ahead waits for the mapping thread, its results for a thread to
  // hand them on: ViewFunctions::MapShares). Not counted as any thread's
  // busy time: it may span two threads and waits.
  double map_ms = 0;
  double parse_ms = 0;   // parsing map results
  double encode_ms = 0;  // rows -> index KV entries (and reading back-index entries)
  double prepare_ms = 0;  // preparing share batches for the store (KVStore::Prepare)
  double write_ms = 0;   // writing (committing) share batches
  double header_ms = 0;  // the caller's batch after each round (header, a lone share's rows)
  uint64_t rounds = 0, shares = 0, docs = 0;
  // Per thread that read or handed on shares, in the order they started:
  // read + parse + encode + prepare + write (the C++ side of its shares;
  // the map is not in it, see map_ms).
  std::vector<double> thread_busy_ms;
  // Per thread, as above: when its first share began reading and when its
  // last share was written, in ms since the update began (so the threads'
  // late starts and early ends show against wall_ms).
  std::vector<double> thread_start_ms, thread_end_ms;
};

// Brings the index of `ddoc` up to date, as a query with update=true would,
// adding where the time went to *profile when given.
Status UpdateIndex(Store& store, Database& db, ViewFunctions* functions, const DesignDoc& ddoc,
                   UpdateProfile* profile = nullptr);

// The design documents of `db`, with their bodies (rows of _all_docs with
// include_docs over the "_design/" range).
Status DesignDocs(Database& db, AllDocsResult* out);

// Deletes the indexes no current design document of `db` uses.
Status Cleanup(Store& store, Database& db);

// GET /db/_design/<ddoc>/_info: {"name","view_index":{"signature","language",
// "update_seq","sizes":{..},"updater_running":false,...}}.
Status Info(Store& store, Database& db, std::string_view ddoc, std::string* out);

}  // namespace settee::views
