// JsRuntime (include/settee/js_runtime.h) over IsolatePool: the public face
// of js/ for embedders, so they never see V8 or libuv headers.
#include "settee/js_runtime.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <mutex>
#include <shared_mutex>

#include "js/isolate_pool.h"
#include "js/view_functions_js.h"

namespace settee {

namespace {

std::string ExecPath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("settee");
}

Status ShutDownError() { return {Status::Code::kInvalidOperation, "the JS runtime is shut down"}; }

class JsRuntimeImpl final : public JsRuntime {
 public:
  explicit JsRuntimeImpl(std::unique_ptr<js::IsolatePool> pool) : pool_(std::move(pool)) {}
  ~JsRuntimeImpl() override { Shutdown(); }

  int threads() const override { return size_; }

  Status RunFile(int thread, const std::string& path) override {
    char buf[PATH_MAX];
    if (path.empty() || !realpath(path.c_str(), buf) || access(buf, R_OK) != 0) {
      return Status::NotFound("cannot read " + path);
    }
    return RunMain(thread, buf, {});
  }

  Status RunSource(int thread, const std::string& name, const std::string& source) override {
    // IsolatePool takes an empty source to mean "read the file".
    return RunMain(thread, name.empty() ? "[string]" : name, source.empty() ? "\n" : source);
  }

  Result<std::string> Call(int thread, const std::string& fn_source,
                           const std::string& arg_json) override {
    std::future<Result<std::string>> f;
    {
      std::shared_lock lock(mu_);
      if (!pool_) return ShutDownError();
      f = pool_->Run(thread, fn_source, arg_json);
    }
    return f.get();  // Shutdown() fails queued tasks, so this always returns
  }

  Result<std::string> Eval(int thread, const std::string& source) override {
    auto promise = std::make_shared<std::promise<Result<std::string>>>();
    auto f = promise->get_future();
    {
      std::shared_lock lock(mu_);
      if (!pool_) return ShutDownError();
      pool_->Eval(thread, source, [promise](Result<std::string> r) { promise->set_value(std::move(r)); });
    }
    return f.get();
  }

  int Wait() override {
    std::shared_lock lock(mu_);
    return pool_ ? pool_->Wait() : -1;
  }

  void Shutdown() override {
    // Terminate first, under the shared lock only, so a Wait() holding it
    // returns; then drop the pool.
    std::lock_guard<std::mutex> one_at_a_time(shutdown_mu_);
    std::unique_ptr<js::IsolatePool> pool;
    {
      std::shared_lock lock(mu_);
      if (pool_) pool_->Shutdown();
    }
    std::unique_lock lock(mu_);
    pool = std::move(pool_);
  }

 private:
  Status RunMain(int thread, const std::string& filename, const std::string& source) {
    std::shared_lock lock(mu_);
    if (!pool_) return ShutDownError();
    if (thread != kAllThreads && (thread < 0 || thread >= size_)) {
      return Status::BadRequest("no isolate thread " + std::to_string(thread));
    }
    pool_->RunMain(thread, filename, source);
    return Status::OK();
  }

  std::mutex shutdown_mu_;  // serializes Shutdown()
  std::shared_mutex mu_;
  std::unique_ptr<js::IsolatePool> pool_;  // guarded by mu_; null once shut down
  const int size_ = pool_->size();
};

}  // namespace

Result<std::unique_ptr<JsRuntime>> JsRuntime::Start(Store* store, const JsRuntimeOptions& options) {
  static_assert(kMaxThreads == js::IsolatePool::kMaxThreads);
  static_assert(kAllThreads == js::IsolatePool::kAllThreads);
  static_assert(kAnyThread == js::IsolatePool::kAnyThread);
  js::PoolOptions p;
  p.threads = options.threads;
  p.store = store;
  p.limits.max_heap_mb = options.max_heap_mb;
  p.limits.timeout_ms = options.timeout_ms;
  p.keep = options.keep;
  p.on_error = options.on_error;
  p.on_message = options.on_message;
  // Without JIT there is no WebAssembly; saying so keeps V8 from warning.
  p.v8_flags = options.jitless ? "--jitless --no-expose-wasm " + options.v8_flags : options.v8_flags;
  p.argv.push_back(ExecPath());
  p.argv.push_back("[embedded]");
  p.argv.insert(p.argv.end(), options.args.begin(), options.args.end());
  auto pool = js::IsolatePool::Start(p);
  if (!pool.ok()) return pool.status();
  if (store != nullptr) js::InstallPoolValidateFunctions(store, p.limits);
  return std::unique_ptr<JsRuntime>(new JsRuntimeImpl(std::move(*pool)));
}

bool JsRuntimeAvailable() { return true; }

}  // namespace settee
