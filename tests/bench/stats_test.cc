// bench/harness/stats.h: the figures every report prints.
#include "bench/harness/stats.h"

#include <cmath>

#include <gtest/gtest.h>

namespace settee::bench {
namespace {

TEST(Summarize, OddCountTakesTheMiddleSample) {
  Summary s = Summarize({5, 1, 3});
  EXPECT_EQ(s.count, 3);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 5);
  EXPECT_DOUBLE_EQ(s.mean, 3);
}

TEST(Summarize, EvenCountAveragesTheTwoMiddleSamplesAsPouchDbDoes) {
  Summary s = Summarize({10, 1, 4, 2});
  EXPECT_DOUBLE_EQ(s.median, 3);  // (2 + 4) / 2
  EXPECT_DOUBLE_EQ(s.mean, 4.25);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
}

TEST(Summarize, OneSampleAndNone) {
  Summary one = Summarize({0.25});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median, 0.25);
  EXPECT_DOUBLE_EQ(one.min, 0.25);
  EXPECT_DOUBLE_EQ(one.max, 0.25);
  Summary none = Summarize({});
  EXPECT_EQ(none.count, 0);
  EXPECT_DOUBLE_EQ(none.median, 0);
  EXPECT_DOUBLE_EQ(none.mean, 0);
}

TEST(Summarize, MedianIsNotTheMeanOfSkewedSamples) {
  // PouchDB's median post against its average in a loop: a few slow
  // iterations move the mean, not the median.
  Summary s = Summarize({0.04, 0.04, 0.05, 0.04, 2.0});
  EXPECT_DOUBLE_EQ(s.median, 0.04);
  EXPECT_NEAR(s.mean, 0.434, 1e-9);
}

TEST(Throughput, IsOperationsPerSecondOfWallTime) {
  CaseResult r;
  r.operations = 2000;
  r.wall_ms = 500;
  EXPECT_DOUBLE_EQ(Throughput(r), 4000);
  r.wall_ms = 0;
  EXPECT_DOUBLE_EQ(Throughput(r), 0);
}

