// The baseline of the PouchDB workload: the same files (bench/workload/)
// run unchanged in node on the real PouchDB 9 pinned in bench/package.json,
// with pouchdb-adapter-memory for --backend memory and PouchDB's LevelDB
// adapter for leveldb. One node process per call, the cases one after
// another as PouchDB's suite runs them; its peak RSS (wait4) and the
// versions of node and PouchDB go to options.facts.
//
// What it needs and does when missing:
// - `node` in PATH: else every case is kSkipped, naming it;
// - bench/node_modules: installed with `npm ci` on first use (a message
//   says so); if that fails every case is kSkipped with npm's complaint;
// - an HTTP remote for the replication cases: --remote (the command checks
//   that it answers), else pouchdb-server 4.2 started for the run
//   (replication_remote.h).
#pragma once

#include <vector>

#include "bench/harness/suite.h"
#include "bench/harness/workload_suite.h"
#include "settee/status.h"

namespace settee::bench {

std::vector<CaseResult> RunPouchDbBaseline(const std::vector<WorkloadCase>& cases, const BenchOptions& options,
                                           const ProgressFn& progress);

// Whether an http:// URL answers an HTTP GET within ~2 s (https is assumed
// to). kNotFound / kIOError with what failed.
Status ProbeHttp(const std::string& url);

}  // namespace settee::bench
