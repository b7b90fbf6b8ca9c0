// The progress line of `settee bench`: runtime, suite, case i of n,
// iteration, elapsed. On a terminal it is one line rewritten in place (and
// cleared by Finish()); otherwise one line per case as it starts.
// Thread-safe: suites report from isolate threads.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>

#include "bench/harness/suite.h"

namespace settee::bench {

class ProgressPrinter {
 public:
  explicit ProgressPrinter(FILE* out);
  void Report(const Progress& p);
  // Round `round` of `rounds` (--rounds) from now on: named on the line when
  // there is more than one.
  void SetRound(int round, int rounds);
  // Clears the line (terminal) before other output.
  void Finish();
  ProgressFn Fn() { return [this](const Progress& p) { Report(p); }; }

 private:
  FILE* out_;
  bool tty_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
  std::string last_case_;
  bool dirty_ = false;
  std::string round_;  // "round 2/3 " or empty
};

}  // namespace settee::bench
