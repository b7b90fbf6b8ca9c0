#include "js/view_functions_js.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <utility>

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
// MapShares with helper threads: how many shares they read ahead for the
// mapping thread (and how many bytes of map-task arguments at most, though
// always one share), and how many of its mapped shares may wait per helper
// before it hands on its own: a hand-on on the mapper holds up the next map,
// and what waits at the end is handed on by every thread.
constexpr size_t kAhead = 16;
constexpr size_t kAheadBytes = 32 << 20;
constexpr size_t kBehind = 3;
// A helper with nothing to read or hand on maps a small share itself only
// when mapping a unit has cost the mapper this many times what reading and
// handing on a unit costs a helper (a map function that does much more
// than emit): otherwise the mapper is not what the build waits for, and a
// helper's map, on an isolate that has not optimized the new function, is
// several times slower than the mapper's (views_bench: 256 documents in
// 1-6 ms against 0.6 ms) and holds up the hand-ons it would have done.
constexpr double kHelperMapsAt = 2.0;
// Puts a share chain on its isolate thread (MapShares).
constexpr const char* kStartTask = "() => null";
constexpr const char* kValidateTask = "(a) => JSON.stringify(settee._views.validate(a))";
constexpr const char* kCompileTask = "(a) => JSON.stringify(settee._views.compile(a))";

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

Status PoolViewFunctions::RunOnAnyThread(const char* task, std::string arg, std::string* out) {
  auto pool = Pool();
  if (!pool.ok()) return pool.status();
  return Unwrap((*pool)->Run(IsolatePool::kAnyThread, task, std::move(arg)).get(), out);
}

