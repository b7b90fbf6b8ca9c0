#!/bin/bash
# settee on aarch64, in one command: cross-builds with Debian's aarch64
# compiler against Debian's arm64 packages, runs the unit tests under
# qemu-user, runs the benchmarks there and on this machine, and writes a
# report of ARM against desktop.
#
#   scripts/arm64_cross.sh            # build-arm64/, report in build-arm64/arm64-report.md
#   scripts/arm64_cross.sh --quick    # the storage unit tests and the two
#                                     # micro-benchmarks only
#
# Steps: scripts/arm64_sysroot.sh (the sysroot under .deps/); configure with
# cmake/toolchains/aarch64-linux-gnu.cmake; `nice -n 19 cmake --build -j2`;
# ctest (every test binary runs through qemu-aarch64-static via
# CMAKE_CROSSCOMPILING_EMULATOR; package_examples, which needs a native
# compiler for the installed package, is left out); then the benchmarks.
#
# Benchmarks: `settee bench --suite basics` when the built settee has a bench
# command, its report beside the desktop one for `settee bench --compare`;
# otherwise the Google Benchmark micro-benchmarks (bench/database_bench,
# bench/kv_bench), run on both sides in the same run, and a table of
# arm64/x86-64 time ratios. qemu timings are emulation on an x86-64 host,
# not a phone: the report says so.
#
# Not part of scripts/test.sh (a cold cross-build takes tens of minutes on
# two cores). Needs the native build in build/ for the desktop side.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${ARM64_BUILD:-$root/build-arm64}
native=${NATIVE_BUILD:-$root/build}
cd "$root"

scripts/arm64_sysroot.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$out" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >"$out.configure.log" 2>&1 \
  || { cat "$out.configure.log"; exit 1; }
quick_tests=(rev_tree_test kv_store_test collation_test store_test document_test database_test)
targets=()
[ "${1:-}" = --quick ] && targets=(--target database_bench kv_bench "${quick_tests[@]}")
echo "arm64: building (nice -n 19, -j2)"
nice -n 19 cmake --build "$out" -j2 "${targets[@]}" >"$out.build.log" 2>&1 || { tail -60 "$out.build.log"; exit 1; }
file -L "$out/bench/kv_bench" | grep -q aarch64 || { echo "arm64: $out/bench/kv_bench is not an aarch64 program" >&2; exit 1; }
sysroot=${SETTEE_ARM64_SYSROOT:-$root/.deps/sysroot-arm64}
qemu=(qemu-aarch64-static -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu")

echo "arm64: unit tests under qemu"
if [ "${1:-}" = --quick ]; then
  : >"$out/ctest.log"
  failed=0
  for t in "${quick_tests[@]}"; do
    bin=$(find "$out/tests" -name "$t" -type f | head -1)
    if nice -n 19 "${qemu[@]}" "$bin" --gtest_brief=1 >"$out/$t.log" 2>&1; then
      echo "passed: $t ($(grep -o '[0-9]* tests\? from' "$out/$t.log" | head -1 | cut -d' ' -f1) tests)" | tee -a "$out/ctest.log"
    else
      failed=1
      echo "FAILED: $t" | tee -a "$out/ctest.log"; tail -20 "$out/$t.log"
    fi
  done
  [ $failed = 0 ] || exit 1
else
  (cd "$out" && nice -n 19 ctest -j2 --timeout 1200 -E '^package_examples$' --output-on-failure) | tee "$out/ctest.log" | tail -5
fi

report="$out/arm64-report.md"
{
  echo "# settee on aarch64 (qemu-user on $(uname -m)), $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Timings under qemu-user are emulation of arm64 on an x86-64 host, not a phone"
  echo "or a board: compare shapes (which cases cost more), not absolute speeds."
  echo
  grep -E "tests passed|tests failed|^passed|^FAILED" "$out/ctest.log" || true
  echo
} >"$report"

if [ -x "$out/settee" ] && "${qemu[@]}" "$out/settee" bench --help >/dev/null 2>&1; then
  echo "arm64: settee bench --suite basics"
  "${qemu[@]}" "$out/settee" bench --suite basics --baseline none --json "$out/bench-arm64.json"
  "$native/settee" bench --suite basics --baseline none --json "$out/bench-desktop.json"
  "$native/settee" bench --compare "$out/bench-desktop.json" "$out/bench-arm64.json" >>"$report"
else
  echo "arm64: no settee bench in this tree; running the micro-benchmarks on both sides"
  echo "settee bench is not in this tree: these are the Google Benchmark micro-benchmarks," >>"$report"
  echo "run on both sides in this run." >>"$report"
  for b in ${ARM64_BENCHES:-database_bench kv_bench}; do
    args=(--benchmark_filter="${BENCH_FILTER:-.}")
    nice -n 19 "${qemu[@]}" "$out/bench/$b" "${args[@]}" >"$out/$b.arm64.txt" 2>/dev/null
    nice -n 19 "$native/bench/$b" "${args[@]}" >"$out/$b.x86.txt" 2>/dev/null
    python3 - "$b" "$out/$b.x86.txt" "$out/$b.arm64.txt" >>"$report" <<'PY'
# Google Benchmark's console rows: name, wall time, CPU time, iterations.
# The ratio is of CPU time: both sides share loaded cores, and qemu's wall
# time also counts waiting for one.
import re, sys
name, x86, arm = sys.argv[1:4]
row = re.compile(r"^(\S+)\s+([\d.]+) (ns|us|ms)\s+([\d.]+) (ns|us|ms)\s+\d+")
scale = {"ns": 1, "us": 1e3, "ms": 1e6}
def rows(path):
    out = {}
    for line in open(path):
        m = row.match(re.sub(r"\x1b\[[0-9;]*m", "", line))  # colours, if forced
        if m:
            out[m.group(1)] = float(m.group(4)) * scale[m.group(5)]
    return out
a, b = rows(x86), rows(arm)
print(f"\n## {name} (CPU time per iteration)\n\n| case | x86-64 | arm64 (qemu) | arm64/x86-64 |\n|---|---|---|---|")
for case, t in a.items():
    if case in b:
        print(f"| {case} | {t:.0f} ns | {b[case]:.0f} ns | {b[case] / t:.1f}x |")
PY
  done
fi
echo "arm64: report in $report"
