// IsolateThread: one OS thread owning one V8 isolate, its context and one
// libuv loop (internal to js/; embedders use IsolatePool).
//
// Design
// ------
// The thread runs a job queue (main scripts, tasks, evals, messages, task
// replies) fed from any thread through Post(), and its uv loop (timers,
// immediates, live change feeds). Jobs and loop callbacks enter JS through
// MakeCallback(), which is node's "macrotask" boundary: it catches the
// exception, runs process.nextTick callbacks and the microtask queue, checks
// unhandled rejections and accounts the call against the watchdog.
//
// The isolate is disposable. After a timeout, heap exhaustion or an uncaught
// error, the thread discards it (closing its timers and feeds and failing its
// pending tasks) and creates a fresh one; with `keep` the main script is run
// again. The thread itself, its loop and its queue survive.
//
// Idleness: the thread is idle when its loop has nothing referenced left
// (no timers, immediates, live feeds or replies awaited from other threads)
// and its queue is empty. The pool's Wait() returns when every thread is idle.
//
// Thread safety: Post(), Stop(), Join(), queued() and WatchdogCheck() may be
// called from any thread. Everything in the "isolate thread only" section is
// for the bindings running on this thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include <uv.h>
#include <v8-context.h>
#include <v8-isolate.h>
#include <v8-local-handle.h>
#include <v8-persistent-handle.h>
#include <v8-promise.h>
#include <v8-message.h>
#include <v8-function.h>
#include <v8-array-buffer.h>

#include "js/isolate_pool.h"
#include "settee/database.h"

namespace settee::js {

class IsolateThread;

// A unit of work for an isolate thread.
struct Job {
  enum class Kind { kMain, kTask, kEval, kMessage, kReply };
  Kind kind = Kind::kTask;
  std::string text;   // main: filename; task: fn source; eval: source; message/reply: JSON
  std::string text2;  // main: inline source; task: argument JSON
  int from = IsolatePool::kMainThread;  // message sender
  uint64_t reply_id = 0;                // reply: the JS task id at the sender
  uint64_t epoch = 0;                   // reply: the sender's isolate generation
  bool ok = true;                       // reply: resolved or rejected
  TaskCallback done;                    // task / eval completion
};

class IsolatePool::Impl {
 public:
  explicit Impl(const PoolOptions& options);
  ~Impl();

  Status Start();
  void Shutdown();
  int Wait();

  int size() const { return static_cast<int>(threads_.size()); }
  IsolateThread* thread(int id) { return threads_[id].get(); }
  // A thread for kAnyThread: the one with the fewest queued jobs.
  IsolateThread* Pick();
  // Thread `target` (an id, or kAnyThread for Pick()); nullptr if none.
  IsolateThread* Target(int target);
  // Routes a task to `target` (an id or kAnyThread); fails `done` if the
  // target does not exist.
  void PostTask(int target, std::string fn_source, std::string arg_json, TaskCallback done);
  // Routes a message: target id, kMainThread (host) or kAllThreads (every
  // isolate thread except `from`).
  void PostMessage(int from, int target, std::string json);

  const PoolOptions& options() const { return options_; }

  // A service the pool's isolates share (the replication registry of
  // bindings_replication.cc): made by `make` at the first call for `key`,
  // destroyed by Shutdown() once the isolate threads have stopped, so it
  // lives exactly as long as the isolates that use it. Any thread.
  std::shared_ptr<void> SharedService(const std::string& key,
                                      const std::function<std::shared_ptr<void>()>& make);

  //////// Called by isolate threads:
  // REQUIRES: the calling thread holds its own queue mutex (lock order:
  // thread queue mutex, then this pool mutex).
  void MarkBusy();
  void MarkIdle();
  void RequestExit(int code);
  void NoteMainFailure();
  // A main script's thread went idle with process.exitCode `code`; a
  // nonzero one becomes Wait()'s status (node's exit status of a script
  // that sets process.exitCode and ends).
  void NoteExitCode(int code);
  void Report(int thread, const std::string& text);

 private:
  void WatchdogMain();

  const PoolOptions options_;
  std::vector<std::unique_ptr<IsolateThread>> threads_;

  std::mutex mu_;
  std::condition_variable cv_;
  int busy_ = 0;                 // guarded by mu_
  bool exit_requested_ = false;  // guarded by mu_
  int exit_code_ = 0;            // guarded by mu_
  bool main_failed_ = false;     // guarded by mu_
  int idle_exit_code_ = 0;       // guarded by mu_
  bool stopping_ = false;        // guarded by mu_

  std::thread watchdog_;
  std::mutex report_mu_;  // serializes reports written to stderr

  std::mutex services_mu_;
  std::map<std::string, std::shared_ptr<void>> services_;  // guarded by services_mu_
};

class IsolateThread {
 public:
  IsolateThread(IsolatePool::Impl* pool, int id);
  ~IsolateThread();
  IsolateThread(const IsolateThread&) = delete;
  IsolateThread& operator=(const IsolateThread&) = delete;

