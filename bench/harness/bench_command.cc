#include "bench/harness/bench_command.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>

#include "bench/harness/eval_suite.h"
#include "bench/harness/http_suite.h"
#include "bench/harness/machine.h"
#include "bench/harness/pouchdb_baseline.h"
#include "bench/harness/progress.h"
#include "bench/harness/registry.h"
#include "bench/harness/report.h"
#include "bench/harness/stats.h"
#include "bench/harness/workload_suite.h"
#include "js/isolate_pool.h"

namespace settee::bench {

namespace {

struct Args {
  BenchOptions options;
  std::vector<std::string> compare;
};

// A scaling run's defaults (--threads 1,2): the basics cases' loops last
// from 4 ms (basic-inserts) to 3 s, so one run of the short ones is at the
// mercy of one preemption on a shared machine.
constexpr int kScalingRepeats = 5;
constexpr double kScalingMinTimeS = 1.0;

// What child `settee serve` / `settee run` processes are started from: this
// executable, or $SETTEE_SELF_EXEC, a wrapper that runs it under an emulator
// (qemu-user cannot exec a foreign binary without a binfmt_misc
// registration; the emulated/ wrappers of tests/CMakeLists.txt set it).
std::string ExecPath() {
  if (const char* self = std::getenv("SETTEE_SELF_EXEC"); self && *self) return self;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string("settee");
}

// Where bench/ lives: $SETTEE_SOURCE_DIR, else the tree this was built from.
std::string SourceDir() {
  const char* env = std::getenv("SETTEE_SOURCE_DIR");
  return env && *env ? env : SETTEE_SOURCE_DIR;
}

std::string NowUtc() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string JoinInts(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

Result<Report> ReadReport(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::NotFound("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  auto r = ParseReport(ss.str());
  if (!r.ok()) return Status::BadRequest(path + ": " + r.status().reason());
  return r;
}

int Compare(const Args& a) {
  if (a.compare.size() != 2) {
    std::fprintf(stderr, "settee bench --compare: give two reports, A.json B.json\n");
    return 2;
  }
  auto ra = ReadReport(a.compare[0]);
  auto rb = ReadReport(a.compare[1]);
  for (const auto* r : {&ra, &rb}) {
    if (!r->ok()) {
      std::fprintf(stderr, "settee bench --compare: %s\n", r->status().reason().c_str());
      return 2;
    }
  }
  std::string text = FormatCompare(*ra, *rb);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

// Checks the selection; a message and false when it cannot run.
bool CheckSelection(BenchOptions& o) {
  if (o.suites.empty()) o.suites = RegisteredSuites();
  for (const auto& s : o.suites) {
    const auto& known = KnownSuites();
    if (std::find(known.begin(), known.end(), s) == known.end()) {
      std::fprintf(stderr, "settee bench: unknown suite '%s' (known: %s)\n", s.c_str(), Join(known).c_str());
      return false;
    }
    if (!FindSuite(s)) {
      std::fprintf(stderr, "settee bench: suite '%s' is not built into this settee yet (built: %s)\n", s.c_str(),
                   Join(RegisteredSuites()).c_str());
      return false;
    }
  }
  if (!o.grep.empty()) {
    try {
      std::regex re(o.grep, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      std::fprintf(stderr, "settee bench: --grep '%s' is not a valid regular expression: %s\n", o.grep.c_str(),
                   e.what());
      return false;
    }
  }
  if (!o.remote.empty()) {
    if (Status s = ProbeHttp(o.remote); !s.ok()) {
      std::fprintf(stderr, "settee bench: --remote %s does not answer (%s); the replication cases will fail\n",
                   o.remote.c_str(), s.reason().c_str());
    }
  }
  return true;
}

int Run(Args& a) {
  BenchOptions& o = a.options;
  if (!CheckSelection(o)) return 2;
  RunFacts facts;
  o.facts = &facts;
  o.settee_binary = ExecPath();
  o.source_dir = SourceDir();
  std::string tmpl = (std::filesystem::temp_directory_path() / "settee-bench-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) {
    std::fprintf(stderr, "settee bench: cannot create a scratch directory in %s\n",
                 std::filesystem::temp_directory_path().c_str());
    return 2;
  }
  o.scratch_dir = tmpl;

  Report report;
  report.started = NowUtc();
  report.machine = DescribeMachine();
  auto start = std::chrono::steady_clock::now();
  ProgressPrinter printer(stderr);
  std::vector<std::vector<CaseResult>> rounds;
  for (int round = 1; round <= o.rounds; ++round) {
    printer.SetRound(round, o.rounds);
    std::vector<CaseResult> results;
    for (const auto& s : o.suites) {
      auto part = (*FindSuite(s))(o, printer.Fn());
      results.insert(results.end(), part.begin(), part.end());
    }
    rounds.push_back(std::move(results));
  }
  report.results = MergeRounds(rounds);
  printer.Finish();
  report.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::error_code ec;
  std::filesystem::remove_all(o.scratch_dir, ec);

  facts.NotePeakRss("settee", SelfPeakRssMb());
  report.options = o;
  report.versions = facts.versions();
  report.peak_rss_mb = facts.peak_rss_mb();
  report.remotes = facts.remotes();
  report.seconds = facts.seconds();
  if (report.results.empty()) {
    std::fprintf(stderr, "settee bench: --grep '%s' selects no case of the suites %s\n", o.grep.c_str(),
                 Join(o.suites).c_str());
    return 2;
  }
  std::string table = FormatTable(report);
  std::fwrite(table.data(), 1, table.size(), stdout);
  std::fflush(stdout);
  if (!o.json_path.empty()) {
    std::ofstream f(o.json_path, std::ios::binary | std::ios::trunc);
    f << ToJson(report);
    if (!f) {
      std::fprintf(stderr, "settee bench: cannot write %s\n", o.json_path.c_str());
      return 2;
    }
  }
  for (const auto& r : report.results) {
    if (r.runtime == "settee" && r.outcome == Outcome::kFailed) return 1;
  }
  return 0;
}

}  // namespace

void RegisterBuiltinSuites() {
  static bool done = false;
  if (done) return;
  done = true;
  RegisterWorkloadSuites();  // basics, views, find, attachments
  RegisterSuite("eval", RunEvalSuite);  // eval_suite.h
  RegisterSuite("http", RunHttpSuite);  // http_suite.h
}

void RegisterBenchCommand(CLI::App& app) {
  RegisterBuiltinSuites();
  auto args = std::make_shared<Args>();
  BenchOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "bench", "Run the PouchDB workload (and the other suites) in settee, with real PouchDB beside it");
  cmd->add_option("-t,--threads", o.thread_counts,
                  "Isolate threads running the workload at once, each on its own databases; several (1,2) run "
                  "every workload case at each count and give the aggregate throughput's scaling")
      ->delimiter(',')
      ->check(CLI::Range(1, js::IsolatePool::kMaxThreads))
      ->default_str("1");
  cmd->add_option("--repeats", o.repeats,
                  "Runs of each workload case, each on fresh databases; the table gives the median run's throughput "
                  "(default 1, and 5 with several --threads)")
      ->check(CLI::Range(1, BenchOptions::kMaxRepeats));
  cmd->add_option("--rounds", o.rounds,
                  "Run the whole selection this many times, settee then the baseline each time; a case's median is "
                  "the median of its rounds' medians, so a slow stretch of a shared machine moves one round, not the "
                  "figure (default 1)")
      ->check(CLI::Range(1, BenchOptions::kMaxRounds));
  cmd->add_option("--min-time", o.min_time_s,
                  "Repeat each workload case until its timed loops add up to this many seconds "
                  "(default 0, and 1 with several --threads)")
      ->check(CLI::Range(0.0, 600.0));
  cmd->add_option("--backend", o.backend, "Storage backend (PouchDB's matching adapter for the baseline)")
      ->check(CLI::IsMember({"memory", "leveldb"}))
      ->capture_default_str();
  cmd->add_option("--suite", o.suites, "Suites to run, comma-separated (default: all built in)")->delimiter(',');
  cmd->add_option("--grep", o.grep, "Only the cases whose \"suite/case\" matches this regular expression");
  cmd->add_option("--iterations", o.iterations, "Iterations of every case (default: each case's own count)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--json", o.json_path, "Write the report as JSON to FILE");
  cmd->add_flag("--jitless", o.jitless, "Run settee's V8 without JIT compilers (as on iOS); the report's v8 says so");
  cmd->add_option("--baseline", o.baseline, "Run the same workload in node on real PouchDB after settee")
      ->check(CLI::IsMember({"pouchdb", "none"}))
      ->capture_default_str();
  cmd->add_option("--remote", o.remote,
                  "CouchDB-compatible server for the replication cases (default: a settee serve started for the run)");
  cmd->add_option("--compare", args->compare, "Print the per-case factors between two JSON reports")
      ->expected(2)
      ->excludes("--threads", "--backend", "--suite", "--grep", "--iterations", "--json", "--baseline", "--remote",
                  "--jitless", "--repeats", "--min-time", "--rounds");
  cmd->callback([args, cmd] {
    BenchOptions& o = args->options;
    if (o.thread_counts.empty()) o.thread_counts = {1};
    o.threads = *std::max_element(o.thread_counts.begin(), o.thread_counts.end());
    if (o.thread_counts.size() > 1) {
      // Scaling is a ratio of throughputs: each figure the median of runs.
      if (cmd->count("--repeats") == 0) o.repeats = kScalingRepeats;
      if (cmd->count("--min-time") == 0) o.min_time_s = kScalingMinTimeS;
      if (o.baseline != "none" && args->compare.empty()) {
        std::fprintf(stderr, "settee bench: a scaling run (--threads %s) compares thread counts, not runtimes: "
                             "no PouchDB baseline\n", JoinInts(o.thread_counts).c_str());
        o.baseline = "none";
      }
    }
    int code = args->compare.empty() ? Run(*args) : Compare(*args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace settee::bench
