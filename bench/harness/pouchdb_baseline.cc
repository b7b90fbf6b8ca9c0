#include "bench/harness/pouchdb_baseline.h"

#include <netdb.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>

#include <rapidjson/document.h>

#include "bench/harness/child_process.h"
#include "bench/harness/replication_remote.h"
#include "util/json.h"

namespace settee::bench {

namespace {

constexpr const char* kMarker = "@@bench ";

std::vector<CaseResult> AllSkipped(const std::vector<WorkloadCase>& cases, const std::string& why) {
  std::vector<CaseResult> out;
  for (const auto& c : cases) {
    CaseResult r;
    r.suite = c.suite;
    r.name = c.name;
    r.runtime = "pouchdb";
    r.outcome = Outcome::kSkipped;
    r.error = why;
    out.push_back(r);
  }
  return out;
}

std::string LastLines(const std::string& text, int lines) {
  size_t end = text.find_last_not_of("\n ");
  if (end == std::string::npos) return "";
  size_t pos = end + 1;
  for (int i = 0; i < lines && pos > 0; ++i) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) { pos = 0; break; }
    pos = nl;
  }
  std::string s = text.substr(pos, end + 1 - pos);
  for (auto& ch : s) if (ch == '\n') ch = ' ';
  return s.find_first_not_of(' ') == std::string::npos ? "" : s.substr(s.find_first_not_of(' '));
}

// Installs bench/node_modules with npm ci when PouchDB is not there yet.
Status EnsurePouchDb(const std::string& bench_dir, const std::string& scratch, RunFacts* facts) {
  if (std::filesystem::exists(bench_dir + "/node_modules/pouchdb/package.json") &&
      std::filesystem::exists(bench_dir + "/node_modules/pouchdb-adapter-memory/package.json")) {
    return Status::OK();
  }
  if (FindInPath("npm").empty()) {
    return Status::NotFound("PouchDB is not installed in " + bench_dir + "/node_modules and npm is not in PATH");
  }
  std::fprintf(stderr, "settee bench: installing the PouchDB baseline (npm ci in %s) ...\n", bench_dir.c_str());
  const auto t0 = std::chrono::steady_clock::now();
  auto npm = Child::Spawn({"npm", "ci", "--no-audit", "--no-fund"}, bench_dir, scratch + "/npm-ci.log");
  if (!npm.ok()) return npm.status();
  std::string line;
  while ((*npm)->ReadLine(&line)) {}
  ChildExit e = (*npm)->Wait();
  if (facts) facts->AddSeconds("installing baselines", SecondsSince(t0));
  if (e.exit_code != 0) {
    return Status::Internal("`npm ci` in " + bench_dir + " failed: " + LastLines(e.stderr_tail, 3));
  }
  return Status::OK();
}

std::string SpecJson(const std::vector<WorkloadCase>& cases, const std::string& backend, const std::string& remote) {
  std::string s = "{\"backend\":" + json::Quote(backend) + ",\"remote\":" + json::Quote(remote) + ",\"cases\":[";
  for (size_t i = 0; i < cases.size(); ++i) {
    if (i) s += ",";
    s += "{\"suite\":" + json::Quote(cases[i].suite) + ",\"name\":" + json::Quote(cases[i].name) +
         ",\"iterations\":" + std::to_string(cases[i].iterations) + "}";
  }
  return s + "]}";
}

}  // namespace

Status ProbeHttp(const std::string& url) {
  if (url.rfind("https://", 0) == 0) return Status::OK();
  if (url.rfind("http://", 0) != 0) return Status::BadRequest("not an http:// or https:// URL: " + url);
  std::string rest = url.substr(7);
  std::string hostport = rest.substr(0, rest.find('/'));
  size_t at = hostport.rfind('@');
  if (at != std::string::npos) hostport = hostport.substr(at + 1);
  std::string host = hostport, port = "80";
  size_t colon = hostport.rfind(':');
  if (colon != std::string::npos && hostport.find(']') == std::string::npos) {
    host = hostport.substr(0, colon);
    port = hostport.substr(colon + 1);
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), port.c_str(), &hints, &res) != 0 || !res) {
    return Status::NotFound("cannot resolve " + host);
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0) {
    std::string why = std::strerror(errno);
    close(fd);
    return Status::IOError("cannot connect to " + hostport + ": " + why);
  }
  std::string req = "GET / HTTP/1.0\r\nHost: " + hostport + "\r\n\r\n";
  char buf[16] = {0};
  bool ok = send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()) &&
            recv(fd, buf, 5, MSG_WAITALL) == 5 && std::memcmp(buf, "HTTP/", 5) == 0;
  close(fd);
  return ok ? Status::OK() : Status::IOError(hostport + " does not answer HTTP");
}

