// A child process of `settee bench` (node running the baseline, a
// `settee serve` for the replication cases, wrk, ...): started with its
// stdout on a pipe read line by line, its stderr in a file, and reaped with
// its resource usage (peak RSS). Not thread-safe: one owner thread.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "settee/status.h"

namespace settee::bench {

struct ChildExit {
  int exit_code = -1;     // exit status, or -1 if killed by a signal
  int signal = 0;         // the signal that ended it, if any
  std::string stderr_tail;  // the last few KB it wrote to stderr
};

class Child {
 public:
  // Starts argv[0] (looked up in PATH when it has no slash) in `cwd` (empty:
  // ours), stderr going to `stderr_path`. kNotFound when the program is
  // missing, kInternal when it cannot be started.
  static Result<std::unique_ptr<Child>> Spawn(const std::vector<std::string>& argv, const std::string& cwd,
                                              const std::string& stderr_path);
  ~Child();  // kills (SIGKILL) and reaps a child still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // The next line of its stdout without the newline; false at end of output.
  bool ReadLine(std::string* line);
  // Sends `sig` (e.g. SIGTERM) if it is still running.
  void Signal(int sig);
  // Waits for it to end and reaps it. Call once.
  ChildExit Wait();

 private:
  Child() = default;
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
  std::string stderr_path_;
  bool reaped_ = false;
};

// The full path of `program` found in PATH, or empty.
std::string FindInPath(const std::string& program);

}  // namespace settee::bench
