#!/usr/bin/env python3
"""Runs the JS runtime benchmarks and prints ratios measured in one run.

1. The issue-4 string loop (bench/js/string_loop.js): `node` vs
   `settee run --threads 1` vs `settee run --threads 2`, interleaved rounds,
   median of the in-script time (performance.now around dotest()) and of the
   whole process wall time. Targets: settee/node <= 1.25; 2 threads ~ 1 thread
   (each thread runs its own copy of the loop).
2. js_bench (bench/js_bench.cc): JS db.get / db.bulkDocs next to their C++
   baselines (Google Benchmark output passed through).

Usage: run_js_bench.py --settee PATH --js-bench PATH [--rounds N] [--node node]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "string_loop.js")


def run_once(cmd):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall_ms = (time.perf_counter() - t0) * 1000
    per_thread = [json.loads(line)["ms"] for line in out.splitlines() if line.startswith("{")]
    if not per_thread:
        raise RuntimeError("no result from " + " ".join(cmd) + ":\n" + out)
    return max(per_thread), wall_ms, len(per_thread)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--settee", required=True)
    ap.add_argument("--js-bench", required=True)
    ap.add_argument("--node", default="node")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--skip-micro", action="store_true")
    args = ap.parse_args()

    configs = {
        "node": [args.node, LOOP],
        "settee x1": [args.settee, "run", "--threads", "1", LOOP],
        "settee x2": [args.settee, "run", "--threads", "2", LOOP],
    }
    loop_ms = {k: [] for k in configs}
    wall_ms = {k: [] for k in configs}
    for _ in range(args.rounds):
        for name, cmd in configs.items():
            ms, wall, threads = run_once(cmd)
            loop_ms[name].append(ms)
            wall_ms[name].append(wall)

    med = {k: statistics.median(v) for k, v in loop_ms.items()}
    wmed = {k: statistics.median(v) for k, v in wall_ms.items()}
    print("string loop (issue 4), %d interleaved rounds, medians; cores: %d" % (args.rounds, os.cpu_count()))
    print("  %-10s %12s %12s" % ("", "loop ms", "process ms"))
    for k in configs:
        print("  %-10s %12.1f %12.1f" % (k, med[k], wmed[k]))
    print("  ratio settee x1 / node (loop):        %.2f  (target <= 1.25)" % (med["settee x1"] / med["node"]))
    print("  ratio settee x1 / node (process):     %.2f" % (wmed["settee x1"] / wmed["node"]))
    print("  ratio settee x2 / settee x1 (slowest thread): %.2f  (target ~1 while threads <= cores)"
          % (med["settee x2"] / med["settee x1"]))
    sys.stdout.flush()

    if not args.skip_micro:
        print("\njs_bench (JS API vs C++ baselines; targets: JsGet < 2 us, JsBulkDocs100 < 150 us)")
        sys.stdout.flush()
        subprocess.run([args.js_bench, "--benchmark_min_time=0.2"], check=True)


if __name__ == "__main__":
    main()
