#!/usr/bin/env bash
# Runs the PouchDB compatibility suite (tests/compat) against a settee binary.
#
#   scripts/test_compat.sh [path/to/settee]
#
# The binary defaults to $SETTEE_BIN, then build/settee. Node packages are
# installed into tests/compat/node_modules on first use (npm ci when a
# lockfile exists), and again when the lockfile is newer than the install
# (a merge that adds a package would otherwise fail every test on a stale
# node_modules). Each test file starts its own
# `settee serve --port 0`, on each backend in turn.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-${SETTEE_BIN:-$root/build/settee}}"
if [ ! -x "$bin" ]; then
  echo "test_compat: settee binary not found at $bin (build it or pass its path)" >&2
  exit 2
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"

cd "$root/tests/compat"
if [ ! -d node_modules/pouchdb-core ] ||
   { [ -f package-lock.json ] && [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  if [ -f package-lock.json ]; then
    npm ci --no-audit --no-fund
  else
    npm install --no-audit --no-fund
  fi
fi
# The interop test replicates with a real pouchdb-server 4.2 (bench/http's
# pinned package, also the http bench's baseline): installed here so that a
# fresh clone runs it instead of skipping it.
"$root/scripts/setup_bench_baselines.sh" http ||
  echo "test_compat: pouchdb-server could not be installed; its interop test is skipped" >&2
# Once per backend; node's summary lines are printed for each run.
status=0
for backend in ${SETTEE_COMPAT_BACKENDS:-memory leveldb}; do
  echo "== PouchDB compatibility suite, $backend backend"
  SETTEE_BIN="$bin" SETTEE_BACKEND="$backend" node --test --test-concurrency=1 || status=1
done
exit $status
