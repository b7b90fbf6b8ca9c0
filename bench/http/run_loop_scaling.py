#!/usr/bin/env python3
"""HTTP write scaling with the server's event-loop threads, as ratios from
one run: small-document POSTs (bench/http/post.lua, server-generated ids)
from wrk with 10 connections, against `settee serve --threads 2` and
`--threads 1`, alternately --tries times per round (best of each: a shared
machine only slows runs down). wrk runs on the same machine, so on two cores
it takes one of them away from the server; the ratio means most on a machine
with cores to spare.

Usage: run_loop_scaling.py --settee PATH [--rounds N] [--tries N]
                           [--duration S] [--backend memory|leveldb]
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
POST = os.path.join(HERE, "post.lua")


def request(method, url):
    req = urllib.request.Request(url, method=method)
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(req, timeout=5) as r:
        return r.read()


def rps(settee, backend, threads, duration):
    data = tempfile.mkdtemp(prefix="settee_loop_scaling_")
    log_path = os.path.join(data, "serve.log")
    cmd = [settee, "serve", "--backend", backend, "--port", "0", "--threads", str(threads),
           "--data", os.path.join(data, "db")]
    # The log goes to a file: a pipe nobody drains would block the server.
    with open(log_path, "w") as log:
        server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(100):
            with open(log_path) as log:
                m = re.search(r"http://127\.0\.0\.1:(\d+)/", log.read())
            if m:
                port = m.group(1)
                break
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("settee serve did not report its port")
        base = "http://127.0.0.1:%s" % port
        request("PUT", base + "/bench")
        out = subprocess.run(["wrk", "-t1", "-c10", "-d%ds" % duration, "-s", POST, base + "/bench"],
                             check=True, capture_output=True, text=True).stdout
        m = re.search(r"Requests/sec:\s+([\d.]+)", out)
        if not m:
            raise RuntimeError("no Requests/sec in wrk output:\n" + out)
        return float(m.group(1))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        shutil.rmtree(data, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--settee", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tries", type=int, default=2)
    ap.add_argument("--duration", type=int, default=3)
    ap.add_argument("--backend", default="memory", choices=["memory", "leveldb"])
    a = ap.parse_args()
    if not shutil.which("wrk"):
        raise SystemExit("run_loop_scaling: wrk is not installed")
    rows = []
    for rnd in range(1, a.rounds + 1):
        one = two = 0.0
        for _ in range(a.tries):
            one = max(one, rps(a.settee, a.backend, 1, a.duration))
            two = max(two, rps(a.settee, a.backend, 2, a.duration))
        rows.append((one, two, two / one))
        print("round %d/%d  POST c=10 %s: 1 loop thread %8.0f req/s, 2 loop threads %8.0f req/s  %5.2fx"
              % (rnd, a.rounds, a.backend, one, two, two / one), flush=True)
    print("median: 1 thread %.0f req/s, 2 threads %.0f req/s, ratio %.2fx" % (
        statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows),
        statistics.median(r[2] for r in rows)))


if __name__ == "__main__":
    main()
