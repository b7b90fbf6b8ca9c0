#include "js/isolate_thread.h"

#include <pthread.h>

#include <cstdio>
#include <string>
#include <future>

#include <libplatform/libplatform.h>
#include <v8-array-buffer.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-initialization.h>
#include <v8-message.h>
#include <v8-microtask-queue.h>
#include <v8-object.h>
#include <v8-primitive.h>
#include <v8-promise.h>
#include <v8-script.h>

#include "js/convert.h"
#include "js/v8_init.h"
#include "util/http_status.h"

namespace settee::js {

namespace {

// The hook names, in IsolateThread::Hook order.
constexpr const char* kHookNames[IsolateThread::kNumHooks] = {
    "runTicks",    "drainTicks",    "onTimer",  "onImmediate", "makeError",
    "runTask",     "evalScript",  "onMessage", "onTaskReply", "onFeed",
    "runMain",     "errorText",   "emitProcess", "inspect",   "processEnd",
    "esmImport",   "esmMeta",       "fatalExit"};

v8::Local<v8::String> Str(v8::Isolate* isolate, std::string_view s) { return ToV8String(isolate, s); }

}  // namespace

struct IsolateThread::TimerHandle {
  uv_timer_t handle;
  IsolateThread* thread;
  uint32_t id;
  bool repeat;
};

struct IsolateThread::Feed {
  uv_async_t async;
  IsolateThread* thread;
  uint64_t id;
  std::shared_ptr<Database> db;  // null for ListenNotify feeds
  uint64_t listener = 0;
  // ListenNotify feeds: the wake-up callers hold this; `open` turns false
  // (under `mu`) before the async handle closes.
  struct Gate {
    std::mutex mu;
    bool open = true;
    uv_async_t* async = nullptr;
  };
  std::shared_ptr<Gate> gate;
  std::function<void()> on_close;
};

IsolateThread::IsolateThread(IsolatePool::Impl* pool, int id) : pool_(pool), id_(id) {}

IsolateThread::~IsolateThread() {
  Stop();
  Join();
}

Status IsolateThread::Start() {
  std::promise<Status> started;
  auto f = started.get_future();
  thread_ = std::thread([this, &started] {
    // Named for profiles and /proc/<pid>/task (beside V8's "v8-worker"s).
    pthread_setname_np(pthread_self(), ("isolate-" + std::to_string(id_)).substr(0, 15).c_str());
    int r = uv_loop_init(&loop_);
    if (r == 0) r = uv_async_init(&loop_, &async_, OnAsync);
    if (r != 0) {
      started.set_value(Status::IOError(std::string("uv_loop_init: ") + uv_strerror(r)));
      return;
    }
    async_.data = this;
    uv_unref(reinterpret_cast<uv_handle_t*>(&async_));
    uv_check_init(&loop_, &check_);
    check_.data = this;
    uv_idle_init(&loop_, &idle_handle_);
    allocator_ = v8::ArrayBuffer::Allocator::NewDefaultAllocator();
    if (!CreateIsolate()) {
      started.set_value(Status::Internal("could not create a V8 isolate"));
      return;
    }
    started.set_value(Status::OK());
    ThreadMain();
  });
  Status s = f.get();
  if (!s.ok()) {
    thread_.join();
  }
  return s;
}

bool IsolateThread::PostLocked(Job& job) {
  if (stop_) return false;
  queue_.push_back(std::move(job));
  queued_.fetch_add(1, std::memory_order_relaxed);
  if (idle_) {
    idle_ = false;
    pool_->MarkBusy();
  }
  cv_.notify_one();
  uv_async_send(&async_);
  return true;
}

void IsolateThread::Post(Job job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (PostLocked(job)) return;
  }
  if (job.done) job.done(Status(Status::Code::kInvalidOperation, "the isolate pool is shut down"));
}

void IsolateThread::PostTogether(const std::vector<IsolateThread*>& threads, std::vector<Job> jobs) {
  std::vector<Job*> refused;
  {
    std::vector<std::unique_lock<std::mutex>> locks;
    locks.reserve(threads.size());
    for (IsolateThread* t : threads) locks.emplace_back(t->mu_);
    for (size_t i = 0; i < threads.size(); ++i) {
      if (!threads[i]->PostLocked(jobs[i])) refused.push_back(&jobs[i]);
    }
  }
  for (Job* job : refused) {
    if (job->done) job->done(Status(Status::Code::kInvalidOperation, "the isolate pool is shut down"));
  }
}

