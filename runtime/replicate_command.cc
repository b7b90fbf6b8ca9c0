#include "runtime/replicate_command.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "replication/jobs.h"
#include "runtime/serve_command.h"
#include "settee/store.h"

namespace settee {

namespace {

using Clock = std::chrono::steady_clock;

struct ReplicateConfig {
  std::string source, target;
  bool continuous = false;
  bool create_target = false;
  std::vector<std::string> doc_ids;
  std::string since_seq;
  uint64_t batch_size = 100;
  std::string data;
  std::string backend = "leveldb";
  bool quiet = false;
};

// Prints one progress line, rewritten in place on a terminal.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(STDERR_FILENO)) {}

  void Update(const replication::ReplicationStats& s, bool force) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto now = Clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    double secs = std::chrono::duration<double>(now - start_).count();
    std::fprintf(stderr,
                 "%sread %llu, written %llu, failed %llu, pending %llu, %.0f docs/s, "
                 "checkpoint %s%s",
                 tty_ ? "\r\033[K" : "", static_cast<unsigned long long>(s.docs_read),
                 static_cast<unsigned long long>(s.docs_written),
                 static_cast<unsigned long long>(s.doc_write_failures),
                 static_cast<unsigned long long>(s.changes_pending),
                 secs > 0 ? s.docs_written / secs : 0.0, s.checkpointed_source_seq.c_str(),
                 tty_ ? "" : "\n");
    std::fflush(stderr);
  }
  void Line(const std::string& text) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lock(mu_);
    std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", text.c_str());
  }

 private:
  const bool quiet_;
  const bool tty_;
  std::mutex mu_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_{};
};

int RunReplicate(const ReplicateConfig& cfg) {
  StoreOptions store_opts;
  if (cfg.backend == "memory") {
    store_opts.backend = StoreOptions::Backend::kMemory;
  } else if (cfg.backend == "leveldb") {
    store_opts.path = cfg.data.empty() ? DefaultDataDir() : cfg.data;
  } else {
    std::fprintf(stderr, "settee: --backend must be leveldb or memory\n");
    return 2;
  }
  // The store gives local endpoints and the server uuid the replication id
  // is made from, so runs against the same data resume each other.
  auto store = Store::Open(store_opts);
  if (!store.ok()) {
    std::fprintf(stderr, "settee: cannot open the store: %s\n",
                 store.status().ToString().c_str());
    return 1;
  }
  replication::ReplicationRequest request;
  request.source.name = cfg.source;
  request.target.name = cfg.target;
  request.options.continuous = cfg.continuous;
  request.options.create_target = cfg.create_target;
  request.options.batch_size = cfg.batch_size ? cfg.batch_size : 1;
  if (!cfg.doc_ids.empty()) request.options.doc_ids = cfg.doc_ids;
  if (!cfg.since_seq.empty()) {
    bool numeric = cfg.since_seq.find_first_not_of("0123456789") == std::string::npos;
    request.options.since_seq = numeric ? cfg.since_seq : "\"" + cfg.since_seq + "\"";
  }
  int code = 0;
  {
    replication::ReplicationJobs jobs(store->get());
    auto replicator = jobs.MakeReplicator(request);
    if (!replicator.ok()) {
      std::fprintf(stderr, "settee: %s\n", replicator.status().ToString().c_str());
      return 2;
    }
    replication::Replicator& r = **replicator;
    Progress progress(cfg.quiet);
    progress.Line("replicating " + r.source_name() + " -> " + r.target_name() + " (id " +
                  r.job_id() + ")");
    r.SetListener([&progress](const replication::ReplicationEvent& e) {
      using Kind = replication::ReplicationEvent::Kind;
      switch (e.kind) {
        case Kind::kChange: progress.Update(e.stats, false); break;
        case Kind::kPaused:
          progress.Update(e.stats, true);
          if (!e.error.ok()) progress.Line("retrying after: " + e.error.ToString());
          else progress.Line("caught up; waiting for changes (Ctrl-C stops)");
          break;
        case Kind::kDenied:
          progress.Line("refused by the target: " + (e.doc_ids.empty() ? "" : e.doc_ids[0]) +
                        ": " + e.error.ToString());
          break;
        default: break;
      }
    });
    // Ctrl-C / SIGTERM cancel the job (a continuous one ends this way).
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::thread([signals, &r]() mutable {
      int sig = 0;
      sigwait(&signals, &sig);
      r.Cancel();
    }).detach();
    Status s = r.Run();
    auto stats = r.Stats();
    progress.Update(stats, true);
    if (!s.ok()) {
      progress.Line("replication failed: " + s.ToString());
      code = 1;
    } else {
      progress.Line(std::string(stats.state == replication::ReplicationState::kCancelled
                                    ? "stopped"
                                    : "completed") +
                    ": " + std::to_string(stats.docs_written) + " docs written, " +
                    std::to_string(stats.doc_write_failures) + " failed, checkpoint " +
                    stats.checkpointed_source_seq);
    }
    // The signal thread still waits; the process ends right after this.
  }
  return code;
}

}  // namespace

void RegisterReplicateCommand(CLI::App& app) {
  auto cfg = std::make_shared<ReplicateConfig>();
  CLI::App* cmd = app.add_subcommand(
      "replicate", "Replicate SOURCE to TARGET (database names or http(s) URLs)");
  cmd->add_option("source", cfg->source, "Source database name or URL")->required();
  cmd->add_option("target", cfg->target, "Target database name or URL")->required();
  cmd->add_flag("--continuous", cfg->continuous, "Keep following the source's changes");
  cmd->add_flag("--create-target", cfg->create_target, "Create the target if missing");
  cmd->add_option("--doc-id", cfg->doc_ids, "Replicate only these documents (repeatable)");
  cmd->add_option("--since-seq", cfg->since_seq, "Start from this source sequence");
  cmd->add_option("--batch-size", cfg->batch_size, "Changes per batch (default 100)");
  cmd->add_option("--data", cfg->data,
                  "Data directory of the local store (default $SETTEE_DATA, "
                  "$XDG_DATA_HOME/settee or ./settee-data)");
  cmd->add_option("--backend", cfg->backend, "leveldb (default) or memory");
  cmd->add_flag("--quiet", cfg->quiet, "No progress output");
  cmd->callback([cfg] {
    int code = RunReplicate(*cfg);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace settee
