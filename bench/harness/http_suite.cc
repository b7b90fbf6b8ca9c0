#include "bench/harness/http_suite.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "bench/harness/child_process.h"
#include "bench/harness/http_load.h"
#include "bench/harness/subprocess.h"
#include "bench/harness/suite_support.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::bench {

namespace {

using namespace std::chrono_literals;

constexpr char kSuite[] = "http";
constexpr int kConnections[] = {1, 10};

struct Endpoint {
  const char* name;
  const char* path;
  const char* script;  // a wrk script in bench/http/ (the POSTs), or null
  // The script's arguments (wrk's after "--"), space-separated, or null.
  const char* script_args = nullptr;
  // 0: a row at each of kConnections; else at this count only.
  int connections = 0;
  // One wrk thread per connection (the script tells its threads apart),
  // whatever WrkThreads would give.
  bool thread_per_connection = false;
  // Non-null: the row is driven by the built-in load generator
  // (http_load.h), not wrk, sending this method to `path` (a POST carries
  // kSmallDoc), `load_pipeline` requests per write.
  const char* load_method = nullptr;
  int load_pipeline = 1;
  // Connection k sends to `path`-k, a database of its own.
  bool load_own_db = false;
};

// post.lua's and pipeline.lua's document.
constexpr char kSmallDoc[] = R"({"type":"bench","value":42,"tags":["a","b"]})";

// A row of the built-in load generator, at 10 connections.
constexpr Endpoint Generated(const char* name, const char* method, const char* path, int pipeline,
                             bool own_db = false) {
  return {name, path, nullptr, nullptr, 10, false, method, pipeline, own_db};
}

constexpr Endpoint kEndpoints[] = {
    {"get-doc", "/bench/doc1", nullptr},
    {"all-docs-limit10", "/bench/_all_docs?limit=10", nullptr},
    {"post-doc", "/bench", "post.lua"},
    // PouchDB's many-attachments read over HTTP: a doc with 100 attachments
    // of 50,000 bytes, bodies inline as base64 (6.7 MB of JSON).
    {"get-doc-100-attachments", "/bench/atts?attachments=true", nullptr},
    // A view with a JavaScript reduce, grouped (10 groups of the 100 seeded
    // docs; post-doc's docs emit nothing): the map/reduce runtime's HTTP
    // path with the index up to date.
    {"view-js-reduce", "/bench/_design/bench/_view/by_group?group_level=1", nullptr},
    // post-doc over databases bench-0 .. bench-9 in turn: the loops' scaling
    // with little of it lost to one database's serialized writes.
    {"post-doc-10-dbs", "/bench-0", "post_dbs.lua"},
    // GET /: the welcome object, no storage and no shared state. The control
    // for loop scaling: what N loops over 1 reach on this machine (wrk
    // included) when the server shares nothing between its loops.
    {"server-root", "/", nullptr},
    // Loop scaling with a cheap client: bench/http/pipeline.lua writes 16
    // requests at a time, so wrk costs a small share of a core per request
    // and on two cores leaves the server's loops nearly both (unpipelined,
    // it takes about one, and server-root's ratio showed no scaling at all).
    // The control (GET /), POSTs into one database, and POSTs from each
    // connection into a database of its own (bench-0 .. bench-9).
    {"server-root-x16", "/", "pipeline.lua", "16 get", 10},
    {"post-doc-x16", "/bench", "pipeline.lua", "16 post", 10},
    {"post-own-db-x16", "/bench", "pipeline.lua", "16 post own-db", 10, true},
    // The same three, one request at a time and 16 at a time, from the
    // built-in load generator (http_load.h: one thread, requests built
    // once, responses only framed), which reports its own CPU per request
    // (client_cpu_us_per_req): what the client takes from the server's
    // cores, so what the machine can show of the loops' scaling.
    Generated("server-root-lg", "GET", "/", 1),
    Generated("post-doc-lg", "POST", "/bench", 1),
    Generated("post-own-db-lg", "POST", "/bench", 1, true),
    Generated("server-root-lg-x16", "GET", "/", 16),
    Generated("post-doc-lg-x16", "POST", "/bench", 16),
    Generated("post-own-db-lg-x16", "POST", "/bench", 16, true),
};

std::string RowName(const Endpoint& e, int connections, int loops) {
  return std::string(e.name) + " c=" + std::to_string(connections) + " loops=" + std::to_string(loops);
}

// Database "bench": doc1 for the GETs, 100 more docs for _all_docs and the
// view (design doc "bench"); empty databases bench-0 .. bench-9.
Status Seed(int port) {
  std::string base = "http://127.0.0.1:" + std::to_string(port) + "/bench";
  std::string docs = "{\"docs\":[";
  for (int i = 0; i < 100; ++i) {
    char id[8];
    std::snprintf(id, sizeof id, "d%03d", i);
    docs += std::string(i ? "," : "") + "{\"_id\":\"" + id + "\",\"value\":" + std::to_string(i) +
            ",\"group\":" + std::to_string(i % 10) + "}";
  }
  docs += "]}";
  // 100 attachments of 50,000 pseudo-random bytes (incompressible, so the
  // servers store them as they are), inline in one PUT.
  std::string atts = "{\"_attachments\":{";
  uint32_t x = 1;
  std::string bytes(50000, '\0');
  for (int i = 0; i < 100; ++i) {
    for (char& c : bytes) {
      x = x * 1664525u + 1013904223u;
      c = static_cast<char>(x >> 24);
    }
    atts += std::string(i ? "," : "") + "\"att-" + std::to_string(i) +
            "\":{\"content_type\":\"application/octet-stream\",\"data\":\"" + Base64Encode(bytes) +
            "\"}";
  }
  atts += "}}";
  for (int i = 0; i < 10; ++i) {  // post-doc-10-dbs's databases
    const std::string url = base + "-" + std::to_string(i);
    auto status = HttpCall("PUT", url, "");
    if (!status.ok()) return status.status();
    if (*status < 200 || *status >= 300)
      return Status::Internal("seeding: PUT " + url + " answered " + std::to_string(*status));
  }
  struct Step {
    const char* method;
    std::string url;
    std::string body;
  } steps[] = {
      {"PUT", base, ""},
      {"PUT", base + "/doc1", R"({"type":"bench","value":1,"name":"the document read by the GET benchmark"})"},
      {"POST", base + "/_bulk_docs", docs},
      {"PUT", base + "/atts", atts},
      {"PUT", base + "/_design/bench",
       R"({"views":{"by_group":{"map":"function (doc) { if (typeof doc.group === 'number') emit([doc.group, doc._id], doc.value); }",)"
       R"("reduce":"function (keys, values, rereduce) { return sum(values); }"}}})"},
      // The index is built here, so view-js-reduce measures queries, not the
      // build (a build that outlasted a 1 s row on a loaded machine left wrk
      // with no answers at all).
      {"GET", base + "/_design/bench/_view/by_group?group_level=1", ""},
  };
  for (const Step& s : steps) {
    auto status = HttpCall(s.method, s.url, s.body);
    if (!status.ok()) return status.status();
    if (*status < 200 || *status >= 300)
      return Status::Internal(std::string("seeding: ") + s.method + " " + s.url + " answered " +
                              std::to_string(*status));
  }
  return Status::OK();
}

// CPU seconds (user + system) a process has used so far, or -1.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces.
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  double utime = -1, stime = -1;
  for (int i = 3; rest >> field; ++i) {  // field 3 is the state
    if (i == 14) utime = std::atof(field.c_str());
    if (i == 15) {
      stime = std::atof(field.c_str());
      break;
    }
  }
  if (utime < 0 || stime < 0) return -1;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double RssMb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atof(line.c_str() + 6) / 1024.0;
  return 0;
}

