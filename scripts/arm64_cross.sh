#!/bin/bash
# settee on aarch64, in one command: cross-builds everything (storage, the JS
# runtime on libnode's arm64 V8, the HTTP server, the C API, the settee
# executable, the unit tests) with Debian's aarch64 compiler against Debian's
# arm64 packages, runs the unit tests under qemu-user, runs
# `settee bench --suite basics` under qemu and natively, and compares them.
#
#   scripts/arm64_cross.sh
#
# Writes build-arm64/arm64-report.md (what ran, how long, ctest's counts and
# `settee bench --compare desktop.json arm64.json`), with the two JSON
# reports beside it. The arm64 report's machine.emulation says its timings
# are qemu-user emulation on this x86-64 host, not a phone or a board.
#
# Steps:
#   1. scripts/arm64_sysroot.sh: the cross compiler and qemu-user (installed
#      with apt-get when missing), the arm64 packages unpacked into the sysroot;
#   2. the native build's settee (build/, built if missing) for the desktop side;
#   3. configure build-arm64/ with cmake/toolchains/aarch64-linux-gnu.cmake and
#      build every target but the Google Benchmark micro-benchmarks
#      (`nice -n 19`, -j2);
#   4. `settee bench --suite basics --baseline none` natively and under qemu
#      (its replication cases against an arm64 `settee serve` the script
#      starts under qemu), then `settee bench --compare`;
#   5. ctest there: every test binary runs through qemu-aarch64-static
#      (CMAKE_CROSSCOMPILING_EMULATOR), and so do the programs the tests start
#      (build-arm64/emulated/). package_examples is left out: it compiles the
#      installed package with the host's compiler.
#
# Not part of scripts/test.sh (CI): a cold cross-build and the test suite under
# emulation take far longer than CI's budget on two cores (README says how
# long it took here). Environment: ARM64_BUILD (build-arm64), NATIVE_BUILD
# (build), SETTEE_ARM64_SYSROOT (.deps/sysroot-arm64), SETTEE_ARM64_DEBS,
# ARM64_JOBS (2), ARM64_BENCH_ARGS (extra `settee bench` arguments, for both
# sides), ARM64_CTEST_ARGS (extra ctest arguments, e.g. -R to narrow it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${ARM64_BUILD:-$root/build-arm64}
native=${NATIVE_BUILD:-$root/build}
sysroot=${SETTEE_ARM64_SYSROOT:-$root/.deps/sysroot-arm64}
jobs=${ARM64_JOBS:-2}
read -r -a bench_args <<<"${ARM64_BENCH_ARGS:-}"
read -r -a ctest_args <<<"${ARM64_CTEST_ARGS:-}"
cd "$root"
start=$(date +%s)
declare -A took=()
step() { took[$1]=$(( $(date +%s) - $2 )); }

t=$(date +%s)
scripts/arm64_sysroot.sh "$sysroot"
step sysroot "$t"

t=$(date +%s)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
if [ ! -x "$native/settee" ]; then
  echo "arm64: building the native settee in $native (the desktop side)"
  [ -f "$native/CMakeCache.txt" ] || cmake -S . -B "$native" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" >/dev/null
  nice -n 19 cmake --build "$native" -j"$jobs" --target settee >"$native.build.log" 2>&1 ||
    { tail -40 "$native.build.log"; exit 1; }
fi
echo "arm64: configuring $out"
mkdir -p "$out"
cmake -S . -B "$out" -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
  -DSETTEE_ARM64_SYSROOT="$sysroot" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSETTEE_BUILD_BENCH=OFF "${launcher[@]}" \
  >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
echo "arm64: building everything (nice -n 19, -j$jobs; log in $out/build.log)"
nice -n 19 cmake --build "$out" -j"$jobs" >"$out/build.log" 2>&1 || { tail -60 "$out/build.log"; exit 1; }
step build "$t"
for prog in settee lib/libsettee.so; do
  file -L "$out/$prog" | grep -q 'ARM aarch64' || { echo "arm64: $out/$prog is not an aarch64 binary" >&2; exit 1; }
done

