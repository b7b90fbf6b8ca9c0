// Statistics of a `settee bench` case: the figures the report prints and
// compares. Pure functions over plain values; thread-safe.
#pragma once

#include <vector>

#include "bench/harness/case_result.h"

namespace settee::bench {

struct Summary {
  int count = 0;      // samples
  double median = 0;  // PouchDB's figure: the middle sample, or the mean of the two middle ones
  double min = 0;
  double max = 0;
  double mean = 0;
};

// The summary of `samples` (all zero when empty).
Summary Summarize(std::vector<double> samples);

// Completed operations per second over the case's wall time, all threads
// together (0 when there is no wall time). A case run several times
// (MergeRepeats) carries the median of its runs' figures as the metric
// "ops_per_sec", which this returns instead.
double Throughput(const CaseResult& r);

// The middle value (the mean of the two middle ones for an even count; 0
// when empty).
double Median(std::vector<double> values);

// One row for a case run `repeats.size()` times over fresh databases (all
// rows of one suite, name, runtime and thread count): every run's samples,
// operations and wall time together, and the metrics "repeats" (the runs
// behind it, counting a run that is itself a merge as its own "repeats"),
// "ops_per_sec" (the median of the runs' throughputs: a run that lost the
// CPU for a while does not move it), "ops_per_sec_min" and
// "ops_per_sec_max"; "cpu_ms" summed and "ops_per_cpu_s" the median run's
// when the runs have them, "cores_used" the median run's; "loop_thread_ms",
// "loop_cpu_ms", "loop_runq_ms" (where the isolate threads' loops went) and
// "remote_cpu_ms" (the replication server's CPU) summed; any other metric
// the median of the runs that have it. The first run that did not pass
// gives the row its outcome and error. Empty: an empty kFailed row.
CaseResult MergeRepeats(const std::vector<CaseResult>& repeats);

// For a case run at several thread counts in rounds (runs[k][i]: count k's
// run in round i; runs[0] the first count's), sets on (*merged)[k], k > 0,
// the metrics "scaling_vs_first": the median over the rounds of the run's
// throughput over the first count's run's in the same round, and
// "per_cpu_vs_first": the same for "ops_per_cpu_s". Pairing runs of one
// round compares runs taken a moment apart, so a stretch in which the
// machine gave the process less leaves the ratio alone unless it covers
// most rounds; a cost of the second thread is in every round and stays.
// Rounds in which either run did not pass, or has no figure, are left out;
// a metric with no round left is not set.
void NoteRoundRatios(const std::vector<std::vector<CaseResult>>& runs, std::vector<CaseResult>* merged);

// The rows of a run made in rounds (`settee bench --rounds N`: every
// selected suite, settee's part then the baseline's, N times over), one per
// suite, name, runtime and thread count in the order they first came:
// MergeRepeats of that case's rows, with the metrics "rounds" and
// "median_of_rounds_ms", the median over the rounds of each round's median
// (rounds that passed), which CaseMedian and SummarizeCase give as the
// case's median. A median per round, rather than one over the pooled
// samples, leaves a round that met a slow stretch of a shared machine out
// of the figure instead of shifting it. One round: its rows unchanged.
std::vector<CaseResult> MergeRounds(const std::vector<std::vector<CaseResult>>& rounds);
// The case's median per iteration: "median_of_rounds_ms" when it was run in
// rounds, else the median of its samples.
double CaseMedian(const CaseResult& r);
// Summarize(r.samples_ms) with CaseMedian's median.
Summary SummarizeCase(const CaseResult& r);
// The geometric mean of the positive values of `factors` (0 when none).
double GeometricMean(const std::vector<double>& factors);

}  // namespace settee::bench