int EnvSeconds() {
  const char* v = std::getenv("SETTEE_BENCH_HTTP_SECONDS");
  int s = v ? std::atoi(v) : 0;
  return s > 0 ? s : 3;
}

// A server under test: a child process listening on 127.0.0.1:port.
struct Server {
  std::string runtime;  // "settee" or "pouchdb-server"
  int loops = 1;
  std::unique_ptr<Subprocess> process;
  int port = 0;
  std::string log_path;
  bool report_rss = false;
};

class HttpSuite {
 public:
  HttpSuite(const BenchOptions& options, const ProgressFn& progress, const HttpSuiteConfig& config)
      : options_(options), progress_(progress), config_(config) {}

  std::vector<CaseResult> Run() {
    auto filter = CaseFilter::FromGrep(options_.grep);
    if (!filter.ok()) {
      rows_.push_back(RowWithOutcome(kSuite, "*", "settee", 1, Outcome::kFailed, filter.status().reason()));
      return rows_;
    }
    filter_ = std::move(*filter);
    std::vector<int> loops = {1};
    if (options_.threads > 1) loops.push_back(options_.threads);
    const bool baseline = options_.baseline == "pouchdb";
    // Without wrk only its rows are skipped: the load generator's rows
    // (http_load.h) need nothing but the server.
    wrk_ = FindInPath(config_.wrk);
    if (wrk_.empty()) {
      constexpr char kNoWrk[] = "wrk is not installed (Debian package wrk; scripts/setup.sh)";
      SkipWrkRows("settee", loops, kNoWrk);
      if (baseline) SkipWrkRows("pouchdb-server", {1}, kNoWrk);
    }
    case_count_ = static_cast<int>(SelectedNames(1).size()) * (baseline ? 1 : 0);
    for (int l : loops) case_count_ += static_cast<int>(SelectedNames(l).size());
    if (case_count_ == 0) return rows_;

    if (!PrepareScratch()) return rows_;
    for (int l : loops) {
      Server server;
      server.runtime = "settee";
      server.loops = l;
      RunRows(&server, StartSettee(&server));
    }
    if (baseline) {
      Server server;
      server.runtime = "pouchdb-server";
      RunRows(&server, StartPouchdbServer(&server));
    }
    if (remove_scratch_) std::filesystem::remove_all(scratch_, ignored_);
    AddLoopScaling(&rows_, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
    return rows_;
  }

 private:
  // The rows this run can drive: every selected row, less wrk's when there
  // is no wrk.
  std::vector<std::pair<const Endpoint*, int>> SelectedNames(int loops) const {
    std::vector<std::pair<const Endpoint*, int>> out;
    for (auto [e, c] : SelectedRows(loops))
      if (e->load_method || !wrk_.empty()) out.emplace_back(e, c);
    return out;
  }

  std::vector<std::pair<const Endpoint*, int>> SelectedRows(int loops) const {
    std::vector<std::pair<const Endpoint*, int>> out;
    for (int c : kConnections)
      for (const Endpoint& e : kEndpoints)
        if ((e.connections == 0 || e.connections == c) && filter_.Selected(kSuite, RowName(e, c, loops)))
          out.emplace_back(&e, c);
    return out;
  }

  void SkipWrkRows(const std::string& runtime, const std::vector<int>& loops, const std::string& why) {
    for (int l : loops)
      for (auto [e, c] : SelectedRows(l))
        if (!e->load_method)
          rows_.push_back(RowWithOutcome(kSuite, RowName(*e, c, l), runtime, l, Outcome::kSkipped, why));
  }

  bool PrepareScratch() {
    scratch_ = options_.scratch_dir;
    if (scratch_.empty()) {
      std::string tmpl = (std::filesystem::temp_directory_path() / "settee-bench-http-XXXXXX").string();
      if (!mkdtemp(tmpl.data())) {
        rows_.push_back(RowWithOutcome(kSuite, "*", "settee", 1, Outcome::kFailed, "cannot create a scratch directory"));
        return false;
      }
      scratch_ = tmpl;
      remove_scratch_ = true;
    }
    std::filesystem::create_directories(scratch_, ignored_);
    return true;
  }

  Status StartSettee(Server* s) {
    std::string bin = options_.settee_binary.empty() ? "settee" : options_.settee_binary;
    std::string tag = "settee-loops" + std::to_string(s->loops);
    std::vector<std::string> argv = {bin, "serve", "--bind", "127.0.0.1", "--port", "0", "--threads",
                                     std::to_string(s->loops), "--backend", options_.backend,
                                     "--log-level", "warning"};
    if (options_.backend == "leveldb") {
      std::string data = scratch_ + "/" + tag + "-data";
      std::filesystem::remove_all(data, ignored_);
      argv.insert(argv.end(), {"--data", data});
    }
    // Output goes to a file, not a pipe nobody reads during the load.
    s->log_path = scratch_ + "/" + tag + ".log";
    std::filesystem::remove(s->log_path, ignored_);
    auto child = Subprocess::Spawn(argv, SpawnOptions{.cwd = {}, .log_path = s->log_path});
    if (!child.ok()) return Status(child.status().code(), "cannot start settee serve: " + child.status().reason());
    s->process = std::move(*child);
    s->report_rss = true;
    // It prints "settee: listening on http://127.0.0.1:PORT/ (...)".
    constexpr std::string_view kListening = "listening on http://127.0.0.1:";
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(config_.startup_timeout_s);
    for (;;) {
      std::string log = ReadFile(s->log_path);
      if (size_t at = log.find(kListening); at != std::string::npos && log.find('\n', at) != std::string::npos) {
        s->port = std::atoi(log.c_str() + at + kListening.size());
        break;
      }
      if (s->process->Wait(0ms).ok())
        return Status::Internal("settee serve exited with status " + std::to_string(s->process->Wait(0ms).value()) +
                                ": " + TailLines(log, 3));
      if (std::chrono::steady_clock::now() > deadline)
        return Status(Status::Code::kTimeout, "settee serve did not start listening: " + TailLines(log, 3));
      std::this_thread::sleep_for(20ms);
    }
    return WaitUntilUp(s->port, s->process.get(), std::chrono::seconds(config_.startup_timeout_s));
  }

  Status StartPouchdbServer(Server* s) {
    std::string node = FindInPath(config_.node);
    if (node.empty()) return Status::NotFound("no '" + config_.node + "' on PATH to run pouchdb-server");
    std::string script = config_.pouchdb_server.empty()
                             ? SourceDir(options_) + "/bench/http/node_modules/pouchdb-server/bin/pouchdb-server"
                             : config_.pouchdb_server;
    Status installed;
    if (access(script.c_str(), R_OK) != 0 && config_.install_missing) installed = InstallBaselines(options_, "http");
    if (access(script.c_str(), R_OK) != 0)
      return Status::NotFound("pouchdb-server 4.2 (npm, bench/http/package.json) is not installed at " + script +
                              (installed.ok() ? "" : ": " + installed.reason()));
    if (options_.facts) {
      json::Document pkg;
      std::string pkg_path = std::filesystem::path(script).parent_path().parent_path() / "package.json";
      if (json::Parse(ReadFile(pkg_path), &pkg).ok() && pkg.IsObject() && pkg.HasMember("version") &&
          pkg["version"].IsString())
        options_.facts->SetVersion("pouchdb-server", pkg["version"].GetString());
    }
    auto port = FreePort();
    if (!port.ok()) return port.status();
    s->port = *port;
    // It writes log.txt and config.json into its working directory.
    std::string dir = scratch_ + "/pouchdb-server";
    std::filesystem::remove_all(dir, ignored_);
    std::filesystem::create_directories(dir, ignored_);
    s->log_path = dir + "/output.txt";
    std::vector<std::string> argv = {node, script, "--host", "127.0.0.1", "--port", std::to_string(s->port),
                                     "--no-stdout-logs"};
    if (options_.backend == "memory") argv.push_back("--in-memory");
    else argv.insert(argv.end(), {"--dir", dir + "/data"});
    auto child = Subprocess::Spawn(argv, SpawnOptions{.cwd = dir, .log_path = s->log_path});
    if (!child.ok()) return child.status();
    s->process = std::move(*child);
    return WaitUntilUp(s->port, s->process.get(), std::chrono::seconds(config_.startup_timeout_s));
  }

  std::string ServerTail(const Server& s) const { return TailLines(ReadFile(s.log_path), 3); }

  void RunRows(Server* s, Status started) {
    if (started.ok()) started = Seed(s->port);
    Outcome not_run = started.code() == Status::Code::kNotFound ? Outcome::kSkipped : Outcome::kFailed;
    std::string why = started.ok() ? std::string() : started.reason();
    if (!started.ok() && s->process && !s->process->running()) why += ": " + ServerTail(*s);
    for (auto [e, c] : SelectedNames(s->loops)) {
      std::string name = RowName(*e, c, s->loops);
      if (progress_) {
        Progress p;
        p.suite = kSuite;
        p.name = name;
        p.case_index = case_index_++;  // 0-based, as the harness prints index + 1
        p.iterations = 1;               // one wrk run
        p.case_count = case_count_;
        p.runtime = s->runtime;
        progress_(p);
      }
      if (!why.empty()) {
        rows_.push_back(RowWithOutcome(kSuite, name, s->runtime, s->loops, not_run, why));
        continue;
      }
      const double cpu_before = s->process ? CpuSeconds(s->process->pid()) : -1;
      CaseResult row = e->load_method ? RunGenerated(*s, *e, c) : RunWrk(*s, *e, c);
      const double cpu_after = s->process ? CpuSeconds(s->process->pid()) : -1;
      if (row.outcome == Outcome::kOk && cpu_before >= 0 && cpu_after >= cpu_before && row.operations > 0) {
        row.metrics["server_cpu_us_per_req"] = (cpu_after - cpu_before) * 1e6 / row.operations;
        if (row.wall_ms > 0) row.metrics["server_cpu_pct"] = (cpu_after - cpu_before) * 1e5 / row.wall_ms;
      }
      row.name = name;
      if (s->report_rss) row.metrics["server_rss_mb"] = RssMb(s->process->pid());
      rows_.push_back(std::move(row));
      if (s->process->Wait(0ms).ok()) {
        why = s->runtime + " exited during the run (status " + std::to_string(s->process->Wait(0ms).value()) +
              "): " + ServerTail(*s);
        not_run = Outcome::kFailed;
      }
    }
    if (s->process) {
      s->process->Stop();
      // Keyed apart from "settee", the bench process itself.
      if (options_.facts) options_.facts->NotePeakRss(s->runtime == "settee" ? "settee serve" : s->runtime,
                                                      s->process->peak_rss_mb());
    }
  }

  CaseResult RunWrk(const Server& s, const Endpoint& e, int connections) {
    CaseResult row = RowWithOutcome(kSuite, "", s.runtime, s.loops, Outcome::kFailed, {});
    int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    int threads = e.thread_per_connection ? connections : WrkThreads(cores, s.loops, connections);
    std::vector<std::string> argv = {wrk_, "-t" + std::to_string(threads), "-c" + std::to_string(connections),
                                     "-d" + std::to_string(config_.seconds_per_row) + "s", "--timeout", "2s",
                                     "--latency"};
    if (e.script) argv.insert(argv.end(), {"-s", SourceDir(options_) + "/bench/http/" + e.script});
    argv.push_back("http://127.0.0.1:" + std::to_string(s.port) + e.path);
    if (e.script_args) {
      argv.push_back("--");
      std::istringstream args(e.script_args);
      for (std::string a; args >> a;) argv.push_back(a);
    }
    auto wrk = Subprocess::Spawn(argv);
    if (!wrk.ok()) {
      row.error = "cannot start wrk: " + wrk.status().reason();
      return row;
    }
    auto code = (*wrk)->Wait(std::chrono::seconds(config_.seconds_per_row + 30));
    if (!code.ok()) {
      row.error = "wrk: " + code.status().reason();
      return row;
    }
    auto report = ParseWrkOutput((*wrk)->out());
    if (*code != 0 || !report.ok()) {
      row.error = "wrk exited with status " + std::to_string(*code) + ": " +
                  TailLines((*wrk)->err() + (*wrk)->out(), 2);
      return row;
    }
    FillRowFromWrk(*report, &row);
    row.metrics["connections"] = connections;
    row.metrics["wrk_threads"] = threads;
    return row;
  }

  CaseResult RunGenerated(const Server& s, const Endpoint& e, int connections) {
    CaseResult row = RowWithOutcome(kSuite, "", s.runtime, s.loops, Outcome::kFailed, {});
    HttpLoadOptions load;
    load.port = s.port;
    load.connections = connections;
    load.pipeline = e.load_pipeline;
    load.duration = std::chrono::seconds(config_.seconds_per_row);
    const std::string_view body = std::string_view(e.load_method) == "POST" ? kSmallDoc : "";
    load.request = [&](int i) {
      std::string path = e.path;
      if (e.load_own_db) path += "-" + std::to_string(i);
      return HttpRequestBytes(e.load_method, path, "127.0.0.1", s.port, body);
    };
    auto report = RunHttpLoad(load);
    if (!report.ok()) {
      row.error = "load generator: " + report.status().reason();
      return row;
    }
    FillRowFromLoad(*report, &row);
    row.metrics["connections"] = connections;
    row.metrics["pipeline"] = e.load_pipeline;
    return row;
  }

  const BenchOptions& options_;
  const ProgressFn& progress_;
  const HttpSuiteConfig& config_;
  CaseFilter filter_;
  std::string wrk_;
  std::string scratch_;
  bool remove_scratch_ = false;
  std::error_code ignored_;
  std::vector<CaseResult> rows_;
  int case_index_ = 0;
  int case_count_ = 0;
};

}  // namespace

