#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the GoogleTest suites
# through ctest, then the PouchDB compatibility suite (tests/compat) when it
# exists. Exits non-zero if anything fails.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SETTEE_BUILD_DIR:-$root/build}"

"$root/scripts/setup.sh"
"$root/scripts/build.sh"

status=0
(cd "$build" && ctest -j"$(nproc)" --output-on-failure --timeout 900) || status=1

if [ -x "$root/scripts/test_compat.sh" ]; then
  "$root/scripts/test_compat.sh" "$build/settee" || status=1
fi
exit $status
