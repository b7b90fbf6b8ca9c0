// The JavaScript subcommands of the settee executable:
//
//   settee run [--threads N] [--keep] [--backend memory|leveldb] [--data DIR]
//              [--max-heap-mb MB] [--timeout-ms MS] [--jitless] script.js|- [args...]
//   settee eval [same options] 'expression'
//
// `run` starts N isolate threads (js/isolate_pool.h) sharing one store and
// runs the script in each (JXCore's mt-keep:N); `-` reads the script from
// stdin. It returns when every thread is idle or a script calls
// process.exit(); the exit status is process.exit's code, or 1 after an
// uncaught error that --keep did not absorb. `eval` prints the value of the
// expression as node -p does (promises are awaited first). Messages a script
// sends to the host (settee.postMessage(msg) without a target) are printed
// as "[message from thread N] <json>" lines. --timeout-ms and --max-heap-mb
// limit every call into JS (js/isolate_pool.h); --v8-flags passes V8 flags;
// --jitless runs V8 without its JIT compilers (as iOS requires; slower).
#pragma once

#include <CLI/CLI.hpp>

namespace settee {

// Adds the `run` and `eval` subcommands to `app`. Their callbacks throw
// CLI::RuntimeError(code) for a non-zero exit status, which CLI11_PARSE (or
// app.exit()) turns into main's return value.
void RegisterRunCommands(CLI::App& app);

// node's command line: its options, the script, then the script's words,
// each as written (process.argv). Takes the words after `run`'s script
// (or `eval`'s expression) off the command line for the script, and
// returns the argc CLI11 is to parse: `app.js --help -t 2` are app.js's
// words, `[1,2]` one word (CLI11 took a script's --help or -t for
// settee's, and reads `[a,b]` as a list), and an option settee does not
// know before the script is CLI11's error (prefix_command passed it to
// the script, or ran a mistyped option's value as the script). Call after
// RegisterRunCommands, before parsing.
int TakeScriptArguments(const CLI::App& app, int argc, char** argv);

// Opens /dev/null in place of a closed standard stream (`settee run x.js
// <&-`), as node's PlatformInit does: the next file opened would take its
// number, and libuv aborts when asked to close a descriptor below 3. A
// closed stdin then reads as an empty one. Call first in main(), before
// anything opens a file. Returns false if a descriptor could not be opened.
bool OpenClosedStandardStreams();

}  // namespace settee
