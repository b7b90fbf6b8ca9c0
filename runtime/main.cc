// The settee executable: a CLI11 app whose subcommands each register
// themselves (serve: runtime/serve_command.h; bench: bench/harness/bench_command.h).
#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include <CLI/CLI.hpp>

#if SETTEE_WITH_JS
#include "bench/harness/bench_command.h"
#include "runtime/commands_js.h"
#endif
#if SETTEE_WITH_HTTP && SETTEE_WITH_JS
#include "js/view_functions_js.h"
#include "runtime/endpoints_views.h"
#include "runtime/log.h"
#endif
#if SETTEE_WITH_HTTP
#include "runtime/replicate_command.h"
#include "runtime/serve_command.h"
#endif

int main(int argc, char** argv) {
#if SETTEE_WITH_JS
  if (!settee::OpenClosedStandardStreams()) return 1;  // runtime/commands_js.h
#endif
  CLI::App app{"settee: a CouchDB-compatible document database"};
  app.require_subcommand(1);
  // Options of any subcommand may come from a TOML/INI file, one section per
  // subcommand ([serve] port = 5984, admin = ["admin:secret"], ...).
  app.set_config("--config", "", "Read options from a TOML/INI file ([serve] section, ...)");
#if SETTEE_WITH_HTTP && SETTEE_WITH_JS
  // Design-document code (views' map/reduce, validate_doc_update) on
  // isolate threads started at first use, one per core, each call held to
  // CouchDB's os_process_timeout (5 s).
  settee::AddServeExtension([](settee::CouchServer& server) {
    settee::js::PoolOptions pool;
    pool.store = server.store();
    const int threads = server.options().view_threads;
    pool.threads = threads > 0 ? threads
                               : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    pool.limits.timeout_ms = server.options().view_timeout_ms;
    // A design function's throw or timeout is answered to the client; the
    // server's log (and its --log-level) is where the operator sees it.
    pool.on_error = [](int thread, const std::string& report) {
      const size_t end = report.find_last_not_of('\n');
      LogWarning("design function on view thread %d: %.*s", thread,
                         static_cast<int>(end == std::string::npos ? 0 : end + 1), report.c_str());
    };
    auto functions = std::make_shared<settee::js::PoolViewFunctions>(pool);
    settee::RegisterViewEndpoints(server, functions);
    settee::InstallValidateFunctions(server, functions);
  });
#endif
#if SETTEE_WITH_HTTP
  settee::RegisterServeCommand(app);
  settee::RegisterReplicateCommand(app);
#endif
#if SETTEE_WITH_JS
  settee::RegisterRunCommands(app);  // run, eval (runtime/commands_js.h)
  settee::bench::RegisterBenchCommand(app);  // bench (bench/harness/bench_command.h)
  argc = settee::TakeScriptArguments(app, argc, argv);  // the words of run's script
#endif
  CLI11_PARSE(app, argc, argv);
  return 0;
}
