#include "bench/harness/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace settee::bench {

Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  s.count = static_cast<int>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return s;
}

double Throughput(const CaseResult& r) {
  return r.wall_ms > 0 ? r.operations * 1000.0 / r.wall_ms : 0;
}

double GeometricMean(const std::vector<double>& factors) {
  double log_sum = 0;
  int n = 0;
  for (double f : factors) {
    if (f > 0 && std::isfinite(f)) {
      log_sum += std::log(f);
      ++n;
    }
  }
  return n ? std::exp(log_sum / n) : 0;
}

}  // namespace settee::bench
