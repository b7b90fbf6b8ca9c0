#!/usr/bin/env bash
# Replication speed, in one run, as ratios:
#   1. local-to-local, 100,000 small docs on the memory backend
#      (build/bench/replication_bench: docs/s and the ratio to a plain bulk
#      write of the same docs);
#   2. pulling 1,000 docs over loopback from `settee serve` (memory), one
#      generation (1 rev each) and two (2 revs each): settee's replicator
#      (replication_bench --pull) vs PouchDB 9 in node (memory adapter), each
#      the best of RUNS runs;
#   3. when pouchdb-server 4.2 is installed (bench/http: npm ci), the same
#      two pulls from pouchdb-server, the remote PouchDB's own suite uses.
#
#   scripts/bench_replication.sh [build dir]      Env: RUNS (default 5)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
runs="${RUNS:-5}"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

[ -x "$build/bench/replication_bench" ] || { echo "bench_replication: build replication_bench first" >&2; exit 2; }
[ -d "$root/tests/compat/node_modules/pouchdb-core" ] ||
  (cd "$root/tests/compat" && npm ci --no-audit --no-fund >/dev/null)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 1 100); do
    curl -s --noproxy '*' -o /dev/null "http://127.0.0.1:$1/" && return 0
    sleep 0.1
  done
  echo "bench_replication: server on port $1 did not come up" >&2
  exit 1
}
# Seeds gen1 (1,000 docs, one revision) and gen2 (1,000 docs, two).
seed() {
  local base="http://127.0.0.1:$1"
  for db in gen1 gen2; do curl -s -X PUT "$base/$db" >/dev/null; done
  python3 - "$base" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def post(db, docs):
    req = urllib.request.Request(base + "/" + db + "/_bulk_docs", json.dumps({"docs": docs}).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
docs = [{"_id": "doc%04d" % i, "n": i, "name": "small"} for i in range(1000)]
post("gen1", docs)
res = post("gen2", docs)
post("gen2", [dict(d, _rev=r["rev"], n=d["n"] + 1) for d, r in zip(docs, res)])
PY
}
best() { sed -n 's/.*best \([0-9.]*\) ms/\1/p'; }
ratio() { python3 -c "print('%.1fx' % ($1 / $2))"; }

echo "== local-to-local (memory backend)"
"$build/bench/replication_bench" 100000

pull_pair() {  # label port
  local port="$2" s p
  for db in gen1 gen2; do
    s=$("$build/bench/replication_bench" --pull "http://127.0.0.1:$port/$db" "$runs" | best)
    p=$(NODE_PATH="$root/tests/compat/node_modules" node "$root/bench/replication/pouchdb_pull.js" \
          "http://127.0.0.1:$port/$db" "$runs" | best)
    echo "  $1 $db: settee ${s} ms, PouchDB ${p} ms  (PouchDB/settee $(ratio "$p" "$s"))"
  done
}

echo "== pull 1,000 docs over loopback (best of $runs)"
port=$(free_port)
"$build/settee" serve --port "$port" --backend memory --log-level warning >"$work/settee.log" 2>&1 &
pids+=($!)
wait_up "$port"
seed "$port"
pull_pair "from settee" "$port"

if [ -x "$root/bench/http/node_modules/.bin/pouchdb-server" ]; then
  port=$(free_port)
  (cd "$work" && "$root/bench/http/node_modules/.bin/pouchdb-server" --in-memory --port "$port" \
     >"$work/pouchdb-server.log" 2>&1) &
  pids+=($!)
  wait_up "$port"
  seed "$port"
  pull_pair "from pouchdb-server" "$port"
else
  echo "  (pouchdb-server not installed: cd bench/http && npm ci, for the pouchdb-server pulls)"
fi
