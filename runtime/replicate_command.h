// The `replicate` subcommand of the settee executable:
//
//   settee replicate SOURCE TARGET [--continuous] [--create-target]
//                    [--doc-id ID]... [--since-seq SEQ] [--batch-size N]
//                    [--data DIR] [--backend leveldb|memory] [--quiet]
//
// SOURCE and TARGET are database names in the local store (--data; it must
// not be held by a running `settee serve`: use its URL then) or http(s)
// URLs, credentials allowed (http://user:pass@host:5984/db). Progress goes
// to stderr (docs read/written, failures, rate, checkpoint); the exit code
// is 0 when the replication completed (or a continuous one was stopped with
// Ctrl-C), 1 when it failed, 2 on bad arguments.
#pragma once

#include <CLI/CLI.hpp>

namespace settee {

void RegisterReplicateCommand(CLI::App& app);

}  // namespace settee
