// Helpers the eval and http suites share: which cases --grep selects, where
// the bench sources are, and installing the npm baselines.
//
// Thread safety: plain values and functions; a CaseFilter may be read from
// many threads.
#pragma once

#include <optional>
#include <regex>
#include <string>

#include "bench/harness/case_result.h"
#include "bench/harness/suite.h"
#include "settee/status.h"

#include <chrono>

namespace settee::bench {

// options.grep (an ECMAScript regex searched in "suite/case") compiled once.
class CaseFilter {
 public:
  // kBadRequest naming the pattern if it is not a valid regex.
  static Result<CaseFilter> FromGrep(const std::string& grep);
  bool Selected(const std::string& suite, const std::string& name) const;

 private:
  std::optional<std::regex> re_;  // nullopt: everything
};

// options.source_dir, or the source tree this binary was built from.
std::string SourceDir(const BenchOptions& options);

// A row of `suite`/`name` for `runtime` with the given outcome and reason.
CaseResult RowWithOutcome(const std::string& suite, const std::string& name, const std::string& runtime,
                          int threads, Outcome outcome, std::string error);

// Runs scripts/setup_bench_baselines.sh `which` ("eval" or "http"), its
// output going to a log under options.scratch_dir (or /tmp). kIOError with
// the log's last lines if it fails.
Status InstallBaselines(const BenchOptions& options, const std::string& which);

class Subprocess;

// One request with libcurl to a loopback server (no proxy); its status.
Result<long> HttpCall(const std::string& method, const std::string& url, const std::string& body);

// Polls GET http://127.0.0.1:port/ until it answers 200: kInternal when
// `server` exits first, kTimeout after `timeout`.
Status WaitUntilUp(int port, Subprocess* server, std::chrono::seconds timeout);

// A loopback port nobody listens on right now (for servers that cannot be
// asked which port they took).
Result<int> FreePort();

// The contents of the file at `path`; empty if it cannot be read.
std::string ReadFile(const std::string& path);

// The last `max_lines` lines of `text`, trimmed (for error messages).
std::string TailLines(const std::string& text, int max_lines);

}  // namespace settee::bench
