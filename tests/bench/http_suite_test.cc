// The http suite: its figures from wrk reports, its error paths (no wrk, no
// pouchdb-server, a server that will not start), and short real runs of
// `settee serve` under wrk.
#include "bench/harness/http_suite.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "bench/harness/child_process.h"
#include "bench/harness/subprocess.h"

namespace settee::bench {
namespace {

BenchOptions Options(int threads) {
  BenchOptions o;
  o.threads = threads;
  o.baseline = "none";
  o.source_dir = SETTEE_SOURCE_DIR;
#ifdef SETTEE_BINARY
  o.settee_binary = SETTEE_BINARY;
#endif
  return o;
}

HttpSuiteConfig ShortConfig() {
  HttpSuiteConfig c;
  c.seconds_per_row = 1;
  c.install_missing = false;
  c.pouchdb_server = "/nonexistent/pouchdb-server";  // the baseline's own runs are the harness's
  return c;
}

WrkReport Parsed(const std::string& file) {
  std::ifstream in(std::string(SETTEE_TEST_DATA_DIR) + "/wrk/" + file);
  std::stringstream text;
  text << in.rdbuf();
  auto r = ParseWrkOutput(text.str());
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : WrkReport{};
}

TEST(HttpSuiteTest, IsASuiteRunner) {
  SuiteRunner runner = RunHttpSuite;  // what the harness registers
  EXPECT_TRUE(runner);
}

TEST(HttpSuiteTest, WrkGetsTheFreeCores) {
  EXPECT_EQ(WrkThreads(2, 1, 10), 1);
  EXPECT_EQ(WrkThreads(2, 2, 10), 1);  // none free: still one
  EXPECT_EQ(WrkThreads(8, 2, 10), 6);
  EXPECT_EQ(WrkThreads(8, 2, 1), 1);   // never more threads than connections
  EXPECT_EQ(WrkThreads(32, 1, 10), 10);
}

TEST(HttpSuiteTest, RowFromACleanRun) {
  CaseResult row;
  FillRowFromWrk(Parsed("get_ok.txt"), &row);
  EXPECT_EQ(row.outcome, Outcome::kOk);
  EXPECT_EQ(row.operations, 33641);
  EXPECT_EQ(row.wall_ms, 1010);
  ASSERT_EQ(row.samples_ms.size(), 1u);
  EXPECT_DOUBLE_EQ(row.samples_ms[0], 0.6008);
  EXPECT_DOUBLE_EQ(row.metrics.at("ops_per_sec"), 33296.74);
  EXPECT_DOUBLE_EQ(row.metrics.at("error_pct"), 0);
  EXPECT_DOUBLE_EQ(row.metrics.at("avg_ms"), 0.6008);
  EXPECT_DOUBLE_EQ(row.metrics.at("max_ms"), 8.59);
  EXPECT_DOUBLE_EQ(row.metrics.at("p90_ms"), 2.08);
  EXPECT_DOUBLE_EQ(row.metrics.at("p50_ms"), 0.163);
  EXPECT_DOUBLE_EQ(row.metrics.at("p99_ms"), 4.94);
}

TEST(HttpSuiteTest, RowWithSomeErrorsKeepsItsFigures) {
  CaseResult row;
  FillRowFromWrk(Parsed("socket_errors.txt"), &row);
  EXPECT_EQ(row.outcome, Outcome::kOk);
  EXPECT_NEAR(row.metrics.at("error_pct"), 66.67, 0.01);
}

TEST(HttpSuiteTest, RowWithoutAGoodResponseFails) {
  for (const char* file : {"non2xx.txt", "no_responses.txt"}) {
    CaseResult row;
    FillRowFromWrk(Parsed(file), &row);
    EXPECT_EQ(row.outcome, Outcome::kFailed) << file;
    EXPECT_NE(row.error.find("no successful response"), std::string::npos) << file;
    EXPECT_TRUE(row.samples_ms.empty()) << file;
  }
}

TEST(HttpSuiteTest, MissingWrkSkipsWrksRowsByName) {
  BenchOptions o = Options(2);
  o.baseline = "pouchdb";
  o.grep = "^http/(?!.*-lg)";  // wrk's rows only: no server starts
  HttpSuiteConfig c = ShortConfig();
  c.wrk = "settee-no-such-wrk";
  auto rows = RunHttpSuiteWith(o, nullptr, c);
  // (7 requests x 2 concurrencies + 3 pipelined at c=10) x (settee 1 loop,
  // settee 2 loops, pouchdb-server)
  ASSERT_EQ(rows.size(), 51u);
  for (const CaseResult& r : rows) {
    EXPECT_EQ(r.outcome, Outcome::kSkipped) << r.name;
    EXPECT_NE(r.error.find("wrk is not installed"), std::string::npos);
  }
  EXPECT_EQ(rows[0].name, "get-doc c=1 loops=1");
  EXPECT_EQ(rows[0].runtime, "settee");
  EXPECT_EQ(rows[3].name, "get-doc-100-attachments c=1 loops=1");
  EXPECT_EQ(rows[4].name, "view-js-reduce c=1 loops=1");
  EXPECT_EQ(rows[5].name, "post-doc-10-dbs c=1 loops=1");
  EXPECT_EQ(rows[6].name, "server-root c=1 loops=1");
  EXPECT_EQ(rows[7].name, "get-doc c=10 loops=1");
  // The pipelined rows run at 10 connections only.
  EXPECT_EQ(rows[14].name, "server-root-x16 c=10 loops=1");
  EXPECT_EQ(rows[15].name, "post-doc-x16 c=10 loops=1");
  EXPECT_EQ(rows[16].name, "post-own-db-x16 c=10 loops=1");
  EXPECT_EQ(rows[17].name, "get-doc c=1 loops=2");
  EXPECT_EQ(rows[17].threads, 2);
  EXPECT_EQ(rows[34].runtime, "pouchdb-server");
  EXPECT_EQ(rows[34].name, "get-doc c=1 loops=1");
}

// The load generator needs no wrk: without it, its rows still run beside
// wrk's skipped ones.
TEST(HttpSuiteTest, MissingWrkStillRunsTheLoadGeneratorsRows) {
  BenchOptions o = Options(1);
  o.grep = "^http/server-root(-lg)? c=10 ";
  HttpSuiteConfig c = ShortConfig();
  c.wrk = "settee-no-such-wrk";
  auto rows = RunHttpSuiteWith(o, nullptr, c);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].name, "server-root c=10 loops=1");
  EXPECT_EQ(rows[0].outcome, Outcome::kSkipped);
  EXPECT_EQ(rows[1].name, "server-root-lg c=10 loops=1");
  ASSERT_EQ(rows[1].outcome, Outcome::kOk) << rows[1].error;
  EXPECT_GT(rows[1].operations, 0);
}

