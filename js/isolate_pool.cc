#include "js/isolate_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "js/isolate_thread.h"
#include "js/v8_init.h"

namespace settee::js {

////////////////////////////////////////////////////////////////////////////////
// IsolatePool::Impl

IsolatePool::Impl::Impl(const PoolOptions& options) : options_(options) {}

IsolatePool::Impl::~Impl() { Shutdown(); }

Status IsolatePool::Impl::Start() {
  if (options_.threads < 1 || options_.threads > kMaxThreads) {
    return Status::BadRequest("thread count must be 1.." + std::to_string(kMaxThreads));
  }
  InitializeV8(options_.v8_flags);
  for (int i = 0; i < options_.threads; ++i) threads_.push_back(std::make_unique<IsolateThread>(this, i));
  busy_ = options_.threads;  // each thread reports idle once it is
  for (auto& t : threads_) {
    Status s = t->Start();
    if (!s.ok()) {
      Shutdown();
      return s;
    }
  }
  if (options_.limits.timeout_ms > 0) watchdog_ = std::thread([this] { WatchdogMain(); });
  return Status::OK();
}

void IsolatePool::Impl::WatchdogMain() {
  // Checks often enough to stop a runaway call within ~10% of its budget.
  auto period = std::chrono::milliseconds(
      std::clamp<uint32_t>(options_.limits.timeout_ms / 10, 1, 50));
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    cv_.wait_for(lock, period);
    if (stopping_) break;
    lock.unlock();
    uint64_t now = uv_hrtime();
    for (auto& t : threads_) t->WatchdogCheck(now);
    lock.lock();
  }
}

void IsolatePool::Impl::Shutdown() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    cv_.notify_all();
  }
  for (auto& t : threads_) t->Stop();
  for (auto& t : threads_) t->Join();
  if (watchdog_.joinable()) watchdog_.join();
  threads_.clear();
  // After the isolates: their services may wait for work the isolates
  // started (replication jobs), and nothing can ask for them any more.
  std::map<std::string, std::shared_ptr<void>> services;
  {
    std::lock_guard<std::mutex> lock(services_mu_);
    services.swap(services_);
  }
  services.clear();
}

std::shared_ptr<void> IsolatePool::Impl::SharedService(
    const std::string& key, const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard<std::mutex> lock(services_mu_);
  std::shared_ptr<void>& service = services_[key];
  if (!service) service = make();
  return service;
}

int IsolatePool::Impl::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return exit_requested_ || busy_ == 0 || stopping_; });
  if (exit_requested_) return exit_code_;
  return main_failed_ ? 1 : idle_exit_code_;
}

IsolateThread* IsolatePool::Impl::Target(int target) {
  if (target == kAnyThread) return Pick();
  return target >= 0 && target < size() ? threads_[target].get() : nullptr;
}

IsolateThread* IsolatePool::Impl::Pick() {
  IsolateThread* best = threads_[0].get();
  for (auto& t : threads_) {
    if (t->queued() < best->queued()) best = t.get();
  }
  return best;
}

void IsolatePool::Impl::PostTask(int target, std::string fn_source, std::string arg_json,
                                 TaskCallback done) {
  IsolateThread* t = Target(target);
  if (!t) {
    done(Status::BadRequest("no isolate thread " + std::to_string(target)));
    return;
  }
  Job job;
  job.kind = Job::Kind::kTask;
  job.text = std::move(fn_source);
  job.text2 = std::move(arg_json);
  job.done = std::move(done);
  t->Post(std::move(job));
}

void IsolatePool::Impl::PostMessage(int from, int target, std::string json) {
  if (target == kMainThread) {
    if (options_.on_message) options_.on_message(from, json);
    return;
  }
  for (int i = 0; i < size(); ++i) {
    if (target == i || (target == kAllThreads && i != from)) {
      Job job;
      job.kind = Job::Kind::kMessage;
      job.text = json;
      job.from = from;
      threads_[i]->Post(std::move(job));
    }
  }
}

