#!/usr/bin/env python3
"""The cost of V8's --jitless in settee: `settee run` vs `settee run --jitless`
on the same scripts in one run, interleaved rounds; medians of the in-script
wall time and of the process's CPU time (user + system, all threads: V8's
compiler threads included), and the ratios jitless/JIT per script. On a
loaded machine the wall time flatters the JIT's absence (its compiler
threads wait for a core); the CPU time is the work done either way. CPU
times are net of the process's start and exit (an empty script, measured
the same way, with and without --jitless).

  string_loop.js  the issue-4 string loop (pure JS, JIT-friendly)
  db_loop.js      PouchDB bulkDocs/allDocs/get on a memory store (JS + engine)

Usage: jitless_cost.py --settee PATH [--rounds N]
"""
import argparse
import json
import os
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def run_once(cmd):
    """(in-script ms, process CPU ms)"""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(" ".join(cmd) + " failed")
    ms = max(json.loads(line)["ms"] for line in out.splitlines() if line.startswith("{"))
    return ms, (usage.ru_utime + usage.ru_stime) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--settee", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".js", delete=False) as f:
        f.write('console.log(JSON.stringify({ms: 0}));\n')
        empty = f.name
    start = statistics.median(run_once([args.settee, "run", empty])[1] for _ in range(args.rounds))
    start_jl = statistics.median(run_once([args.settee, "run", "--jitless", empty])[1] for _ in range(args.rounds))
    os.unlink(empty)
    print(f"start and exit: {start:.0f} ms CPU, {start_jl:.0f} ms CPU jitless\n")
    print("| script | JIT ms | jitless ms | jitless/JIT (wall) | JIT CPU ms | jitless CPU ms | jitless/JIT (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for script in ("string_loop.js", "db_loop.js"):
        path = os.path.join(HERE, script)
        jit, jitless = [], []
        for _ in range(args.rounds):
            jit.append(run_once([args.settee, "run", path]))
            jitless.append(run_once([args.settee, "run", "--jitless", path]))
        a, b = statistics.median(r[0] for r in jit), statistics.median(r[0] for r in jitless)
        ca = statistics.median(r[1] for r in jit) - start
        cb = statistics.median(r[1] for r in jitless) - start_jl
        print(f"| {script} | {a:.1f} | {b:.1f} | {b / a:.2f}x | {ca:.0f} | {cb:.0f} | {cb / ca:.2f}x |")


if __name__ == "__main__":
    main()