void IsolateThread::Stop() {
  bool idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_ || !thread_.joinable()) {
      stop_ = true;
      return;
    }
    stop_ = true;
    idle = idle_;
    cv_.notify_one();
    uv_async_send(&async_);
  }
  // An idle thread runs no JS to cut short, and its 'exit' listeners are
  // still to run.
  if (idle) return;
  std::lock_guard<std::mutex> lock(wd_mu_);
  if (isolate_alive_) isolate_->TerminateExecution();
}

void IsolateThread::Join() {
  if (thread_.joinable()) thread_.join();
}

void IsolateThread::WatchdogCheck(uint64_t now_ns) {
  std::lock_guard<std::mutex> lock(wd_mu_);
  if (isolate_alive_ && deadline_ns_ != 0 && now_ns > deadline_ns_ && !watchdog_fired_) {
    watchdog_fired_ = true;
    isolate_->TerminateExecution();
  }
}

void IsolateThread::EnterCall() {
  uint32_t timeout = pool_->options().limits.timeout_ms;
  if (timeout == 0) return;
  std::lock_guard<std::mutex> lock(wd_mu_);
  deadline_ns_ = uv_hrtime() + uint64_t{timeout} * 1000000;
  watchdog_fired_ = false;
}

void IsolateThread::ExitCall() {
  if (pool_->options().limits.timeout_ms == 0) return;
  std::lock_guard<std::mutex> lock(wd_mu_);
  deadline_ns_ = 0;
  if (watchdog_fired_) timed_out_ = true;
  watchdog_fired_ = false;
}

////////////////////////////////////////////////////////////////////////////////
// Isolate lifecycle

bool IsolateThread::CreateIsolate() {
  v8::Isolate::CreateParams params;
  params.array_buffer_allocator = allocator_;
  size_t heap_mb = pool_->options().limits.max_heap_mb;
  if (heap_mb) {
    params.constraints.ConfigureDefaultsFromHeapSize(0, heap_mb << 20);
  } else {
    // Size the heap from the machine's memory, as node does; V8's bare
    // defaults assume a small device.
    params.constraints.ConfigureDefaults(uv_get_total_memory(), 0);
  }
  v8::Isolate* isolate = v8::Isolate::New(params);
  isolate->SetData(0, this);
  isolate->SetMicrotasksPolicy(v8::MicrotasksPolicy::kExplicit);
  // Always installed: with V8's default limit too, running out of heap ends
  // the script, not the process.
  isolate->AddNearHeapLimitCallback(NearHeapLimit, this);
  isolate->SetPromiseRejectCallback(PromiseRejected);
  isolate->AddMessageListenerWithErrorLevel(OnMessage, v8::Isolate::kMessageError);
  isolate->SetCaptureStackTraceForUncaughtExceptions(true, 10);
  isolate->Enter();
  {
    std::lock_guard<std::mutex> lock(wd_mu_);
    isolate_ = isolate;
    isolate_alive_ = true;
  }
  heap_exceeded_ = timed_out_ = false;

  v8::HandleScope hs(isolate);
  v8::Local<v8::Context> ctx = v8::Context::New(isolate);
  context_.Reset(isolate, ctx);
  v8::Context::Scope cs(ctx);
  v8::TryCatch tc(isolate);
  v8::Local<v8::Object> native = v8::Object::New(isolate);
  InstallNodeBindings(this, native);
  InstallFsBindings(this, native);
  InstallCryptoBindings(this, native);
  InstallValueBindings(this, native);
  InstallDbBindings(this, native);
  InstallReplicationBindings(this, native);
  InstallHttpBindings(this, native);
  InstallFetchBindings(this, native);
  InstallEsmBindings(this, native);
  InstallZlibBindings(this, native);
  InstallChildProcessBindings(this, native);
  InstallViewBindings(this, native);
  InstallStdinBindings(this, native);

  v8::ScriptOrigin origin(isolate, Str(isolate, "settee:prelude.js"));
  v8::Local<v8::Script> script;
  v8::Local<v8::Value> fn;
  v8::Local<v8::Value> hooks;
  v8::Local<v8::Value> args[] = {native, ctx->Global()};
  if (!v8::Script::Compile(ctx, Str(isolate, kPreludeSource), &origin).ToLocal(&script) ||
      !script->Run(ctx).ToLocal(&fn) || !fn->IsFunction() ||
      !fn.As<v8::Function>()->Call(ctx, v8::Undefined(isolate), 2, args).ToLocal(&hooks) ||
      !hooks->IsObject()) {
    std::string err = tc.HasCaught() ? ToUtf8(isolate, tc.Exception()) : "no hooks";
    pool_->Report(id_, "settee: the JS prelude failed: " + err);
    return false;
  }
  for (int i = 0; i < kNumHooks; ++i) {
    v8::Local<v8::Value> h;
    if (!hooks.As<v8::Object>()->Get(ctx, Str(isolate, kHookNames[i])).ToLocal(&h) || !h->IsFunction()) {
      pool_->Report(id_, std::string("settee: the JS prelude lacks hook ") + kHookNames[i]);
      return false;
    }
    hooks_[i].Reset(isolate, h.As<v8::Function>());
  }
  return true;
}