  // Starts the thread; blocks until its first isolate exists. Returns an
  // error if the thread could not set up its loop.
  Status Start();
  // Queues `job`; dropped (failing its callback) once the thread is stopping.
  void Post(Job job);
  // Queues jobs[i] on threads[i] for every i as one step: no thread can take
  // its job before every job is queued, so whatever a job posts to another
  // of these threads (a message, a task) queues behind that thread's job.
  // Holds the threads' queue mutexes together, taken in the order given:
  // callers pass threads in ascending id order (the one order used).
  static void PostTogether(const std::vector<IsolateThread*>& threads, std::vector<Job> jobs);
  // Asks the thread to finish: running JS is terminated.
  void Stop();
  void Join();
  // Number of jobs queued or running (for kAnyThread placement).
  size_t queued() const { return queued_.load(std::memory_order_relaxed); }
  // Watchdog: terminates the running call if its deadline passed.
  void WatchdogCheck(uint64_t now_ns);

  int id() const { return id_; }
  IsolatePool::Impl* pool() const { return pool_; }

  //////// Isolate thread only:

  static IsolateThread* From(v8::Isolate* isolate) {
    return static_cast<IsolateThread*>(isolate->GetData(0));
  }
  v8::Isolate* isolate() const { return isolate_; }
  v8::Local<v8::Context> context() const { return context_.Get(isolate_); }
  uv_loop_t* loop() { return &loop_; }
  uint64_t epoch() const { return epoch_; }
  int restart_count() const { return restart_count_; }
  Store* store() const { return pool_->options().store; }

  // The JS functions of the prelude (js/prelude/) that C++ calls.
  enum Hook {
    kRunTicks, kDrainTicks, kOnTimer, kOnImmediate, kMakeError, kRunTask, kEvalScript, kOnMessage,
    kOnTaskReply, kOnFeed, kRunMain, kErrorText, kEmitProcess, kInspect, kProcessEnd, kEsmImport,
    kEsmMeta, kFatalExit, kNumHooks
  };
  v8::Local<v8::Function> hook(Hook h) { return hooks_[h].Get(isolate_); }

  // Enters JS through hook `h` as a macrotask (see the design note). Returns
  // false if it threw (the error was reported) or was terminated.
  bool MakeCallback(Hook h, int argc, v8::Local<v8::Value>* argv);

  // A PouchDB-shaped JS error for `status` (to throw from a binding).
  v8::Local<v8::Value> MakeError(const Status& status);
  void ThrowStatus(const Status& status);

  // Timers (see js/prelude/timers.js): ids are chosen by JS.
  void TimerStart(uint32_t id, uint64_t ms, bool repeat);
  void TimerStop(uint32_t id);
  void TimerRef(uint32_t id, bool ref);
  void ImmediateStart();
  void ImmediateStop();

  // The steps of hooks.drainTicks (see AfterCallback), for its bindings.
  // RunMicrotasks: the microtask checkpoint; false if JS must stop (execution
  // terminating, the isolate being reset or the script exiting).
  // ProcessRejections: reports the promises rejected without a handler that
  // still have none; true if it reported any and JS may go on (a handler may
  // have queued more work). Call neither from inside a microtask.
  bool RunMicrotasks();
  bool ProcessRejections();

  // Databases opened by this isolate: small integer handles for JS,
  // reference-counted per database (OpenDb/CloseDb pair up).
  int OpenDb(std::shared_ptr<Database> db);
  // The database behind `handle` (nullptr if closed), borrowed: it stays
  // alive until the outermost JS call on this thread returns, even if JS
  // closes the handle meanwhile (CloseDb defers the release), so a binding
  // needs no shared_ptr copy per call, whose reference count would bounce
  // between the cores of isolates writing to one database.
  Database* Db(int handle);
  // Db() as an owning reference, for what outlives the call (a feed).
  std::shared_ptr<Database> SharedDb(int handle);
  void CloseDb(int handle);

  // Live change feeds: `feed_id` is chosen by JS; hooks.onFeed(feed_id) runs
  // on this loop after each committed write to `db`.
  void Listen(const std::shared_ptr<Database>& db, uint64_t feed_id);
  // Runs `fn` on this thread when the current isolate is disposed (a reset
  // or the end), before V8 lets go of it: bindings drop their per-isolate
  // handles there.
  void AtDispose(std::function<void()> fn) { at_dispose_.push_back(std::move(fn)); }
  // A feed woken by native code instead of a database: the returned
  // function may be called from any thread (before or after Unlisten) and
  // makes hooks.onFeed(feed_id) run on this loop, coalesced. `on_close`
  // runs on this thread when the feed is unlistened (by JS, or when the
  // isolate is disposed), to stop whatever feeds it.
  std::function<void()> ListenNotify(uint64_t feed_id, std::function<void()> on_close);
  void Unlisten(uint64_t feed_id);

  // Tasks this isolate runs: completion by native.taskDone().
  void FinishTask(uint64_t task_id, Result<std::string> result);
  // Tasks this isolate sent elsewhere: keep the loop alive until replied.
  void AwaitReply() { if (pending_replies_++ == 0) uv_ref(reinterpret_cast<uv_handle_t*>(&async_)); }

