#include "bench/harness/workload_suite.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <regex>

#include <rapidjson/document.h>
#include <uv.h>
#include <v8.h>

#include "bench/harness/machine.h"
#include "bench/harness/pouchdb_baseline.h"
#include "bench/harness/registry.h"
#include "bench/harness/replication_remote.h"
#include "bench/harness/stats.h"
#include "js/isolate_pool.h"
#include "js/view_functions_js.h"
#include "settee/store.h"
#include "util/json.h"

namespace settee::bench {

namespace {

// The runner's phases, called as tasks (js/isolate_pool.h): `a` is the
// argument object below; only thread 0 reports progress.
constexpr const char* kList = "(a) => require(a.runner).list([a.suite])";
constexpr const char* kPrepare =
    "(a) => require(a.runner).prepare(Object.assign(a, {progress: a.report ? "
    "(k) => settee.postMessage({bench_progress: k}) : undefined}))";
constexpr const char* kTimed = "(a) => require(a.runner).timed(a)";
// With several threads, their loops start at one instant this far after
// the harness posts them (runner.js timed(): the threads' wake-ups differ
// by 1-3.5 ms here, more than a short case's whole loop). In a scaling run
// the one-thread runs wait as long: the wait itself slows the loop's first
// iteration (startkey-endkey 0.108-0.112 ms -> 0.208-0.216, the two-thread
// runs' 0.185-0.218; code gone cold, README), which on the short reads'
// loops of 1-2 ms was 3-8% of the two-thread figure and of no one-thread
// one.
constexpr uint64_t kStartDelayNs = 15'000'000;
constexpr const char* kFinish = "(a) => require(a.runner).finish()";

std::string CaseArg(const std::string& runner, const WorkloadCase& c, const BenchOptions& o, bool report) {
  std::string a = "{\"runner\":" + json::Quote(runner) + ",\"suite\":" + json::Quote(c.suite) +
                  ",\"name\":" + json::Quote(c.name) + ",\"iterations\":" + std::to_string(c.iterations) +
                  ",\"backend\":" + json::Quote(o.backend) + ",\"remote\":" + json::Quote(o.remote) +
                  ",\"report\":" + (report ? "true" : "false") + "}";
  return a;
}

// CPU time of the whole process so far, user and system, in ms.
double ProcessCpuMs() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1000.0 + t.tv_usec / 1000.0; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}

// Runs `fn` on every thread at once and waits for all; results by thread.
std::vector<Result<std::string>> OnAll(js::IsolatePool& pool, const char* fn,
                                       const std::function<std::string(int)>& arg) {
  std::vector<std::future<Result<std::string>>> futures;
  for (int t = 0; t < pool.size(); ++t) futures.push_back(pool.Run(t, fn, arg(t)));
  std::vector<Result<std::string>> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

std::string Prefix(int thread, int threads) {
  return threads > 1 ? "thread " + std::to_string(thread) + ": " : "";
}

// The "error" member of a phase's JSON answer, or the task's own failure.
std::string ErrorOf(const Result<std::string>& r, rapidjson::Document* d) {
  if (!r.ok()) return r.status().reason();
  d->Parse(r->c_str(), r->size());
  if (d->HasParseError() || !d->IsObject()) return "the workload runner answered " + *r;
  auto it = d->FindMember("error");
  return it != d->MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

// The first line of a JS stack text: the error itself.
std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

// `remote_pid`: the replication cases' settee serve (0: none, or not ours),
// whose CPU time in the timed phase counts with the process's: a pull's work
// is the server's as much as the client's. `common_start`: the threads'
// loops start at an instant kStartDelayNs after the harness posts them
// (always with several threads; with one, in a scaling run, so that every
// count starts alike: JSON metrics.common_start_ms).
CaseResult RunCase(js::IsolatePool& pool, const std::string& runner, const WorkloadCase& c,
                   const BenchOptions& o, int remote_pid, bool common_start) {
  CaseResult r;
  r.suite = c.suite;
  r.name = c.name;
  r.runtime = "settee";
  r.threads = pool.size();
  const int n = pool.size();

  const std::string runner_arg = "{\"runner\":" + json::Quote(runner) + "}";
  std::string unsupported, failed;
  auto prepared = OnAll(pool, kPrepare, [&](int t) { return CaseArg(runner, c, o, t == 0); });
  for (int t = 0; t < n; ++t) {
    rapidjson::Document d;
    std::string err = ErrorOf(prepared[t], &d);
    std::string status = prepared[t].ok() && d.IsObject() && d.HasMember("status") && d["status"].IsString()
                             ? d["status"].GetString() : "failed";
    if (status == "unsupported" && unsupported.empty()) unsupported = err;
    if (status == "failed" && failed.empty()) failed = Prefix(t, n) + FirstLine(err);
  }
  bool ready = unsupported.empty() && failed.empty();
  if (ready) {
    auto t0 = std::chrono::steady_clock::now();
    const double remote0 = remote_pid > 0 ? ProcessThreadsCpuMs(remote_pid) : -1;
    const double cpu0 = ProcessCpuMs();
    std::string timed_arg = runner_arg;
    if (n > 1 || common_start) {
      timed_arg.pop_back();  // the closing brace
      timed_arg += ",\"start_at\":\"" + std::to_string(uv_hrtime() + kStartDelayNs) + "\"}";
      r.metrics["common_start_ms"] = kStartDelayNs / 1e6;
    }
    auto timed = OnAll(pool, kTimed, [&](int) { return timed_arg; });
    const double cpu_ms = ProcessCpuMs() - cpu0;
    const double remote1 = remote_pid > 0 ? ProcessThreadsCpuMs(remote_pid) : -1;
    r.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    // The threads' own bounds of their loops (one clock for all isolates):
    // from the first one's start to the last one's end. Waking the threads
    // and collecting their answers is not the workload's time, nor is the
    // wait for the common start. The process's CPU time is read here, with
    // every isolate thread idle: read by a thread at its loop's start it
    // missed what the other threads had run since their last scheduler tick
    // (Linux counts a running thread's time per tick, 4 ms here, longer
    // than the short cases' loops), so the other thread's spin was billed
    // to the loop. Each thread's spin is taken out at its own CPU time
    // (process.threadCpuUsage: the thread's CPU clock).
    double first_start = 0, last_start = 0, last_end = 0, waited_ms = 0;
    double thread_ms = 0, loop_cpu_ms = 0, loop_runq_ms = 0;
    int bounded = 0, split = 0;
    for (int t = 0; t < n; ++t) {
      rapidjson::Document d;
      std::string err = ErrorOf(timed[t], &d);
      if (!err.empty() && failed.empty()) failed = Prefix(t, n) + FirstLine(err);
      if (!timed[t].ok() || !d.IsObject()) continue;
      if (d.HasMember("samples") && d["samples"].IsArray()) {
        for (const auto& v : d["samples"].GetArray()) if (v.IsNumber()) r.samples_ms.push_back(v.GetDouble());
      }
      if (d.HasMember("start_ms") && d["start_ms"].IsNumber() && d.HasMember("end_ms") && d["end_ms"].IsNumber()) {
        const double start = d["start_ms"].GetDouble(), end = d["end_ms"].GetDouble();
        first_start = bounded == 0 ? start : std::min(first_start, start);
        last_start = bounded == 0 ? start : std::max(last_start, start);
        last_end = bounded == 0 ? end : std::max(last_end, end);
        ++bounded;
        // Where this thread's loop went: on a CPU, waiting for one, asleep.
        if (d.HasMember("loop_cpu_ms") && d["loop_cpu_ms"].IsNumber() && d.HasMember("loop_runq_ms") &&
            d["loop_runq_ms"].IsNumber() && d.HasMember("split_ms") && d["split_ms"].IsNumber()) {
          thread_ms += d["split_ms"].GetDouble();
          loop_cpu_ms += d["loop_cpu_ms"].GetDouble();
          loop_runq_ms += d["loop_runq_ms"].GetDouble();
          ++split;
        }
      }
      if (d.HasMember("wait_cpu_ms") && d["wait_cpu_ms"].IsNumber()) waited_ms += d["wait_cpu_ms"].GetDouble();
    }
    if (bounded == n && last_end > first_start) {
      r.wall_ms = last_end - first_start;
      if (n > 1) r.metrics["start_skew_ms"] = last_start - first_start;
    }
    r.metrics["cpu_ms"] = std::max(cpu_ms - waited_ms, 0.0);
    if (remote0 >= 0 && remote1 >= remote0) r.metrics["remote_cpu_ms"] = remote1 - remote0;
    if (split == n && thread_ms > 0) {
      r.metrics["loop_thread_ms"] = thread_ms;
      r.metrics["loop_cpu_ms"] = loop_cpu_ms;
      r.metrics["loop_runq_ms"] = loop_runq_ms;
    }
  }
  // Always: checks after the loop (when it ran), teardown and destroy.
  auto finished = OnAll(pool, kFinish, [&](int) { return runner_arg; });
  for (int t = 0; t < n; ++t) {
    rapidjson::Document d;
    std::string err = ErrorOf(finished[t], &d);
    if (!err.empty() && failed.empty()) failed = Prefix(t, n) + FirstLine(err);
  }
  r.operations = static_cast<double>(r.samples_ms.size());
  // What the operations cost in CPU, the whole process's (the background
  // threads' work included): unlike the throughput, it does not depend on
  // how many cores the machine leaves the run, so a second thread's
  // contention shows as fewer operations per CPU second.
  // With the server's CPU, the CPU the work took; over the loops' span, how
  // many cores it kept busy, which bounds what more threads can add on this
  // machine's cores (ScalingRow::ceiling).
  if (ready && r.operations > 0 && r.metrics.count("cpu_ms")) {
    const double work_ms = r.metrics["cpu_ms"] + (r.metrics.count("remote_cpu_ms") ? r.metrics["remote_cpu_ms"] : 0);
    r.metrics["ops_per_cpu_s"] = r.operations * 1000.0 / std::max(work_ms, 1e-3);
    if (r.wall_ms > 0) r.metrics["cores_used"] = work_ms / r.wall_ms;
  }
  if (!unsupported.empty()) {
    r.outcome = Outcome::kUnsupported;
    r.error = unsupported;
    r.samples_ms.clear();
    r.operations = 0;
    r.wall_ms = 0;
  } else if (!failed.empty()) {
    r.outcome = Outcome::kFailed;
    r.error = failed;
  }
  return r;
}

CaseResult SuiteFailure(const std::string& group, const std::string& why) {
  CaseResult r;
  r.suite = group;
  r.name = "(suite)";
  r.runtime = "settee";
  r.outcome = Outcome::kFailed;
  r.error = why;
  return r;
}

// The cases of `group` the options select, from the runner's own list.
Result<std::vector<WorkloadCase>> ListCases(js::IsolatePool& pool, const std::string& runner,
                                            const std::string& group, const BenchOptions& o) {
  std::string arg = "{\"runner\":" + json::Quote(runner) + ",\"suite\":" + json::Quote(group) + "}";
  auto listed = pool.Run(0, kList, arg).get();
  if (!listed.ok()) return Status::Internal("cannot list the workload: " + FirstLine(listed.status().reason()));
  rapidjson::Document d;
  d.Parse(listed->c_str(), listed->size());
  if (d.HasParseError() || !d.IsArray()) return Status::Internal("the workload's case list is not an array");
  std::vector<WorkloadCase> out;
  for (const auto& c : d.GetArray()) {
    WorkloadCase w{c["suite"].GetString(), c["name"].GetString(), c["iterations"].GetInt()};
    if (o.iterations > 0) w.iterations = o.iterations;  // replaces every count, as PouchDB's ITERATIONS
    if (w.iterations <= 0 || !GrepSelects(o.grep, w.suite, w.name)) continue;
    out.push_back(w);
  }
  return out;
}

}  // namespace

std::string WorkloadRunnerPath(const BenchOptions& options) {
  return options.source_dir + "/bench/workload/runner.js";
}

bool GrepSelects(const std::string& pattern, const std::string& suite, const std::string& name) {
  if (pattern.empty()) return true;
  try {
    return std::regex_search(suite + "/" + name, std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error&) {
    return false;
  }
}

std::vector<CaseResult> RunWorkloadSuite(const std::string& group, const BenchOptions& o,
                                         const ProgressFn& progress) {
  const std::string runner = WorkloadRunnerPath(o);
  if (access(runner.c_str(), R_OK) != 0) {
    return {SuiteFailure(group, "the workload is missing: cannot read " + runner)};
  }
  StoreOptions so;
  std::string data_dir = o.scratch_dir + "/settee-" + group;
  if (o.backend == "leveldb") {
    so.backend = StoreOptions::Backend::kLevelDB;
    so.path = data_dir;
  } else {
    so.backend = StoreOptions::Backend::kMemory;
  }
  auto store = Store::Open(so);
  if (!store.ok()) return {SuiteFailure(group, "cannot open the store: " + store.status().ToString())};
  const auto settee_start = std::chrono::steady_clock::now();

  // Progress messages come from thread 0's isolate while the case runs.
  std::mutex mu;
  Progress current;
  js::PoolOptions po;
  po.store = store->get();
  // Writes check for validate_doc_update functions as in `settee run`.
  js::InstallPoolValidateFunctions(store->get(), po.limits);
  // V8's flags are the process's: the first pool decides (one bench run, one setting).
  if (o.jitless) po.v8_flags = "--jitless --no-expose-wasm";
  // SETTEE_BENCH_V8_FLAGS adds V8 flags (--trace-opt, --trace-gc: what the
  // isolates spend beside the workload), as in views_bench.
  if (const char* flags = std::getenv("SETTEE_BENCH_V8_FLAGS")) po.v8_flags += std::string(" ") + flags;
  po.on_message = [&](int, const std::string& json) {
    size_t colon = json.find(':');
    if (colon == std::string::npos || json.find("bench_progress") == std::string::npos) return;
    std::lock_guard<std::mutex> lock(mu);
    current.iteration = std::atoi(json.c_str() + colon + 1);
    if (progress) progress(current);
  };
  std::string uncaught;
  po.on_error = [&](int thread, const std::string& report) {
    std::lock_guard<std::mutex> lock(mu);
    if (uncaught.empty()) uncaught = "thread " + std::to_string(thread) + ": " + FirstLine(report);
  };
  // One pool per thread count (--threads 1,2), all over the one store, so
  // that a scaling run interleaves the counts case by case.
  const std::vector<int> counts = o.thread_counts.empty() ? std::vector<int>{o.threads} : o.thread_counts;
  std::vector<std::unique_ptr<js::IsolatePool>> pools;
  for (int n : counts) {
    po.threads = n;
    auto pool = js::IsolatePool::Start(po);
    if (!pool.ok()) return {SuiteFailure(group, "cannot start the isolates: " + pool.status().ToString())};
    pools.push_back(std::move(*pool));
  }

  auto cases = ListCases(*pools.front(), runner, group, o);
  if (!cases.ok()) return {SuiteFailure(group, cases.status().reason())};

  // The replication cases pull from a server of settee's own on loopback
  // unless --remote names one. A scaling run (--threads 1,2) starts one per
  // thread count with that many loop threads, as a user would size a server
  // for N clients: one server of the machine's default (a loop a core) for
  // all counts gave the one-thread run both cores already (the replicator
  // sends requests in parallel), so N threads had little left to gain.
  // A run of one count keeps the server's default.
  std::vector<BenchOptions> run_options(counts.size(), o);
  for (size_t k = 0; k < counts.size(); ++k) {
    run_options[k].threads = counts[k];
    if (counts.size() > 1) run_options[k].remote_loops = counts[k];
  }
  std::vector<ReplicationRemote> remotes(counts.size());
  std::string remote_error;
  if (NeedsReplicationRemote(*cases)) {
    const auto t0 = std::chrono::steady_clock::now();
    std::string described;
    for (size_t k = 0; k < counts.size() && remote_error.empty(); ++k) {
      auto started = StartReplicationRemote("settee", run_options[k]);
      if (!started.ok()) {
        remote_error = started.status().reason();
        break;
      }
      remotes[k] = std::move(*started);
      run_options[k].remote = remotes[k].url;
      if (o.facts && counts.size() > 1) {
        described += (k ? "; " : "") + std::to_string(counts[k]) + (counts[k] == 1 ? " thread: " : " threads: ") +
                     o.facts->remotes()["settee"];
      }
    }
    if (o.facts && !described.empty() && remote_error.empty()) o.facts->SetRemote("settee", described);
    if (o.facts) o.facts->AddSeconds("starting servers", SecondsSince(t0));
  }

  std::vector<CaseResult> results;
  for (size_t i = 0; i < cases->size(); ++i) {
    const WorkloadCase& c = (*cases)[i];
    {
      std::lock_guard<std::mutex> lock(mu);
      current = Progress{c.suite, c.name, static_cast<int>(i), static_cast<int>(cases->size()), 0,
                         c.iterations, "settee"};
      if (progress) progress(current);
    }
    if (!remote_error.empty() && NeedsReplicationRemote({c})) {
      for (int n : counts) {
        CaseResult failed;
        failed.suite = c.suite;
        failed.name = c.name;
        failed.runtime = "settee";
        failed.threads = n;
        failed.outcome = Outcome::kFailed;
        failed.error = remote_error;
        results.push_back(std::move(failed));
      }
      continue;
    }
    // Rounds of one run of each count until there are --repeats of each and
    // each count's timed loops add up to --min-time; a run that fails ends
    // it. Every other round runs the counts in reverse order, so that no
    // count always runs first (after the other's garbage, or first into a
    // burst of the machine's other work).
    std::vector<std::vector<CaseResult>> runs(pools.size());
    std::vector<double> timed_ms(pools.size(), 0);
    for (int rep = 1;; ++rep) {
      bool stop = false;
      for (size_t i = 0; i < pools.size(); ++i) {
        const size_t k = rep % 2 ? i : pools.size() - 1 - i;
        CaseResult r = RunCase(*pools[k], runner, c, run_options[k],
                               NeedsReplicationRemote({c}) && remotes[k].process ? remotes[k].process->pid() : 0,
                               /*common_start=*/pools.size() > 1);
        std::lock_guard<std::mutex> lock(mu);
        if (!uncaught.empty() && r.outcome == Outcome::kOk) {
          r.outcome = Outcome::kFailed;
          r.error = "uncaught: " + uncaught;
        }
        uncaught.clear();
        stop |= r.outcome != Outcome::kOk;
        timed_ms[k] += r.wall_ms;
        runs[k].push_back(std::move(r));
      }
      const bool enough = rep >= o.repeats && *std::min_element(timed_ms.begin(), timed_ms.end()) >= o.min_time_s * 1000;
      if (stop || enough || rep >= BenchOptions::kMaxRepeats) break;
    }
    std::vector<CaseResult> merged;
    for (auto& r : runs) merged.push_back(r.size() == 1 ? r.front() : MergeRepeats(r));
    if (runs.size() > 1) NoteRoundRatios(runs, &merged);
    for (auto& r : merged) results.push_back(std::move(r));
  }
  for (auto& remote : remotes) {
    if (remote.process) remote.process->Stop();
  }
  for (auto& pool : pools) {
    pool->Shutdown();
    pool.reset();
  }
  store->reset();
  if (o.backend == "leveldb") {
    std::error_code ec;
    std::filesystem::remove_all(data_dir, ec);
  }
  if (o.facts) {
    o.facts->AddSeconds("settee", SecondsSince(settee_start));
    o.facts->NotePeakRss("settee", SelfPeakRssMb());
    o.facts->SetVersion("settee", SETTEE_VERSION);
    o.facts->SetVersion("v8", std::string(v8::V8::GetVersion()) + (o.jitless ? " (jitless)" : ""));
  }

  if (o.baseline == "pouchdb" && !cases->empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    auto base = RunPouchDbBaseline(*cases, o, progress);
    if (o.facts) o.facts->AddSeconds("pouchdb", SecondsSince(t0));
    results.insert(results.end(), base.begin(), base.end());
  }
  return results;
}

void RegisterWorkloadSuites() {
  for (const char* group : {"basics", "views", "find", "attachments"}) {
    std::string g = group;
    RegisterSuite(g, [g](const BenchOptions& o, const ProgressFn& p) { return RunWorkloadSuite(g, o, p); });
  }
}

}  // namespace settee::bench
