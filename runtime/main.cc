// The settee executable: a CLI11 app whose subcommands each register
// themselves (serve: runtime/serve_command.h; bench: bench/harness/bench_command.h).
#include <CLI/CLI.hpp>

#if SETTEE_WITH_JS
#include "bench/harness/bench_command.h"
#include "runtime/commands_js.h"
#endif
#if SETTEE_WITH_HTTP
#include "runtime/replicate_command.h"
#include "runtime/serve_command.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"settee: a CouchDB-compatible document database"};
  app.require_subcommand(1);
  // Options of any subcommand may come from a TOML/INI file, one section per
  // subcommand ([serve] port = 5984, admin = ["admin:secret"], ...).
  app.set_config("--config", "", "Read options from a TOML/INI file ([serve] section, ...)");
#if SETTEE_WITH_HTTP
  settee::RegisterServeCommand(app);
  settee::RegisterReplicateCommand(app);
#endif
#if SETTEE_WITH_JS
  settee::RegisterRunCommands(app);  // run, eval (runtime/commands_js.h)
  settee::bench::RegisterBenchCommand(app);  // bench (bench/harness/bench_command.h)
#endif
  CLI11_PARSE(app, argc, argv);
  return 0;
}
