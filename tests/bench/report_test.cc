// bench/harness/report.h: JSON round trip, pairing settee with its
// baseline, the table, and --compare.
#include "bench/harness/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace settee::bench {
namespace {

using testing::HasSubstr;

CaseResult Row(const std::string& name, const std::string& runtime, std::vector<double> samples,
               Outcome outcome = Outcome::kOk, const std::string& error = "") {
  CaseResult r;
  r.suite = "basics";
  r.name = name;
  r.runtime = runtime;
  r.outcome = outcome;
  r.error = error;
  r.samples_ms = std::move(samples);
  r.operations = static_cast<double>(r.samples_ms.size());
  r.wall_ms = 10;
  return r;
}

Report Sample() {
  Report r;
  r.started = "2026-12-01T08:00:00Z";
  r.elapsed_s = 12.5;
  r.machine = {"host", "Linux 6.1 x86_64", "Test CPU", 2};
  r.versions = {{"settee", "0.1.0"}, {"pouchdb", "9.0.0"}, {"node", "20.20.2"}};
  r.options.threads = 2;
  r.options.backend = "leveldb";
  r.options.suites = {"basics"};
  r.options.grep = "gets";
  r.options.iterations = 3;
  r.peak_rss_mb = {{"settee", 100}, {"pouchdb", 800}};
  r.results.push_back(Row("basic-gets", "settee", {0.001, 0.002, 0.003}));
  r.results.push_back(Row("basic-inserts", "settee", {0.01, 0.01}));
  r.results.push_back(Row("pull-replication-one-generation", "settee", {}, Outcome::kUnsupported,
                          "replication is not built yet"));
  r.results.push_back(Row("basic-gets", "pouchdb", {0.04, 0.02, 0.05}));
  r.results.push_back(Row("basic-inserts", "pouchdb", {0.4, 0.4}));
  r.results.push_back(Row("pull-replication-one-generation", "pouchdb", {1000}));
  r.results[0].metrics["p90_ms"] = 0.003;
  return r;
}

TEST(Report, JsonRoundTripKeepsEveryCaseAndFigure) {
  Report r = Sample();
  auto parsed = ParseReport(ToJson(r));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_EQ(parsed->results.size(), r.results.size());
  for (size_t i = 0; i < r.results.size(); ++i) {
    EXPECT_EQ(parsed->results[i].name, r.results[i].name);
    EXPECT_EQ(parsed->results[i].runtime, r.results[i].runtime);
    EXPECT_EQ(parsed->results[i].outcome, r.results[i].outcome);
    EXPECT_EQ(parsed->results[i].error, r.results[i].error);
    EXPECT_EQ(parsed->results[i].samples_ms, r.results[i].samples_ms);
  }
  EXPECT_DOUBLE_EQ(parsed->results[0].metrics.at("p90_ms"), 0.003);
  EXPECT_EQ(parsed->machine.cpu_model, "Test CPU");
  EXPECT_EQ(parsed->machine.cores, 2);
  EXPECT_EQ(parsed->versions.at("pouchdb"), "9.0.0");
  EXPECT_EQ(parsed->options.threads, 2);
  EXPECT_EQ(parsed->options.backend, "leveldb");
  EXPECT_EQ(parsed->options.grep, "gets");
  EXPECT_EQ(parsed->options.suites, std::vector<std::string>{"basics"});
  EXPECT_DOUBLE_EQ(parsed->peak_rss_mb.at("pouchdb"), 800);
  EXPECT_EQ(parsed->started, r.started);
}

TEST(Report, JsonCarriesTheSummaryFigures) {
  std::string json = ToJson(Sample());
  EXPECT_THAT(json, HasSubstr("\"median_ms\": 0.002"));
  EXPECT_THAT(json, HasSubstr("\"outcome\": \"unsupported\""));
  EXPECT_THAT(json, HasSubstr("\"cases_compared\": 2"));
}

TEST(Report, ParseRejectsWhatIsNotAReport) {
  EXPECT_FALSE(ParseReport("not json").ok());
  EXPECT_FALSE(ParseReport("{\"cases\": []}").ok());
  EXPECT_FALSE(ParseReport("{\"settee_bench\": 1, \"cases\": [{\"suite\": \"basics\"}]}").ok());
}

TEST(Report, PairsEachSetteeCaseWithItsBaselineAndFactor) {
  Report r = Sample();
  auto pairs = PairCases(r);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].settee->name, "basic-gets");
  EXPECT_EQ(pairs[0].baseline->runtime, "pouchdb");
  EXPECT_DOUBLE_EQ(pairs[0].factor, 20);  // 0.04 / 0.002
  EXPECT_DOUBLE_EQ(pairs[1].factor, 40);  // 0.4 / 0.01
  EXPECT_DOUBLE_EQ(pairs[2].factor, 0);   // settee unsupported: no factor
  int compared = 0;
  EXPECT_NEAR(GeometricMeanFactor(pairs, &compared), std::sqrt(20.0 * 40.0), 1e-9);
  EXPECT_EQ(compared, 2);
}

TEST(Report, TableShowsBothMediansFactorsRssAndUnsupported) {
  std::string t = FormatTable(Sample());
  EXPECT_THAT(t, HasSubstr("leveldb backend, 2 threads"));
  EXPECT_THAT(t, HasSubstr("PouchDB 9.0.0 on node 20.20.2"));
  EXPECT_THAT(t, HasSubstr("20.0x"));
  EXPECT_THAT(t, HasSubstr("40.0x"));
  EXPECT_THAT(t, HasSubstr("unsupported: replication is not built yet"));
  EXPECT_THAT(t, HasSubstr("geometric mean factor over 2 cases both ran: 28.3x"));
  EXPECT_THAT(t, HasSubstr("pouchdb 800 MB, settee 100 MB"));
}

TEST(Compare, GivesBTimeRelativeToAPerCaseAndRuntime) {
  Report a = Sample();
  Report b = Sample();
  b.machine.cpu_model = "ARM phone";
  b.results[0].samples_ms = {0.004, 0.004, 0.004};  // settee basic-gets: 2x A's time
  b.results[3].samples_ms = {0.01, 0.01, 0.01};     // pouchdb basic-gets: a quarter
  b.results[1].outcome = Outcome::kFailed;          // not compared
  auto rows = CompareReports(a, b);
  ASSERT_EQ(rows.size(), 4u);  // settee gets; pouchdb gets, inserts, replication
  EXPECT_EQ(rows[0].name, "basic-gets");
  EXPECT_EQ(rows[0].runtime, "settee");
  EXPECT_DOUBLE_EQ(rows[0].ratio, 2);
  EXPECT_EQ(rows[1].runtime, "pouchdb");
  EXPECT_DOUBLE_EQ(rows[1].ratio, 0.25);
  std::string text = FormatCompare(a, b);
  EXPECT_THAT(text, HasSubstr("A: Test CPU"));
  EXPECT_THAT(text, HasSubstr("B: ARM phone"));
  EXPECT_THAT(text, HasSubstr("geometric mean B/A for settee over 1 cases: 2.00x"));
  EXPECT_THAT(text, HasSubstr("geometric mean B/A for pouchdb over 3 cases: 0.63x"));  // (0.25*1*1)^(1/3)
}

TEST(Compare, ReportsWithNothingInCommonSaySo) {
  Report a = Sample();
  Report b;
  EXPECT_TRUE(CompareReports(a, b).empty());
  EXPECT_THAT(FormatCompare(a, b), HasSubstr("no case ran ok in both reports"));
}

}  // namespace
}  // namespace settee::bench
