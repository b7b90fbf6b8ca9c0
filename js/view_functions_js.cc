#include "js/view_functions_js.h"

#include <algorithm>
#include <condition_variable>
#include <future>
#include <map>

#include "util/json.h"

namespace settee::js {

namespace {

// The tasks: js/prelude/views.js behind the settee object. They return JSON
// text (JSON.stringify: an emitted NaN is null, as CouchDB's JSON encoder
// has it) so that the task result is never refused; the map task's text
// reaches the host as it is (the task's JSON result), the others' as a
// JSON string (Unwrap).
constexpr const char* kMapTask = "(a) => settee._views.mapText(a)";
constexpr const char* kReduceTask = "(a) => JSON.stringify(settee._views.reduce(a))";
// The fewest documents a map task gets (a task costs a JSON round trip),
// and the most (a share's documents and rows are in memory at once).
constexpr size_t kMinShare = 256;
constexpr size_t kMaxShare = 2048;
// Puts a share chain on its isolate thread (MapShares).
constexpr const char* kStartTask = "() => null";
constexpr const char* kValidateTask = "(a) => JSON.stringify(settee._views.validate(a))";

// A JS error's stack text as a Status with CouchDB's kind where the text
// names one.
Status FromJsError(const Status& s) {
  if (s.code() != Status::Code::kInternal) return s;
  std::string first = s.reason().substr(0, s.reason().find('\n'));
  if (first.find("Expression does not eval to a function") != std::string::npos) {
    return Status(Status::Code::kCompilationError, first.substr(first.find("Expression")));
  }
  if (auto at = first.find("Reduce output must shrink"); at != std::string::npos) {
    return Status(Status::Code::kReduceOverflow, first.substr(at));
  }
  return Status::Internal(first);
}

}  // namespace

std::string MapCodeJson(const views::MapCode& code) {
  std::string out = "{\"language\":";
  json::AppendQuoted(&out, code.language);
  out += ",\"maps\":";
  json::AppendStringArray(&out, code.maps);
  out += ",\"ddoc\":";
  json::AppendQuoted(&out, code.ddoc);
  out += '}';
  return out;
}

PoolViewFunctions::PoolViewFunctions(PoolOptions options) : options_(std::move(options)) {}

PoolViewFunctions::~PoolViewFunctions() {
  if (pool_) pool_->Shutdown();
}

Result<IsolatePool*> PoolViewFunctions::Pool() {
  std::lock_guard<std::mutex> g(mu_);
  if (pool_) return pool_.get();
  if (!start_error_.ok()) return start_error_;
  auto p = IsolatePool::Start(options_);
  if (!p.ok()) {
    start_error_ = p.status();
    return start_error_;
  }
  pool_ = std::move(p).value();
  return pool_.get();
}

Status PoolViewFunctions::Unwrap(Result<std::string> r, std::string* out) {
  if (!r.ok()) return FromJsError(r.status());
  json::Document d;
  Status s = json::Parse(*r, &d);
  if (!s.ok()) return s;
  if (!d.IsString()) return Status::Internal("view task did not return JSON text");
  out->assign(d.GetString(), d.GetStringLength());
  return Status::OK();
}

Status PoolViewFunctions::Map(const views::MapCode& code, const std::vector<std::string>& docs,
                              std::string* out) {
  std::mutex mu;
  std::map<size_t, std::string> parts;  // by first document
  Status s = MapShares(
      code, docs.size(),
      [&](size_t from, size_t to, std::vector<std::string>* share) {
        share->assign(docs.begin() + static_cast<ptrdiff_t>(from), docs.begin() + static_cast<ptrdiff_t>(to));
        return Status::OK();
      },
      [&](size_t from, size_t, std::string_view json) {
        std::lock_guard<std::mutex> g(mu);
        parts[from] = std::string(json);
        return Status::OK();
      });
  if (!s.ok()) return s;
  out->clear();
  out->push_back('[');
  for (const auto& [from, part] : parts) {
    // Splice the share's array into the whole.
    if (part.size() > 2) {
      if (out->size() > 1) out->push_back(',');
      out->append(part, 1, part.size() - 2);
    }
  }
  out->push_back(']');
  return Status::OK();
}

Status PoolViewFunctions::MapShares(const views::MapCode& code, size_t n, const FetchFn& fetch,
                                    const ShareFn& each) {
  auto pool = Pool();
  if (!pool.ok()) return pool.status();
  if (n == 0) return Status::OK();
  // Every thread runs a chain of shares: it takes the next share as it
  // finishes its last one (work stealing from one counter: a thread that
  // maps, reads or writes slower takes fewer), reads its documents, maps
  // them and hands the result to `each`, all on that isolate thread, so the
  // caller only waits. Shares shrink as the work runs out (guided
  // scheduling: a share is the remaining units over twice the threads, at
  // most kMaxShare, at least kMinShare), so the threads end together and
  // hand-offs stay few.
  const size_t threads = static_cast<size_t>((*pool)->size());
  struct State {
    IsolatePool* pool;
    const FetchFn* fetch;
    const ShareFn* each;
    std::string code_json;
    size_t n = 0;
    size_t threads = 1;
    std::mutex mu;
    std::condition_variable cv;
    size_t next = 0;     // the next share's first unit; GUARDED_BY(mu)
    size_t running = 0;  // chains not yet ended; GUARDED_BY(mu)
    Status first_error;  // GUARDED_BY(mu)

    // Records `s` (if an error) and takes the next share into [*from, *to);
    // false when there is none (or an error stops the update), and the
    // calling chain ends.
    bool Next(const Status& s, size_t* from, size_t* to) {
      std::lock_guard<std::mutex> g(mu);
      if (!s.ok() && first_error.ok()) first_error = s;
      if (!first_error.ok() || next >= n) {
        if (--running == 0) cv.notify_all();
        return false;
      }
      *from = next;
      next += views::GuidedShareSize(n - next, threads, kMinShare, kMaxShare);
      *to = next;
      return true;
    }
    // Runs shares on `thread` (an isolate thread, or the caller for the
    // first) until none is left; `s` is the last share's outcome.
    void Chain(int thread, Status s) {
      size_t from = 0, to = 0;
      while (Next(s, &from, &to)) {
        std::vector<std::string> docs;
        s = (*fetch)(from, to, &docs);
        if (!s.ok()) continue;
        if (docs.empty()) {
          // Deleted and design documents only: nothing to map.
          s = (*each)(from, to, "[]");
          continue;
        }
        std::string arg = "{\"code\":" + code_json + ",\"docs\":[";
        for (size_t d = 0; d < docs.size(); ++d) {
          if (d) arg += ',';
          arg += docs[d];
        }
        arg += "]}";
        docs = {};
        pool->Run(thread, kMapTask, std::move(arg), [this, thread, from, to](Result<std::string> r) {
          Chain(thread, r.ok() ? (*each)(from, to, *r) : FromJsError(r.status()));
        });
        return;
      }
    }
  } state;
  state.pool = *pool;
  state.fetch = &fetch;
  state.each = &each;
  state.code_json = MapCodeJson(code);
  state.n = n;
  state.threads = threads;
  // A chain per thread that will have a share; each starts with an empty
  // task so that its first share is read on the isolate thread too.
  const size_t chains = std::min(threads, (n + kMinShare - 1) / kMinShare);
  state.running = chains;
  for (size_t t = 0; t < chains; ++t) {
    state.pool->Run(static_cast<int>(t), kStartTask, "null", [&state, t](Result<std::string> r) {
      state.Chain(static_cast<int>(t), r.ok() ? Status::OK() : FromJsError(r.status()));
    });
  }
  std::unique_lock<std::mutex> g(state.mu);
  state.cv.wait(g, [&] { return state.running == 0; });
  return state.first_error;
}

Status PoolViewFunctions::Reduce(const views::MapCode& code, const std::string& source,
                                 std::string_view calls_json, std::string* out) {
  auto pool = Pool();
  if (!pool.ok()) return pool.status();
  std::string arg = "{\"code\":" + MapCodeJson(code) + ",\"source\":";
  json::AppendQuoted(&arg, source);
  arg += ",\"calls\":";
  arg.append(calls_json);
  arg += '}';
  return Unwrap((*pool)->Run(IsolatePool::kAnyThread, kReduceTask, std::move(arg)).get(), out);
}

Status PoolViewFunctions::Validate(const validation::ValidatorSet& set,
                                   const std::vector<validation::ValidateCall>& calls,
                                   std::string_view user_ctx, std::string_view sec_obj,
                                   std::vector<Status>* results) {
  auto pool = Pool();
  if (!pool.ok()) return pool.status();
  std::string arg = "{\"set\":{\"signature\":";
  json::AppendQuoted(&arg, set.signature);
  arg += ",\"validators\":[";
  for (size_t i = 0; i < set.validators.size(); ++i) {
    if (i) arg += ',';
    arg += "{\"source\":";
    json::AppendQuoted(&arg, set.validators[i].source);
    arg += ",\"ddoc\":";
    json::AppendQuoted(&arg, set.validators[i].ddoc);
    arg += '}';
  }
  arg += "]},\"calls\":[";
  for (size_t i = 0; i < calls.size(); ++i) {
    if (i) arg += ',';
    arg += '[';
    arg += calls[i].new_doc;
    arg += ',';
    arg += calls[i].old_doc;
    arg += ']';
  }
  arg += "],\"userCtx\":";
  arg.append(user_ctx);
  arg += ",\"secObj\":";
  arg.append(sec_obj);
  arg += '}';
  std::string out;
  Status s = Unwrap((*pool)->Run(IsolatePool::kAnyThread, kValidateTask, std::move(arg)).get(), &out);
  if (!s.ok()) return s;
  json::Document d;
  s = json::Parse(out, &d);
  if (!s.ok()) return s;
  if (!d.IsArray() || d.Size() != calls.size()) return Status::Internal("validate task gave no outcome per document");
  results->clear();
  for (const auto& r : d.GetArray()) {
    if (r.IsNull()) {
      results->push_back(Status::OK());
      continue;
    }
    auto message = [&](const char* key) {
      auto m = r.FindMember(key);
      return m != r.MemberEnd() && m->value.IsString() ? std::string(json::View(m->value)) : std::string();
    };
    if (r.IsObject() && r.HasMember("forbidden")) {
      results->push_back(Status::Forbidden(message("forbidden")));
    } else if (r.IsObject() && r.HasMember("unauthorized")) {
      results->push_back(Status::Unauthorized(message("unauthorized")));
    } else {
      results->push_back(Status::Internal(r.IsObject() ? message("error") : "validate_doc_update threw"));
    }
  }
  return Status::OK();
}

void InstallPoolValidateFunctions(Store* store, const IsolateLimits& limits) {
  PoolOptions options;
  options.threads = 1;
  options.limits = limits;
  validation::SetValidateFunctions(*store, std::make_shared<PoolViewFunctions>(options));
}

}  // namespace settee::js