void AddLoopScaling(std::vector<CaseResult>* rows, int cores) {
  for (CaseResult& r : *rows) {
    if (r.runtime != "settee" || r.threads <= 1 || r.outcome != Outcome::kOk) continue;
    const std::string suffix = " loops=" + std::to_string(r.threads);
    if (r.name.size() <= suffix.size() || r.name.compare(r.name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string one = r.name.substr(0, r.name.size() - suffix.size()) + " loops=1";
    for (const CaseResult& b : *rows) {
      if (b.runtime != "settee" || b.name != one || b.outcome != Outcome::kOk) continue;
      auto metric = [](const CaseResult& c, const char* name) {
        auto it = c.metrics.find(name);
        return it == c.metrics.end() ? 0.0 : it->second;
      };
      if (double ops = metric(b, "ops_per_sec"); ops > 0) r.metrics["ops_vs_1_loop"] = metric(r, "ops_per_sec") / ops;
      if (double cpu = metric(b, "server_cpu_us_per_req"); cpu > 0 && metric(r, "server_cpu_us_per_req") > 0)
        r.metrics["cpu_per_req_vs_1_loop"] = metric(r, "server_cpu_us_per_req") / cpu;
      // The most `cores` can show when the server scales perfectly and the
      // client keeps its 1-loop cost per request.
      if (double s = metric(b, "server_cpu_us_per_req"), c = metric(b, "client_cpu_us_per_req"); s > 0 && c > 0)
        r.metrics["ceiling_vs_1_loop"] = std::min<double>(r.threads, cores * s / (s + c));
      break;
    }
  }
}

int WrkThreads(int cores, int server_threads, int connections) {
  return std::clamp(cores - server_threads, 1, std::max(1, connections));
}

void FillRowFromWrk(const WrkReport& r, CaseResult* row) {
  double error_pct = r.ErrorPercent();
  if (r.requests <= 0 || error_pct >= 100) {
    row->outcome = Outcome::kFailed;
    row->error = "no successful response: " + std::to_string(static_cast<long long>(r.requests)) +
                 " responses (" + std::to_string(r.non_2xx_3xx) + " not 2xx/3xx), " +
                 std::to_string(r.SocketErrors()) + " socket errors";
    return;
  }
  row->outcome = Outcome::kOk;
  row->error.clear();
  row->samples_ms = {r.latency_avg_ms};
  row->operations = r.requests;
  row->wall_ms = r.duration_ms;
  row->metrics["ops_per_sec"] = r.requests_per_sec;
  row->metrics["error_pct"] = error_pct;
  row->metrics["avg_ms"] = r.latency_avg_ms;
  row->metrics["stdev_ms"] = r.latency_stdev_ms;
  row->metrics["max_ms"] = r.latency_max_ms;
  for (auto [pct, ms] : r.percentiles_ms) row->metrics["p" + std::to_string(pct) + "_ms"] = ms;
}

// The load generator's row is wrk's row from the same figures, plus the
// client's own CPU.
void FillRowFromLoad(const HttpLoadReport& r, CaseResult* row) {
  WrkReport w;
  w.requests = static_cast<double>(r.responses);
  w.duration_ms = r.wall_ms;
  w.requests_per_sec = r.ops_per_sec();
  w.latency_avg_ms = r.avg_ms;
  w.latency_stdev_ms = r.stdev_ms;
  w.latency_max_ms = r.max_ms;
  w.percentiles_ms = {{50, r.p50_ms}, {75, r.p75_ms}, {90, r.p90_ms}, {99, r.p99_ms}};
  w.non_2xx_3xx = r.not_2xx_3xx;
  w.read_errors = r.socket_errors;
  FillRowFromWrk(w, row);
  if (row->outcome != Outcome::kOk) {
    if (!r.first_error.empty()) row->error += " (" + r.first_error + ")";
    return;
  }
  row->metrics["client_cpu_us_per_req"] = r.client_cpu_us_per_req();
  if (r.wall_ms > 0) row->metrics["client_cpu_pct"] = r.client_cpu_ms * 100 / r.wall_ms;
}

std::vector<CaseResult> RunHttpSuite(const BenchOptions& options, const ProgressFn& progress) {
  HttpSuiteConfig config;
  config.seconds_per_row = EnvSeconds();
  return RunHttpSuiteWith(options, progress, config);
}

std::vector<CaseResult> RunHttpSuiteWith(const BenchOptions& options, const ProgressFn& progress,
                                         const HttpSuiteConfig& config) {
  return HttpSuite(options, progress, config).Run();
}

}  // namespace settee::bench
