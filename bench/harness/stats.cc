#include "bench/harness/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <tuple>

namespace settee::bench {

Summary Summarize(std::vector<double> samples) {
  Summary s;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  size_t n = samples.size();
  s.count = static_cast<int>(n);
  s.min = samples.front();
  s.max = samples.back();
  s.median = Median(samples);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return s;
}

double Throughput(const CaseResult& r) {
  if (auto it = r.metrics.find("ops_per_sec"); it != r.metrics.end()) return it->second;
  return r.wall_ms > 0 ? r.operations * 1000.0 / r.wall_ms : 0;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

CaseResult MergeRepeats(const std::vector<CaseResult>& repeats) {
  CaseResult out;
  if (repeats.empty()) {
    out.outcome = Outcome::kFailed;
    out.error = "no run";
    return out;
  }
  out = repeats.front();
  out.samples_ms.clear();
  out.operations = 0;
  out.wall_ms = 0;
  out.metrics.clear();
  static const char* const kSummed[] = {"loop_thread_ms", "loop_cpu_ms", "loop_runq_ms", "remote_cpu_ms", "cpu_ms"};
  // Figures of their own below; any other metric is the median of the runs
  // that have it (a run may itself be a merge: a scaling round's ratios).
  static const std::set<std::string> kOwn = {"loop_thread_ms", "loop_cpu_ms",     "loop_runq_ms",
                                             "remote_cpu_ms",  "cpu_ms",          "repeats",
                                             "ops_per_sec",    "ops_per_sec_min", "ops_per_sec_max",
                                             "ops_per_cpu_s",  "cores_used"};
  std::vector<double> ops;
  std::map<std::string, double> summed;
  std::map<std::string, std::vector<double>> medians;
  double runs = 0;
  for (const CaseResult& r : repeats) {
    auto reps = r.metrics.find("repeats");
    runs += reps == r.metrics.end() ? 1 : reps->second;
    for (const char* m : kSummed) {
      if (auto it = r.metrics.find(m); it != r.metrics.end()) summed[m] += it->second;
    }
    for (const auto& [m, v] : r.metrics) {
      if (kOwn.count(m) == 0 || ((m == "ops_per_cpu_s" || m == "cores_used") && r.outcome == Outcome::kOk)) {
        medians[m].push_back(v);
      }
    }
    if (out.outcome == Outcome::kOk && r.outcome != Outcome::kOk) {
      out.outcome = r.outcome;
      out.error = r.error;
    }
    out.samples_ms.insert(out.samples_ms.end(), r.samples_ms.begin(), r.samples_ms.end());
    out.operations += r.operations;
    out.wall_ms += r.wall_ms;
    if (r.outcome == Outcome::kOk) ops.push_back(Throughput(r));
  }
  out.metrics["repeats"] = runs;
  for (const auto& [m, v] : summed) out.metrics[m] = v;
  for (const auto& [m, v] : medians) out.metrics[m] = Median(v);
  if (!ops.empty()) {
    out.metrics["ops_per_sec"] = Median(ops);
    out.metrics["ops_per_sec_min"] = *std::min_element(ops.begin(), ops.end());
    out.metrics["ops_per_sec_max"] = *std::max_element(ops.begin(), ops.end());
  }
  return out;
}

std::vector<CaseResult> MergeRounds(const std::vector<std::vector<CaseResult>>& rounds) {
  if (rounds.size() == 1) return rounds.front();
  using Key = std::tuple<std::string, std::string, std::string, int>;
  std::vector<Key> order;
  std::map<Key, std::vector<CaseResult>> rows;
  for (const auto& round : rounds) {
    for (const CaseResult& r : round) {
      Key key{r.suite, r.name, r.runtime, r.threads};
      auto& runs = rows[key];
      if (runs.empty()) order.push_back(key);
      runs.push_back(r);
    }
  }
  std::vector<CaseResult> out;
  for (const Key& key : order) {
    const auto& runs = rows[key];
    std::vector<double> medians;
    for (const CaseResult& r : runs) {
      if (r.outcome == Outcome::kOk && !r.samples_ms.empty()) medians.push_back(CaseMedian(r));
    }
    CaseResult merged = MergeRepeats(runs);
    merged.metrics["rounds"] = static_cast<double>(runs.size());
    if (!medians.empty()) merged.metrics["median_of_rounds_ms"] = Median(medians);
    out.push_back(std::move(merged));
  }
  return out;
}

double CaseMedian(const CaseResult& r) {
  if (auto it = r.metrics.find("median_of_rounds_ms"); it != r.metrics.end()) return it->second;
  return Summarize(r.samples_ms).median;
}

Summary SummarizeCase(const CaseResult& r) {
  Summary s = Summarize(r.samples_ms);
  if (auto it = r.metrics.find("median_of_rounds_ms"); it != r.metrics.end() && s.count > 0) s.median = it->second;
  return s;
}

void NoteRoundRatios(const std::vector<std::vector<CaseResult>>& runs, std::vector<CaseResult>* merged) {
  if (runs.empty()) return;
  auto figure = [](const CaseResult& r, const char* metric) {
    if (r.outcome != Outcome::kOk) return 0.0;
    if (metric == nullptr) return Throughput(r);
    auto it = r.metrics.find(metric);
    return it == r.metrics.end() ? 0.0 : it->second;
  };
  for (size_t k = 1; k < runs.size() && k < merged->size(); ++k) {
    for (auto [name, metric] : {std::pair<const char*, const char*>{"scaling_vs_first", nullptr},
                                {"per_cpu_vs_first", "ops_per_cpu_s"}}) {
      std::vector<double> ratios;
      for (size_t i = 0; i < runs[k].size() && i < runs[0].size(); ++i) {
        const double first = figure(runs[0][i], metric), own = figure(runs[k][i], metric);
        if (first > 0 && own > 0) ratios.push_back(own / first);
      }
      if (!ratios.empty()) (*merged)[k].metrics[name] = Median(ratios);
    }
  }
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
