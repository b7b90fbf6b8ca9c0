// The HTTP remotes of the replication cases (basics/pull-replication-one-
// and -two-generation), as PouchDB's suite runs them against a CouchDB-
// compatible server: settee's side pulls from a `settee serve` on loopback
// (the same backend as the run), PouchDB's baseline from pouchdb-server 4.2
// (bench/http, --in-memory for the memory backend). --remote replaces both.
// Each remote is named in options.facts so the report says who served whom.
//
// Thread safety: plain functions; a ReplicationRemote has one owner.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench/harness/subprocess.h"
#include "bench/harness/suite.h"
#include "bench/harness/workload_suite.h"
#include "settee/status.h"

namespace settee::bench {

struct ReplicationRemote {
  std::unique_ptr<Subprocess> process;  // null for --remote
  std::string url;                      // "http://127.0.0.1:PORT"
};

// Whether any of `cases` pulls from an HTTP remote.
bool NeedsReplicationRemote(const std::vector<WorkloadCase>& cases);

// The remote for `runtime` ("settee" or "pouchdb"): options.remote when
// given, else a server started now (settee serve, or pouchdb-server 4.2,
// installed with setup_bench_baselines.sh http when missing). Notes it in
// options.facts as the remote of `runtime`. settee serve gets
// options.remote_loops loop threads (0: its default, one a core). kNotFound when node or
// pouchdb-server is not there; kInternal / kTimeout when the server does
// not come up.
Result<ReplicationRemote> StartReplicationRemote(const std::string& runtime, const BenchOptions& options);

}  // namespace settee::bench
