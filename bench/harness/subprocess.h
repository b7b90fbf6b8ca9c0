// Child processes for the bench suites: baselines (node, pouchdb-server), a
// `settee serve` under load, and the load generator (wrk).
//
//   auto child = Subprocess::Spawn({"node", "loop.js", "20"});
//   Result<int> code = (*child)->Wait(std::chrono::seconds(60));
//   (*child)->out();  // everything it wrote to stdout
//
// A child's stdout and stderr are pipes read by Wait()/WaitAll() (or, with
// SpawnOptions::log_path, both go to that file). Its stdin is /dev/null. It
// gets SIGKILL if the thread that spawned it exits (PR_SET_PDEATHSIG), so a
// killed bench leaves no server behind, and the destructor kills and reaps
// one that is still running.
//
// Beside child_process.h's Child (the harness's node baseline: stdout read
// line by line as it streams, waits without a bound), a Subprocess waits
// with a deadline, for several children at once, and can send all output to
// a log file. Both look programs up with FindInPath (child_process.h).
//
// Thread safety: one Subprocess is used by one thread at a time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "settee/status.h"

namespace settee::bench {

struct SpawnOptions {
  std::string cwd;       // empty: the parent's
  std::string log_path;  // non-empty: stdout and stderr are appended to this file, not piped
};

class Subprocess {
 public:
  // Starts argv[0] (looked up on $PATH) with argv. kNotFound if there is no
  // such executable, kIOError if it cannot be started.
  static Result<std::unique_ptr<Subprocess>> Spawn(const std::vector<std::string>& argv,
                                                   const SpawnOptions& options = {});

  ~Subprocess();  // SIGKILL and reap if still running
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  pid_t pid() const { return pid_; }
  bool running() const { return !exit_code_.has_value(); }

  // Collects output until the process exits; returns its exit code (128 +
  // signal number if a signal ended it). kTimeout, with the process still
  // running, if it has not exited after `timeout`.
  Result<int> Wait(std::chrono::milliseconds timeout);

  // SIGTERM, then SIGKILL if it has not exited after `grace`; reaps it and
  // returns the exit code.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

  const std::string& out() const { return out_; }
  // Its peak resident set size, read while it ran (VmHWM, see
  // ProcessPeakRssMb): by Stop() just before the signal, or by
  // NotePeakRss(); 0 when never read.
  double peak_rss_mb() const { return peak_rss_mb_; }
  // Reads the peak so far while the process runs (keeps the last reading
  // once it has gone).
  void NotePeakRss();
  const std::string& err() const { return err_; }

  // Waits for several processes at once, reading all their pipes (so none
  // blocks on a full pipe while another is waited for). kTimeout if any is
  // still running after `timeout`.
  static Status WaitAll(const std::vector<Subprocess*>& children, std::chrono::milliseconds timeout);

 private:
  Subprocess() = default;
  // Waits at most `wait_ms` for output or an exit of any of `children`,
  // reads what their pipes hold and reaps those that exited.
  static void PumpMany(const std::vector<Subprocess*>& children, int wait_ms);
  void Reap(bool block);

  pid_t pid_ = -1;
  int out_fd_ = -1;
  int err_fd_ = -1;
  int pid_fd_ = -1;  // pidfd_open(2): readable once the child has exited
  std::string out_;
  std::string err_;
  std::optional<int> exit_code_;
  double peak_rss_mb_ = 0;
};

}  // namespace settee::bench
