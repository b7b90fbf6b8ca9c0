// A stand-in `settee` executable with only the JS subcommands, so that the
// JS tests do not depend on the HTTP server's main(). runtime/main.cc
// registers the same commands in the real binary.
#include <CLI/CLI.hpp>

#include "runtime/commands_js.h"

int main(int argc, char** argv) {
  if (!settee::OpenClosedStandardStreams()) return 1;
  CLI::App app{"settee (JS commands only)"};
  app.require_subcommand(1);
  settee::RegisterRunCommands(app);
  argc = settee::TakeScriptArguments(app, argc, argv);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