TEST(Median, OfOddAndEvenCountsAndNone) {
  EXPECT_DOUBLE_EQ(Median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(Median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(Median({}), 0);
}

CaseResult OneRun(double operations, double wall_ms, Outcome outcome = Outcome::kOk, const std::string& error = "") {
  CaseResult r;
  r.suite = "basics";
  r.name = "basic-gets";
  r.threads = 2;
  r.outcome = outcome;
  r.error = error;
  r.operations = operations;
  r.wall_ms = wall_ms;
  r.samples_ms.assign(static_cast<size_t>(operations), wall_ms / operations);
  return r;
}

TEST(MergeRepeats, ThroughputIsTheMedianRunsNotTheMeanOverAll) {
  // Three runs of 100 iterations: 1000, 500 (preempted) and 1250 ops/s.
  CaseResult m = MergeRepeats({OneRun(100, 100), OneRun(100, 200), OneRun(100, 80)});
  EXPECT_EQ(m.outcome, Outcome::kOk);
  EXPECT_EQ(m.name, "basic-gets");
  EXPECT_EQ(m.threads, 2);
  EXPECT_DOUBLE_EQ(m.operations, 300);
  EXPECT_DOUBLE_EQ(m.wall_ms, 380);
  EXPECT_EQ(m.samples_ms.size(), 300u);
  EXPECT_DOUBLE_EQ(m.metrics.at("repeats"), 3);
  EXPECT_DOUBLE_EQ(m.metrics.at("ops_per_sec"), 1000);
  EXPECT_DOUBLE_EQ(m.metrics.at("ops_per_sec_min"), 500);
  EXPECT_DOUBLE_EQ(m.metrics.at("ops_per_sec_max"), 1250);
  EXPECT_DOUBLE_EQ(Throughput(m), 1000);  // not 300 / 0.38 s
  EXPECT_EQ(m.metrics.count("ops_per_cpu_s"), 0u);  // the runs did not measure it
  std::vector<CaseResult> runs = {OneRun(100, 100), OneRun(100, 100), OneRun(100, 100)};
  for (int i = 0; i < 3; ++i) {
    runs[i].metrics["cpu_ms"] = 100 + 50 * i;
    runs[i].metrics["ops_per_cpu_s"] = 100 * 1000.0 / (100 + 50 * i);
  }
  m = MergeRepeats(runs);
  EXPECT_DOUBLE_EQ(m.metrics.at("cpu_ms"), 450);
  EXPECT_DOUBLE_EQ(m.metrics.at("ops_per_cpu_s"), 100 * 1000.0 / 150);
}

TEST(MergeRepeats, SumsWhereTheLoopsTimeWent) {
  std::vector<CaseResult> runs = {OneRun(100, 100), OneRun(100, 100)};
  runs[0].metrics = {{"loop_thread_ms", 200}, {"loop_cpu_ms", 150}, {"loop_runq_ms", 30}};
  runs[1].metrics = {{"loop_thread_ms", 180}, {"loop_cpu_ms", 100}, {"loop_runq_ms", 70}};
  CaseResult m = MergeRepeats(runs);
  EXPECT_DOUBLE_EQ(m.metrics.at("loop_thread_ms"), 380);
  EXPECT_DOUBLE_EQ(m.metrics.at("loop_cpu_ms"), 250);
  EXPECT_DOUBLE_EQ(m.metrics.at("loop_runq_ms"), 100);
  EXPECT_EQ(MergeRepeats({OneRun(100, 100)}).metrics.count("loop_cpu_ms"), 0u);  // not measured
}

// A merge of merges (a round of a scaling run merged over --rounds): the
// runs behind it add up, and a metric of no figure of its own, such as a
// scaling round's ratio, is the median of the runs that have it.
TEST(MergeRepeats, MergesOfMergesCountEveryRunAndTakeTheMedianOfOtherMetrics) {
  std::vector<CaseResult> runs = {OneRun(100, 100), OneRun(100, 100), OneRun(100, 100)};
  runs[0].metrics = {{"repeats", 5}, {"scaling_vs_first", 1.9}};
  runs[1].metrics = {{"repeats", 5}, {"scaling_vs_first", 1.2}};
  runs[2].metrics = {{"scaling_vs_first", 1.7}};
  CaseResult m = MergeRepeats(runs);
  EXPECT_DOUBLE_EQ(m.metrics.at("repeats"), 11);
  EXPECT_DOUBLE_EQ(m.metrics.at("scaling_vs_first"), 1.7);
}

CaseResult Timed(const std::string& runtime, const std::string& name, std::vector<double> samples) {
  CaseResult r;
  r.suite = "basics";
  r.name = name;
  r.runtime = runtime;
  r.samples_ms = std::move(samples);
  r.operations = static_cast<double>(r.samples_ms.size());
  r.wall_ms = 10;
  return r;
}

// Three rounds of two cases on two runtimes: one row per case and runtime,
// in the order they first came, with every round's samples, and a median
// that leaves out the round that met a slow stretch (round 2 for settee's
// basic-gets: the pooled samples' median would be 2, between the fast
// rounds' 1 and the slow one's 5).
TEST(MergeRounds, OneRowPerCaseWithTheMedianOfTheRoundsMedians) {
  std::vector<std::vector<CaseResult>> rounds;
  const double slow[] = {1, 5, 1};
  for (int i = 0; i < 3; ++i) {
    rounds.push_back({Timed("settee", "basic-gets", {slow[i], slow[i], 2 * slow[i]}),
                      Timed("settee", "bulk-inserts", {10, 20 + i, 30}),
                      Timed("pouchdb", "basic-gets", {10 + i, 12, 14})});
  }
  std::vector<CaseResult> rows = MergeRounds(rounds);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].runtime, "settee");
  EXPECT_EQ(rows[0].name, "basic-gets");
  EXPECT_EQ(rows[1].name, "bulk-inserts");
  EXPECT_EQ(rows[2].runtime, "pouchdb");
  EXPECT_EQ(rows[0].samples_ms.size(), 9u);
  EXPECT_DOUBLE_EQ(rows[0].operations, 9);
  EXPECT_DOUBLE_EQ(rows[0].metrics.at("rounds"), 3);
  EXPECT_DOUBLE_EQ(Summarize(rows[0].samples_ms).median, 2);
  EXPECT_DOUBLE_EQ(rows[0].metrics.at("median_of_rounds_ms"), 1);
  EXPECT_DOUBLE_EQ(CaseMedian(rows[0]), 1);
  Summary s = SummarizeCase(rows[0]);
  EXPECT_DOUBLE_EQ(s.median, 1);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 10);
  EXPECT_DOUBLE_EQ(CaseMedian(rows[1]), 21);
  EXPECT_DOUBLE_EQ(CaseMedian(rows[2]), 12);
  // A round that failed gives the row its outcome and no median.
  rounds[1][2].outcome = Outcome::kFailed;
  rounds[1][2].error = "boom";
  rounds[1][2].samples_ms.clear();
  rows = MergeRounds(rounds);
  EXPECT_EQ(rows[2].outcome, Outcome::kFailed);
  EXPECT_EQ(rows[2].error, "boom");
  EXPECT_DOUBLE_EQ(rows[2].metrics.at("median_of_rounds_ms"), 12);  // of the two that passed
  // One round: its rows as they are.
  rows = MergeRounds({rounds[0]});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].metrics.count("rounds"), 0u);
  EXPECT_DOUBLE_EQ(CaseMedian(rows[0]), 1);
}

