#include "bench/harness/suite_support.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "bench/harness/subprocess.h"

#ifndef SETTEE_SOURCE_DIR
#define SETTEE_SOURCE_DIR "."
#endif

namespace settee::bench {

Result<CaseFilter> CaseFilter::FromGrep(const std::string& grep) {
  CaseFilter f;
  if (grep.empty()) return f;
  try {
    f.re_.emplace(grep, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Status::BadRequest("invalid --grep '" + grep + "': " + e.what());
  }
  return f;
}

bool CaseFilter::Selected(const std::string& suite, const std::string& name) const {
  return !re_ || std::regex_search(suite + "/" + name, *re_);
}

std::string SourceDir(const BenchOptions& options) {
  return options.source_dir.empty() ? std::string(SETTEE_SOURCE_DIR) : options.source_dir;
}

CaseResult RowWithOutcome(const std::string& suite, const std::string& name, const std::string& runtime,
                          int threads, Outcome outcome, std::string error) {
  CaseResult r;
  r.suite = suite;
  r.name = name;
  r.runtime = runtime;
  r.threads = threads;
  r.outcome = outcome;
  r.error = std::move(error);
  return r;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TailLines(const std::string& text, int max_lines) {
  size_t end = text.find_last_not_of(" \t\r\n");
  if (end == std::string::npos) return {};
  size_t pos = end + 1;
  for (int i = 0; i < max_lines && pos > 0; ++i) {
    size_t nl = text.rfind('\n', pos - 1);
    if (nl == std::string::npos) return text.substr(0, end + 1);
    pos = nl;
  }
  return text.substr(pos + 1, end - pos);
}

Status InstallBaselines(const BenchOptions& options, const std::string& which) {
  std::string script = SourceDir(options) + "/scripts/setup_bench_baselines.sh";
  std::string log = (options.scratch_dir.empty() ? std::string("/tmp") : options.scratch_dir) +
                    "/setup_bench_baselines-" + which + ".log";
  auto child = Subprocess::Spawn({"/bin/bash", script, which}, SpawnOptions{.cwd = {}, .log_path = log});
  if (!child.ok()) return child.status();
  // npm ci of pouchdb-server builds native modules: minutes on a slow machine.
  Result<int> code = (*child)->Wait(std::chrono::minutes(10));
  if (code.ok() && *code == 0) return Status::OK();
  return Status::IOError(script + " " + which + " failed (" +
                         (code.ok() ? "exit " + std::to_string(*code) : code.status().reason()) +
                         "; log " + log + "): " + TailLines(ReadFile(log), 3));
}

}  // namespace settee::bench