CaseResult WrkRow(const std::string& name, const std::string& runtime, int threads, double ops, double cpu_us) {
  CaseResult r;
  r.suite = "http";
  r.name = name;
  r.runtime = runtime;
  r.threads = threads;
  r.metrics["ops_per_sec"] = ops;
  if (cpu_us > 0) r.metrics["server_cpu_us_per_req"] = cpu_us;
  return r;
}

TEST(HttpSuiteTest, LoopScalingComparesEachRowWithItsOneLoopTwin) {
  std::vector<CaseResult> rows = {
      WrkRow("post-doc c=10 loops=1", "settee", 1, 20000, 40),
      WrkRow("server-root c=10 loops=1", "settee", 1, 50000, 10),
      WrkRow("post-doc c=10 loops=2", "settee", 2, 30000, 44),
      WrkRow("server-root c=10 loops=2", "settee", 2, 60000, 0),  // no CPU figure
      WrkRow("get-doc c=10 loops=2", "settee", 2, 1000, 5),       // no twin
      WrkRow("post-doc c=10 loops=1", "pouchdb-server", 1, 900, 100),
  };
  rows.back().threads = 1;
  rows.push_back(WrkRow("post-doc-lg c=10 loops=1", "settee", 1, 40000, 20));
  rows.back().metrics["client_cpu_us_per_req"] = 5;
  rows.push_back(WrkRow("post-doc-lg c=10 loops=2", "settee", 2, 60000, 21));
  rows.back().metrics["client_cpu_us_per_req"] = 6;
  rows.push_back(WrkRow("server-root-lg c=10 loops=1", "settee", 1, 90000, 1));
  rows.back().metrics["client_cpu_us_per_req"] = 1;
  rows.push_back(WrkRow("server-root-lg c=10 loops=2", "settee", 2, 90000, 1));
  AddLoopScaling(&rows, 2);
  EXPECT_DOUBLE_EQ(rows[2].metrics.at("ops_vs_1_loop"), 1.5);
  EXPECT_DOUBLE_EQ(rows[2].metrics.at("cpu_per_req_vs_1_loop"), 1.1);
  EXPECT_DOUBLE_EQ(rows[3].metrics.at("ops_vs_1_loop"), 1.2);
  EXPECT_EQ(rows[3].metrics.count("cpu_per_req_vs_1_loop"), 0u);
  EXPECT_EQ(rows[4].metrics.count("ops_vs_1_loop"), 0u);
  for (int i : {0, 1, 5}) EXPECT_EQ(rows[i].metrics.count("ops_vs_1_loop"), 0u) << rows[i].name;
  // wrk's rows have no client figure, so no ceiling.
  EXPECT_EQ(rows[2].metrics.count("ceiling_vs_1_loop"), 0u);
  // The ceiling from the 1-loop row's costs: 2 cores x 20 / (20 + 5) = 1.6.
  EXPECT_DOUBLE_EQ(rows[7].metrics.at("ops_vs_1_loop"), 1.5);
  EXPECT_DOUBLE_EQ(rows[7].metrics.at("ceiling_vs_1_loop"), 1.6);
  // Never above the loops: 2 x 1 / (1 + 1) = 1 here, and a cheap client on
  // 8 cores would still cap at 2 loops.
  EXPECT_DOUBLE_EQ(rows[9].metrics.at("ceiling_vs_1_loop"), 1.0);
  AddLoopScaling(&rows, 8);
  EXPECT_DOUBLE_EQ(rows[7].metrics.at("ceiling_vs_1_loop"), 2.0);
}