// Rounds of a 1-thread and a 2-thread run: the ratio is the median of the
// rounds' own ratios. A round whose 2-thread run lost a core (round 1) or
// whose 1-thread run did (round 3) moves the ratio of the medians of each
// count's runs, not the median of the rounds' ratios.
TEST(NoteRoundRatios, TheMedianOverRoundsOfOneRoundsRatio) {
  std::vector<std::vector<CaseResult>> runs(2);
  const double one[] = {1000, 1000, 800, 500, 1000};
  const double two[] = {1800, 1000, 1440, 900, 1800};
  for (int i = 0; i < 5; ++i) {
    runs[0].push_back(OneRun(100, 100 * 1000 / one[i]));
    runs[1].push_back(OneRun(200, 200 * 1000 / two[i]));
    runs[0].back().metrics["ops_per_cpu_s"] = 1000;
    runs[1].back().metrics["ops_per_cpu_s"] = i == 1 ? 500 : 900;
  }
  std::vector<CaseResult> merged = {MergeRepeats(runs[0]), MergeRepeats(runs[1])};
  NoteRoundRatios(runs, &merged);
  // Rounds' ratios: 1.8, 1.0, 1.8, 1.8, 1.8; the medians' ratio 1440 / 1000.
  EXPECT_NEAR(merged[1].metrics.at("scaling_vs_first"), 1.8, 1e-12);
  EXPECT_NEAR(merged[1].metrics.at("per_cpu_vs_first"), 0.9, 1e-12);
  EXPECT_EQ(merged[0].metrics.count("scaling_vs_first"), 0u);
  // A cost the second thread brings to every round stays in the ratio.
  for (auto& r : runs[1]) r.wall_ms *= 1.5;
  NoteRoundRatios(runs, &merged);
  EXPECT_NEAR(merged[1].metrics.at("scaling_vs_first"), 1.2, 1e-12);
}

TEST(NoteRoundRatios, RoundsWithAFailedRunOrNoFigureAreLeftOut) {
  std::vector<std::vector<CaseResult>> runs = {{OneRun(100, 100), OneRun(100, 100), OneRun(100, 100)},
                                               {OneRun(200, 100), OneRun(3, 1, Outcome::kFailed, "boom"),
                                                OneRun(200, 125)}};
  std::vector<CaseResult> merged = {MergeRepeats(runs[0]), MergeRepeats(runs[1])};
  NoteRoundRatios(runs, &merged);
  EXPECT_NEAR(merged[1].metrics.at("scaling_vs_first"), (2.0 + 1.6) / 2, 1e-12);
  EXPECT_EQ(merged[1].metrics.count("per_cpu_vs_first"), 0u);  // no run measured it
}

TEST(MergeRepeats, AFailedRunFailsTheRowAndKeepsTheOthersFigures) {
  CaseResult m = MergeRepeats({OneRun(100, 100), OneRun(3, 10, Outcome::kFailed, "iteration 3: boom"), OneRun(100, 50)});
  EXPECT_EQ(m.outcome, Outcome::kFailed);
  EXPECT_EQ(m.error, "iteration 3: boom");
  EXPECT_DOUBLE_EQ(m.metrics.at("ops_per_sec"), 1500);  // of the two that passed
  EXPECT_EQ(MergeRepeats({}).outcome, Outcome::kFailed);
}

TEST(GeometricMean, OfFactors) {
  EXPECT_DOUBLE_EQ(GeometricMean({4, 16}), 8);
  EXPECT_NEAR(GeometricMean({10, 10, 10}), 10, 1e-12);
  EXPECT_NEAR(GeometricMean({0.5, 2}), 1, 1e-12);
}

TEST(GeometricMean, SkipsFactorsThatAreNotPositiveOrFinite) {
  EXPECT_DOUBLE_EQ(GeometricMean({4, 0, -3, 16, INFINITY, NAN}), 8);
  EXPECT_DOUBLE_EQ(GeometricMean({}), 0);
  EXPECT_DOUBLE_EQ(GeometricMean({0}), 0);
}

}  // namespace
}  // namespace settee::bench
