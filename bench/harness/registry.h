// The suites `settee bench --suite` can run, by name. The PouchDB workload
// groups register themselves (RegisterWorkloadSuites, workload_suite.h);
// another suite is one call, e.g. RegisterSuite("eval", RunEvalSuite), made
// before the bench command runs (bench_command.cc, RegisterBuiltinSuites).
//
// Thread safety: register before running; lookups may come from any thread.
#pragma once

#include <string>
#include <vector>

#include "bench/harness/suite.h"

namespace settee::bench {

// Adds (or replaces) the suite `name`.
void RegisterSuite(const std::string& name, SuiteRunner runner);

// The runner of `name`, or nullptr when no such suite is registered.
const SuiteRunner* FindSuite(const std::string& name);

// Every suite name the bench knows, registered or not, in run order:
// basics, views, find, attachments, eval, http.
const std::vector<std::string>& KnownSuites();

// The registered suites in KnownSuites() order, then any others.
std::vector<std::string> RegisteredSuites();

}  // namespace settee::bench