TEST(HttpSuiteTest, GrepSelectsRows) {
  BenchOptions o = Options(1);
  HttpSuiteConfig c = ShortConfig();
  c.wrk = "settee-no-such-wrk";
  o.grep = "post-doc c=10 ";
  auto rows = RunHttpSuiteWith(o, nullptr, c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].name, "post-doc c=10 loops=1");
  o.grep = "^eval/";
  EXPECT_TRUE(RunHttpSuiteWith(o, nullptr, c).empty());
  o.grep = "[";
  rows = RunHttpSuiteWith(o, nullptr, c);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
}

TEST(HttpSuiteTest, AServerThatDoesNotStartFailsItsRows) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  BenchOptions o = Options(1);
  o.settee_binary = "/bin/false";
  o.grep = "get-doc c=";
  auto rows = RunHttpSuiteWith(o, nullptr, ShortConfig());
  ASSERT_EQ(rows.size(), 2u);
  for (const CaseResult& r : rows) {
    EXPECT_EQ(r.outcome, Outcome::kFailed);
    EXPECT_NE(r.error.find("exited with status 1"), std::string::npos) << r.error;
  }
  o.settee_binary = "/nonexistent/settee";
  rows = RunHttpSuiteWith(o, nullptr, ShortConfig());
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NE(rows[0].error.find("/nonexistent/settee"), std::string::npos) << rows[0].error;
}

#ifdef SETTEE_BINARY
// One second per row of the real thing: settee serve, seeded, under wrk.
TEST(HttpSuiteTest, SetteeServesUnderWrk) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  BenchOptions o = Options(2);
  o.baseline = "pouchdb";
  o.grep = "^http/(get-doc c=1 |post-doc c=10 |all-docs-limit10 c=10 loops=2)";
  std::vector<Progress> seen;
  auto rows = RunHttpSuiteWith(o, [&](const Progress& p) { seen.push_back(p); }, ShortConfig());
  ASSERT_EQ(rows.size(), 7u);  // settee: 2 (1 loop) + 3 (2 loops); pouchdb-server: 2
  for (int i = 0; i < 5; ++i) {
    const CaseResult& r = rows[i];
    EXPECT_EQ(r.runtime, "settee");
    ASSERT_EQ(r.outcome, Outcome::kOk) << r.name << ": " << r.error;
    EXPECT_GT(r.operations, 0) << r.name;
    EXPECT_GT(r.metrics.at("ops_per_sec"), 0);
    EXPECT_EQ(r.metrics.at("error_pct"), 0) << r.name;
    EXPECT_GT(r.metrics.at("p90_ms"), 0);
    EXPECT_GE(r.metrics.at("max_ms"), r.metrics.at("p90_ms"));
    EXPECT_GT(r.metrics.at("server_rss_mb"), 0);
    EXPECT_GT(r.metrics.at("server_cpu_us_per_req"), 0);
  }
  // The 2-loop rows carry their ratios to the 1-loop rows of this run.
  EXPECT_GT(rows[4].metrics.at("ops_vs_1_loop"), 0);
  EXPECT_GT(rows[4].metrics.at("cpu_per_req_vs_1_loop"), 0);
  EXPECT_GT(rows[2].metrics.at("ops_vs_1_loop"), 0);        // get-doc c=1 loops=2
  EXPECT_EQ(rows[3].metrics.count("ops_vs_1_loop"), 0u);  // all-docs c=10: no 1-loop row ran
  EXPECT_EQ(rows[1].name, "post-doc c=10 loops=1");
  EXPECT_EQ(rows[4].name, "post-doc c=10 loops=2");
  EXPECT_EQ(rows[4].threads, 2);
  for (int i = 5; i < 7; ++i) {
    EXPECT_EQ(rows[i].runtime, "pouchdb-server");
    EXPECT_EQ(rows[i].outcome, Outcome::kSkipped);
    EXPECT_NE(rows[i].error.find("not installed"), std::string::npos) << rows[i].error;
  }
  ASSERT_EQ(seen.size(), 7u);
  EXPECT_EQ(seen.back().case_index, 6);  // 0-based, as the harness prints index + 1
  EXPECT_EQ(seen.back().runtime, "pouchdb-server");
  EXPECT_EQ(seen.back().case_count, 7);
}

