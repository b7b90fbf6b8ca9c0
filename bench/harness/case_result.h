// The row model of a `settee bench` report, shared by every suite.
//
// A suite (the PouchDB workload groups, eval, http) produces CaseResults; the
// harness (bench/harness/) computes statistics over them, prints the table,
// writes the JSON report and compares reports. A CaseResult is a plain value:
// no locking, copy freely.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace settee::bench {

enum class Outcome {
  kOk,           // ran and passed the workload's own checks: samples_ms is filled
  kFailed,       // threw, or a workload check failed: `error` says why
  kUnsupported,  // the feature is not built yet: never given a time
  kSkipped,      // could not run here (no baseline runtime, no wrk, ...): `error` says what is missing
};

// One case, as run by one runtime, over all its threads.
struct CaseResult {
  std::string suite;    // "basics", "views", "find", "attachments", "eval", "http"
  std::string name;     // PouchDB's case name, or e.g. "get-doc c=10 loops=2" for http
  std::string runtime;  // "settee", "pouchdb", "node20", "node18", "pouchdb-server"
  Outcome outcome = Outcome::kOk;
  std::string error;    // for kFailed / kUnsupported / kSkipped

  int threads = 1;                 // isolate threads (or server loop threads) that ran it together
  std::vector<double> samples_ms;  // per-iteration wall times, every thread's, in ms
  double wall_ms = 0;              // wall time of the whole case over all threads (throughput's base)
  double operations = 0;           // iterations (or requests) completed over all threads

  // Suite-specific figures, by name: "p90_ms", "avg_ms", "max_ms",
  // "error_pct", "ops_per_sec" (http), "result" (eval's checked value) ...
  std::map<std::string, double> metrics;
};

}  // namespace settee::bench
