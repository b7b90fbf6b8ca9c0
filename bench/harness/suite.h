// What a `settee bench` suite is given and what it gives back.
//
// The harness (bench/harness/) parses the command line into BenchOptions,
// runs each selected suite's SuiteRunner in turn and collects its
// CaseResults (bench/harness/case_result.h) into one report. Suites are the
// PouchDB workload groups (basics, views, find, attachments: JavaScript under
// bench/workload/, run in settee's isolates and, as the baseline, in node on
// the real PouchDB), `eval` (the MongoDB db.eval string loop beside node) and
// `http` (settee's server under wrk beside pouchdb-server).
//
// A runner is called on the harness's thread; it may start threads and child
// processes of its own but must have ended them when it returns. It never
// throws: a case that cannot run is a CaseResult with kFailed or kSkipped.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench/harness/case_result.h"

namespace settee::bench {

// Facts about the runtimes a run used, for the report's header: versions
// ("pouchdb" -> "9.0.0", "node" -> "20.20.2") and each process's peak
// resident set size. Suites note what they learn; thread-safe.
class RunFacts {
 public:
  void SetVersion(const std::string& what, const std::string& version) {
    std::lock_guard<std::mutex> lock(mu_);
    versions_[what] = version;
  }
  // Keeps the largest figure noted for `runtime` ("settee", "pouchdb", ...).
  void NotePeakRss(const std::string& runtime, double mb) {
    std::lock_guard<std::mutex> lock(mu_);
    double& v = peak_rss_mb_[runtime];
    v = std::max(v, mb);
  }
  std::map<std::string, std::string> versions() const {
    std::lock_guard<std::mutex> lock(mu_);
    return versions_;
  }
  std::map<std::string, double> peak_rss_mb() const {
    std::lock_guard<std::mutex> lock(mu_);
    return peak_rss_mb_;
  }
  // The server `runtime`'s replication cases pulled from ("settee" ->
  // "settee serve http://127.0.0.1:40123 (memory)").
  void SetRemote(const std::string& runtime, const std::string& description) {
    std::lock_guard<std::mutex> lock(mu_);
    remotes_[runtime] = description;
  }
  std::map<std::string, std::string> remotes() const {
    std::lock_guard<std::mutex> lock(mu_);
    return remotes_;
  }
  // Adds to the wall time spent on `what` ("settee", "pouchdb", "installing
  // baselines", "starting servers"), for the report's account of a run's
  // elapsed time.
  void AddSeconds(const std::string& what, double seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    seconds_[what] += seconds;
  }
  std::map<std::string, double> seconds() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seconds_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::string> versions_;
  std::map<std::string, double> peak_rss_mb_;
  std::map<std::string, std::string> remotes_;
  std::map<std::string, double> seconds_;
};

// Seconds of wall time since `t0`.
inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct BenchOptions {
  int threads = 1;                  // isolate threads (http: the server's loop threads); the largest of thread_counts
  // --threads 1,2: the workload suites run every case at each count,
  // interleaved, and the table gives each count's aggregate throughput
  // relative to the first's (how it scales). One count: a plain run.
  std::vector<int> thread_counts;
  int repeats = 1;                  // runs of each case (fresh databases each), at least
  double min_time_s = 0;            // ... and until its timed loops add up to this (capped at kMaxRepeats runs)
  static constexpr int kMaxRepeats = 50;
  // --rounds N: the whole selection N times over, settee's part then the
  // baseline's each time, merged by MergeRounds (stats.h), so each runtime's
  // runs of a case are spread over the run instead of back to back.
  int rounds = 1;
  static constexpr int kMaxRounds = 20;
  std::string backend = "memory";   // "memory" or "leveldb"
  std::vector<std::string> suites;  // selected suites, in run order
  std::string grep;                 // ECMAScript regex over "suite/case"; empty: all
  int iterations = 0;               // 0: each case's own default count
  std::string json_path;            // where to write the JSON report; empty: none
  std::string baseline = "pouchdb"; // "pouchdb" or "none"
  bool jitless = false;             // V8 without its JIT (--jitless), as on iOS
  std::string remote;               // --remote URL for the replication cases; empty: settee's own server
  int remote_loops = 0;             // loop threads of settee's own server (0: serve's default)
  std::string settee_binary;        // this executable (/proc/self/exe), for child `settee serve`
  std::string source_dir;           // where bench/ lives (workload files, package.json)
  std::string scratch_dir;          // a fresh directory the run may write into (LevelDB data, logs)
  RunFacts* facts = nullptr;        // where suites note versions and peak RSS; never null in a run
};

// Progress while a suite runs, printed by the harness as one overwritten line:
// suite, case i of n, iteration, elapsed.
struct Progress {
  std::string suite;
  std::string name;
  int case_index = 0;
  int case_count = 0;
  int iteration = 0;       // iterations done so far
  int iterations = 0;      // of this many (0: not known)
  std::string runtime;     // "settee", "pouchdb", ... (empty: not said)
};
using ProgressFn = std::function<void(const Progress&)>;

using SuiteRunner =
    std::function<std::vector<CaseResult>(const BenchOptions&, const ProgressFn&)>;

}  // namespace settee::bench
