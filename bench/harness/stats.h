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
// together (0 when there is no wall time).
double Throughput(const CaseResult& r);

// The geometric mean of the positive values of `factors` (0 when none).
double GeometricMean(const std::vector<double>& factors);

}  // namespace settee::bench
