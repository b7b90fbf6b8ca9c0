// The C API's JS runtime calls (include/settee/settee.h, "JavaScript") over
// settee::JsRuntime (include/settee/js_runtime.h). A build without the JS
// runtime (SETTEE_WITH_JS=OFF) still has every call: they answer
// SETTEE_ERR_UNSUPPORTED.
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "capi/c_api_internal.h"

using settee::Status;
using namespace settee_c;  // NOLINT: the C functions below are this module's surface

#if SETTEE_WITH_JS
#include <algorithm>
#include <thread>

#include "js/view_functions_js.h"
#include "storage/validate_functions.h"

namespace settee_c {

std::shared_ptr<settee::views::ViewFunctions> MakeViewFunctions(settee::Store* store,
                                                               const settee_store_options& options) {
  settee::js::PoolOptions pool;
  pool.threads = options.view_threads > 0
                     ? options.view_threads
                     : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  // CouchDB's os_process_timeout: a map function that loops ends the query
  // instead of hanging it.
  pool.limits.timeout_ms = options.view_timeout_ms ? options.view_timeout_ms : 5000;
  if (options.view_jitless) pool.v8_flags = "--jitless --no-expose-wasm";
  auto functions = std::make_shared<settee::js::PoolViewFunctions>(pool);
  settee::validation::SetValidateFunctions(*store, functions);
  return functions;
}

}  // namespace settee_c

namespace {

// The JsRuntime of a handle, if it and its store are open.
std::shared_ptr<settee::JsRuntime> RuntimeOf(settee_runtime* h) {
  StoreLock lock(h->state.get());
  return h->state->store ? h->rt : nullptr;
}

}  // namespace

#else  // !SETTEE_WITH_JS

namespace settee_c {

namespace {

// Design-document JavaScript in a build without it: settee_db_query turns
// this kInvalidOperation into SETTEE_ERR_UNSUPPORTED.
class NoJsViewFunctions final : public settee::views::ViewFunctions {
 public:
  Status Map(const settee::views::MapCode&, const std::vector<std::string>&, std::string*) override {
    return Unsupported();
  }
  Status Reduce(const settee::views::MapCode&, const std::string&, std::string_view,
                std::string*) override {
    return Unsupported();
  }

 private:
  static Status Unsupported() {
    return Status(Status::Code::kInvalidOperation,
                  "JavaScript views need the JS runtime, which this build left out (SETTEE_WITH_JS=OFF)");
  }
};

}  // namespace

std::shared_ptr<settee::views::ViewFunctions> MakeViewFunctions(settee::Store*,
                                                               const settee_store_options&) {
  return std::make_shared<NoJsViewFunctions>();
}

}  // namespace settee_c

#endif  // SETTEE_WITH_JS