Status PoolViewFunctions::RunForJson(const char* task, std::string arg, json::Document* out) {
  std::string text;
  Status s = RunOnAnyThread(task, std::move(arg), &text);
  if (!s.ok()) return s;
  return json::Parse(text, out);
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
  // Thread 0 maps: it takes the next share (read ahead for it, or read
  // now), maps it, and queues the results for a helper (or hands them on
  // itself when the helpers are behind). The other threads help: they
  // read shares ahead for the mapper and run `each` for the shares it
  // mapped. A helper with nothing to read or hand on waits for the
  // mapper's next results (parks: its chain ends and the mapper restarts
  // it), unless the mapper is clearly what the update waits for (by what
  // a unit has cost each side so far: MapperBound); only then does it map
  // a small share itself. Every isolate that runs a new map function over a few
  // thousand documents has V8 optimize it (TurboFan, ~2.5 ms of a V8
  // helper thread's CPU here, and installing the code flips its pages'
  // write protection twice, each flip a TLB shootdown that waits on the
  // other cores): with the mapping mostly on one isolate, a build usually
  // pays that once, as on one thread, instead of once per thread. Shares
  // are taken from one counter and shrink as the work runs out (guided
  // scheduling: the remaining units over twice the threads, at most
  // kMaxShare, at least kMinShare), so the threads end together. Every
  // step runs on an isolate thread: the caller only waits. On one thread
  // the mapper reads, maps and hands on each share itself.
  const size_t threads = static_cast<size_t>((*pool)->size());
  using Clock = std::chrono::steady_clock;
  // A share of the units; once read, its documents as the map task's
  // argument (built by the thread that reads it: read ahead, a helper).
  struct Share {
    size_t from = 0, to = 0;
    bool read = false;
    std::string arg;  // empty when it has nothing to map
  };
  struct Mapped {
    size_t from = 0, to = 0;
    std::string json;
  };
  // What some work has cost per unit, over the shares noted so far.
  struct Cost {
    double ms = 0;
    size_t units = 0;
    void Note(Clock::time_point from, size_t n) {
      ms += std::chrono::duration<double, std::milli>(Clock::now() - from).count();
      units += n;
    }
    bool known() const { return units > 0; }
    double PerUnit() const { return ms / static_cast<double>(units); }
  };
  struct State {
    IsolatePool* pool;
    const FetchFn* fetch;
    const ShareFn* each;
    std::string code_json;
    size_t n = 0;
    size_t threads = 1;
    std::mutex mu;
    std::condition_variable cv;
    size_t next = 0;           // the next share's first unit; GUARDED_BY(mu)
    size_t running = 0;        // chains not yet ended; GUARDED_BY(mu)
    size_t helpers = 0;        // helper chains not yet ended; GUARDED_BY(mu)
    bool mapper_took = false;  // the mapper took units before; GUARDED_BY(mu)
    bool read_any = false;     // a helper read ahead before; GUARDED_BY(mu)
    size_t maps = 0;           // shares the mapper mapped; GUARDED_BY(mu)
    std::deque<Share> ahead;   // read, not yet mapped; GUARDED_BY(mu)
    size_t ahead_bytes = 0;    // of their map tasks' arguments; GUARDED_BY(mu)
    std::deque<Mapped> mapped;  // mapped by thread 0, for a helper's `each`; GUARDED_BY(mu)
    std::vector<int> parked;   // helper threads waiting for work; GUARDED_BY(mu)
    // What a unit costs: the mapper's map (from its read to its results),
    // the helpers' reads and hand-ons. GUARDED_BY(mu)
    Cost map_cost, read_cost, hand_on_cost;
    Status first_error;        // GUARDED_BY(mu)

    // Whether the mapper is what the update waits for, by far: a helper
    // with nothing else to do then maps too. REQUIRES: mu.
    bool MapperBound() const {
      if (!map_cost.known() || !read_cost.known() || !hand_on_cost.known()) return false;
      return map_cost.PerUnit() > kHelperMapsAt * (read_cost.PerUnit() + hand_on_cost.PerUnit());
    }
    // The parked helpers, to restart (there is work for them, or the
    // mapper has ended). REQUIRES: mu.
    std::vector<int> TakeParked() { return std::exchange(parked, {}); }
    // Restarts the chains of `helpers_to_wake`, taken by TakeParked. Not
    // under mu: a shut-down pool calls a task's callback at once, and a
    // restarted chain that ends may end the call (the state is gone once
    // the last chain ends, so nothing of it is used after the last post).
    static void Wake(State* st, const std::vector<int>& helpers_to_wake) {
      if (helpers_to_wake.empty()) return;
      IsolatePool* const p = st->pool;
      for (int t : helpers_to_wake) {
        p->Run(t, kStartTask, "null", [st, t](Result<std::string> r) {
          st->Helper(t, r.ok() ? Status::OK() : FromJsError(r.status()));
        });
      }
    }

    // Takes the next share's units; a small one when `small`. REQUIRES: mu,
    // next < n.
    void TakeUnits(Share* s, bool small) {
      s->from = next;
      next += small ? std::min(n - next, kMinShare) : views::GuidedShareSize(n - next, threads, kMinShare, kMaxShare);
      s->to = next;
    }
    // Ends the calling chain. REQUIRES: mu.
    void End(bool helper) {
      if (helper) --helpers;
      if (--running == 0) cv.notify_all();
    }
    // Reads `s`'s documents into its map task's argument.
    Status Read(Share& s) {
      std::vector<std::string> docs;
      Status fs = (*fetch)(s.from, s.to, &docs);
      if (!fs.ok()) return fs;
      s.read = true;
      if (docs.empty()) return Status::OK();
      s.arg = "{\"code\":" + code_json + ",\"docs\":[";
      size_t size = s.arg.size() + 2 + docs.size();
      for (const auto& d : docs) size += d.size();
      s.arg.reserve(size);
      for (size_t d = 0; d < docs.size(); ++d) {
        if (d) s.arg += ',';
        s.arg += docs[d];
      }
      s.arg += "]}";
      return Status::OK();
    }
    // Reads `s` unless it was read ahead and starts its map on `thread`;
    // `done` gets the results there. Returns false when there is nothing
    // to start, with *now the share's outcome: the read's error, or its
    // hand-off without running any code when it has no documents to map
    // (deleted and design documents only).
    bool StartMap(int thread, Share& s, std::function<void(size_t, size_t, Result<std::string>)> done,
                  Status* now) {
      if (!s.read) {
        *now = Read(s);
        if (!now->ok()) return false;
      }
      if (s.arg.empty()) {
        *now = (*each)(s.from, s.to, "[]");
        return false;
      }
      pool->Run(thread, kMapTask, std::move(s.arg),
                [from = s.from, to = s.to, done = std::move(done)](Result<std::string> r) {
                  if (r.ok()) return done(from, to, std::move(r));
                  done(from, to, FromJsError(r.status()));
                });
      return true;
    }
    // The mapper's chain on thread 0; `s` is its last step's outcome.
    void Mapper(Status s) {
      for (;;) {
        Share share;
        Mapped help;
        std::vector<int> wake;
        bool end = false;
        {
          std::lock_guard<std::mutex> g(mu);
          if (!s.ok() && first_error.ok()) first_error = s;
          if (!first_error.ok()) {
            end = true;
          } else if (!ahead.empty()) {
            share = std::move(ahead.front());
            ahead.pop_front();
            ahead_bytes -= share.arg.size();
            // Room to read ahead again.
            wake = TakeParked();
          } else if (next < n) {
            // With helpers, the mapper's first share is small, so that its
            // results reach them soon.
            TakeUnits(&share, !mapper_took && helpers > 0);
            mapper_took = true;
          } else if (!mapped.empty()) {
            // Nothing left to map: hand on what the helpers have not.
            help = std::move(mapped.front());
            mapped.pop_front();
          } else {
            end = true;
          }
          if (end) {
            // Parked helpers end too (they keep the call alive until then).
            wake = TakeParked();
            End(false);
          }
        }
        Wake(this, wake);
        if (end) return;
        if (share.to == 0) {
          s = (*each)(help.from, help.to, help.json);
          continue;
        }
        const auto start = Clock::now();
        const bool started = StartMap(0, share, [this, start](size_t from, size_t to, Result<std::string> r) {
          if (!r.ok()) return Mapper(r.status());
          bool queued = false;
          std::vector<int> wake;
          {
            std::lock_guard<std::mutex> g(mu);
            // The first share runs cold (the new map function compiled,
            // and interpreted) and was read by the mapper: not a measure.
            if (maps++ > 0) map_cost.Note(start, to - from);
            // A helper takes it, unless none is left or they are behind
            // (kBehind waiting shares each): then the mapper hands it on.
            if (first_error.ok() && helpers > 0 && mapped.size() < kBehind * helpers) {
              mapped.push_back({from, to, std::move(*r)});
              queued = true;
              wake = TakeParked();
            }
          }
          Wake(this, wake);
          Mapper(queued ? Status::OK() : (*each)(from, to, *r));
        }, &s);
        if (started) return;
      }
    }
    // A helper's chain on `thread`; `s` is its last step's outcome.
    void Helper(int thread, Status s) {
      for (;;) {
        Share share;
        Mapped mapped_share;
        bool read_ahead = false;
        {
          std::lock_guard<std::mutex> g(mu);
          if (!s.ok() && first_error.ok()) first_error = s;
          if (!first_error.ok()) return End(true);
          // The mapper never waits for a read: a share ahead for it comes
          // first, then a hand-on, then more shares ahead.
          if (next < n && ahead.empty()) {
            // The first share read ahead is small too, so that the mapper
            // soon knows what a unit costs it warm (MapperBound).
            TakeUnits(&share, !read_any);
            read_any = true;
            read_ahead = true;
          } else if (!mapped.empty()) {
            mapped_share = std::move(mapped.front());
            mapped.pop_front();
          } else if (next < n && ahead.size() < kAhead && ahead_bytes < kAheadBytes) {
            TakeUnits(&share, false);
            read_ahead = true;
          } else if (running > helpers && !MapperBound()) {
            // The mapper is alive and keeps up: wait for its results (it
            // wakes this chain) rather than map at an unoptimized pace.
            parked.push_back(thread);
            return;
          } else if (next < n) {
            // Nothing to read or hand on, and the mapper is behind: map a
            // small share, so that this isolate runs the map function too
            // few times for V8 to compile it.
            TakeUnits(&share, true);
          } else if (!ahead.empty()) {
            // The last share read, the smallest: the mapper takes the
            // others from the front.
            share = std::move(ahead.back());
            ahead.pop_back();
            ahead_bytes -= share.arg.size();
          } else {
            return End(true);
          }
        }
        const auto start = Clock::now();
        if (share.to == 0) {
          s = (*each)(mapped_share.from, mapped_share.to, mapped_share.json);
          std::lock_guard<std::mutex> g(mu);
          hand_on_cost.Note(start, mapped_share.to - mapped_share.from);
          continue;
        }
        if (read_ahead) {
          s = Read(share);
          std::lock_guard<std::mutex> g(mu);
          read_cost.Note(start, share.to - share.from);
          if (s.ok()) {
            ahead_bytes += share.arg.size();
            ahead.push_back(std::move(share));
          }
          continue;
        }
        const bool started = StartMap(thread, share, [this, thread](size_t from, size_t to, Result<std::string> r) {
          Helper(thread, r.ok() ? (*each)(from, to, *r) : r.status());
        }, &s);
        if (started) return;
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
  // task so that its first step runs on the isolate thread too.
  const size_t chains = std::min(threads, (n + kMinShare - 1) / kMinShare);
  state.running = chains;
  state.helpers = chains - 1;
  for (size_t t = 0; t < chains; ++t) {
    state.pool->Run(static_cast<int>(t), kStartTask, "null", [&state, t](Result<std::string> r) {
      Status s = r.ok() ? Status::OK() : FromJsError(r.status());
      if (t == 0) {
        state.Mapper(s);
      } else {
        state.Helper(static_cast<int>(t), s);
      }
    });
  }
  std::unique_lock<std::mutex> g(state.mu);
  state.cv.wait(g, [&] { return state.running == 0; });
  return state.first_error;
}

Status PoolViewFunctions::Reduce(const views::MapCode& code, const std::string& source,
                                 std::string_view calls_json, std::string* out) {
  std::string arg = "{\"code\":" + MapCodeJson(code) + ",\"source\":";
  json::AppendQuoted(&arg, source);
  arg += ",\"calls\":";
  arg.append(calls_json);
  arg += '}';
  return RunOnAnyThread(kReduceTask, std::move(arg), out);
}

Status PoolViewFunctions::Validate(const validation::ValidatorSet& set,
                                   const std::vector<validation::ValidateCall>& calls,
                                   std::string_view user_ctx, std::string_view sec_obj,
                                   std::vector<Status>* results) {
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
  json::Document d;
  Status s = RunForJson(kValidateTask, std::move(arg), &d);
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

Status PoolViewFunctions::Compile(const std::vector<std::string>& sources, size_t* failed) {
  std::string arg;
  json::AppendStringArray(&arg, sources);
  json::Document d;
  Status s = RunForJson(kCompileTask, std::move(arg), &d);
  if (!s.ok()) return s;
  if (d.IsNull()) return Status::OK();
  auto index = d.IsObject() ? d.FindMember("index") : d.MemberEnd();
  auto message = d.IsObject() ? d.FindMember("message") : d.MemberEnd();
  if (index == d.MemberEnd() || !index->value.IsUint() || index->value.GetUint() >= sources.size() ||
      message == d.MemberEnd() || !message->value.IsString()) {
    return Status::Internal("compile task gave no outcome");
  }
  *failed = index->value.GetUint();
  return Status(Status::Code::kCompilationError, std::string(json::View(message->value)));
}

void InstallPoolValidateFunctions(Store* store, const IsolateLimits& limits) {
  PoolOptions options;
  options.threads = 1;
  options.limits = limits;
  validation::SetValidateFunctions(*store, std::make_shared<PoolViewFunctions>(options));
}

}  // namespace settee::js