void IsolateThread::DisposeIsolate() {
  if (!isolate_) return;
  for (auto& [id, t] : timers_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&t->handle),
             [](uv_handle_t* h) { delete static_cast<TimerHandle*>(h->data); });
  }
  timers_.clear();
  std::vector<uint64_t> feed_ids;
  for (auto& [id, f] : feeds_) feed_ids.push_back(id);
  for (uint64_t id : feed_ids) Unlisten(id);
  ImmediateStop();
  uv_run(&loop_, UV_RUN_NOWAIT);  // runs the close callbacks

  dbs_.clear();
  rejections_.clear();
  std::vector<std::function<void()>> at_dispose;
  at_dispose.swap(at_dispose_);
  for (auto& fn : at_dispose) fn();
  for (auto& h : hooks_) h.Reset();
  context_.Reset();
  {
    std::lock_guard<std::mutex> lock(wd_mu_);
    isolate_alive_ = false;
  }
  isolate_->Exit();
  isolate_->Dispose();
  isolate_ = nullptr;
}

void IsolateThread::ScheduleReset(Status reason) {
  if (reset_pending_) return;
  reset_pending_ = true;
  reset_reason_ = std::move(reason);
  uv_stop(&loop_);
}

void IsolateThread::FailPendingTasks(const Status& status) {
  auto tasks = std::move(tasks_);
  tasks_.clear();
  for (auto& [id, done] : tasks) {
    if (done) done(status);
  }
}

void IsolateThread::Reset() {
  reset_pending_ = false;
  Status reason = std::move(reset_reason_);
  FailPendingTasks(reason);
  DisposeIsolate();
  ++epoch_;
  if (pending_replies_) uv_unref(reinterpret_cast<uv_handle_t*>(&async_));
  pending_replies_ = 0;
  bool restart = has_main_ && pool_->options().keep;
  if (restart) ++restart_count_;  // before CreateIsolate: settee.restartCount shows it
  if (!CreateIsolate()) {
    // Without an isolate the thread can only refuse work: stop it.
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    return;
  }
  if (restart) {
    pool_->Report(id_, "settee: restarting " + main_job_.text + " (restart " +
                           std::to_string(restart_count_) + ")");
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_front(main_job_);
    queued_.fetch_add(1, std::memory_order_relaxed);
  } else if (has_main_) {
    has_main_ = false;
    pool_->NoteMainFailure();
  }
}

////////////////////////////////////////////////////////////////////////////////
// The thread's loop

