// `settee bench` end to end (bench/harness/bench_command.h), through the
// settee executable: every registered workload case once on both backends
// (no baseline), the JSON report, bad input and --compare.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "bench/harness/report.h"
#include "bench/harness/stats.h"

namespace settee::bench {
namespace {

using testing::HasSubstr;

struct Ran {
  int code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string Temp(const std::string& name) {
  return testing::TempDir() + "/bench_command_test_" + std::to_string(getpid()) + "_" + name;
}

Ran Bench(const std::string& args, const std::string& env = "") {
  std::string out = Temp("out"), err = Temp("err");
  std::string cmd = (env.empty() ? "" : "env " + env + " ") + std::string(SETTEE_BINARY) + " bench " + args +
                    " >" + out + " 2>" + err;
  int status = std::system(cmd.c_str());
  Ran r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
  r.out = Slurp(out);
  r.err = Slurp(err);
  return r;
}

// PouchDB 9's performance suite, case for case (shared/docs/POUCHDB_WORKLOAD.md).
const std::vector<std::string> kCases = {
    "basics/basic-inserts", "basics/bulk-inserts", "basics/bulk-inserts-large-docs",
    "basics/bulk-inserts-massive-docs", "basics/basic-updates", "basics/basic-gets",
    "basics/all-docs-skip-limit", "basics/all-docs-startkey-endkey", "basics/all-docs-keys",
    "basics/all-docs-include-docs",
    "basics/pull-replication-one-generation", "basics/pull-replication-two-generation",
    "views/temp-views", "views/build-secondary-index", "views/persisted-views",
    "views/persisted-views-stale-ok", "find/create-index", "find/simple-find-query",
    "find/simple-find-query-no-index", "find/complex-find-query", "find/complex-find-query-no-index",
    "find/multi-field-query", "attachments/basic-attachments", "attachments/many-attachments-base64",
    "attachments/many-attachments-binary"};

// Every case once: each reports one timed iteration that passed the
// workload's checks, or `unsupported` with the missing feature named.
void RunEveryCaseOnce(const std::string& backend) {
  std::string json = Temp(backend + ".json");
  // Not pull-replication-perf-skimdb: --iterations 1 turns it on, and its
  // public remote (skimdb.iriscouch.com) is gone, so it can only fail.
  Ran r = Bench("--backend " + backend +
                " --iterations 1 --baseline none --suite basics,views,find,attachments"
                " --grep '^(?!basics/pull-replication-perf-skimdb)' --json " + json);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->options.backend, backend);
  std::set<std::string> seen;
  for (const auto& c : report->results) {
    std::string key = c.suite + "/" + c.name;
    EXPECT_EQ(c.runtime, "settee") << key;
    seen.insert(key);
    if (c.outcome == Outcome::kOk) {
      // One thread count, one thread: the loop starts at once, as in
      // PouchDB's suite (no wait for a common start).
      EXPECT_EQ(c.metrics.count("common_start_ms"), 0u) << key;
      EXPECT_EQ(c.samples_ms.size(), 1u) << key;
      EXPECT_GT(c.samples_ms.at(0), 0) << key;
      EXPECT_GT(c.wall_ms, 0) << key;
    } else {
      EXPECT_EQ(c.outcome, Outcome::kUnsupported) << key << ": " << c.error;
      EXPECT_THAT(c.error, HasSubstr("not built yet")) << key;
      EXPECT_TRUE(c.samples_ms.empty()) << key;
    }
    // Printed in the table, too.
    EXPECT_THAT(r.out, HasSubstr(c.name));
  }
  EXPECT_EQ(seen, std::set<std::string>(kCases.begin(), kCases.end()));
  EXPECT_EQ(report->results.size(), kCases.size());
  // What settee builds today runs: every basic, the replication cases (from
  // a settee serve on loopback) included.
  for (const auto& c : report->results) {
    if (c.suite == "basics") {
      EXPECT_EQ(c.outcome, Outcome::kOk) << c.name << ": " << c.error;
    }
  }
  EXPECT_GT(report->peak_rss_mb.at("settee"), 0);
  EXPECT_FALSE(report->versions.at("v8").empty());
  EXPECT_GT(report->machine.cores, 0);
}

TEST(BenchCommand, EveryCaseOnceOnMemory) { RunEveryCaseOnce("memory"); }
TEST(BenchCommand, EveryCaseOnceOnLevelDb) { RunEveryCaseOnce("leveldb"); }

TEST(BenchCommand, ThreadsRunTogetherAndCountEveryThreadsIterations) {
  std::string json = Temp("threads.json");
  Ran r = Bench("--threads 2 --iterations 5 --baseline none --grep 'basics/(basic-gets|basic-inserts)$' --json " + json);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->results.size(), 2u);
  for (const auto& c : report->results) {
    EXPECT_EQ(c.threads, 2);
    EXPECT_EQ(c.samples_ms.size(), 10u) << c.name;  // 5 per thread
    EXPECT_DOUBLE_EQ(c.operations, 10);
    // The throughput's base is the span of the threads' loops, which holds
    // at least the slowest iteration and at least half of all the samples'
    // time (two threads, each running its iterations one after another).
    double sum = 0, slowest = 0;
    for (double v : c.samples_ms) {
      sum += v;
      slowest = std::max(slowest, v);
    }
    EXPECT_GE(c.wall_ms, slowest) << c.name;
    EXPECT_GE(c.wall_ms, sum / 2) << c.name;
    EXPECT_DOUBLE_EQ(Throughput(c), 10 * 1000.0 / c.wall_ms) << c.name;
    // The loops start at one instant (runner.js timed()'s start_at); how far
    // apart they began is reported.
    ASSERT_TRUE(c.metrics.count("start_skew_ms")) << c.name;
    EXPECT_GE(c.metrics.at("start_skew_ms"), 0) << c.name;
    EXPECT_LE(c.metrics.at("start_skew_ms"), c.wall_ms) << c.name;
  }
  EXPECT_THAT(r.out, HasSubstr("2 threads"));
}

// --threads 1,2: every case at both counts, each run --repeats times, one
// row per count, and the table's ratio; no baseline.
TEST(BenchCommand, SeveralThreadCountsGiveTheScaling) {
  std::string json = Temp("scaling.json");
  Ran r = Bench("--threads 1,2 --repeats 3 --min-time 0 --iterations 5 --grep 'basics/basic-gets$' --json " + json);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("no PouchDB baseline"));
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->options.thread_counts, (std::vector<int>{1, 2}));
  ASSERT_EQ(report->results.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const CaseResult& c = report->results[i];
    EXPECT_EQ(c.runtime, "settee");
    EXPECT_EQ(c.threads, i + 1);
    EXPECT_EQ(c.samples_ms.size(), 3u * 5 * (i + 1)) << "3 runs of 5 iterations per thread";
    EXPECT_DOUBLE_EQ(c.metrics.at("repeats"), 3);
    EXPECT_GT(Throughput(c), 0);
    EXPECT_GT(c.metrics.at("cpu_ms"), 0);
    EXPECT_GT(c.metrics.at("ops_per_cpu_s"), 0);
    // Where the isolate threads' loops went (runner.js: the thread's CPU
    // clock and /proc/thread-self/schedstat): each share within the loops.
    const double thread_ms = c.metrics.at("loop_thread_ms");
    EXPECT_GT(thread_ms, 0);
    EXPECT_GT(c.metrics.at("loop_cpu_ms"), 0);
    EXPECT_LE(c.metrics.at("loop_cpu_ms"), thread_ms);
    EXPECT_GE(c.metrics.at("loop_runq_ms"), 0);
    EXPECT_LE(c.metrics.at("loop_runq_ms"), thread_ms);
  }
  // Every count's loops start after the same wait for a common instant,
  // the one-thread runs' too (the wait slows a loop's first iteration).
  for (const CaseResult& c : report->results) {
    ASSERT_TRUE(c.metrics.count("common_start_ms")) << c.threads;
    EXPECT_GT(c.metrics.at("common_start_ms"), 0) << c.threads;
  }
  EXPECT_DOUBLE_EQ(report->results[0].metrics.at("common_start_ms"),
                   report->results[1].metrics.at("common_start_ms"));
  // The 2-thread row carries the rounds' ratios.
  EXPECT_GT(report->results[1].metrics.at("scaling_vs_first"), 0);
  EXPECT_GT(report->results[1].metrics.at("per_cpu_vs_first"), 0);
  auto rows = ScalingRows(*report);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].ratio.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].ratio[1], report->results[1].metrics.at("scaling_vs_first"));
  EXPECT_GE(rows[0].on_cpu[1], 0);
  EXPECT_THAT(r.out, HasSubstr("2t/1t"));
  EXPECT_THAT(r.out, HasSubstr("2t cpu/rq/zz"));
  EXPECT_THAT(r.out, HasSubstr("scaling at 2 threads"));
}