// The one row `grep` selects ran under wrk with no failed request (a 404,
// e.g. no such database, would count as one).
void ExpectRowAnswersEveryRequest(const std::string& grep) {
  BenchOptions o = Options(1);
  o.grep = grep;
  auto rows = RunHttpSuiteWith(o, nullptr, ShortConfig());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kOk) << rows[0].error;
  EXPECT_GT(rows[0].operations, 0);
  EXPECT_EQ(rows[0].metrics.at("error_pct"), 0);
}

// post_dbs.lua's POSTs land in the seeded databases bench-0 .. bench-9.
TEST(HttpSuiteTest, PostsOverTenDatabasesUnderWrk) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  ExpectRowAnswersEveryRequest("^http/post-doc-10-dbs c=10 ");
}

// pipeline.lua's batches of 16 are answered request by request: GET /, and
// POSTs from each of the 10 connections into its own database (a thread
// past bench-9 would get 404s).
TEST(HttpSuiteTest, PipelinedRowsUnderWrk) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  ExpectRowAnswersEveryRequest("^http/server-root-x16 c=10 ");
  ExpectRowAnswersEveryRequest("^http/post-own-db-x16 c=10 ");
}

// The load generator's rows: every request answered, GET / and POSTs from
// each connection into its own database, one at a time and pipelined, with
// the client's CPU measured; the 2-loop row gets its ratios and ceiling.
TEST(HttpSuiteTest, LoadGeneratorRows) {
  BenchOptions o = Options(2);
  o.grep = "^http/(server-root-lg|post-own-db-lg-x16) c=10 ";
  auto rows = RunHttpSuiteWith(o, nullptr, ShortConfig());
  ASSERT_EQ(rows.size(), 4u);
  for (const CaseResult& r : rows) {
    ASSERT_EQ(r.outcome, Outcome::kOk) << r.name << ": " << r.error;
    EXPECT_GT(r.operations, 0) << r.name;
    EXPECT_EQ(r.metrics.at("error_pct"), 0) << r.name;
    EXPECT_GT(r.metrics.at("client_cpu_us_per_req"), 0) << r.name;
    EXPECT_GT(r.metrics.at("client_cpu_pct"), 0) << r.name;
    EXPECT_GT(r.metrics.at("server_cpu_pct"), 0) << r.name;
    EXPECT_GE(r.metrics.at("max_ms"), r.metrics.at("p90_ms")) << r.name;
  }
  EXPECT_EQ(rows[1].name, "post-own-db-lg-x16 c=10 loops=1");
  EXPECT_EQ(rows[1].metrics.at("pipeline"), 16);
  EXPECT_GT(rows[3].metrics.at("ops_vs_1_loop"), 0);
  EXPECT_GT(rows[3].metrics.at("ceiling_vs_1_loop"), 0);
}

// The view query with a JavaScript reduce answers every request.
TEST(HttpSuiteTest, ViewWithJsReduceUnderWrk) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  ExpectRowAnswersEveryRequest("^http/view-js-reduce c=10 ");
}

TEST(HttpSuiteTest, LevelDbBackend) {
  if (FindInPath("wrk").empty()) GTEST_SKIP() << "no wrk";
  BenchOptions o = Options(1);
  o.backend = "leveldb";
  o.grep = "post-doc c=1 ";
  auto rows = RunHttpSuiteWith(o, nullptr, ShortConfig());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kOk) << rows[0].error;
  EXPECT_EQ(rows[0].metrics.at("error_pct"), 0);
}
#endif

}  // namespace
}  // namespace settee::bench