void IsolateThread::ThreadMain() {
  for (;;) {
    if (reset_pending_) Reset();
    DrainQueue();
    bool stopping;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping = stop_;
    }
    if (!stopping && !reset_pending_ && !exiting_ && isolate_) uv_run(&loop_, UV_RUN_DEFAULT);
    if (reset_pending_) continue;
    // node's 'beforeExit': the main script's loop has emptied; listeners
    // may schedule more work, which then runs before the thread idles.
    if (!stopping && has_main_ && !exiting_ && isolate_ && queued() == 0 && !uv_loop_alive(&loop_)) {
      EmitProcessEnd("beforeExit");
      if (reset_pending_ || uv_loop_alive(&loop_)) continue;
    }

    std::unique_lock<std::mutex> lock(mu_);
    if (stop_) break;
    if (!queue_.empty()) continue;
    if (!exiting_ && isolate_ && uv_loop_alive(&loop_)) continue;  // uv_stop() for a job
    idle_ = true;
    pool_->MarkIdle();
    cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
  }

  // Shutdown: node's 'exit' for a main script that ran to its end (after
  // process.exit it was emitted already; a thread stopped mid-script gets
  // none); fail what is queued, close everything.
  bool ended_idle;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ended_idle = idle_;
  }
  if (ended_idle && has_main_ && !exiting_ && !reset_pending_ && isolate_) EmitProcessEnd("exit");
  std::deque<Job> rest;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rest.swap(queue_);
  }
  for (auto& job : rest) {
    if (job.done) job.done(Status(Status::Code::kInvalidOperation, "the isolate pool is shut down"));
  }
  FailPendingTasks(Status(Status::Code::kInvalidOperation, "the isolate pool is shut down"));
  DisposeIsolate();
  uv_close(reinterpret_cast<uv_handle_t*>(&async_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&check_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&idle_handle_), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
  delete allocator_;
  allocator_ = nullptr;
}

void IsolateThread::OnAsync(uv_async_t* handle) {
  auto* t = static_cast<IsolateThread*>(handle->data);
  t->DrainQueue();
}

void IsolateThread::DrainQueue() {
  for (;;) {
    Job job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) {
        uv_stop(&loop_);
        return;
      }
      if (queue_.empty() || reset_pending_ || exiting_ || !isolate_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    RunJob(job);
    queued_.fetch_sub(1, std::memory_order_relaxed);
    // Let the V8 platform run its foreground tasks (GC finalization etc.).
    if (isolate_) {
      while (v8::platform::PumpMessageLoop(V8Platform(), isolate_)) {
      }
    }
  }
}

void IsolateThread::RunJob(Job& job) {
  v8::HandleScope hs(isolate_);
  v8::Isolate* iso = isolate_;
  switch (job.kind) {
    case Job::Kind::kMain: {
      has_main_ = true;
      main_job_ = job;
      v8::Local<v8::Value> argv[] = {Str(iso, job.text), Str(iso, job.text2)};
      MakeCallback(kRunMain, 2, argv);
      break;
    }
    case Job::Kind::kTask:
    case Job::Kind::kEval: {
      uint64_t id = next_task_id_++;
      tasks_[id] = std::move(job.done);
      if (job.kind == Job::Kind::kTask) {
        // The argument (a share of documents, for a map task) is read in
        // place by JSON.parse, not copied into the heap first.
        v8::Local<v8::Value> argv[] = {v8::Number::New(iso, static_cast<double>(id)), Str(iso, job.text),
                                       ToV8StringOwned(iso, std::move(job.text2))};
        MakeCallback(kRunTask, 3, argv);
      } else {
        v8::Local<v8::Value> argv[] = {v8::Number::New(iso, static_cast<double>(id)), Str(iso, job.text)};
        MakeCallback(kEvalScript, 2, argv);
      }
      break;
    }
    case Job::Kind::kMessage: {
      v8::Local<v8::Value> argv[] = {Str(iso, job.text), v8::Integer::New(iso, job.from)};
      MakeCallback(kOnMessage, 2, argv);
      break;
    }
    case Job::Kind::kReply: {
      if (job.epoch != epoch_) break;  // for an isolate that no longer exists
      if (pending_replies_ > 0 && --pending_replies_ == 0) {
        uv_unref(reinterpret_cast<uv_handle_t*>(&async_));
      }
      v8::Local<v8::Value> argv[] = {v8::Number::New(iso, static_cast<double>(job.reply_id)),
                                     v8::Boolean::New(iso, job.ok), Str(iso, job.text)};
      MakeCallback(kOnTaskReply, 3, argv);
      break;
    }
  }
}

