#!/bin/bash
# Configures and builds settee's reduced configurations, checks that what is
# left works, and measures libsettee per configuration:
#
#   full      the default (HTTP server and JS runtime)
#   no-js     -DSETTEE_WITH_JS=OFF    (no V8: settee serve only; the C API's
#                                       runtime calls answer SETTEE_ERR_UNSUPPORTED)
#   no-http   -DSETTEE_WITH_HTTP=OFF  (no server: settee run/eval only)
#
# For each: builds libsettee (shared and static), the settee executable and
# the C API tests (but the JS runtime's), runs those tests, and prints sizes (stripped) as a
# Markdown table (docs/embedding.md keeps the last one). Not part of
# scripts/test.sh (CI builds the full configuration only); run it by hand
# after changing the CMake wiring. Uses nice -n 19 and -j2.
#
# Usage: scripts/build_variants.sh   (builds in build-full/, build-no-js/, build-no-http/:
# beside build/, at the same depth, so that ccache's base_dir hits the
# objects build/ compiled)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

declare -A flags=(
  [full]=""
  [no-js]="-DSETTEE_WITH_JS=OFF"
  [no-http]="-DSETTEE_WITH_HTTP=OFF"
)
size_of() {  # stripped size in KiB
  local tmp
  tmp=$(mktemp)
  strip -o "$tmp" "$1" 2>/dev/null || cp "$1" "$tmp"
  echo $(( $(stat -c %s "$tmp") / 1024 ))
  rm -f "$tmp"
}
# The C API tests that every configuration builds (the JS runtime's own
# only exist with JS; the others check UNSUPPORTED without it).
capi_tests=(settee_c_test settee_c_attachments_test settee_c_views_test settee_c_replication_test)
rows=()
for v in full no-js no-http; do
  dir="$root/build-$v"
  mkdir -p "$dir"
  echo "== $v: configure"
  # shellcheck disable=SC2086
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSETTEE_BUILD_BENCH=OFF \
    "${launcher[@]}" ${flags[$v]} >"$dir/variant.configure.log" 2>&1 || { cat "$dir/variant.configure.log"; exit 1; }
  echo "== $v: build"
  nice -n 19 cmake --build "$dir" -j2 --target settee_shared settee_static settee "${capi_tests[@]}" \
    >"$dir/variant.build.log" 2>&1 || { tail -50 "$dir/variant.build.log"; exit 1; }
  echo "== $v: test"
  : >"$dir/variant.test.log"
  for t in "${capi_tests[@]}"; do
    "$dir/tests/capi/$t" --gtest_brief=1 >>"$dir/variant.test.log" 2>&1 || { tail -30 "$dir/variant.test.log"; exit 1; }
  done
  commands=$("$dir/settee" --help | sed -n '/^Subcommands:/,$p' | awk 'NR>1 && NF {print $1}' | tr '\n' ' ')
  so=$(readlink -f "$dir/lib/libsettee.so")
  deps=$(readelf -d "$so" | grep -c NEEDED)
  rows+=("| $v | $(size_of "$so") | $(size_of "$dir/lib/libsettee.a") | $(size_of "$dir/settee") | $deps | ${commands% } |")
done
echo
echo "| configuration | libsettee.so KiB | libsettee.a KiB | settee KiB | .so DT_NEEDED | settee commands |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