extern "C" {

//////// JavaScript

void settee_runtime_options_init(settee_runtime_options* options) {
  if (!options) return;
  *options = settee_runtime_options{};
  options->threads = 1;
}

int settee_has_js(void) { return settee::JsRuntimeAvailable() ? 1 : 0; }

#if SETTEE_WITH_JS

settee_code settee_runtime_start(settee_store* store, const settee_runtime_options* options,
                                 settee_runtime** out, settee_error* err) {
  if (!out) return InvalidArgument(err, "out is NULL");
  *out = nullptr;
  if (!store) return InvalidArgument(err, "store is NULL");
  settee::JsRuntimeOptions o;
  if (options) {
    if (options->threads < 0 || options->threads > settee::JsRuntime::kMaxThreads) {
      return InvalidArgument(err, "threads must be 1..64");
    }
    if (options->threads) o.threads = options->threads;
    o.max_heap_mb = options->max_heap_mb;
    o.timeout_ms = options->timeout_ms;
    o.jitless = options->jitless != 0;
    if (options->v8_flags) {
      SETTEE_C_CHECK(Utf8Arg(options->v8_flags, "options->v8_flags", err));
      o.v8_flags = options->v8_flags;
    }
    const void* state = store->state.get();
    if (settee_report_fn fn = options->on_error) {
      void* ctx = options->on_error_context;
      o.on_error = [fn, ctx, state](int thread, const std::string& text) {
        InCallback in_callback(state);
        fn(ctx, thread, text.c_str());
      };
    }
    if (settee_report_fn fn = options->on_message) {
      void* ctx = options->on_message_context;
      o.on_message = [fn, ctx, state](int thread, const std::string& json) {
        InCallback in_callback(state);
        fn(ctx, thread, json.c_str());
      };
    }
  }
  return Guarded(err, [&] {
    std::shared_ptr<StoreState> state = store->state;
    StoreLock lock(state.get());
    if (!state->store || state->closing) return Fail(err, SETTEE_ERR_CLOSED, "the store is closed");
    auto rt = settee::JsRuntime::Start(state->store.get(), o);
    if (!rt.ok()) return Fail(err, rt.status());
    auto h = std::make_unique<settee_runtime>();
    h->state = state;
    h->rt = std::move(*rt);
    std::lock_guard<std::mutex> registry(state->registry_mu);
    state->runtimes.insert(h.get());
    *out = h.release();
    return Ok(err);
  });
}

namespace {

// *out = the runtime to call, or the error why there is none.
settee_code OpenRuntime(settee_runtime* rt, std::shared_ptr<settee::JsRuntime>* out,
                        settee_error* err) {
  if (!rt) return InvalidArgument(err, "rt is NULL");
  *out = RuntimeOf(rt);
  if (!*out) return Fail(err, SETTEE_ERR_CLOSED, "the runtime is closed");
  return SETTEE_OK;
}

// kInvalidOperation from a JsRuntime means it was shut down under us.
settee_code FailJs(settee_error* err, const Status& s) {
  if (s.code() == Status::Code::kInvalidOperation) return Fail(err, SETTEE_ERR_CLOSED, s.reason());
  return Fail(err, s);
}

}  // namespace

settee_code settee_runtime_run_file(settee_runtime* rt, int thread, const char* path,
                                    settee_error* err) {
  std::shared_ptr<settee::JsRuntime> r;
  SETTEE_C_CHECK(OpenRuntime(rt, &r, err));
  SETTEE_C_CHECK(Utf8Arg(path, "path", err));
  return Guarded(err, [&] {
    Status s = r->RunFile(thread, path);
    return s.ok() ? Ok(err) : FailJs(err, s);
  });
}

settee_code settee_runtime_run_string(settee_runtime* rt, int thread, const char* source,
                                      const char* name, settee_error* err) {
  std::shared_ptr<settee::JsRuntime> r;
  SETTEE_C_CHECK(OpenRuntime(rt, &r, err));
  SETTEE_C_CHECK(Utf8Arg(source, "source", err));
  SETTEE_C_CHECK(OptionalUtf8Arg(name, "name", err));
  return Guarded(err, [&] {
    Status s = r->RunSource(thread, name ? name : "[string]", source);
    return s.ok() ? Ok(err) : FailJs(err, s);
  });
}

settee_code settee_runtime_wait(settee_runtime* rt, int* exit_code, settee_error* err) {
  std::shared_ptr<settee::JsRuntime> r;
  SETTEE_C_CHECK(OpenRuntime(rt, &r, err));
  return Guarded(err, [&] {
    int code = r->Wait();
    if (code < 0) return Fail(err, SETTEE_ERR_CLOSED, "the runtime is closed");
    if (exit_code) *exit_code = code;
    return Ok(err);
  });
}

settee_code settee_runtime_call(settee_runtime* rt, int thread, const char* fn_source,
                                const char* arg_json, char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  std::shared_ptr<settee::JsRuntime> r;
  SETTEE_C_CHECK(OpenRuntime(rt, &r, err));
  SETTEE_C_CHECK(Utf8Arg(fn_source, "fn_source", err));
  SETTEE_C_CHECK(OptionalUtf8Arg(arg_json, "arg_json", err));
  return Guarded(err, [&] {
    auto v = r->Call(thread, fn_source, arg_json ? arg_json : "null");
    if (!v.ok()) return FailJs(err, v.status());
    Give(json_out, *v);
    return Ok(err);
  });
}

settee_code settee_runtime_eval(settee_runtime* rt, int thread, const char* source,
                                char** text_out, settee_error* err) {
  if (text_out) *text_out = nullptr;
  std::shared_ptr<settee::JsRuntime> r;
  SETTEE_C_CHECK(OpenRuntime(rt, &r, err));
  SETTEE_C_CHECK(Utf8Arg(source, "source", err));
  return Guarded(err, [&] {
    auto v = r->Eval(thread, source);
    if (!v.ok()) return FailJs(err, v.status());
    Give(text_out, *v);
    return Ok(err);
  });
}

settee_code settee_runtime_close(settee_runtime* rt, settee_error* err) {
  if (!rt) return InvalidArgument(err, "rt is NULL");
  if (InCallbackOf(rt->state.get()) || t_in_listener) {
    return Fail(err, SETTEE_ERR_INVALID_OPERATION, "a runtime cannot be closed from its store's callbacks");
  }
  return Guarded(err, [&] {
    std::shared_ptr<settee::JsRuntime> r;
    {
      std::unique_lock lock(rt->state->mu);
      r = std::move(rt->rt);
    }
    // Outside the mutex: a callback on an isolate thread may be waiting for it.
    if (r) r->Shutdown();
    return Ok(err);
  });
}

void settee_runtime_free(settee_runtime* rt) {
  if (!rt) return;
  if (settee_runtime_close(rt, nullptr) != SETTEE_OK) return;  // see settee_store_free
  std::shared_ptr<StoreState> state = rt->state;
  StoreLock lock(state.get());
  {
    std::lock_guard<std::mutex> registry(state->registry_mu);
    state->runtimes.erase(rt);
  }
  delete rt;
}

#else  // !SETTEE_WITH_JS: the calls exist so that one header fits every build.

namespace {
settee_code NoJs(settee_error* err) {
  return Fail(err, SETTEE_ERR_UNSUPPORTED, "settee was built without the JS runtime (SETTEE_WITH_JS=OFF)");
}
}  // namespace

settee_code settee_runtime_start(settee_store*, const settee_runtime_options*,
                                 settee_runtime** out, settee_error* err) {
  if (out) *out = nullptr;
  return NoJs(err);
}
settee_code settee_runtime_run_file(settee_runtime*, int, const char*, settee_error* err) {
  return NoJs(err);
}
settee_code settee_runtime_run_string(settee_runtime*, int, const char*, const char*,
                                      settee_error* err) {
  return NoJs(err);
}
settee_code settee_runtime_wait(settee_runtime*, int*, settee_error* err) { return NoJs(err); }
settee_code settee_runtime_call(settee_runtime*, int, const char*, const char*, char** json_out,
                                settee_error* err) {
  if (json_out) *json_out = nullptr;
  return NoJs(err);
}
settee_code settee_runtime_eval(settee_runtime*, int, const char*, char** text_out,
                                settee_error* err) {
  if (text_out) *text_out = nullptr;
  return NoJs(err);
}
settee_code settee_runtime_close(settee_runtime*, settee_error* err) { return NoJs(err); }
void settee_runtime_free(settee_runtime*) {}

#endif  // SETTEE_WITH_JS

}  // extern "C"