////////////////////////////////////////////////////////////////////////////////
// Entering JS

bool IsolateThread::MakeCallback(Hook h, int argc, v8::Local<v8::Value>* argv) {
  if (reset_pending_ || exiting_ || !isolate_) return false;
  v8::HandleScope hs(isolate_);
  v8::Local<v8::Context> ctx = context();
  v8::Context::Scope cs(ctx);
  bool outer = call_depth_ == 0;
  if (outer) EnterCall();
  ++call_depth_;
  bool ok;
  {
    v8::TryCatch tc(isolate_);
    ok = !hook(h)->Call(ctx, v8::Undefined(isolate_), argc, argv).IsEmpty();
    if (!ok && tc.HasCaught() && !tc.HasTerminated()) {
      ReportUncaught(tc.Exception(), tc.Message(), "Uncaught");
    }
  }
  if (ok && outer) AfterCallback();
  --call_depth_;
  if (outer) {
    closed_dbs_.clear();  // no binding is running any more
    ExitCall();
    OnTermination();
  }
  return ok && !reset_pending_;
}

void IsolateThread::AfterCallback() {
  // node's order after a macrotask: the nextTick queue, then the promise
  // jobs, again while ticks remain; then unhandled rejections, and again
  // from the top if there were any. The loop is JS (hooks.drainTicks, over
  // RunMicrotasks and ProcessRejections below), as node's
  // processTicksAndRejections is: a script that awaits a tick per
  // iteration (PouchDB code, streams, settee bench's runner) makes a round
  // per iteration, and entering JS from C++ twice a round (the ticks, then
  // a hasTicks test) cost more than the round's own work.
  if (reset_pending_ || exiting_ || isolate_->IsExecutionTerminating()) return;
  v8::HandleScope scope(isolate_);
  v8::TryCatch tc(isolate_);
  if (hook(kDrainTicks)->Call(context(), v8::Undefined(isolate_), 0, nullptr).IsEmpty()) {
    if (tc.HasCaught() && !tc.HasTerminated()) ReportUncaught(tc.Exception(), tc.Message(), "Uncaught");
  }
}

bool IsolateThread::RunMicrotasks() {
  isolate_->PerformMicrotaskCheckpoint();
  return !isolate_->IsExecutionTerminating() && !reset_pending_ && !exiting_;
}

bool IsolateThread::ProcessRejections() {
  if (rejections_.empty()) return false;
  CheckRejections();
  return !isolate_->IsExecutionTerminating() && !reset_pending_ && !exiting_;
}

void IsolateThread::OnTermination() {
  if (exiting_ || reset_pending_) return;
  auto& limits = pool_->options().limits;
  if (heap_exceeded_) {
    size_t limit_mb = limits.max_heap_mb ? limits.max_heap_mb : heap_limit_mb_;
    std::string msg = "JavaScript heap out of memory (limit " + std::to_string(limit_mb) +
                      " MB): execution terminated, isolate discarded";
    pool_->Report(id_, "Error: " + msg);
    ScheduleReset(Status::Internal("RangeError: " + msg));
  } else if (timed_out_) {
    std::string msg = "Script execution timed out after " + std::to_string(limits.timeout_ms) + "ms";
    pool_->Report(id_, "Error: " + msg);
    ScheduleReset(Status(Status::Code::kTimeout, msg));
  }
  timed_out_ = false;
}

size_t IsolateThread::NearHeapLimit(void* data, size_t current_heap_limit, size_t initial_heap_limit) {
  auto* t = static_cast<IsolateThread*>(data);
  t->heap_exceeded_ = true;
  t->heap_limit_mb_ = initial_heap_limit >> 20;
  t->isolate_->TerminateExecution();
  // Room for the terminating script to unwind; the isolate is discarded after.
  return current_heap_limit + std::max<size_t>(current_heap_limit / 2, size_t{64} << 20);
}

