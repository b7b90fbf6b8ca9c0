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

  // Map() delivered in shares, so that the caller's work on the results
  // runs where and while they are made: `each(from, to, json)` gets the
  // Map() array of docs[from, to), once per share, the shares covering
  // `docs` in any order and possibly on several threads at once (an
  // implementation that fans out calls it on its worker threads). Returns
  // after every call to `each` has returned: the first error of a share's
  // map or of `each` (the other shares still run and are still delivered,
  // so `each` may have run for some shares when this fails). This default
  // makes one share of the whole Map().
  using ShareFn = std::function<Status(size_t from, size_t to, std::string_view json)>;
  virtual Status MapShares(const MapCode& code, const std::vector<std::string>& docs,
                           const ShareFn& each) {
    std::string out;
    Status s = Map(code, docs, &out);
    if (!s.ok()) return s;
    return each(0, docs.size(), out);
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