// A scaling run's replication cases pull, at each thread count, from a
// settee serve of that many loops (one server for all counts gave the
// one-thread run the second core already). On LevelDB each server has a
// store of its own (they shared one directory, and the second one failed on
// the first one's LOCK).
void RunScalingWithRemotes(const std::string& backend) {
  std::string json = Temp("remotes-" + backend + ".json");
  Ran r = Bench("--backend " + backend + " --threads 1,2 --repeats 1 --min-time 0 --iterations 1"
                " --baseline none --grep one-generation --json " + json);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 thread: settee serve http://127.0.0.1:"));
  EXPECT_THAT(r.out, HasSubstr("(" + backend + ", 1 loop); 2 threads: settee serve http://127.0.0.1:"));
  EXPECT_THAT(r.out, HasSubstr("(" + backend + ", 2 loops)"));
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->results.size(), 2u);
  for (const auto& c : report->results) {
    EXPECT_EQ(c.name, "pull-replication-one-generation");
    EXPECT_EQ(c.outcome, Outcome::kOk) << c.threads << " threads: " << c.error;
    // The server's CPU counts with the process's (a pull asks it for every
    // batch), and so do the cores the pull kept busy.
    EXPECT_GT(c.metrics.at("remote_cpu_ms"), 0) << c.threads;
    EXPECT_GT(c.metrics.at("cores_used"), 0) << c.threads;
  }
  EXPECT_GT(ScalingRows(*report)[0].ceiling[1], 0);
}