void IsolateThread::PromiseRejected(v8::PromiseRejectMessage message) {
  v8::Local<v8::Promise> promise = message.GetPromise();
  v8::Isolate* isolate = promise->GetIsolate();
  IsolateThread* t = From(isolate);
  if (message.GetEvent() == v8::kPromiseRejectWithNoHandler) {
    v8::Local<v8::Value> value = message.GetValue();
    if (value.IsEmpty()) value = v8::Undefined(isolate);
    t->rejections_.emplace_back(v8::Global<v8::Promise>(isolate, promise),
                                v8::Global<v8::Value>(isolate, value));
  } else if (message.GetEvent() == v8::kPromiseHandlerAddedAfterReject) {
    for (size_t i = 0; i < t->rejections_.size(); ++i) {
      if (t->rejections_[i].first == promise) {
        t->rejections_.erase(t->rejections_.begin() + static_cast<long>(i));
        break;
      }
    }
  }
}

void IsolateThread::CheckRejections() {
  if (rejections_.empty()) return;
  auto pending = std::move(rejections_);
  rejections_.clear();
  v8::HandleScope hs(isolate_);
  for (auto& [promise, value] : pending) {
    if (reset_pending_) break;
    v8::Local<v8::Value> v = value.Get(isolate_);
    ReportUncaught(v, v8::Exception::CreateMessage(isolate_, v), "Unhandled promise rejection");
  }
}

void IsolateThread::OnMessage(v8::Local<v8::Message> message, v8::Local<v8::Value> error) {
  // Exceptions no TryCatch saw, e.g. thrown by a queueMicrotask() callback.
  v8::Isolate* isolate = message->GetIsolate();
  IsolateThread* t = From(isolate);
  if (t && !isolate->IsExecutionTerminating()) t->ReportUncaught(error, message, "Uncaught");
}

void IsolateThread::ReportUncaught(v8::Local<v8::Value> error, v8::Local<v8::Message> message,
                                   const char* kind) {
  if (reset_pending_ || exiting_) return;
  v8::HandleScope hs(isolate_);
  v8::Local<v8::Context> ctx = context();
  bool rejection = std::string_view(kind) != "Uncaught";
  {
    // process.on('uncaughtException' | 'unhandledRejection') takes over.
    v8::TryCatch tc(isolate_);
    v8::Local<v8::Value> argv[] = {Str(isolate_, rejection ? "unhandledRejection" : "uncaughtException"),
                                   error};
    v8::Local<v8::Value> handled;
    if (hook(kEmitProcess)->Call(ctx, v8::Undefined(isolate_), 2, argv).ToLocal(&handled)) {
      if (handled->IsTrue()) return;
    } else if (tc.HasTerminated()) {
      return;
    }
  }
  std::string text;
  if (!message.IsEmpty() && !rejection) {
    std::string resource = ToUtf8(isolate_, message->GetScriptResourceName());
    int line = message->GetLineNumber(ctx).FromMaybe(0);
    v8::Local<v8::String> source_line;
    if (!resource.empty() && line > 0) {
      text += resource + ":" + std::to_string(line) + "\n";
      if (message->GetSourceLine(ctx).ToLocal(&source_line)) {
        text += ToUtf8(isolate_, source_line) + "\n";
        int start = message->GetStartColumn(ctx).FromMaybe(0);
        int end = message->GetEndColumn(ctx).FromMaybe(start + 1);
        text += std::string(static_cast<size_t>(std::max(0, start)), ' ') +
                std::string(static_cast<size_t>(std::max(1, end - start)), '^') + "\n\n";
      }
    }
  }
  {
    v8::TryCatch tc(isolate_);
    v8::Local<v8::Value> argv[] = {error};
    v8::Local<v8::Value> s;
    if (hook(kErrorText)->Call(ctx, v8::Undefined(isolate_), 1, argv).ToLocal(&s)) {
      text += ToUtf8(isolate_, s);
    } else {
      text += ToUtf8(isolate_, error);
    }
  }
  if (rejection) text = std::string(kind) + ": " + text;
  // A main script the error ends (no --keep to restart it) ends as node's:
  // exitCode 1 and its 'exit' listeners first (they were never run).
  if (has_main_ && !pool_->options().keep) {
    v8::TryCatch tc(isolate_);
    (void)hook(kFatalExit)->Call(ctx, v8::Undefined(isolate_), 0, nullptr);
  }
  pool_->Report(id_, text);
  ScheduleReset(Status::Internal(text));
}