# The arm64 programs run through qemu with the compiler's C library and the
# sysroot's libraries, exactly as CMAKE_CROSSCOMPILING_EMULATOR runs them.
qemu=(qemu-aarch64-static -L /usr/aarch64-linux-gnu -E "LD_LIBRARY_PATH=$sysroot/usr/lib/aarch64-linux-gnu")

t=$(date +%s)
echo "arm64: settee bench --suite basics, natively then under qemu"
"$native/settee" bench --suite basics --baseline none --json "$out/bench-desktop.json" "${bench_args[@]}" \
  >"$out/bench-desktop.txt" 2>&1 || { tail -20 "$out/bench-desktop.txt"; exit 1; }
# The replication cases pull from a `settee serve` that the bench starts
# from its own executable; under qemu-user that is the arm64 binary, which
# the host cannot exec without a binfmt_misc registration. So the arm64
# server is started here, under the same emulator, and given as --remote.
"${qemu[@]}" "$out/settee" serve --port 0 --bind 127.0.0.1 --backend memory --log-level error \
  >"$out/serve-arm64.log" 2>&1 &
serve_pid=$!
trap 'kill "$serve_pid" 2>/dev/null || true' EXIT
remote=""
for _ in $(seq 600); do
  remote=$(sed -n 's|^settee: listening on \(http://[^/]*\)/.*|\1|p' "$out/serve-arm64.log")
  [ -n "$remote" ] && break
  kill -0 "$serve_pid" 2>/dev/null || break
  sleep 0.1
done
[ -n "$remote" ] || { echo "arm64: settee serve did not start under qemu:" >&2; cat "$out/serve-arm64.log" >&2; exit 1; }
"${qemu[@]}" "$out/settee" bench --suite basics --baseline none --remote "$remote" --json "$out/bench-arm64.json" \
  "${bench_args[@]}" >"$out/bench-arm64.txt" 2>&1 || { tail -20 "$out/bench-arm64.txt"; exit 1; }
kill "$serve_pid" 2>/dev/null || true
wait "$serve_pid" 2>/dev/null || true
trap - EXIT
"$native/settee" bench --compare "$out/bench-desktop.json" "$out/bench-arm64.json" >"$out/bench-compare.txt"
step bench "$t"
grep -q '"emulation": "user-mode emulation' "$out/bench-arm64.json" ||
  { echo "arm64: the arm64 report does not say it ran under emulation" >&2; exit 1; }

t=$(date +%s)
echo "arm64: unit tests under qemu-user (log in $out/ctest.log)"
set +e
(cd "$out" && nice -n 19 ctest -j"$jobs" --timeout 1800 -E '^package_examples$' --output-on-failure "${ctest_args[@]}") \
  >"$out/ctest.log" 2>&1
ctest_rc=$?
set -e
step ctest "$t"
summary=$(grep -E 'tests passed|tests failed out of' "$out/ctest.log" | tail -1)
skipped=$(grep -c '(Skipped)$' "$out/ctest.log" || true)
echo "arm64: $summary ($skipped skipped)"
[ $ctest_rc = 0 ] || { grep -E '\*\*\*Failed|\*\*\*Timeout|\(Failed\)|\(Timeout\)|Not Run' "$out/ctest.log" | head -40; }

report="$out/arm64-report.md"
{
  echo "# settee on aarch64 under qemu-user, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Cross-built with $(aarch64-linux-gnu-g++ --version | head -1), run with"
  echo "$(qemu-aarch64-static --version | head -1) on $(uname -m) ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))."
  echo "Timings under qemu-user are emulation of arm64 on an x86-64 host, not a phone"
  echo "or a board: compare shapes (which cases cost more), not absolute speeds."
  echo
  echo "- sysroot ${took[sysroot]} s, build ${took[build]} s, unit tests ${took[ctest]} s, benches ${took[bench]} s; total $(( $(date +%s) - start )) s"
  echo "- unit tests under qemu: $summary, $skipped skipped"
  echo
  echo '```'
  cat "$out/bench-compare.txt"
  echo '```'
} >"$report"
cat "$out/bench-compare.txt"
echo "arm64: report in $report"
exit $ctest_rc
