// `settee bench`: the PouchDB workload (and the other registered suites)
// inside settee, with real PouchDB beside it in the same run.
//
//   settee bench [--threads N] [--backend memory|leveldb]
//                [--suite basics,views,find,attachments,eval,http] [--grep RE]
//                [--iterations K] [--rounds N] [--json FILE] [--baseline pouchdb|none] [--remote URL]
//   settee bench --compare A.json B.json
//
// It prints a progress line while it runs (stderr), a table at the end
// (stdout) and, with --json, the report of report.h. The exit status is 0,
// 1 when a settee case failed, 2 for bad input (unknown suite, a --grep that
// selects nothing, unreadable reports).
#pragma once

#include <CLI/CLI.hpp>

namespace settee::bench {

// Registers every suite built into this executable (the workload groups,
// then eval and http as they land). Idempotent.
void RegisterBuiltinSuites();

// Adds the `bench` subcommand to `app`; its callback throws
// CLI::RuntimeError(code) for a non-zero exit status.
void RegisterBenchCommand(CLI::App& app);

}  // namespace settee::bench
