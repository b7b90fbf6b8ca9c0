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

#include <functional>
#include <string>
#include <vector>

#include "bench/harness/case_result.h"

namespace settee::bench {

struct BenchOptions {
  int threads = 1;                  // isolate threads (http: the server's loop threads)
  std::string backend = "memory";   // "memory" or "leveldb"
  std::vector<std::string> suites;  // selected suites, in run order
  std::string grep;                 // ECMAScript regex over "suite/case"; empty: all
  int iterations = 0;               // 0: each case's own default count
  std::string json_path;            // where to write the JSON report; empty: none
  std::string baseline = "pouchdb"; // "pouchdb" or "none"
  std::string remote;               // --remote URL for the replication cases; empty: settee's own server
  std::string settee_binary;        // this executable (/proc/self/exe), for child `settee serve`
  std::string source_dir;           // where bench/ lives (workload files, package.json)
  std::string scratch_dir;          // a fresh directory the run may write into (LevelDB data, logs)
};

// Progress while a suite runs, printed by the harness as one overwritten line:
// suite, case i of n, iteration, elapsed.
struct Progress {
  std::string suite;
  std::string name;
  int case_index = 0;
  int case_count = 0;
  int iteration = 0;
};
using ProgressFn = std::function<void(const Progress&)>;

using SuiteRunner =
    std::function<std::vector<CaseResult>(const BenchOptions&, const ProgressFn&)>;

}  // namespace settee::bench
