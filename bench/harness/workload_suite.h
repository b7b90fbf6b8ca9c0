// The PouchDB workload groups as `settee bench` suites: basics, views,
// find and attachments. Each runs bench/workload/ in settee's isolates
// (js/isolate_pool.h) over one shared store, `threads` isolates at once,
// each on its own databases; with --baseline pouchdb the same cases then
// run in node on the real PouchDB (pouchdb_baseline.h).
//
// Per case, every thread first prepares (opens its database, runs the
// untimed setup), then all threads start their timed loops together and the
// harness measures the wall time until the last one ends (the aggregate
// throughput's base), then each checks its database and destroys it.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/suite.h"

namespace settee::bench {

// One workload case and its effective iteration count.
struct WorkloadCase {
  std::string suite;
  std::string name;
  int iterations = 0;
};

// Runs the `group` cases that --grep selects.
std::vector<CaseResult> RunWorkloadSuite(const std::string& group, const BenchOptions& options,
                                         const ProgressFn& progress);

// Registers basics, views, find and attachments (registry.h).
void RegisterWorkloadSuites();

// The workload file that defines the cases, under options.source_dir.
std::string WorkloadRunnerPath(const BenchOptions& options);

// Whether --grep (ECMAScript, searched in "suite/case") selects the case.
// An empty pattern selects everything; a bad one nothing.
bool GrepSelects(const std::string& pattern, const std::string& suite, const std::string& name);

}  // namespace settee::bench