  // process.exit(code).
  void Exit(int code);
  // The process.exitCode a main script leaves as its loop empties.
  void NoteExitCode(int code);
  // Reports an uncaught exception or rejection and schedules the reset.
  void ReportUncaught(v8::Local<v8::Value> error, v8::Local<v8::Message> message,
                      const char* kind);
  void ScheduleReset(Status reason);

 private:
  struct TimerHandle;
  struct Feed;

  // A feed whose async handle runs hooks.onFeed(feed_id) (replacing one
  // with that id).
  Feed* NewFeed(uint64_t feed_id, std::shared_ptr<Database> db);
  void ThreadMain();
  // Runs hooks.processEnd(event): node's 'beforeExit' / 'exit' listeners.
  void EmitProcessEnd(const char* event);
  bool CreateIsolate();
  void DisposeIsolate();
  void Reset();
  void DrainQueue();
  void RunJob(Job& job);
  void AfterCallback();
  void CheckRejections();
  void OnTermination();
  void EnterCall();
  void ExitCall();
  void FailPendingTasks(const Status& status);

  // Post() with mu_ held; false (job untouched) once the thread is stopping.
  bool PostLocked(Job& job);

  static void OnAsync(uv_async_t* handle);
  static void OnCheck(uv_check_t* handle);
  static size_t NearHeapLimit(void* data, size_t current_heap_limit, size_t initial_heap_limit);
  static void PromiseRejected(v8::PromiseRejectMessage message);
  static void OnMessage(v8::Local<v8::Message> message, v8::Local<v8::Value> error);

  IsolatePool::Impl* const pool_;
  const int id_;
  std::thread thread_;

  // Queue, guarded by mu_.
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool idle_ = false;
  bool stop_ = false;
  std::atomic<size_t> queued_{0};

  // Watchdog state, guarded by wd_mu_ (the watchdog and Stop() may touch the
  // isolate only while holding it and while isolate_alive_ is true).
  std::mutex wd_mu_;
  uint64_t deadline_ns_ = 0;
  bool watchdog_fired_ = false;
  bool isolate_alive_ = false;

  // Isolate-thread state.
  uv_loop_t loop_;
  uv_async_t async_;
  uv_check_t check_;
  uv_idle_t idle_handle_;
  bool immediates_active_ = false;
  v8::ArrayBuffer::Allocator* allocator_ = nullptr;
  v8::Isolate* isolate_ = nullptr;
  v8::Global<v8::Context> context_;
  v8::Global<v8::Function> hooks_[kNumHooks];
  std::vector<std::function<void()>> at_dispose_;
  uint64_t epoch_ = 0;
  int call_depth_ = 0;
  bool heap_exceeded_ = false;
  size_t heap_limit_mb_ = 0;  // for the report, from NearHeapLimit
  bool timed_out_ = false;
  bool exiting_ = false;
  bool reset_pending_ = false;
  Status reset_reason_;
  bool has_main_ = false;
  bool main_failed_ = false;
  Job main_job_;
  int restart_count_ = 0;
  uint64_t pending_replies_ = 0;
  uint64_t next_task_id_ = 1;
  std::unordered_map<uint64_t, TaskCallback> tasks_;
  std::unordered_map<uint32_t, TimerHandle*> timers_;
  std::unordered_map<uint64_t, Feed*> feeds_;
  struct DbSlot {
    std::shared_ptr<Database> db;  // null: free
    int refs = 0;                  // PouchDB objects holding this handle
  };
  std::vector<DbSlot> dbs_;
  // Databases whose last handle closed during a JS call: released when the
  // outermost call returns (see Db()).
  std::vector<std::shared_ptr<Database>> closed_dbs_;
  std::vector<std::pair<v8::Global<v8::Promise>, v8::Global<v8::Value>>> rejections_;
};

// Sets obj[name] to a native function (not constructible). Used by both
// binding files; defined in bindings_node.cc.
void SetFn(v8::Local<v8::Context> ctx, v8::Local<v8::Object> obj, const char* name,
           v8::FunctionCallback fn);

// Installs the `native` object's functions (bindings_node.cc, bindings_db.cc).
void InstallNodeBindings(IsolateThread* t, v8::Local<v8::Object> native);
void InstallFsBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_fs.cc
void InstallCryptoBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_crypto.cc
void InstallValueBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_values.cc
void InstallDbBindings(IsolateThread* t, v8::Local<v8::Object> native);
void InstallReplicationBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_replication.cc
void InstallHttpBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_http.cc
void InstallFetchBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_fetch.cc
void InstallEsmBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_esm.cc
void InstallZlibBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_zlib.cc
void InstallChildProcessBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_child_process.cc
void InstallViewBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_views.cc
void InstallStdinBindings(IsolateThread* t, v8::Local<v8::Object> native);  // bindings_stdin.cc

// The prelude source (generated from js/prelude/*.js at build time).
extern const char kPreludeSource[];

}  // namespace settee::js