TEST(BenchCommand, ScalingRunsGiveEachCountARemoteOfItsOwnSizeOnMemory) { RunScalingWithRemotes("memory"); }
TEST(BenchCommand, ScalingRunsGiveEachCountARemoteOfItsOwnSizeOnLevelDb) { RunScalingWithRemotes("leveldb"); }

// --rounds 2: the selection twice over, settee then the baseline each time,
// merged into one row per case and runtime with both rounds' iterations.
TEST(BenchCommand, RoundsRunTheSelectionAgainAndMergeIt) {
  std::string json = Temp("rounds.json");
  Ran r = Bench("--iterations 3 --grep 'basic-gets|bulk-inserts$' --baseline none --rounds 2 --json " + json);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->options.rounds, 2);
  ASSERT_EQ(report->results.size(), 2u);
  for (const auto& c : report->results) {
    EXPECT_EQ(c.outcome, Outcome::kOk) << c.name << ": " << c.error;
    EXPECT_EQ(c.samples_ms.size(), 6u) << c.name;
    EXPECT_DOUBLE_EQ(c.metrics.at("rounds"), 2) << c.name;
    EXPECT_GT(c.metrics.at("median_of_rounds_ms"), 0) << c.name;
  }
  EXPECT_THAT(r.out, HasSubstr("2 rounds"));
  EXPECT_THAT(r.err, HasSubstr("round 2/2"));
  EXPECT_NE(Bench("--rounds 0 --baseline none").code, 0);
}

TEST(BenchCommand, UnknownSuitesAndCasesAreNamed) {
  Ran r = Bench("--suite basics,nosuch --baseline none");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown suite 'nosuch'"));
  r = Bench("--suite basics --grep 'no-such-case' --baseline none");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("--grep 'no-such-case' selects no case of the suites basics"));
  r = Bench("--grep '(' --baseline none");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a valid regular expression"));
  r = Bench("--backend paper");
  EXPECT_NE(r.code, 0);
}

TEST(BenchCommand, ABaselineThatCannotStartIsNamedAndSetteeStillReports) {
  std::string json = Temp("nonode.json");
  Ran r = Bench("--iterations 2 --grep basic-gets --baseline pouchdb --json " + json, "PATH=/nonexistent");
  EXPECT_EQ(r.code, 0) << r.err;
  auto report = ParseReport(Slurp(json));
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->results.size(), 2u);
  EXPECT_EQ(report->results[0].runtime, "settee");
  EXPECT_EQ(report->results[0].outcome, Outcome::kOk);
  EXPECT_EQ(report->results[1].runtime, "pouchdb");
  EXPECT_EQ(report->results[1].outcome, Outcome::kSkipped);
  EXPECT_THAT(report->results[1].error, HasSubstr("node was not found in PATH"));
  EXPECT_THAT(r.out, HasSubstr("skipped: node was not found in PATH"));
}

TEST(BenchCommand, ARemoteThatDoesNotAnswerIsNamed) {
  // Port 1 (tcpmux): nothing listens there, the connection is refused.
  Ran r = Bench("--iterations 1 --grep one-generation --baseline none --remote http://127.0.0.1:1");
  EXPECT_THAT(r.err, HasSubstr("--remote http://127.0.0.1:1 does not answer"));
  EXPECT_THAT(r.out, HasSubstr("pull-replication-one-generation"));
}

TEST(BenchCommand, CompareReadsTwoReports) {
  std::string a = Temp("a.json"), b = Temp("b.json");
  ASSERT_EQ(Bench("--iterations 3 --baseline none --grep basic-gets --json " + a).code, 0);
  ASSERT_EQ(Bench("--iterations 3 --baseline none --grep basic-gets --json " + b).code, 0);
  Ran r = Bench("--compare " + a + " " + b);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("basics/basic-gets"));
  EXPECT_THAT(r.out, HasSubstr("geometric mean B/A for settee over 1 cases"));
  r = Bench("--compare " + a + " /no/such.json");
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read /no/such.json"));
}

}  // namespace
}  // namespace settee::bench