void IsolatePool::Impl::MarkBusy() {
  std::lock_guard<std::mutex> lock(mu_);
  ++busy_;
}

void IsolatePool::Impl::MarkIdle() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--busy_ == 0) cv_.notify_all();
}

void IsolatePool::Impl::RequestExit(int code) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!exit_requested_) {
    exit_requested_ = true;
    exit_code_ = code;
  }
  cv_.notify_all();
}

void IsolatePool::Impl::NoteExitCode(int code) {
  std::lock_guard<std::mutex> lock(mu_);
  if (code != 0) idle_exit_code_ = code;
}

void IsolatePool::Impl::NoteMainFailure() {
  std::lock_guard<std::mutex> lock(mu_);
  main_failed_ = true;
}

void IsolatePool::Impl::Report(int thread, const std::string& text) {
  if (options_.on_error) {
    options_.on_error(thread, text);
    return;
  }
  std::string line = options_.threads > 1 ? "[thread " + std::to_string(thread) + "] " + text : text;
  if (line.empty() || line.back() != '\n') line += '\n';
  std::lock_guard<std::mutex> lock(report_mu_);
  fwrite(line.data(), 1, line.size(), stderr);
  fflush(stderr);
}

////////////////////////////////////////////////////////////////////////////////
// IsolatePool

IsolatePool::IsolatePool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

IsolatePool::~IsolatePool() { Shutdown(); }

Result<std::unique_ptr<IsolatePool>> IsolatePool::Start(const PoolOptions& options) {
  auto impl = std::make_unique<Impl>(options);
  Status s = impl->Start();
  if (!s.ok()) return s;
  return std::unique_ptr<IsolatePool>(new IsolatePool(std::move(impl)));
}

int IsolatePool::size() const { return impl_->size(); }

void IsolatePool::RunMain(int thread, const std::string& filename, const std::string& source) {
  // Queued on every thread at once: posted one by one, a thread that started
  // its main script early could message (or give a task to) a thread whose
  // main script was not queued yet, which would then take the message before
  // its script registered a listener, and drop it (threads.js under load).
  std::vector<IsolateThread*> threads;
  std::vector<Job> jobs;
  for (int i = 0; i < impl_->size(); ++i) {
    if (thread != kAllThreads && thread != i) continue;
    Job job;
    job.kind = Job::Kind::kMain;
    job.text = filename;
    job.text2 = source;
    threads.push_back(impl_->thread(i));
    jobs.push_back(std::move(job));
  }
  IsolateThread::PostTogether(threads, std::move(jobs));
}

void IsolatePool::Run(int thread, std::string fn_source, std::string arg_json, TaskCallback done) {
  impl_->PostTask(thread, std::move(fn_source), std::move(arg_json), std::move(done));
}

std::future<Result<std::string>> IsolatePool::Run(int thread, std::string fn_source,
                                                  std::string arg_json) {
  auto promise = std::make_shared<std::promise<Result<std::string>>>();
  auto future = promise->get_future();
  Run(thread, std::move(fn_source), std::move(arg_json),
      [promise](Result<std::string> r) { promise->set_value(std::move(r)); });
  return future;
}

void IsolatePool::Eval(int thread, std::string source, TaskCallback done) {
  IsolateThread* t = impl_->Target(thread);
  if (!t) {
    done(Status::BadRequest("no isolate thread " + std::to_string(thread)));
    return;
  }
  Job job;
  job.kind = Job::Kind::kEval;
  job.text = std::move(source);
  job.done = std::move(done);
  t->Post(std::move(job));
}

void IsolatePool::PostMessage(int thread, std::string json) {
  impl_->PostMessage(kMainThread, thread, std::move(json));
}

int IsolatePool::Wait() { return impl_->Wait(); }

void IsolatePool::Shutdown() {
  if (impl_) impl_->Shutdown();
}

}  // namespace settee::js
