// The `serve` subcommand of the settee executable:
//
//   settee serve [--port 5984] [--bind 127.0.0.1] [--data DIR]
//                [--backend leveldb|memory] [--threads N] [--admin user:pass]...
//                [--cors-origins a,b|*] [--log-level info] [--sync]
//                [--max-document-size BYTES] [--max-request-size BYTES]
//   settee --config settee.toml serve     (or `settee serve --config ...`)
//   with settee.toml holding a [serve] section: port = 5984, admin = ["a:pw"] ...
//
// Admins and the log level changed over /_node/_local/_config are written
// back into that file. Unlike CouchDB's local.ini, the file is not the last
// word at a restart: `--admin` on the command line replaces its admin list
// (the command line wins in CLI11) and SETTEE_ADMINS adds to it.
//
// Opens the store, starts an HttpServer with a CouchServer handler and runs
// until SIGINT or SIGTERM, then stops accepting, lets in-flight requests
// finish and closes the store. With --port 0 the chosen port is printed in the
// "listening on" line on stdout (tests read it).
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace settee {

class CouchServer;

// Lets other modules (views, Mango, attachments, replication) mount their
// endpoints and _changes filters on the CouchServer that `serve` builds:
// `extension` runs after the built-in routes are registered and before the
// server accepts connections. Call from main() before parsing; not
// thread-safe.
void AddServeExtension(std::function<void(CouchServer&)> extension);

// The data directory when --data is not given: $SETTEE_DATA, else
// $XDG_DATA_HOME/settee, else ./settee-data.
std::string DefaultDataDir();

// Adds `serve` to `app`. Its callback throws CLI::RuntimeError(code) on a
// startup failure.
void RegisterServeCommand(CLI::App& app);

}  // namespace settee
