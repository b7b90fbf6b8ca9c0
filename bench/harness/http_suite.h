// The `http` suite of `settee bench`: settee's server on loopback under wrk,
// beside pouchdb-server 4.2, like the MRI/JRuby report (ops/s, error %,
// average, max and 90th percentile at 1 and 10 concurrent clients).
//
// For each server configuration the suite starts a fresh server on
// 127.0.0.1 (settee: `options.settee_binary serve --port 0 --threads L
// --backend options.backend`, data under options.scratch_dir, with L = 1 and
// L = options.threads loop threads), seeds database "bench" (doc "doc1", 100
// small docs, doc "atts" with 100 attachments) and empty bench-0 .. bench-9,
// and runs wrk --latency for
// `seconds_per_row` per row:
//   get-doc           GET /bench/doc1
//   all-docs-limit10  GET /bench/_all_docs?limit=10
//   post-doc          POST /bench, a small doc (bench/http/post.lua)
//   get-doc-100-attachments  GET /bench/atts?attachments=true: a doc with 100
//                     attachments of 50,000 bytes, inline as base64 (PouchDB's
//                     many-attachments case over HTTP)
//   view-js-reduce    a grouped view query with a JavaScript reduce
//   post-doc-10-dbs   POSTs to databases bench-0 .. bench-9 in turn
//                     (bench/http/post_dbs.lua): post-doc without one
//                     database's write path serializing the loops
//   server-root       GET /, no storage: the control of loop scaling
// at 1 and 10 connections, and at 10 connections only, with wrk writing 16
// requests at a time (bench/http/pipeline.lua: wrk then takes a small share
// of a core, so on two cores the loops get nearly both):
//   server-root-x16   GET /, the control
//   post-doc-x16      POSTs into database "bench"
//   post-own-db-x16   POSTs from each connection into a database of its own
//                     (bench-0 .. bench-9; one wrk thread per connection)
// (their latencies are those of a request at the back of a batch of 16),
// and the same three from the built-in load generator (http_load.h: one
// thread on epoll, requests built once, responses only framed), one request
// at a time per connection and 16 per write:
//   server-root-lg, post-doc-lg, post-own-db-lg,
//   server-root-lg-x16, post-doc-lg-x16, post-own-db-lg-x16
// whose rows also carry client_cpu_us_per_req and client_cpu_pct (the load
// thread's CPU over the row: what the client took from the server's cores).
// Rows are named "get-doc c=10 loops=2"; their `threads` is the server's
// loop threads. wrk gets the cores the server
// leaves free (at least one thread, at most one per connection): with more
// load threads than free cores the client and the server preempt each other
// and p90 measures the scheduler, not the server.
//
// With options.baseline == "pouchdb", pouchdb-server 4.2 (bench/http/
// package.json; --in-memory for the memory backend, its LevelDB otherwise)
// gets the same rows as settee's one-loop server, under runtime
// "pouchdb-server" (one node event loop: "loops=1").
//
// Every row: samples_ms = {wrk's average latency}, operations = responses,
// wall_ms = wrk's measured duration, and metrics ops_per_sec, error_pct
// (bad statuses and socket errors over attempts), avg_ms, stdev_ms, max_ms,
// p50_ms, p75_ms, p90_ms, p99_ms, connections, wrk_threads, server_rss_mb
// (settee only, after the row), server_cpu_us_per_req (the server process's
// user + system CPU over the row / responses). A run with no good response
// is kFailed.
//
// Loop scaling, from the one run: a settee row of L > 1 loops also gets
// ops_vs_1_loop (its ops/s over the same row's with 1 loop) and
// cpu_per_req_vs_1_loop (server CPU per request, L loops over 1). On a
// machine whose cores wrk and the loops oversubscribe, ops_vs_1_loop is
// bounded by the cores, not by the server: server-root's ratio is that
// bound, and a CPU-per-request ratio near 1 says the loops share nothing
// that costs (a lock, a cache line bouncing between them). For the load
// generator's rows that bound is computed too: ceiling_vs_1_loop =
// min(L, cores x s / (s + c)) from the 1-loop row's server (s) and client
// (c) CPU per request, what a perfectly scaling server could show here.
// Every row also has server_cpu_pct (the server's CPU over the row, percent
// of one core).
// The latency figures are wrk's, which adds synthetic samples for the
// requests a slow response held back (its coordinated-omission correction),
// so avg_ms x operations may exceed connections x wall_ms.
// No wrk, no node or no pouchdb-server (and `npm ci` unable to install it):
// kSkipped rows naming what is missing.
//
// Thread safety: call from one thread; every child process (servers, wrk)
// is stopped before it returns.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/case_result.h"
#include "bench/harness/http_load.h"
#include "bench/harness/suite.h"
#include "bench/harness/wrk_output.h"

namespace settee::bench {

struct HttpSuiteConfig {
  // wrk -d per row (whole seconds: wrk takes no fractions). The SuiteRunner
  // form reads $SETTEE_BENCH_HTTP_SECONDS, else 3.
  int seconds_per_row = 3;
  std::string wrk = "wrk";        // looked up on $PATH
  std::string node = "node";      // runs pouchdb-server
  std::string pouchdb_server;     // empty: <source_dir>/bench/http/node_modules/pouchdb-server/bin/pouchdb-server
  bool install_missing = true;    // run scripts/setup_bench_baselines.sh http when it is missing
  int startup_timeout_s = 30;     // a server not answering by then fails its rows
};

// The suite as the harness runs it (a SuiteRunner).
std::vector<CaseResult> RunHttpSuite(const BenchOptions& options, const ProgressFn& progress);
// The same with settings other than the defaults (tests).
std::vector<CaseResult> RunHttpSuiteWith(const BenchOptions& options, const ProgressFn& progress,
                                         const HttpSuiteConfig& config);

// wrk's thread count for `connections` when the server runs `server_threads`
// loops on a machine of `cores`: the free cores, at least 1, at most one per
// connection.
int WrkThreads(int cores, int server_threads, int connections);

// Gives each settee row of L > 1 loops the ratios to its 1-loop twin in
// `rows` (ops_vs_1_loop, cpu_per_req_vs_1_loop, and for the load
// generator's rows ceiling_vs_1_loop on a machine of `cores`; see above).
void AddLoopScaling(std::vector<CaseResult>* rows, int cores);

// Fills `row`'s outcome, samples, operations, wall time and metrics from a
// parsed wrk run.
void FillRowFromWrk(const WrkReport& report, CaseResult* row);
// The same from a run of the built-in load generator (with its
// client_cpu_us_per_req and client_cpu_pct).
void FillRowFromLoad(const HttpLoadReport& report, CaseResult* row);

}  // namespace settee::bench
