#include "bench/harness/report.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <rapidjson/document.h>
#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include "bench/harness/stats.h"

namespace settee::bench {

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void Str(Writer& w, const char* key, const std::string& v) {
  w.Key(key);
  w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
}
void Num(Writer& w, const char* key, double v) {
  w.Key(key);
  if (std::isfinite(v)) w.Double(v); else w.Null();
}

Outcome OutcomeFromName(const std::string& s) {
  if (s == "failed") return Outcome::kFailed;
  if (s == "unsupported") return Outcome::kUnsupported;
  if (s == "skipped") return Outcome::kSkipped;
  return Outcome::kOk;
}

std::string GetStr(const rapidjson::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}
double GetNum(const rapidjson::Value& o, const char* key) {
  auto it = o.FindMember(key);
  return it != o.MemberEnd() && it->value.IsNumber() ? it->value.GetDouble() : 0;
}

// A time in ms with about three significant digits.
std::string Ms(double v) {
  char buf[32];
  if (v <= 0) return "-";
  if (v < 0.01) std::snprintf(buf, sizeof buf, "%.4f", v);
  else if (v < 1) std::snprintf(buf, sizeof buf, "%.3f", v);
  else if (v < 100) std::snprintf(buf, sizeof buf, "%.2f", v);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}
std::string Factor(double f) {
  char buf[32];
  if (f <= 0) return "-";
  std::snprintf(buf, sizeof buf, f < 10 ? "%.2fx" : "%.1fx", f);
  return buf;
}
std::string Shorten(std::string s, size_t n) {
  for (auto& c : s) if (c == '\n') c = ' ';
  return s.size() > n ? s.substr(0, n - 3) + "..." : s;
}
std::string Line(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Line(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::string Key(const CaseResult& r) { return r.suite + "/" + r.name; }

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk: return "ok";
    case Outcome::kFailed: return "failed";
    case Outcome::kUnsupported: return "unsupported";
    case Outcome::kSkipped: return "skipped";
  }
  return "ok";
}

std::vector<CasePair> PairCases(const Report& r) {
  std::vector<CasePair> pairs;
  std::set<const CaseResult*> used;
  for (const auto& s : r.results) {
    if (s.runtime != "settee") continue;
    CasePair p;
    p.settee = &s;
    for (const auto& b : r.results) {
      if (b.runtime == "pouchdb" && Key(b) == Key(s)) {
        p.baseline = &b;
        used.insert(&b);
        break;
      }
    }
    if (p.baseline && s.outcome == Outcome::kOk && p.baseline->outcome == Outcome::kOk) {
      double sm = CaseMedian(s);
      double bm = CaseMedian(*p.baseline);
      if (sm > 0 && bm > 0) p.factor = bm / sm;
    }
    pairs.push_back(p);
  }
  for (const auto& b : r.results) {
    if (b.runtime != "settee" && !used.count(&b)) {
      CasePair p;
      p.baseline = &b;
      pairs.push_back(p);
    }
  }
  return pairs;
}

double GeometricMeanFactor(const std::vector<CasePair>& pairs, int* compared) {
  std::vector<double> f;
  for (const auto& p : pairs) if (p.factor > 0) f.push_back(p.factor);
  if (compared) *compared = static_cast<int>(f.size());
  return GeometricMean(f);
}

std::string ToJson(const Report& r) {
  rapidjson::StringBuffer buf;
  Writer w(buf);
  w.SetIndent(' ', 1);
  w.StartObject();
  w.Key("settee_bench");
  w.Int(1);
  Str(w, "started", r.started);
  Num(w, "elapsed_s", r.elapsed_s);
  w.Key("machine");
  w.StartObject();
  Str(w, "hostname", r.machine.hostname);
  Str(w, "os", r.machine.os);
  Str(w, "cpu_model", r.machine.cpu_model);
  w.Key("cores");
  w.Int(r.machine.cores);
  Str(w, "emulation", r.machine.emulation);
  w.EndObject();
  w.Key("versions");
  w.StartObject();
  for (const auto& [k, v] : r.versions) Str(w, k.c_str(), v);
  w.EndObject();
  w.Key("options");
  w.StartObject();
  w.Key("threads");
  w.Int(r.options.threads);
  w.Key("thread_counts");
  w.StartArray();
  for (int n : r.options.thread_counts) w.Int(n);
  w.EndArray();
  w.Key("repeats");
  w.Int(r.options.repeats);
  w.Key("rounds");
  w.Int(r.options.rounds);
  Num(w, "min_time_s", r.options.min_time_s);
  Str(w, "backend", r.options.backend);
  w.Key("suites");
  w.StartArray();
  for (const auto& s : r.options.suites) w.String(s.c_str());
  w.EndArray();
  Str(w, "grep", r.options.grep);
  w.Key("iterations");
  w.Int(r.options.iterations);
  Str(w, "baseline", r.options.baseline);
  Str(w, "remote", r.options.remote);
  w.EndObject();
  w.Key("peak_rss_mb");
  w.StartObject();
  for (const auto& [k, v] : r.peak_rss_mb) Num(w, k.c_str(), v);
  w.EndObject();
  w.Key("remotes");
  w.StartObject();
  for (const auto& [k, v] : r.remotes) Str(w, k.c_str(), v);
  w.EndObject();
  w.Key("seconds");
  w.StartObject();
  for (const auto& [k, v] : r.seconds) Num(w, k.c_str(), v);
  w.EndObject();
  w.Key("cases");
  w.StartArray();
  for (const auto& c : r.results) {
    Summary s = SummarizeCase(c);
    w.StartObject();
    Str(w, "suite", c.suite);
    Str(w, "name", c.name);
    Str(w, "runtime", c.runtime);
    Str(w, "outcome", OutcomeName(c.outcome));
    Str(w, "error", c.error);
    w.Key("threads");
    w.Int(c.threads);
    Num(w, "operations", c.operations);
    Num(w, "wall_ms", c.wall_ms);
    Num(w, "median_ms", s.median);
    Num(w, "min_ms", s.min);
    Num(w, "max_ms", s.max);
    Num(w, "mean_ms", s.mean);
    Num(w, "ops_per_sec", Throughput(c));
    w.Key("samples_ms");
    w.SetFormatOptions(rapidjson::kFormatSingleLineArray);
    w.StartArray();
    for (double v : c.samples_ms) w.Double(v);
    w.EndArray();
    w.SetFormatOptions(rapidjson::kFormatDefault);
    w.Key("metrics");
    w.StartObject();
    for (const auto& [k, v] : c.metrics) Num(w, k.c_str(), v);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  int compared = 0;
  double geo = GeometricMeanFactor(PairCases(r), &compared);
  w.Key("summary");
  w.StartObject();
  Num(w, "geomean_factor", geo);
  w.Key("cases_compared");
  w.Int(compared);
  w.EndObject();
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

Result<Report> ParseReport(const std::string& text) {
  rapidjson::Document d;
  d.Parse(text.c_str(), text.size());
  if (d.HasParseError() || !d.IsObject()) return Status::BadRequest("not JSON");
  if (!d.HasMember("settee_bench") || !d.HasMember("cases") || !d["cases"].IsArray()) {
    return Status::BadRequest("not a settee bench report (no settee_bench / cases)");
  }
  Report r;
  r.started = GetStr(d, "started");
  r.elapsed_s = GetNum(d, "elapsed_s");
  if (d.HasMember("machine") && d["machine"].IsObject()) {
    const auto& m = d["machine"];
    r.machine.hostname = GetStr(m, "hostname");
    r.machine.os = GetStr(m, "os");
    r.machine.cpu_model = GetStr(m, "cpu_model");
    r.machine.cores = static_cast<int>(GetNum(m, "cores"));
    r.machine.emulation = GetStr(m, "emulation");
  }
  if (d.HasMember("versions") && d["versions"].IsObject()) {
    for (const auto& m : d["versions"].GetObject()) {
      if (m.value.IsString()) r.versions[m.name.GetString()] = m.value.GetString();
    }
  }
  if (d.HasMember("options") && d["options"].IsObject()) {
    const auto& o = d["options"];
    r.options.threads = static_cast<int>(GetNum(o, "threads"));
    r.options.backend = GetStr(o, "backend");
    r.options.grep = GetStr(o, "grep");
    r.options.iterations = static_cast<int>(GetNum(o, "iterations"));
    r.options.baseline = GetStr(o, "baseline");
    r.options.remote = GetStr(o, "remote");
    if (o.HasMember("thread_counts") && o["thread_counts"].IsArray()) {
      for (const auto& n : o["thread_counts"].GetArray()) if (n.IsInt()) r.options.thread_counts.push_back(n.GetInt());
    }
    if (o.HasMember("repeats") && o["repeats"].IsInt()) r.options.repeats = o["repeats"].GetInt();
    if (o.HasMember("rounds") && o["rounds"].IsInt()) r.options.rounds = o["rounds"].GetInt();
    r.options.min_time_s = GetNum(o, "min_time_s");
    if (o.HasMember("suites") && o["suites"].IsArray()) {
      for (const auto& s : o["suites"].GetArray()) if (s.IsString()) r.options.suites.push_back(s.GetString());
    }
  }
  if (d.HasMember("remotes") && d["remotes"].IsObject()) {
    for (const auto& m : d["remotes"].GetObject()) {
      if (m.value.IsString()) r.remotes[m.name.GetString()] = m.value.GetString();
    }
  }
  if (d.HasMember("seconds") && d["seconds"].IsObject()) {
    for (const auto& m : d["seconds"].GetObject()) {
      if (m.value.IsNumber()) r.seconds[m.name.GetString()] = m.value.GetDouble();
    }
  }
  if (d.HasMember("peak_rss_mb") && d["peak_rss_mb"].IsObject()) {
    for (const auto& m : d["peak_rss_mb"].GetObject()) {
      if (m.value.IsNumber()) r.peak_rss_mb[m.name.GetString()] = m.value.GetDouble();
    }
  }
  for (const auto& c : d["cases"].GetArray()) {
    if (!c.IsObject()) return Status::BadRequest("a case is not an object");
    CaseResult cr;
    cr.suite = GetStr(c, "suite");
    cr.name = GetStr(c, "name");
    cr.runtime = GetStr(c, "runtime");
    if (cr.name.empty() || cr.runtime.empty()) return Status::BadRequest("a case has no name or runtime");
    cr.outcome = OutcomeFromName(GetStr(c, "outcome"));
    cr.error = GetStr(c, "error");
    cr.threads = static_cast<int>(GetNum(c, "threads"));
    cr.operations = GetNum(c, "operations");
    cr.wall_ms = GetNum(c, "wall_ms");
    if (c.HasMember("samples_ms") && c["samples_ms"].IsArray()) {
      for (const auto& v : c["samples_ms"].GetArray()) if (v.IsNumber()) cr.samples_ms.push_back(v.GetDouble());
    }
    if (c.HasMember("metrics") && c["metrics"].IsObject()) {
      for (const auto& m : c["metrics"].GetObject()) {
        if (m.value.IsNumber()) cr.metrics[m.name.GetString()] = m.value.GetDouble();
      }
    }
    r.results.push_back(std::move(cr));
  }
  return r;
}

namespace {
double MetricOr(const CaseResult& c, const char* name, double def = 0) {
  auto it = c.metrics.find(name);
  return it == c.metrics.end() ? def : it->second;
}
}  // namespace

std::vector<ScalingRow> ScalingRows(const Report& r) {
  std::vector<ScalingRow> rows;
  for (const auto& c : r.results) {
    if (c.runtime != "settee") continue;
    auto row = std::find_if(rows.begin(), rows.end(),
                            [&](const ScalingRow& x) { return x.suite == c.suite && x.name == c.name; });
    if (row == rows.end()) {
      rows.emplace_back();
      rows.back().suite = c.suite;
      rows.back().name = c.name;
      row = std::prev(rows.end());
    }
    const double ops = Throughput(c);
    if (c.outcome != Outcome::kOk || ops <= 0) {
      if (row->error.empty()) {
        row->error = Line("%d thread%s: ", c.threads, c.threads == 1 ? "" : "s") + OutcomeName(c.outcome) +
                     (c.error.empty() ? "" : ": " + c.error);
      }
      continue;
    }
    row->threads.push_back(c.threads);
    row->ops.push_back(ops);
    const bool first = row->threads.size() == 1;
    row->ratio.push_back(first ? 1.0 : MetricOr(c, "scaling_vs_first", ops / row->ops.front()));
    row->per_cpu.push_back(MetricOr(c, "ops_per_cpu_s"));
    const double cpu_ratio = row->per_cpu.front() > 0 ? row->per_cpu.back() / row->per_cpu.front() : 0;
    row->cpu_ratio.push_back(first ? (row->per_cpu.front() > 0 ? 1.0 : 0) : MetricOr(c, "per_cpu_vs_first", cpu_ratio));
    const double thread_ms = MetricOr(c, "loop_thread_ms");
    if (thread_ms > 0) {
      const double cpu = std::min(MetricOr(c, "loop_cpu_ms") / thread_ms, 1.0);
      const double queued = std::min(MetricOr(c, "loop_runq_ms") / thread_ms, 1.0 - cpu);
      row->on_cpu.push_back(cpu);
      row->runq.push_back(queued);
      row->asleep.push_back(1.0 - cpu - queued);
    } else {
      row->on_cpu.push_back(-1);
      row->runq.push_back(-1);
      row->asleep.push_back(-1);
    }
    row->cores_used.push_back(MetricOr(c, "cores_used"));
    const double c0 = row->cores_used.front();
    const double by_threads = static_cast<double>(c.threads) / row->threads.front();
    row->ceiling.push_back(c0 > 0 && r.machine.cores > 0 ? std::min(by_threads, r.machine.cores / c0) : 0);
    auto reps = c.metrics.find("repeats");
    row->repeats.push_back(reps == c.metrics.end() ? 1 : static_cast<int>(reps->second));
  }
  return rows;
}

namespace {

// eval and http put settee beside runtimes other than PouchDB (node, a
// server under wrk): each prints a table of its own after the workload's.
bool HasOwnTable(const std::string& suite) { return suite == "eval" || suite == "http"; }

// A scaling run's table: per case, the aggregate throughput at each count
// (the median of its runs, with their spread) and its ratio to the first.
std::string FormatScalingTable(const Report& r) {
  const auto& counts = r.options.thread_counts;
  std::string out = Line("aggregate throughput (iterations/s over all threads, the median of each case's runs, "
                         "in rounds of one run a count) at --threads %d", counts.front());
  for (size_t i = 1; i < counts.size(); ++i) out += Line(",%d", counts[i]);
  out += Line("; scaling = ops/s over the ops/s at %d (the median over the rounds of one round's two runs); "
              "per CPU = the same for operations per CPU second of the process and its replication server (below "
              "1: contention; near 1 while scaling is low: the threads ran one at a time); ceiling = the most the "
              "scaling could be on this machine's cores, from the cores the work kept busy at the first count; "
              "cpu/rq/zz = %% of the isolate threads' loop time on a CPU / runnable, waiting for a CPU (the "
              "machine's other work) / asleep (waiting on a lock, another thread, I/O)\n\n",
              counts.front());
  out += Line("%-34s %4s", "case", "runs");
  for (int n : counts) out += Line(" %9s", (std::to_string(n) + "t ops/s").c_str());
  for (size_t i = 1; i < counts.size(); ++i) {
    out += Line(" %9s %9s %8s", (std::to_string(counts[i]) + "t/" + std::to_string(counts.front()) + "t").c_str(),
                "per CPU", "ceiling");
  }
  for (int n : counts) out += Line(" %13s", (std::to_string(n) + "t cpu/rq/zz").c_str());
  out += "\n";
  std::map<int, std::vector<double>> ratios;
  std::map<int, int> capped;
  std::string last_suite;
  for (const auto& row : ScalingRows(r)) {
    if (HasOwnTable(row.suite)) continue;
    if (row.suite != last_suite) {
      out += Line("[%s]\n", row.suite.c_str());
      last_suite = row.suite;
    }
    out += Line("%-34s %4d", Shorten(row.name, 34).c_str(), row.repeats.empty() ? 0 : row.repeats.front());
    if (!row.error.empty() && row.threads.size() < counts.size()) {
      out += " " + Shorten(row.error, 70) + "\n";
      continue;
    }
    for (double ops : row.ops) out += Line(" %9.0f", ops);
    for (size_t i = 1; i < row.ratio.size(); ++i) {
      out += Line(" %9s %9s %8s", Factor(row.ratio[i]).c_str(), Factor(row.cpu_ratio[i]).c_str(),
                  row.ceiling[i] > 0 ? Factor(row.ceiling[i]).c_str() : "-");
      ratios[row.threads[i]].push_back(row.ratio[i]);
      // Short of 1.6x, but at 90% or more of a ceiling under 1.6x: the work
      // at the first count already kept the cores busy.
      if (row.ratio[i] < 1.6 && row.ceiling[i] > 0 && row.ceiling[i] < 1.6 && row.ratio[i] >= 0.9 * row.ceiling[i]) {
        ++capped[row.threads[i]];
      }
    }
    for (size_t i = 0; i < row.on_cpu.size(); ++i) {
      out += row.on_cpu[i] < 0 ? Line(" %13s", "-")
                               : Line("   %3.0f/%3.0f/%3.0f", 100 * row.on_cpu[i], 100 * row.runq[i], 100 * row.asleep[i]);
    }
    out += "\n";
  }
  out += "\n";
  for (const auto& [n, v] : ratios) {
    int reached = 0;
    for (double x : v) reached += x >= 1.6 ? 1 : 0;
    out += Line("scaling at %d threads: geometric mean %s over %zu cases; %d of them at 1.6x or more", n,
                Factor(GeometricMean(v)).c_str(), v.size(), reached);
    out += capped[n] ? Line("; %d more within 10%% of a ceiling under 1.6x (the work kept the cores busy at %d)\n",
                            capped[n], counts.front())
                     : "\n";
  }
  return out;
}


std::string NotRun(const CaseResult& c, size_t width) {
  return Shorten(std::string(OutcomeName(c.outcome)) + ": " + c.error, width);
}

// The string loop per runtime; factor = that runtime's median / settee's.
std::string FormatEvalTable(const Report& r) {
  std::vector<const CaseResult*> rows;
  const CaseResult* settee = nullptr;
  for (const auto& c : r.results) {
    if (c.suite != "eval") continue;
    rows.push_back(&c);
    if (c.runtime == "settee") settee = &c;
  }
  if (rows.empty()) return {};
  double settee_median = settee && settee->outcome == Outcome::kOk ? CaseMedian(*settee) : 0;
  std::string out = Line("\n[eval] db.eval string loop, %d thread%s at once (settee: isolates; node: processes); "
                         "factor = runtime median / settee median\n",
                         rows[0]->threads, rows[0]->threads == 1 ? "" : "s");
  out += Line("%-22s %-10s %6s %9s %9s %9s %9s %10s %8s\n", "case", "runtime", "iter", "median", "min", "max",
              "mean", "iter/s", "factor");
  for (const CaseResult* c : rows) {
    out += Line("%-22s %-10s ", Shorten(c->name, 22).c_str(), c->runtime.c_str());
    if (c->outcome != Outcome::kOk) {
      out += NotRun(*c, 80) + "\n";
      continue;
    }
    Summary s = SummarizeCase(*c);
    double factor = c == settee || settee_median <= 0 ? 0 : s.median / settee_median;
    out += Line("%6d %9s %9s %9s %9s %10.1f %8s\n", s.count, Ms(s.median).c_str(), Ms(s.min).c_str(),
                Ms(s.max).c_str(), Ms(s.mean).c_str(), Throughput(*c), Factor(factor).c_str());
  }
  return out;
}

// wrk's figures per row, like the MRI/JRuby report; factor = settee's ops/s
// over the baseline server's on the same row.
std::string FormatHttpTable(const Report& r) {
  std::vector<const CaseResult*> rows;
  for (const auto& c : r.results)
    if (c.suite == "http") rows.push_back(&c);
  if (rows.empty()) return {};
  auto settee_twin = [&](const CaseResult& b) -> const CaseResult* {
    for (const CaseResult* c : rows)
      if (c->runtime == "settee" && c->name == b.name) return c;
    return nullptr;
  };
  auto version = r.versions.find("pouchdb-server");
  std::string out = Line("\n[http] settee serve on loopback under wrk --latency%s%s; "
                         "factor = settee ops/s / baseline ops/s\n",
                         version == r.versions.end() ? "" : ", beside pouchdb-server ",
                         version == r.versions.end() ? "" : version->second.c_str());
  out += Line("%-30s %-15s %10s %7s %9s %9s %9s %8s\n", "case", "runtime", "ops/s", "err %", "avg ms", "max ms",
              "p90 ms", "factor");
  for (const CaseResult* c : rows) {
    out += Line("%-30s %-15s ", Shorten(c->name, 30).c_str(), Shorten(c->runtime, 15).c_str());
    if (c->outcome != Outcome::kOk) {
      out += NotRun(*c, 70) + "\n";
      continue;
    }
    const CaseResult* twin = c->runtime == "settee" ? nullptr : settee_twin(*c);
    double ops = MetricOr(*c, "ops_per_sec");
    double factor = twin && twin->outcome == Outcome::kOk && ops > 0 ? MetricOr(*twin, "ops_per_sec") / ops : 0;
    out += Line("%10.0f %7.2f %9s %9s %9s %8s\n", ops, MetricOr(*c, "error_pct"), Ms(MetricOr(*c, "avg_ms")).c_str(),
                Ms(MetricOr(*c, "max_ms")).c_str(), Ms(MetricOr(*c, "p90_ms")).c_str(), Factor(factor).c_str());
  }
  // Loop scaling (http_suite.h): each multi-loop row against its 1-loop twin.
  std::string scaling;
  for (const CaseResult* c : rows) {
    if (c->metrics.count("ops_vs_1_loop") == 0) continue;
    const double cpu = MetricOr(*c, "cpu_per_req_vs_1_loop");
    const double ceiling = MetricOr(*c, "ceiling_vs_1_loop");
    const double client = MetricOr(*c, "client_cpu_us_per_req");
    const double server = MetricOr(*c, "server_cpu_us_per_req");
    scaling += Line("%-30s %16s %22s %14s %14s %9s\n", Shorten(c->name, 30).c_str(),
                    Factor(MetricOr(*c, "ops_vs_1_loop")).c_str(), cpu > 0 ? Factor(cpu).c_str() : "-",
                    server > 0 ? Line("%.2f", server).c_str() : "-", client > 0 ? Line("%.2f", client).c_str() : "-",
                    ceiling > 0 ? Factor(ceiling).c_str() : "-");
  }
  if (!scaling.empty()) {
    out += Line("\nloop scaling, same run: N loops / 1 loop (server-root, no storage, is the machine's ceiling "
                "with wrk on the same cores; server-root-x16 with a pipelining wrk that leaves them the cores; "
                "-lg rows from the built-in load generator, whose CPU per request gives the ceiling: "
                "min(N, cores x server / (server + client)) at 1 loop's costs)\n");
    out += Line("%-30s %16s %22s %14s %14s %9s\n", "case", "ops/s ratio", "server CPU/req ratio", "server us/req",
                "client us/req", "ceiling");
    out += scaling;
  }
  return out;
}

}  // namespace

std::string FormatTable(const Report& r) {
  std::string out;
  const auto& o = r.options;
  auto version = [&](const char* k) {
    auto it = r.versions.find(k);
    return it == r.versions.end() ? std::string("?") : it->second;
  };
  std::string threads = Line("%d thread%s", o.threads, o.threads == 1 ? "" : "s");
  if (o.thread_counts.size() > 1) {
    threads = "threads ";
    for (size_t i = 0; i < o.thread_counts.size(); ++i) threads += (i ? "," : "") + std::to_string(o.thread_counts[i]);
  }
  if (o.repeats > 1 || o.min_time_s > 0) {
    threads += Line(", each case run %d+ times%s", o.repeats,
                    o.min_time_s > 0 ? Line(" and for %.1f s of loops", o.min_time_s).c_str() : "");
  }
  if (o.rounds > 1) {
    threads += Line(", %d rounds (each case's median: the median of its rounds' medians)", o.rounds);
  }
  out += Line("settee bench: %s backend, %s, on %s (%d cores)\n", o.backend.c_str(), threads.c_str(),
              r.machine.cpu_model.c_str(), r.machine.cores);
  if (!r.machine.emulation.empty()) out += "emulated: " + r.machine.emulation + "\n";
  bool baseline = false;
  for (const auto& c : r.results) baseline |= c.runtime == "pouchdb";
  if (baseline) {
    out += Line("baseline: PouchDB %s on node %s, %s adapter, same run\n", version("pouchdb").c_str(),
                version("node").c_str(), o.backend == "memory" ? "memory" : "LevelDB");
  }
  for (const auto& [runtime, remote] : r.remotes) {
    out += Line("replication remote of %s: %s\n", runtime.c_str(), remote.c_str());
  }
  bool workload = false;
  for (const auto& c : r.results) workload |= !HasOwnTable(c.suite);
  const bool scaling = r.options.thread_counts.size() > 1;
  if (workload && scaling) out += FormatScalingTable(r);
  if (workload && !scaling) {
    out += Line("times per iteration in ms; ops/s over all threads%s\n\n",
                baseline ? "; factor = PouchDB median / settee median" : "");
    out += Line("%-34s %6s %9s %9s %9s %9s %10s", "case", "iter", "median", "min", "max", "mean", "ops/s");
    if (baseline) out += Line(" | %9s %9s %8s", "pouchdb", "mean", "factor");
    out += "\n";
    std::string last_suite;
    for (const auto& p : PairCases(r)) {
      const CaseResult* c = p.settee ? p.settee : p.baseline;
      if (HasOwnTable(c->suite)) continue;
      if (c->suite != last_suite) {
        out += Line("[%s]\n", c->suite.c_str());
        last_suite = c->suite;
      }
      std::string name = p.settee ? c->name : c->name + " (" + c->runtime + ")";
      out += Line("%-34s ", Shorten(name, 34).c_str());
      if (c->outcome == Outcome::kOk) {
        Summary s = SummarizeCase(*c);
        out += Line("%6d %9s %9s %9s %9s %10.0f", s.count, Ms(s.median).c_str(), Ms(s.min).c_str(),
                    Ms(s.max).c_str(), Ms(s.mean).c_str(), Throughput(*c));
      } else {
        out += Line("%-65s", Shorten(std::string(OutcomeName(c->outcome)) + ": " + c->error, 65).c_str());
      }
      if (baseline && p.settee) {
        const CaseResult* b = p.baseline;
        if (!b) {
          out += Line(" | %9s", "-");
        } else if (b->outcome == Outcome::kOk) {
          Summary s = SummarizeCase(*b);
          out += Line(" | %9s %9s %8s", Ms(s.median).c_str(), Ms(s.mean).c_str(), Factor(p.factor).c_str());
        } else {
          out += " | " + Shorten(std::string(OutcomeName(b->outcome)) + ": " + b->error, 60);
        }
      }
      out += "\n";
    }
  }
  out += FormatEvalTable(r);
  out += FormatHttpTable(r);
  int compared = 0;
  double geo = GeometricMeanFactor(PairCases(r), &compared);
  out += "\n";
  if (compared) out += Line("geometric mean factor over %d cases both ran: %s\n", compared, Factor(geo).c_str());
  std::string rss;
  for (const auto& [k, v] : r.peak_rss_mb) rss += Line("%s%s %.0f MB", rss.empty() ? "" : ", ", k.c_str(), v);
  if (!rss.empty()) out += "peak RSS: " + rss + "\n";
  out += Line("elapsed %.1f s", r.elapsed_s);
  // Where it went: the runtimes' parts, and what they spent not measuring.
  std::string parts;
  for (const char* k : {"settee", "pouchdb", "installing baselines", "starting servers"}) {
    auto it = r.seconds.find(k);
    if (it != r.seconds.end() && it->second >= 0.05) parts += Line("%s%s %.1f s", parts.empty() ? "" : ", ", k, it->second);
  }
  if (!parts.empty()) out += ": " + parts + " (servers and installs are within the runtimes' parts)";
  out += "\n";
  return out;
}

std::vector<CompareRow> CompareReports(const Report& a, const Report& b) {
  std::vector<CompareRow> rows;
  for (const auto& ca : a.results) {
    if (ca.outcome != Outcome::kOk) continue;
    for (const auto& cb : b.results) {
      if (cb.outcome != Outcome::kOk || cb.runtime != ca.runtime || Key(cb) != Key(ca)) continue;
      CompareRow row{ca.suite, ca.name, ca.runtime, CaseMedian(ca),
                     CaseMedian(cb), 0};
      if (row.a_median > 0 && row.b_median > 0) row.ratio = row.b_median / row.a_median;
      // http rows carry wrk's ops/s; workload rows are counted here.
      row.a_ops = ca.metrics.count("ops_per_sec") ? ca.metrics.at("ops_per_sec") : Throughput(ca);
      row.b_ops = cb.metrics.count("ops_per_sec") ? cb.metrics.at("ops_per_sec") : Throughput(cb);
      if (row.a_ops > 0 && row.b_ops > 0) row.ops_ratio = row.b_ops / row.a_ops;
      rows.push_back(row);
      break;
    }
  }
  return rows;
}

std::string FormatCompare(const Report& a, const Report& b) {
  std::string out;
  auto describe = [](const char* label, const Report& r) {
    std::string out = Line("%s: %s (%d cores), %s, %s backend, %d thread%s, %s\n", label, r.machine.cpu_model.c_str(),
                           r.machine.cores, r.machine.os.c_str(), r.options.backend.c_str(), r.options.threads,
                           r.options.threads == 1 ? "" : "s", r.started.c_str());
    if (!r.machine.emulation.empty()) out += Line("%s is emulated: %s\n", label, r.machine.emulation.c_str());
    return out;
  };
  out += describe("A", a);
  out += describe("B", b);
  out += "medians per iteration in ms; B/A = B's time relative to A's (below 1: B is faster);\n"
         "ops/s over all threads; ops B/A = B's aggregate throughput over A's (above 1: B does more)\n\n";
  out += Line("%-34s %-8s %10s %10s %8s %11s %11s %8s\n", "case", "runtime", "A", "B", "B/A", "A ops/s",
              "B ops/s", "ops B/A");
  auto rows = CompareReports(a, b);
  std::map<std::string, std::vector<double>> by_runtime, ops_by_runtime;
  for (const auto& r : rows) {
    out += Line("%-34s %-8s %10s %10s %8s %11.1f %11.1f %8s\n", Shorten(r.suite + "/" + r.name, 34).c_str(),
                r.runtime.c_str(), Ms(r.a_median).c_str(), Ms(r.b_median).c_str(), Factor(r.ratio).c_str(),
                r.a_ops, r.b_ops, Factor(r.ops_ratio).c_str());
    by_runtime[r.runtime].push_back(r.ratio);
    if (r.ops_ratio > 0) ops_by_runtime[r.runtime].push_back(r.ops_ratio);
  }
  if (rows.empty()) out += "(no case ran ok in both reports)\n";
  out += "\n";
  for (const auto& [runtime, ratios] : by_runtime) {
    out += Line("geometric mean B/A for %s over %zu cases: %s", runtime.c_str(), ratios.size(),
                Factor(GeometricMean(ratios)).c_str());
    const auto& ops = ops_by_runtime[runtime];
    if (!ops.empty()) out += Line("; ops B/A over %zu: %s", ops.size(), Factor(GeometricMean(ops)).c_str());
    out += "\n";
  }
  return out;
}

}  // namespace settee::bench