////////////////////////////////////////////////////////////////////////////////
// Services for the bindings

v8::Local<v8::Value> IsolateThread::MakeError(const Status& status) {
  v8::EscapableHandleScope hs(isolate_);
  v8::Local<v8::Context> ctx = context();
  std::string_view name = status.ErrorName();
  v8::Local<v8::Value> argv[] = {v8::Integer::New(isolate_, HttpStatusFor(status.code())),
                                 Str(isolate_, name), Str(isolate_, status.reason())};
  v8::Local<v8::Value> err;
  if (!hook(kMakeError)->Call(ctx, v8::Undefined(isolate_), 3, argv).ToLocal(&err)) {
    err = v8::Exception::Error(Str(isolate_, status.ToString()));
  }
  return hs.Escape(err);
}

void IsolateThread::ThrowStatus(const Status& status) { isolate_->ThrowException(MakeError(status)); }

void IsolateThread::TimerStart(uint32_t id, uint64_t ms, bool repeat) {
  TimerHandle* t;
  auto it = timers_.find(id);
  if (it != timers_.end()) {
    t = it->second;
  } else {
    t = new TimerHandle{{}, this, id, repeat};
    uv_timer_init(&loop_, &t->handle);
    t->handle.data = t;
    timers_[id] = t;
  }
  t->repeat = repeat;
  // The loop's cached time is stale after synchronous JS (a long script, a
  // sync stretch between awaits); counting the delay from it would fire the
  // timer early. node refreshes it here too.
  uv_update_time(&loop_);
  uv_timer_start(
      &t->handle,
      [](uv_timer_t* h) {
        auto* th = static_cast<TimerHandle*>(h->data);
        IsolateThread* self = th->thread;
        uint32_t tid = th->id;
        if (!th->repeat) {
          self->timers_.erase(tid);
          uv_close(reinterpret_cast<uv_handle_t*>(h),
                   [](uv_handle_t* hh) { delete static_cast<TimerHandle*>(hh->data); });
        }
        v8::HandleScope hs(self->isolate_);
        v8::Local<v8::Value> argv[] = {v8::Integer::NewFromUnsigned(self->isolate_, tid)};
        self->MakeCallback(kOnTimer, 1, argv);
      },
      ms, repeat ? ms : 0);
}

void IsolateThread::TimerStop(uint32_t id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  uv_close(reinterpret_cast<uv_handle_t*>(&it->second->handle),
           [](uv_handle_t* h) { delete static_cast<TimerHandle*>(h->data); });
  timers_.erase(it);
}

void IsolateThread::TimerRef(uint32_t id, bool ref) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  auto* h = reinterpret_cast<uv_handle_t*>(&it->second->handle);
  if (ref) uv_ref(h);
  else uv_unref(h);
}

void IsolateThread::OnCheck(uv_check_t* handle) {
  auto* t = static_cast<IsolateThread*>(handle->data);
  t->MakeCallback(kOnImmediate, 0, nullptr);
}

void IsolateThread::ImmediateStart() {
  if (immediates_active_) return;
  immediates_active_ = true;
  uv_check_start(&check_, OnCheck);
  // An active idle handle keeps the loop from blocking in poll.
  uv_idle_start(&idle_handle_, [](uv_idle_t*) {});
}

void IsolateThread::ImmediateStop() {
  if (!immediates_active_) return;
  immediates_active_ = false;
  uv_check_stop(&check_);
  uv_idle_stop(&idle_handle_);
}

int IsolateThread::OpenDb(std::shared_ptr<Database> db) {
  // One slot per database, shared by every PouchDB object naming it, so that
  // opening a name again and again does not grow the table.
  int free_slot = -1;
  for (size_t i = 0; i < dbs_.size(); ++i) {
    if (dbs_[i].db == db) {
      ++dbs_[i].refs;
      return static_cast<int>(i);
    }
    if (!dbs_[i].db && free_slot < 0) free_slot = static_cast<int>(i);
  }
  if (free_slot < 0) {
    dbs_.emplace_back();
    free_slot = static_cast<int>(dbs_.size() - 1);
  }
  dbs_[free_slot] = {std::move(db), 1};
  return free_slot;
}