std::vector<CaseResult> RunPouchDbBaseline(const std::vector<WorkloadCase>& cases, const BenchOptions& o,
                                           const ProgressFn& progress) {
  const std::string bench_dir = o.source_dir + "/bench";
  if (FindInPath("node").empty()) {
    return AllSkipped(cases, "node was not found in PATH (the baseline needs Node.js 18+; scripts/setup.sh installs it)");
  }
  if (Status s = EnsurePouchDb(bench_dir, o.scratch_dir, o.facts); !s.ok()) return AllSkipped(cases, s.reason());

  // PouchDB pulls from pouchdb-server, as PouchDB's suite pulls from a
  // CouchDB-compatible server (--remote: that one).
  ReplicationRemote server;
  std::string remote;
  if (NeedsReplicationRemote(cases)) {
    const auto t0 = std::chrono::steady_clock::now();
    auto started = StartReplicationRemote("pouchdb", o);
    if (o.facts) o.facts->AddSeconds("starting servers", SecondsSince(t0));
    if (started.ok()) {
      server = std::move(*started);
      remote = server.url;
    } else {
      std::fprintf(stderr, "settee bench: %s\n", started.status().reason().c_str());
    }
  }

  std::string work = o.scratch_dir + "/pouchdb-" + (cases.empty() ? "none" : cases[0].suite);
  std::error_code ec;
  std::filesystem::create_directories(work, ec);
  auto node = Child::Spawn({"node", bench_dir + "/workload/node_main.js", SpecJson(cases, o.backend, remote)}, work,
                           work + ".stderr");
  if (!node.ok()) return AllSkipped(cases, node.status().reason());

  std::vector<CaseResult> results;
  std::string line;
  int current = 0;
  double peak_rss_mb = -1;  // as node reports it
  while ((*node)->ReadLine(&line)) {
    if (line.rfind(kMarker, 0) != 0) continue;  // the workload's own output
    rapidjson::Document d;
    d.Parse(line.c_str() + std::strlen(kMarker));
    if (d.HasParseError() || !d.IsObject()) continue;
    if (d.HasMember("versions") && d["versions"].IsObject() && o.facts) {
      for (const auto& m : d["versions"].GetObject()) {
        std::string k = m.name.GetString();
        if (m.value.IsString() && k != "v8") o.facts->SetVersion(k, m.value.GetString());
        if (m.value.IsString() && k == "v8") o.facts->SetVersion("node_v8", m.value.GetString());
      }
    } else if (d.HasMember("peak_rss_mb") && d["peak_rss_mb"].IsNumber()) {
      peak_rss_mb = d["peak_rss_mb"].GetDouble();
    } else if (d.HasMember("progress") && d["progress"].IsObject()) {
      const auto& p = d["progress"];
      current = p["case"].GetInt();
      if (progress && current >= 0 && current < static_cast<int>(cases.size())) {
        const auto& c = cases[current];
        progress(Progress{c.suite, c.name, current, static_cast<int>(cases.size()), p["iteration"].GetInt(),
                          c.iterations, "pouchdb"});
      }
    } else if (d.HasMember("result") && d["result"].IsObject()) {
      const auto& v = d["result"];
      CaseResult r;
      r.suite = v["suite"].GetString();
      r.name = v["name"].GetString();
      r.runtime = "pouchdb";
      std::string status = v["status"].GetString();
      r.outcome = status == "ok" ? Outcome::kOk
                  : status == "unsupported" ? Outcome::kUnsupported : Outcome::kFailed;
      r.error = v["error"].GetString();
      r.error = r.error.substr(0, r.error.find('\n'));
      for (const auto& s : v["samples"].GetArray()) r.samples_ms.push_back(s.GetDouble());
      r.operations = static_cast<double>(r.samples_ms.size());
      if (v.HasMember("wall_ms") && v["wall_ms"].IsNumber()) r.wall_ms = v["wall_ms"].GetDouble();
      results.push_back(std::move(r));
    }
  }
  ChildExit e = (*node)->Wait();
  // Node's own VmHWM: wait4's ru_maxrss would be at least this process's
  // peak at the fork (see ProcessPeakRssMb). None when node died early.
  if (o.facts && peak_rss_mb >= 0) o.facts->NotePeakRss("pouchdb", peak_rss_mb);
  if (results.size() < cases.size()) {
    std::string why = e.signal ? "node was killed by signal " + std::to_string(e.signal)
                               : "node exited with status " + std::to_string(e.exit_code);
    std::string tail = LastLines(e.stderr_tail, 3);
    for (size_t i = results.size(); i < cases.size(); ++i) {
      CaseResult r;
      r.suite = cases[i].suite;
      r.name = cases[i].name;
      r.runtime = "pouchdb";
      r.outcome = Outcome::kFailed;
      r.error = why + (tail.empty() ? "" : ": " + tail);
      results.push_back(r);
    }
  }
  if (server.process) server.process->Stop();
  return results;
}

}  // namespace settee::bench
