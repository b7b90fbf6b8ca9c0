// The settee executable: a CLI11 app whose subcommands each register
// themselves (serve: runtime/serve_command.h; bench: bench/harness/bench_command.h).
#include <CLI/CLI.hpp>

#include "bench/harness/bench_command.h"
#include "runtime/commands_js.h"
#include "runtime/replicate_command.h"
#include "runtime/serve_command.h"

int main(int argc, char** argv) {
  CLI::App app{"settee: a CouchDB-compatible document database"};
  app.require_subcommand(1);
  // Options of any subcommand may come from a TOML/INI file, one section per
  // subcommand ([serve] port = 5984, admin = ["admin:secret"], ...).
  app.set_config("--config", "", "Read options from a TOML/INI file ([serve] section, ...)");
  settee::RegisterServeCommand(app);
  settee::RegisterReplicateCommand(app);
  settee::RegisterRunCommands(app);  // run, eval (runtime/commands_js.h)
  settee::bench::RegisterBenchCommand(app);  // bench (bench/harness/bench_command.h)
  CLI11_PARSE(app, argc, argv);
  return 0;
}
