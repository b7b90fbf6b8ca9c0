#include "bench/harness/replication_remote.h"

#include <unistd.h>

#include <filesystem>
#include <thread>

#include "bench/harness/child_process.h"
#include "bench/harness/suite_support.h"
#include "util/json.h"

namespace settee::bench {

namespace {

constexpr std::chrono::seconds kStartup{60};

// `settee serve` on a free loopback port, the run's backend.
Status StartSettee(const BenchOptions& o, ReplicationRemote* out) {
  auto port = FreePort();
  if (!port.ok()) return port.status();
  // A directory per server: a scaling run starts one for each thread count,
  // and two LevelDB servers cannot share a store (its LOCK).
  std::string dir = o.scratch_dir + "/remote-settee-" + std::to_string(*port);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::vector<std::string> argv = {o.settee_binary, "serve", "--port", std::to_string(*port), "--bind", "127.0.0.1",
                                   "--backend", o.backend, "--log-level", "error"};
  if (o.remote_loops > 0) argv.insert(argv.end(), {"--threads", std::to_string(o.remote_loops)});
  if (o.backend == "leveldb") argv.insert(argv.end(), {"--data", dir + "/data"});
  auto child = Subprocess::Spawn(argv, SpawnOptions{.cwd = dir, .log_path = dir + "/serve.log"});
  if (!child.ok()) return child.status();
  out->process = std::move(*child);
  out->url = "http://127.0.0.1:" + std::to_string(*port);
  Status up = WaitUntilUp(*port, out->process.get(), kStartup);
  if (!up.ok()) return Status::Internal("settee serve for the replication cases: " + up.reason() + ": " +
                                        TailLines(ReadFile(dir + "/serve.log"), 2));
  if (o.facts) {
    std::string loops = o.remote_loops == 1 ? ", 1 loop" : o.remote_loops > 1 ? ", " + std::to_string(o.remote_loops) + " loops" : "";
    o.facts->SetRemote("settee", "settee serve " + out->url + " (" + o.backend + loops + ")");
  }
  return Status::OK();
}

// pouchdb-server 4.2 (bench/http/node_modules), in memory or on LevelDB.
Status StartPouchdbServer(const BenchOptions& o, ReplicationRemote* out) {
  std::string node = FindInPath("node");
  if (node.empty()) return Status::NotFound("no node on PATH to run pouchdb-server");
  std::string script = SourceDir(o) + "/bench/http/node_modules/pouchdb-server/bin/pouchdb-server";
  Status installed;
  if (access(script.c_str(), R_OK) != 0) installed = InstallBaselines(o, "http");
  if (access(script.c_str(), R_OK) != 0) {
    return Status::NotFound("pouchdb-server 4.2 (npm, bench/http/package.json) is not installed at " + script +
                            (installed.ok() ? "" : ": " + installed.reason()));
  }
  std::string version = "4.2";
  json::Document pkg;
  std::string pkg_path = std::filesystem::path(script).parent_path().parent_path() / "package.json";
  if (json::Parse(ReadFile(pkg_path), &pkg).ok() && pkg.IsObject() && pkg.HasMember("version") &&
      pkg["version"].IsString()) {
    version = pkg["version"].GetString();
  }
  auto port = FreePort();
  if (!port.ok()) return port.status();
  // It writes log.txt and config.json into its working directory.
  std::string dir = o.scratch_dir + "/remote-pouchdb-server";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  std::vector<std::string> argv = {node, script, "--host", "127.0.0.1", "--port", std::to_string(*port),
                                   "--no-stdout-logs"};
  if (o.backend == "memory") argv.push_back("--in-memory");
  else argv.insert(argv.end(), {"--dir", dir + "/data"});
  auto child = Subprocess::Spawn(argv, SpawnOptions{.cwd = dir, .log_path = dir + "/output.txt"});
  if (!child.ok()) return child.status();
  out->process = std::move(*child);
  out->url = "http://127.0.0.1:" + std::to_string(*port);
  Status up = WaitUntilUp(*port, out->process.get(), kStartup);
  if (!up.ok()) return Status::Internal("pouchdb-server for the replication cases: " + up.reason() + ": " +
                                        TailLines(ReadFile(dir + "/output.txt"), 2));
  if (o.facts) {
    o.facts->SetRemote("pouchdb", "pouchdb-server " + version + " " + out->url +
                                      (o.backend == "memory" ? " (--in-memory)" : " (LevelDB)"));
  }
  return Status::OK();
}

}  // namespace

bool NeedsReplicationRemote(const std::vector<WorkloadCase>& cases) {
  for (const auto& c : cases) {
    if (c.name == "pull-replication-one-generation" || c.name == "pull-replication-two-generation") return true;
  }
  return false;
}

Result<ReplicationRemote> StartReplicationRemote(const std::string& runtime, const BenchOptions& o) {
  ReplicationRemote r;
  if (!o.remote.empty()) {
    r.url = o.remote;
    if (o.facts) o.facts->SetRemote(runtime, o.remote + " (--remote)");
    return r;
  }
  Status s = runtime == "pouchdb" ? StartPouchdbServer(o, &r) : StartSettee(o, &r);
  if (!s.ok()) return s;
  return r;
}

}  // namespace settee::bench
