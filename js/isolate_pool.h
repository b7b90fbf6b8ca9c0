// IsolatePool: N OS threads, each with its own V8 isolate, context and libuv
// loop, sharing one settee Store. JXCore's model done natively: isolates
// share nothing; only bytes and JSON text cross threads.
//
//   settee::js::PoolOptions opts;
//   opts.threads = 4;
//   opts.store = store.get();
//   auto pool = settee::js::IsolatePool::Start(opts);
//   auto f = (*pool)->Run(IsolatePool::kAnyThread, "(n) => n * 2", "21");
//   Result<std::string> r = f.get();           // "42"
//
// Every isolate has node-like globals, the PouchDB-compatible API
// (`new PouchDB(name)`, `settee.db(name)`) over opts.store, and `settee.tasks`
// / `settee.postMessage` for work and messages between threads.
//
// Limits: each isolate's heap is capped at limits.max_heap_mb, and each call
// into JS (a script, a task, a timer or I/O callback) at limits.timeout_ms of
// wall-clock time. A call that runs over is terminated ("Script execution
// timed out after N ms"), one that exhausts the heap is terminated too
// ("JavaScript heap out of memory"); in both cases the isolate is discarded
// and replaced by a fresh one on the same thread, its pending tasks fail with
// that error, and the thread goes on serving tasks. The process never dies.
//
// Thread safety: every public method may be called from any thread, except
// that no method may be called from inside a completion callback in a way
// that blocks on the same pool (e.g. future.get() on an isolate thread).
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "settee/status.h"

namespace settee {
class Store;
}

namespace settee::js {

struct IsolateLimits {
  // Heap cap per isolate in MiB; 0 keeps V8's default (about 2-4 GiB).
  size_t max_heap_mb = 0;
  // Wall-clock budget of one call into JS in milliseconds; 0 = unlimited.
  uint32_t timeout_ms = 0;
};

struct PoolOptions {
  int threads = 1;  // 1..IsolatePool::kMaxThreads
  // Not owned; must outlive the pool. nullptr: the database API throws.
  Store* store = nullptr;
  IsolateLimits limits;
  // process.argv as node would show it: {execPath, script, args...}.
  std::vector<std::string> argv;
  // With a main script: re-run it in a fresh isolate after it dies from an
  // uncaught exception (JXCore's mt-keep).
  bool keep = false;
  // settee.postMessage(msg) without a target lands here, on the sending
  // isolate's thread: (sender thread id, message as JSON). Must be quick and
  // thread-safe. nullptr: such messages are dropped.
  std::function<void(int from, const std::string& json)> on_message;
  // Reports of uncaught exceptions, unhandled rejections, timeouts and heap
  // exhaustion, one call per event from the isolate's thread. nullptr: they
  // are written to stderr.
  std::function<void(int thread, const std::string& report)> on_error;
  // Extra V8 flags; effective only for the first pool of the process.
  std::string v8_flags;
};

// The completion of a task: the JSON of the value the function returned
// (promises are awaited; undefined becomes null), or an error whose reason
// is the JS stack text (kInternal), kTimeout, or kBadRequest when the value
// cannot be represented as JSON. Runs on the isolate thread: keep it short
// and adapt it to what the caller waits with, e.g. from a Boost.Fiber fiber
// (tests/js/isolate_pool_test.cc, CompletionsAdaptToFibers):
//
//   auto p = std::make_shared<boost::fibers::promise<Result<std::string>>>();
//   auto f = p->get_future();
//   pool->Run(thread, fn, arg, [p](Result<std::string> r) { p->set_value(std::move(r)); });
//   Result<std::string> r = f.get();  // suspends the fiber, not the thread
using TaskCallback = std::function<void(Result<std::string> json)>;

class IsolatePool {
 public:
  static constexpr int kMaxThreads = 64;
  static constexpr int kAnyThread = -1;  // the thread with the fewest queued jobs
  static constexpr int kMainThread = -1;  // message source id of the host

  // Starts the threads and creates their isolates.
  static Result<std::unique_ptr<IsolatePool>> Start(const PoolOptions& options);

  ~IsolatePool();  // Shutdown()
  IsolatePool(const IsolatePool&) = delete;
  IsolatePool& operator=(const IsolatePool&) = delete;

  int size() const;

  // Runs `filename` as the main CommonJS module of thread `thread` (or of
  // every thread with kAllThreads). With non-empty `source` that text is run
  // and `filename` only names it ("[stdin]"). Uncaught errors go to
  // on_error; the exit status reflects them (see Wait()). With kAllThreads
  // every main script is queued before any of them runs: a message or task
  // one script sends another thread runs after that thread's main script.
  static constexpr int kAllThreads = -2;
  void RunMain(int thread, const std::string& filename, const std::string& source = {});

  // Calls the JS function whose source text is `fn_source` (e.g.
  // "(x) => x + 1" or "function f(doc) {...}") with JSON.parse(arg_json) on
  // `thread` (or kAnyThread). `done` gets the result on the isolate thread.
  void Run(int thread, std::string fn_source, std::string arg_json, TaskCallback done);
  std::future<Result<std::string>> Run(int thread, std::string fn_source, std::string arg_json);

  // Evaluates `source` as a classic script (like node -p): `done` gets
  // util.inspect() of the completion value (promises awaited), not JSON.
  void Eval(int thread, std::string source, TaskCallback done);

  // Delivers `json` to settee.on('message') listeners of `thread` (or every
  // thread with kAllThreads) with sender id kMainThread.
  void PostMessage(int thread, std::string json);

  // Blocks until every isolate is idle (no script, task, timer, live feed or
  // pending reply left anywhere) or until a script called process.exit().
  // Returns the exit status: process.exit's code, else 1 if a main script
  // died from an uncaught error or unhandled rejection (and was not
  // restarted by `keep`), else a nonzero process.exitCode a main script
  // left, else 0. After process.exit() the pool runs no more
  // JS: call Shutdown(), which fails whatever is still queued. After
  // Shutdown() it returns at once, with the status the threads' 'exit'
  // listeners (run as they end) leave.
  int Wait();

  // Stops every thread (running JS is terminated) and disposes the
  // isolates. Idempotent.
  void Shutdown();

  // Implementation detail shared with the isolate threads.
  class Impl;

 private:
  explicit IsolatePool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace settee::js
