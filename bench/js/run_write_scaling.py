#!/usr/bin/env python3
"""Issue 14's write-scaling table, measured through `settee run` (awaited
db.put from JS isolate threads), as ratios from one run.

Each round runs every case; a case runs its two sides alternately --tries
times and keeps the best of each (a shared machine only slows runs down):
  own     2 threads each putting into its own database / 1 thread:
          aggregate docs per second (all docs / first start to last end)
  shared  the same with both threads putting into one database
  storm   db.get median with a second thread putting into the same
          database / with no writer
Prints each round's ratios and the medians over rounds, per backend.

Usage: run_write_scaling.py --settee PATH [--rounds N] [--tries N] [--docs N]
                            [--backend memory|leveldb|both]
"""
import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "write_scaling.js")


def run(settee, backend, threads, mode, docs):
    cmd = [settee, "run", "--backend", backend, "--threads", str(threads)]
    data = None
    if backend == "leveldb":
        data = tempfile.mkdtemp(prefix="settee_write_scaling_")
        cmd += ["--data", data]
    try:
        out = subprocess.run(cmd + [SCRIPT, mode, str(docs)], check=True, capture_output=True,
                             text=True).stdout
    finally:
        if data:
            shutil.rmtree(data, ignore_errors=True)
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    if len(rows) != threads:
        raise RuntimeError("expected %d results from %s, got:\n%s" % (threads, cmd, out))
    if mode == "storm":
        return next(r["get_ns"] for r in rows if r["thread"] == 0)
    start = min(r["start"] for r in rows)
    end = max(r["end"] for r in rows)
    return threads * docs / max(end - start, 1) * 1000.0


def best_of(tries, higher, base, other):
    b, o = [], []
    for _ in range(tries):
        b.append(base())
        o.append(other())
    pick = max if higher else min
    return pick(b), pick(o)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--settee", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tries", type=int, default=3)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--backend", default="both", choices=["memory", "leveldb", "both"])
    a = ap.parse_args()
    backends = ["memory", "leveldb"] if a.backend == "both" else [a.backend]
    ratios = {}
    for rnd in range(1, a.rounds + 1):
        print("round %d/%d" % (rnd, a.rounds), flush=True)
        for backend in backends:
            for mode in ("own", "shared", "storm"):
                if mode == "storm":
                    base, other = best_of(a.tries, False,
                                          lambda: run(a.settee, backend, 1, mode, a.docs),
                                          lambda: run(a.settee, backend, 2, mode, a.docs))
                    name = "%s get during puts / idle (ns)" % backend
                else:
                    base, other = best_of(a.tries, True,
                                          lambda: run(a.settee, backend, 1, mode, a.docs),
                                          lambda: run(a.settee, backend, 2, mode, a.docs))
                    name = "%s %s_db puts 2t/1t (docs/s)" % (backend, mode)
                ratio = other / base
                ratios.setdefault(name, []).append((base, other, ratio))
                print("  %-40s %10.0f %10.0f  %5.2fx" % (name, base, other, ratio), flush=True)
    print("\nmedians over %d rounds:" % a.rounds)
    for name, rows in ratios.items():
        print("  %-40s %10.0f %10.0f  %5.2fx" % (
            name, statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
            statistics.median(r[2] for r in rows)))


if __name__ == "__main__":
    main()
