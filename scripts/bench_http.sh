#!/usr/bin/env bash
# HTTP benchmark: settee vs pouchdb-server 4.2 (in-memory), in one run, with
# wrk at 10 connections. Prints requests/s and p90 latency for
#   GET one doc, GET _all_docs?limit=10, POST a small doc
# with settee/baseline ratios; settee's RSS with 1,000 idle keep-alive
# connections (on the fresh server) and its RSS across repeated read phases
# (flat = no growth).
#
#   scripts/bench_http.sh [path/to/settee]
#
# Env: DURATION (wrk seconds per run, default 10), THREADS (settee loop
# threads, default nproc/2: wrk shares the machine), WRK_THREADS (default: the
# remaining cores), BACKEND (memory|leveldb,
# default memory), SKIP_BASELINE=1 to measure settee alone.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${1:-${SETTEE_BIN:-$root/build/settee}}"
duration="${DURATION:-10}"
# wrk runs on the same machine: by default leave it half the cores.
threads="${THREADS:-$(( $(nproc) / 2 > 0 ? $(nproc) / 2 : 1 ))}"
# wrk gets the cores settee does not use: with more load threads than free
# cores, the client's threads and the server's loop preempt each other and
# the measured p90 is scheduler latency (~1 ms time slices), not the server's
# (GET one doc, 2 cores: p90 1.1 ms with 2 wrk threads, 0.17 ms with 1).
wrk_threads="${WRK_THREADS:-$(( $(nproc) - threads > 0 ? $(nproc) - threads : 1 ))}"
backend="${BACKEND:-memory}"
bench_dir="$root/bench/http"
work="$(mktemp -d)"
pids=()

cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "bench_http: wrk is not installed" >&2; exit 2; }
[ -x "$bin" ] || { echo "bench_http: no settee binary at $bin" >&2; exit 2; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }
wait_up() {
  for _ in $(seq 1 100); do
    curl -s --noproxy '*' -o /dev/null "http://127.0.0.1:$1/" && return 0
    sleep 0.1
  done
  echo "bench_http: server on port $1 did not come up" >&2
  exit 1
}

# Creates db "bench" with doc "doc1" and 100 more docs for _all_docs.
seed() {
  local base="http://127.0.0.1:$1"
  curl -s --noproxy '*' -o /dev/null -X PUT "$base/bench"
  curl -s --noproxy '*' -o /dev/null -X PUT "$base/bench/doc1" -H 'Content-Type: application/json' \
    -d '{"type":"bench","value":1,"name":"the document read by the GET benchmark"}'
  local docs
  docs=$(python3 -c 'import json; print(json.dumps({"docs":[{"_id":"d%03d"%i,"value":i} for i in range(100)]}))')
  curl -s --noproxy '*' -o /dev/null -X POST "$base/bench/_bulk_docs" -H 'Content-Type: application/json' -d "$docs"
}

# wrk_run NAME PORT PATH [SCRIPT] -> prints "rps p90_ms errors"
wrk_run() {
  local port=$2 path=$3 script=${4:-}
  local args=(-t"$wrk_threads" -c10 -d"${duration}s" --latency)
  if [ -n "$script" ]; then args+=(-s "$script"); fi
  local out
  out=$(wrk "${args[@]}" "http://127.0.0.1:$port$path")
  echo "$out" > "$work/$1.txt"
  local rps p90 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p90=$(awk '$1=="90%" {v=$2; if (v ~ /us$/) {sub(/us$/,"",v); v=v/1000} else if (v ~ /ms$/) {sub(/ms$/,"",v)} else if (v ~ /s$/) {sub(/s$/,"",v); v=v*1000}; printf "%.3f", v}' <<<"$out")
  errors=$(awk '/Non-2xx|Socket errors/ {print}' <<<"$out" | tr '\n' ' ')
  echo "$rps $p90 ${errors:-none}"
}

declare -A results
names=("get_doc" "all_docs_limit10" "post_small_doc")
paths=("/bench/doc1" "/bench/_all_docs?limit=10" "/bench")
scripts=("" "" "$bench_dir/post.lua")

run_suite() {  # run_suite LABEL PORT PID
  local label=$1 port=$2 pid=$3
  for i in "${!names[@]}"; do
    results["$label.${names[$i]}"]=$(wrk_run "$label.${names[$i]}" "$port" "${paths[$i]}" "${scripts[$i]}")
    if [ -n "$pid" ]; then echo "  $label after ${names[$i]}: RSS $(rss_mb "$pid") MB" >&2; fi
  done
}

echo "== settee ($backend backend, $threads loop threads) vs pouchdb-server 4.2 (in-memory); wrk -t$wrk_threads -c10 -d${duration}s" >&2
echo "   machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo)" >&2

# --- settee
sport=$(free_port)
sargs=(serve --backend "$backend" --port "$sport" --threads "$threads" --log-level warning)
if [ "$backend" = leveldb ]; then sargs+=(--data "$work/settee-data"); fi
"$bin" "${sargs[@]}" > "$work/settee.out" 2>&1 &
spid=$!
pids+=("$spid")
wait_up "$sport"
seed "$sport"
echo "  settee started: RSS $(rss_mb "$spid") MB" >&2
# Idle keep-alive connections on the fresh server, so the figure is theirs.
idle_report=$(python3 "$bench_dir/idle_connections.py" --port "$sport" --pid "$spid" --count 1000 --hold 3)
run_suite settee "$sport" "$spid"
# Long run: more read phases; reads add no data, so RSS must not move.
rss_series="$(rss_mb "$spid")"
for round in 1 2 3; do
  wrk_run "settee.reread$round" "$sport" "/bench/doc1" >/dev/null
  wrk_run "settee.reread_all$round" "$sport" "/bench/_all_docs?limit=10" >/dev/null
  rss_series="$rss_series -> $(rss_mb "$spid")"
done

# --- baseline
if [ -z "${SKIP_BASELINE:-}" ]; then
  if [ ! -x "$bench_dir/node_modules/.bin/pouchdb-server" ]; then
    (cd "$bench_dir" && npm install --no-audit --no-fund >&2)
  fi
  bport=$(free_port)
  (cd "$work" && exec "$bench_dir/node_modules/.bin/pouchdb-server" --in-memory --port "$bport" > "$work/baseline.out" 2>&1) &
  bpid=$!
  pids+=("$bpid")
  wait_up "$bport"
  seed "$bport"
  run_suite baseline "$bport" ""
  kill "$bpid" 2>/dev/null || true
fi

# --- report
printf '\n%-18s %12s %10s %12s %10s %8s  %s\n' "benchmark" "settee r/s" "p90 ms" "baseline r/s" "p90 ms" "ratio" "errors (settee)"
for n in "${names[@]}"; do
  read -r srps sp90 serr <<<"${results[settee.$n]}"
  if [ -n "${results[baseline.$n]:-}" ]; then
    read -r brps bp90 _ <<<"${results[baseline.$n]}"
    ratio=$(awk -v a="$srps" -v b="$brps" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')
  else
    brps="-"; bp90="-"; ratio="-"
  fi
  printf '%-18s %12s %10s %12s %10s %8s  %s\n' "$n" "$srps" "$sp90" "$brps" "$bp90" "$ratio" "$serr"
done

echo
echo "$idle_report"
echo "settee RSS over 3 more rounds of read load (MB): $rss_series"
echo "settee RSS at the end: $(rss_mb "$spid") MB (includes every doc the POST runs stored in memory)"
