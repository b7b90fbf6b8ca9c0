// A `settee bench` report: the machine, the versions, the options and every
// case's figures; as a table, as JSON (--json FILE) and compared with
// another report (--compare A.json B.json). Plain values; thread-safe.
//
// JSON shape (every time in milliseconds):
//   {"settee_bench": 1, "started": "2026-12-01T08:00:00Z", "elapsed_s": 61.2,
//    "machine": {"hostname", "os", "cpu_model", "cores", "emulation"},  (emulation: "" when native)
//    "versions": {"settee", "v8", "pouchdb", "node", ...},
//    "options": {"threads", "thread_counts": [...], "repeats", "rounds", "min_time_s", "backend", "suites": [...],
//                "grep", "iterations", "baseline", "remote"},
//    "seconds": {"settee": 15.2, "pouchdb": 70.1, "starting servers": 1.5, ...},
//    "peak_rss_mb": {"settee": 180.5, "pouchdb": 1020.1},
//    "remotes": {"settee": "settee serve http://...", "pouchdb": "pouchdb-server 4.2.0 http://..."},
//    "cases": [{"suite", "name", "runtime", "outcome": "ok|failed|unsupported|skipped", "error",
//               "threads", "operations", "wall_ms", "median_ms", "min_ms", "max_ms", "mean_ms",
//               "ops_per_sec", "samples_ms": [...], "metrics": {...}}],
//               (a case run several times: one row per thread count, metrics "repeats",
//                "ops_per_sec" (the median run's), "ops_per_sec_min", "ops_per_sec_max";
//                run in --rounds: also "rounds" and "median_of_rounds_ms", which is then "median_ms")
//    "summary": {"geomean_factor": 14.2, "cases_compared": 10}}
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bench/harness/case_result.h"
#include "bench/harness/machine.h"
#include "bench/harness/suite.h"
#include "settee/status.h"

namespace settee::bench {

struct Report {
  std::string started;  // UTC, ISO 8601
  double elapsed_s = 0;
  MachineInfo machine;
  std::map<std::string, std::string> versions;
  BenchOptions options;  // only the command-line fields are kept in JSON
  std::map<std::string, double> peak_rss_mb;
  // The replication cases' remote per runtime (RunFacts::SetRemote).
  std::map<std::string, std::string> remotes;
  // Where the elapsed time went (RunFacts::AddSeconds): "settee", "pouchdb",
  // "installing baselines", "starting servers".
  std::map<std::string, double> seconds;
  std::vector<CaseResult> results;
};

const char* OutcomeName(Outcome o);

// The settee row and the baseline row of one case, paired by suite and name.
struct CasePair {
  const CaseResult* settee = nullptr;
  const CaseResult* baseline = nullptr;  // nullptr when there is none
  double factor = 0;  // baseline median / settee median when both are ok, else 0
};
// The pairs in the order the settee rows appear (rows of other runtimes that
// have no settee twin come after); the baseline runtime is "pouchdb".
std::vector<CasePair> PairCases(const Report& r);

// The geometric mean of the factors of the cases both sides ran (0: none).
double GeometricMeanFactor(const std::vector<CasePair>& pairs, int* compared = nullptr);

// A scaling run (--threads 1,2): per settee case, the aggregate throughput
// at each thread count and its ratio to the first count's.
struct ScalingRow {
  std::string suite, name;
  std::vector<int> threads;        // the counts that ran ok, in the run's order
  std::vector<double> ops;         // their throughputs (Throughput(): the median run's)
  // ops at count i over ops at the first count: the median over the
  // rounds of the ratio of two runs of one round (metric
  // "scaling_vs_first", NoteRoundRatios), else ops[i] / ops[0].
  std::vector<double> ratio;
  // Operations per CPU second of the process at each count over the
  // first's, paired by round as `ratio` (0 when not measured): below 1, a
  // thread makes the others' operations dearer (contention); near 1 with a
  // low `ratio`, the threads ran one at a time: the machine did not give
  // the run the cores (`runq` tells) or they waited on each other asleep
  // (`asleep` tells).
  std::vector<double> cpu_ratio;
  std::vector<double> per_cpu;     // operations per CPU second at each count (0: not measured)
  // Where the isolate threads' loops went at each count, as shares of the
  // threads' loop time (-1: not measured): on a CPU, runnable but waiting
  // for one (the machine's other work, or more of the process's threads
  // than cores), and asleep (a lock, another thread's work, I/O).
  std::vector<double> on_cpu, runq, asleep;
  // Cores the work kept busy at each count (metric "cores_used": the
  // process's CPU and the replication server's over the loops' span; 0: not
  // measured), and the most `ratio` could be on the machine's cores if the
  // work scaled perfectly: min(threads[i] / threads[0], cores /
  // cores_used[0]) (0: not known). A pull keeps the client's replicator
  // threads and the server busy beside its isolate, so one thread already
  // uses more than one core, and two cannot double it.
  std::vector<double> cores_used, ceiling;
  std::vector<int> repeats;        // runs behind each figure
  std::string error;               // the first count that did not run ok, and why
};
std::vector<ScalingRow> ScalingRows(const Report& r);

std::string ToJson(const Report& r);
// kBadRequest with a reason when `text` is not a settee bench report.
Result<Report> ParseReport(const std::string& text);

// The table printed at the end of a run.
std::string FormatTable(const Report& r);

// One row per (suite, case, runtime) that ran ok in both reports: both
// medians and B's time relative to A's (the seeds' "relative to the PC" table);
// then the geometric mean of those ratios per runtime.
struct CompareRow {
  std::string suite, name, runtime;
  double a_median = 0, b_median = 0;
  double ratio = 0;  // b_median / a_median: below 1 when B is faster
  // Aggregate throughput over all threads (iterations or requests per
  // second) and B's over A's: how `--threads 2` scales against
  // `--threads 1`. 0 when a report lacks it.
  double a_ops = 0, b_ops = 0;
  double ops_ratio = 0;
};
std::vector<CompareRow> CompareReports(const Report& a, const Report& b);
std::string FormatCompare(const Report& a, const Report& b);

}  // namespace settee::bench
