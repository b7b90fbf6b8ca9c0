#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the GoogleTest suites
# through ctest, then the PouchDB compatibility suite (tests/compat) against
# the freshly built server. Ends with one line "N passed, M failed" over both,
# and exits non-zero if anything failed.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SETTEE_BUILD_DIR:-$root/build}"
logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT

"$root/scripts/setup.sh" || exit 1
"$root/scripts/build.sh" || exit 1

status=0
(cd "$build" && ctest -j"$(nproc)" --output-on-failure --timeout 900) 2>&1 | tee "$logs/ctest.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

"$root/scripts/test_compat.sh" "$build/settee" 2>&1 | tee "$logs/compat.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

# ctest: "100% tests passed, 0 tests failed out of 365"; node: "# pass 15" / "# fail 0".
read -r c_total c_failed < <(sed -n 's/.*tests passed, \([0-9]*\) tests failed out of \([0-9]*\).*/\2 \1/p' "$logs/ctest.log" | tail -1)
# The compat suite runs once per backend: add up every run's counts.
sum() { sed -n "s/^# $1 \([0-9]*\)\$/\1/p" "$logs/compat.log" | awk '{s += $1} END {if (NR) print s}'; }
n_pass=$(sum pass)
n_fail=$(sum fail)
c_skipped=$(grep -c '(Skipped)$' "$logs/ctest.log")
n_skip=$(sum skipped)
passed=$(( ${c_total:-0} - ${c_failed:-0} - c_skipped + ${n_pass:-0} ))
skipped=$(( c_skipped + ${n_skip:-0} ))
failed=$(( ${c_failed:-0} + ${n_fail:-0} ))
if [ -z "${c_total:-}" ] || [ -z "${n_pass:-}" ]; then
  echo "test.sh: a test runner did not report its totals" >&2
  status=1
  failed=$(( failed + 1 ))
fi
echo
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
