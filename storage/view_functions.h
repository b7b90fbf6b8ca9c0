// ViewFunctions: how the index machinery (storage/views.h) runs the code of
// a design document. storage/ knows nothing of V8: js/ implements this
// interface on its isolate threads (js/view_functions_js.h), and Mango's
// "query" indexes are mapped in C++ without it.
//
// Everything crosses as JSON text, as between CouchDB and couchjs.
//
// Thread safety: an implementation may be called from several threads at
// once (queries on different databases update their indexes concurrently).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee::views {

// The map functions of one index (CouchDB: one design document's views).
struct MapCode {
  std::string language = "javascript";
  // One source text per indexed map function, in index order.
  std::vector<std::string> maps;
  // The design document as JSON ("{}" for a temporary view): map functions
  // may require() CommonJS modules kept under its "views.lib".
  std::string ddoc = "{}";
};

// The size of the next share when `left` units of work remain for
// `threads` threads taking shares as they come free (guided scheduling: the
// remaining work over twice the threads, so shares shrink and the threads
// end together), within [min_share, max_share]; the last share takes what
// a minimum share would leave behind.
inline size_t GuidedShareSize(size_t left, size_t threads, size_t min_share, size_t max_share) {
  if (left < 2 * min_share) return left;
  const size_t twice = 2 * std::max<size_t>(threads, 1);
  return std::clamp((left + twice - 1) / twice, min_share, std::max(min_share, max_share));
}

class ViewFunctions {
 public:
  virtual ~ViewFunctions() = default;

  // Maps every document of `docs` (JSON objects with _id and _rev) through
  // every function of `code`. *out gets one JSON array with an element per
  // document, in order, each an array with an element per map function, each
  // the list of that function's emits for that document as [key, value]
  // pairs (undefined emitted as null). A function that throws on a document
  // contributes [] for it (the implementation logs it), as in CouchDB.
  // Errors: kCompilationError (a function does not compile or is not a
  // function), kTimeout (the runtime's time budget ran out); the index then
  // stays as it was.
  virtual Status Map(const MapCode& code, const std::vector<std::string>& docs,
                     std::string* out) = 0;

  // Map() over `n` units of work delivered in shares, so that an index
  // update's reading and writing run in parallel with (and on the same
  // threads as) its map work: for each share [from, to) of [0, n),
  // `fetch(from, to, &docs)` gives its documents, and later
  // `each(from, to, json)` gets their Map() array. The shares cover [0, n)
  // in any order, possibly on several threads at once (an implementation
  // that fans out calls both on its worker threads, not necessarily a
  // share's two on the same thread: one thread may read shares ahead for
  // another that maps them, and hand on what another mapped). Returns after every
  // started share is done: the first error of a fetch, a map or an `each`
  // (the shares already started still run and are still delivered, so
  // `each` may have run for some shares when this fails). This default
  // makes one share of the whole, on the calling thread. A share without
  // documents is handed on as "[]" without running any code.
  using FetchFn = std::function<Status(size_t from, size_t to, std::vector<std::string>* docs)>;
  using ShareFn = std::function<Status(size_t from, size_t to, std::string_view json)>;
  virtual Status MapShares(const MapCode& code, size_t n, const FetchFn& fetch, const ShareFn& each) {
    std::vector<std::string> docs;
    Status s = fetch(0, n, &docs);
    if (!s.ok()) return s;
    // A share of deleted and design documents only has nothing to map.
    std::string out = "[]";
    if (!docs.empty()) s = Map(code, docs, &out);
    if (!s.ok()) return s;
    return each(0, n, out);
  }

  // Runs the JavaScript reduce function `source` once per element of
  // `calls_json`, an array of [keys, values, rereduce] (keys: [[key, docid],
  // ...], or null when rereducing). *out gets the array of results. Errors:
  // kCompilationError, kTimeout, kInternal (the function threw: reason is
  // its message).
  virtual Status Reduce(const MapCode& code, const std::string& source,
                        std::string_view calls_json, std::string* out) = 0;
};

}  // namespace settee::views
