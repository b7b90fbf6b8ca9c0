// bench_suites: runs the eval and http suites of `settee bench` on their own
// and prints their rows, one line each.
//
//   build/bench/bench_suites [--suite eval,http] [--threads N] [--backend memory|leveldb]
//                            [--baseline pouchdb|none] [--iterations K] [--grep RE]
//                            [--http-seconds S] [--settee build/settee]
#include <unistd.h>

#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/harness/eval_suite.h"
#include "bench/harness/http_suite.h"

namespace {

using settee::bench::CaseResult;
using settee::bench::Outcome;

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kFailed: return "FAILED";
    case Outcome::kUnsupported: return "unsupported";
    case Outcome::kSkipped: return "skipped";
  }
  return "?";
}

std::string Metric(const CaseResult& r, const char* name, const char* fmt) {
  auto it = r.metrics.find(name);
  if (it == r.metrics.end()) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, it->second);
  return buf;
}

void Print(const std::vector<CaseResult>& rows) {
  std::printf("%-5s %-30s %-15s %3s %11s %9s %9s %9s %8s %7s\n", "suite", "case", "runtime", "thr", "ops/s",
              "median ms", "max ms", "p90 ms", "avg ms", "err %");
  for (const CaseResult& r : rows) {
    if (r.outcome != Outcome::kOk) {
      std::printf("%-5s %-30s %-15s %3d %s: %s\n", r.suite.c_str(), r.name.c_str(), r.runtime.c_str(), r.threads,
                  OutcomeName(r.outcome), r.error.c_str());
      continue;
    }
    std::vector<double> s = r.samples_ms;
    std::sort(s.begin(), s.end());
    double median = s.empty() ? NAN : (s[(s.size() - 1) / 2] + s[s.size() / 2]) / 2;
    double max = s.empty() ? NAN : s.back();
    double ops = r.wall_ms > 0 ? r.operations * 1000 / r.wall_ms : NAN;
    std::printf("%-5s %-30s %-15s %3d %11.1f %9.3f %9.3f %9s %8s %7s\n", r.suite.c_str(), r.name.c_str(),
                r.runtime.c_str(), r.threads, ops, median,
                r.metrics.count("max_ms") ? r.metrics.at("max_ms") : max, Metric(r, "p90_ms", "%.3f").c_str(),
                Metric(r, "avg_ms", "%.3f").c_str(), Metric(r, "error_pct", "%.2f").c_str());
  }
}

std::string SiblingSettee() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "settee";
  // build/bench/bench_suites -> build/settee
  return (std::filesystem::path(std::string(buf, static_cast<size_t>(n))).parent_path().parent_path() / "settee")
      .string();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Runs the eval and http suites of settee bench"};
  settee::bench::BenchOptions options;
  options.suites = {"eval", "http"};
  int http_seconds = 3;
  app.add_option("--suite", options.suites, "eval, http")->delimiter(',')->check(CLI::IsMember({"eval", "http"}));
  app.add_option("--threads", options.threads, "Isolate threads / server loop threads")->check(CLI::Range(1, 64));
  app.add_option("--backend", options.backend)->check(CLI::IsMember({"memory", "leveldb"}));
  app.add_option("--baseline", options.baseline)->check(CLI::IsMember({"pouchdb", "none"}));
  app.add_option("--iterations", options.iterations, "eval: iterations per thread (0: 20)");
  app.add_option("--grep", options.grep, "ECMAScript regex over suite/case");
  app.add_option("--http-seconds", http_seconds, "wrk seconds per http row")->check(CLI::Range(1, 600));
  options.settee_binary = SiblingSettee();
  app.add_option("--settee", options.settee_binary, "The settee executable for `settee serve`");
  CLI11_PARSE(app, argc, argv);

  std::string scratch = (std::filesystem::temp_directory_path() / "settee-bench-suites-XXXXXX").string();
  if (!mkdtemp(scratch.data())) {
    std::perror("mkdtemp");
    return 1;
  }
  options.scratch_dir = scratch;
  auto progress = [](const settee::bench::Progress& p) {
    std::fprintf(stderr, "\r\033[K%s %d/%d %s", p.suite.c_str(), p.case_index + 1, p.case_count, p.name.c_str());
    std::fflush(stderr);
  };
  std::vector<CaseResult> rows;
  for (const std::string& suite : options.suites) {
    std::vector<CaseResult> r;
    if (suite == "eval") {
      r = settee::bench::RunEvalSuite(options, progress);
    } else {
      settee::bench::HttpSuiteConfig config;
      config.seconds_per_row = http_seconds;
      r = settee::bench::RunHttpSuiteWith(options, progress, config);
    }
    rows.insert(rows.end(), r.begin(), r.end());
  }
  std::fprintf(stderr, "\r\033[K");
  Print(rows);
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  for (const CaseResult& r : rows)
    if (r.outcome == Outcome::kFailed) return 1;
  return 0;
}
