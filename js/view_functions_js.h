// The JavaScript side of views: storage/view_functions.h implemented on
// settee's V8 isolates (js/prelude/views.js compiles and runs the design
// document's functions, with CouchDB's emit/log/sum/isArray/toJSON/require).
//
// PoolViewFunctions runs them on an IsolatePool's threads, fanning the
// documents of one Map() call out over every thread (each maps a contiguous
// share), for callers that are not isolate threads: the HTTP server.
// Each share is one task, so the pool's time budget (--timeout-ms) stops a
// map function that loops, and the index is left as it was.
//
// Thread safety: Map() and Reduce() may be called from any thread except
// the pool's own isolate threads (they wait for those threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "js/isolate_pool.h"
#include "storage/view_functions.h"

namespace settee::js {

// {"language":..,"maps":[..],"ddoc":"<json>"}: how code crosses to JS.
std::string MapCodeJson(const views::MapCode& code);

class PoolViewFunctions final : public views::ViewFunctions {
 public:
  // The pool is started on first use with `options` (a server that never
  // queries a view starts no isolate).
  explicit PoolViewFunctions(PoolOptions options);
  ~PoolViewFunctions() override;

  Status Map(const views::MapCode& code, const std::vector<std::string>& docs,
             std::string* out) override;
  Status Reduce(const views::MapCode& code, const std::string& source,
                std::string_view calls_json, std::string* out) override;

 private:
  Result<IsolatePool*> Pool();
  // Runs task `fn` with `arg` on `thread`; the JSON text the JS returned
  // as a string.
  static Status Unwrap(Result<std::string> r, std::string* out);

  const PoolOptions options_;
  std::mutex mu_;
  std::unique_ptr<IsolatePool> pool_;  // guarded by mu_ until set
  Status start_error_;
};

}  // namespace settee::js
