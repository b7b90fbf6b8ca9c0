// JsRuntime: settee's JavaScript runtime for embedding applications. N
// isolate threads, each with its own V8 isolate, context and libuv loop, all
// sharing one Store (JXCore's model: isolates share nothing, only JSON text
// crosses threads). Scripts see node-like globals and the PouchDB-compatible
// API (`new PouchDB(name)`, `settee.db(name)`) over the store.
//
//   settee::JsRuntimeOptions opts;
//   opts.threads = 2;
//   auto rt = settee::JsRuntime::Start(store.get(), opts);
//   (*rt)->RunFile(settee::JsRuntime::kAllThreads, "/path/app.js");
//   int exit_code = (*rt)->Wait();
//   Result<std::string> v = (*rt)->Call(settee::JsRuntime::kAnyThread, "(x) => x * 2", "21");
//
// V8 is set up once per process: the flags of the first runtime started
// (v8_flags, jitless) apply to every later one, whose own flags are ignored.
//
// Limits: a call into JS that runs past timeout_ms, or an isolate that
// exhausts max_heap_mb, is terminated; the isolate is replaced and its thread
// serves on (the process never dies).
//
// Thread safety: every method may be called from any thread, except from
// inside on_error / on_message (which run on isolate threads) when the call
// blocks on this runtime (Call, Eval, Wait).
//
// Availability: a library built with SETTEE_WITH_JS=OFF has no JsRuntime;
// JsRuntimeAvailable() says whether this one does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "settee/status.h"

namespace settee {

class Store;

struct JsRuntimeOptions {
  int threads = 1;  // 1..JsRuntime::kMaxThreads
  // Heap cap per isolate in MiB; 0 keeps V8's default.
  size_t max_heap_mb = 0;
  // Wall-clock budget of one call into JS in milliseconds; 0 = unlimited.
  uint32_t timeout_ms = 0;
  // Run V8 without its JIT compilers (interpreter only), as platforms that
  // forbid writable-executable memory (iOS) require. Slower; see docs/embedding.md.
  bool jitless = false;
  // Extra V8 flags, e.g. "--max-semi-space-size=16".
  std::string v8_flags;
  // process.argv after {execPath, script}.
  std::vector<std::string> args;
  // Re-run a main script in a fresh isolate after it dies from an uncaught error.
  bool keep = false;
  // Uncaught exceptions, unhandled rejections, timeouts and heap exhaustion,
  // one call per event on the isolate's thread; nullptr writes them to stderr.
  std::function<void(int thread, const std::string& report)> on_error;
  // settee.postMessage(msg) without a target: (sender thread, JSON), on the
  // sender's thread; nullptr drops them.
  std::function<void(int thread, const std::string& json)> on_message;
};

class JsRuntime {
 public:
  static constexpr int kMaxThreads = 64;
  static constexpr int kAnyThread = -1;   // the least busy thread
  static constexpr int kAllThreads = -2;  // every thread (RunFile, RunSource)

  // Starts the threads over `store` (not owned; it must outlive the runtime;
  // nullptr leaves scripts without a database). kBadRequest for a thread
  // count outside 1..kMaxThreads; kInvalidOperation when built without JS.
  static Result<std::unique_ptr<JsRuntime>> Start(Store* store, const JsRuntimeOptions& options);

  JsRuntime() = default;
  JsRuntime(const JsRuntime&) = delete;
  JsRuntime& operator=(const JsRuntime&) = delete;
  virtual ~JsRuntime() = default;  // Shutdown()

  virtual int threads() const = 0;

  // Queues the file at `path` as the main CommonJS module of `thread` (or of
  // kAllThreads). kNotFound if it cannot be read, kBadRequest for a thread
  // that does not exist (kAnyThread included). Returns once queued: Wait()
  // for it to finish.
  virtual Status RunFile(int thread, const std::string& path) = 0;
  // RunFile() for script text; `name` names it in stack traces.
  virtual Status RunSource(int thread, const std::string& name, const std::string& source) = 0;

  // Calls the function whose source is `fn_source` with JSON.parse(arg_json)
  // on `thread` (or kAnyThread) and blocks for the JSON of its result
  // (promises awaited; undefined gives "null"). Errors: kInternal with the
  // JS stack as reason, kTimeout, kBadRequest for a result JSON cannot hold.
  virtual Result<std::string> Call(int thread, const std::string& fn_source,
                                   const std::string& arg_json) = 0;
  // Evaluates `source` as a classic script and blocks for util.inspect() of
  // its completion value (like node -p).
  virtual Result<std::string> Eval(int thread, const std::string& source) = 0;

  // Blocks until every isolate is idle or a script called process.exit();
  // returns the exit status (process.exit's code, else 1 if a main script
  // died of an uncaught error, else 0); -1 after Shutdown().
  virtual int Wait() = 0;

  // Stops the threads (running JS is terminated). Idempotent; after it every
  // call fails with kInvalidOperation.
  virtual void Shutdown() = 0;
};

// False when the library was built with SETTEE_WITH_JS=OFF.
bool JsRuntimeAvailable();

}  // namespace settee
