#include "bench/harness/progress.h"

#include <unistd.h>

namespace settee::bench {

ProgressPrinter::ProgressPrinter(FILE* out)
    : out_(out), tty_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressPrinter::Report(const Progress& p) {
  std::lock_guard<std::mutex> lock(mu_);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string runtime = round_ + (p.runtime.empty() ? "" : "[" + p.runtime + "] ");
  std::string key = runtime + p.suite + "/" + p.name;
  char iter[48];
  if (p.iterations > 0) std::snprintf(iter, sizeof iter, "iteration %d/%d", p.iteration, p.iterations);
  else std::snprintf(iter, sizeof iter, "iteration %d", p.iteration);
  if (tty_) {
    std::fprintf(out_, "\r\033[K%s%s case %d/%d %s  %s  %.1f s", runtime.c_str(), p.suite.c_str(),
                 p.case_index + 1, p.case_count, p.name.c_str(), iter, elapsed);
    dirty_ = true;
  } else if (key != last_case_) {
    std::fprintf(out_, "%s%s case %d/%d %s (%d iterations)  %.1f s\n", runtime.c_str(), p.suite.c_str(),
                 p.case_index + 1, p.case_count, p.name.c_str(), p.iterations, elapsed);
  }
  last_case_ = key;
  std::fflush(out_);
}

void ProgressPrinter::SetRound(int round, int rounds) {
  std::lock_guard<std::mutex> lock(mu_);
  round_ = rounds > 1 ? "round " + std::to_string(round) + "/" + std::to_string(rounds) + " " : "";
}

void ProgressPrinter::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_ && dirty_) std::fprintf(out_, "\r\033[K");
  dirty_ = false;
  std::fflush(out_);
}

}  // namespace settee::bench
