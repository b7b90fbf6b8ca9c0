#!/usr/bin/env bash
# Installs what is missing, builds, and starts the settee server on the
# embedded LevelDB backend (CouchDB API on http://127.0.0.1:5984 by default).
# Extra arguments go to `settee serve` (see `build/settee serve --help`).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SETTEE_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"
exec "$build/settee" serve "$@"
