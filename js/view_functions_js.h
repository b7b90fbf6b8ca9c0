// The JavaScript side of design documents: storage/view_functions.h and
// storage/validate_functions.h implemented on settee's V8 isolates
// (js/prelude/views.js compiles and runs the design document's functions,
// with CouchDB's emit/log/sum/isArray/toJSON/require; compiled functions
// are cached per isolate, validators under their set's signature).
//
// PoolViewFunctions runs them on an IsolatePool's threads, fanning the
// documents of one Map() call out over every thread (shares taken from one
// counter as threads come free, shrinking towards the end), for callers
// that are not isolate threads: the HTTP server. MapShares() reads each
// share's documents and hands its result to the caller on isolate threads,
// so an index update reads, encodes and writes on the isolate threads too
// (storage/views.cc) and the caller only waits. Thread 0 does the mapping
// and the others the reading and most of the handing on (they wait while
// they have neither to do, and map small shares only when the map costs a
// unit more than twice what reading and handing it on does), so that a new
// map function runs hot on one isolate, which V8 then compiles it for, not
// on every one.
// Each share is one task, so the pool's time budget (--timeout-ms) stops a
// map function that loops, and the index is left as it was.
//
// Validate() runs a write's documents as one task on any one thread, and
// Compile() a design document's functions likewise.
//
// Thread safety: Map(), MapShares(), Reduce() and Validate() may be called from any
// thread except the pool's own isolate threads (they wait for those
// threads).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "js/isolate_pool.h"
#include "storage/validate_functions.h"
#include "storage/view_functions.h"
#include "util/json.h"

namespace settee::js {

// {"language":..,"maps":[..],"ddoc":"<json>"}: how code crosses to JS.
std::string MapCodeJson(const views::MapCode& code);

class PoolViewFunctions final : public views::ViewFunctions, public validation::ValidateFunctions {
 public:
  // The pool is started on first use with `options` (a server that never
  // queries a view starts no isolate).
  explicit PoolViewFunctions(PoolOptions options);
  ~PoolViewFunctions() override;

  Status Map(const views::MapCode& code, const std::vector<std::string>& docs,
             std::string* out) override;
  Status MapShares(const views::MapCode& code, size_t n, const FetchFn& fetch,
                   const ShareFn& each) override;
  Status Reduce(const views::MapCode& code, const std::string& source,
                std::string_view calls_json, std::string* out) override;
  Status Validate(const validation::ValidatorSet& set,
                  const std::vector<validation::ValidateCall>& calls, std::string_view user_ctx,
                  std::string_view sec_obj, std::vector<Status>* results) override;
  Status Compile(const std::vector<std::string>& sources, size_t* failed) override;

 private:
  Result<IsolatePool*> Pool();
  // Runs task `fn` with `arg` on `thread`; the JSON text the JS returned
  // as a string.
  static Status Unwrap(Result<std::string> r, std::string* out);
  // Runs `task` with `arg` as one task on any isolate thread: the JSON
  // text it returned as a string, and that text parsed.
  Status RunOnAnyThread(const char* task, std::string arg, std::string* out);
  Status RunForJson(const char* task, std::string arg, json::Document* out);

  const PoolOptions options_;
  std::mutex mu_;
  std::unique_ptr<IsolatePool> pool_;  // guarded by mu_ until set
  Status start_error_;
};

// Installs on `store` a PoolViewFunctions of one isolate thread, started at
// the first write that needs it, to run validate_doc_update for writes made
// through the JS API (whose own isolate is busy in the write) and for other
// non-HTTP writers (a local replication's thread). Each call is held to
// `limits`. The store keeps it until replaced.
void InstallPoolValidateFunctions(Store* store, const IsolateLimits& limits);

}  // namespace settee::js
