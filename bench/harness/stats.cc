#include "bench/harness/stats.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string>

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
  out.metrics.erase("ops_per_sec");
  out.metrics.erase("ops_per_cpu_s");
  out.metrics.erase("cpu_ms");
  out.metrics.erase("cores_used");
  std::vector<double> ops, per_cpu, cores;
  double cpu_ms = 0;
  static const char* const kSummed[] = {"loop_thread_ms", "loop_cpu_ms", "loop_runq_ms", "remote_cpu_ms"};
  std::map<std::string, double> summed;
  for (const char* m : kSummed) out.metrics.erase(m);
  for (const CaseResult& r : repeats) {
    if (auto it = r.metrics.find("cpu_ms"); it != r.metrics.end()) cpu_ms += it->second;
    for (const char* m : kSummed) {
      if (auto it = r.metrics.find(m); it != r.metrics.end()) summed[m] += it->second;
    }
    if (auto it = r.metrics.find("ops_per_cpu_s"); it != r.metrics.end() && r.outcome == Outcome::kOk) {
      per_cpu.push_back(it->second);
    }
    if (auto it = r.metrics.find("cores_used"); it != r.metrics.end() && r.outcome == Outcome::kOk) {
      cores.push_back(it->second);
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
  out.metrics["repeats"] = static_cast<double>(repeats.size());
  for (const auto& [m, v] : summed) out.metrics[m] = v;
  if (cpu_ms > 0) out.metrics["cpu_ms"] = cpu_ms;
  if (!per_cpu.empty()) out.metrics["ops_per_cpu_s"] = Median(per_cpu);
  if (!cores.empty()) out.metrics["cores_used"] = Median(cores);
  if (!ops.empty()) {
    out.metrics["ops_per_sec"] = Median(ops);
    out.metrics["ops_per_sec_min"] = *std::min_element(ops.begin(), ops.end());
    out.metrics["ops_per_sec_max"] = *std::max_element(ops.begin(), ops.end());
  }
  return out;
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