Database* IsolateThread::Db(int handle) {
  if (handle < 0 || static_cast<size_t>(handle) >= dbs_.size()) return nullptr;
  return dbs_[handle].db.get();
}

std::shared_ptr<Database> IsolateThread::SharedDb(int handle) {
  if (handle < 0 || static_cast<size_t>(handle) >= dbs_.size()) return nullptr;
  return dbs_[handle].db;
}

void IsolateThread::CloseDb(int handle) {
  if (handle < 0 || static_cast<size_t>(handle) >= dbs_.size() || !dbs_[handle].db) return;
  if (--dbs_[handle].refs > 0) return;
  // A binding up the stack may still use it (Db() is borrowed).
  if (call_depth_ > 0) closed_dbs_.push_back(std::move(dbs_[handle].db));
  dbs_[handle].db.reset();
}

IsolateThread::Feed* IsolateThread::NewFeed(uint64_t feed_id, std::shared_ptr<Database> db) {
  Unlisten(feed_id);
  auto* f = new Feed{{}, this, feed_id, std::move(db), 0, nullptr, nullptr};
  uv_async_init(&loop_, &f->async, [](uv_async_t* h) {
    auto* feed = static_cast<Feed*>(h->data);
    v8::HandleScope hs(feed->thread->isolate_);
    v8::Local<v8::Value> argv[] = {v8::Number::New(feed->thread->isolate_, static_cast<double>(feed->id))};
    feed->thread->MakeCallback(kOnFeed, 1, argv);
  });
  f->async.data = f;
  return f;
}

void IsolateThread::Listen(const std::shared_ptr<Database>& db, uint64_t feed_id) {
  Feed* f = NewFeed(feed_id, db);
  // Runs on the writing thread under a database lock: only wake this loop.
  f->listener = db->AddChangeListener([f](uint64_t) { uv_async_send(&f->async); });
  feeds_[feed_id] = f;
}

std::function<void()> IsolateThread::ListenNotify(uint64_t feed_id,
                                                  std::function<void()> on_close) {
  Feed* f = NewFeed(feed_id, nullptr);
  f->gate = std::make_shared<Feed::Gate>();
  f->gate->async = &f->async;
  f->on_close = std::move(on_close);
  feeds_[feed_id] = f;
  return [gate = f->gate] {
    std::lock_guard<std::mutex> lock(gate->mu);
    if (gate->open) uv_async_send(gate->async);
  };
}

void IsolateThread::Unlisten(uint64_t feed_id) {
  auto it = feeds_.find(feed_id);
  if (it == feeds_.end()) return;
  Feed* f = it->second;
  feeds_.erase(it);
  if (f->gate) {
    {
      std::lock_guard<std::mutex> lock(f->gate->mu);
      f->gate->open = false;
    }
    if (f->on_close) f->on_close();
  }
  // After RemoveChangeListener returns no writer can call the listener, so
  // the async handle may be closed.
  if (f->db) f->db->RemoveChangeListener(f->listener);
  uv_close(reinterpret_cast<uv_handle_t*>(&f->async),
           [](uv_handle_t* h) { delete static_cast<Feed*>(h->data); });
}

void IsolateThread::FinishTask(uint64_t task_id, Result<std::string> result) {
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return;
  TaskCallback done = std::move(it->second);
  tasks_.erase(it);
  if (done) done(std::move(result));
}

void IsolateThread::EmitProcessEnd(const char* event) {
  v8::HandleScope hs(isolate_);
  v8::Local<v8::Value> argv[] = {Str(isolate_, event)};
  MakeCallback(kProcessEnd, 1, argv);
}

void IsolateThread::NoteExitCode(int code) { pool_->NoteExitCode(code); }

// process.exit (js/prelude/console_process.js has run the 'exit' listeners).
void IsolateThread::Exit(int code) {
  if (exiting_) return;
  exiting_ = true;
  pool_->RequestExit(code);
  isolate_->TerminateExecution();
  uv_stop(&loop_);
}

}  // namespace settee::js
