#!/bin/sh
# The installed package, tried as a new user would: `cmake --install` into a
# scratch prefix, then
#   - every public header compiles on its own (C++20; settee.h also as C99),
#   - examples/ configures with find_package(settee) against that prefix and
#     builds (C on libsettee.so and on libsettee.a, C++ on libsettee.so),
#   - the C example builds again from `pkg-config --cflags --libs settee`,
#   - each program runs: store, writes, reads, changes, a view, a replication,
#     a JS script.
# Usage: installed_package_test.sh BUILD_DIR SOURCE_DIR   (ctest: package_examples)
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/settee_package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" >"$work/install.log"
test -f "$prefix/lib/libsettee.a"
test -f "$prefix/lib/cmake/settee/settee-config.cmake"
test -f "$prefix/lib/pkgconfig/settee.pc"
ls "$prefix"/lib/libsettee.so.* >/dev/null

cxx=${CXX:-c++}
cc=${CC:-cc}
for h in "$prefix"/include/settee/*.h; do
  name=$(basename "$h")
  echo "#include <settee/$name>" | $cxx -std=c++20 -Wall -Werror -fsyntax-only -I"$prefix/include" -x c++ - \
    || { echo "FAIL: settee/$name does not compile on its own"; exit 1; }
done
echo '#include <settee/settee.h>' | $cc -std=c99 -Wall -Wextra -Werror -pedantic -fsyntax-only -I"$prefix/include" -x c - \
  || { echo "FAIL: settee/settee.h is not C99"; exit 1; }

cmake -S "$src/examples" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >"$work/configure.log" \
  || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j2 >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }

PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --exists settee
# shellcheck disable=SC2046
$cc -std=c99 -o "$work/notes_pkgconfig" "$src/examples/c/notes.c" \
  $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs settee)

expect() {  # expect NAME COMMAND...: runs it and checks what it printed
  name=$1; shift
  if ! "$@" >"$work/$name.out" 2>&1; then
    echo "FAIL: $name exited non-zero"; cat "$work/$name.out"; exit 1
  fi
  for want in 'get first -> {"_id":"first","_rev":"1-' 'summary words = 8' 'message from JS thread 0: "summary written"' 'JS exit code 0' 'ok'; do
    grep -qF "$want" "$work/$name.out" || { echo "FAIL: $name did not print: $want"; cat "$work/$name.out"; exit 1; }
  done
  case $name in notes_cpp) echo "ok: $name"; return ;; esac
  # The C example also queries a view and replicates.
  for want in 'view by_words reduced -> {"rows":[{"key":null,"value":3}]}' '"key":3,"value":"first"},{"id":"third","key":3' \
      '"source":"notes","target":"notes_backup","continuous":false,"state":"completed"'; do
    grep -qF "$want" "$work/$name.out" || { echo "FAIL: $name did not print: $want"; cat "$work/$name.out"; exit 1; }
  done
  echo "ok: $name"
}
expect notes_c "$work/build/notes_c"
expect notes_c_leveldb "$work/build/notes_c" "$work/data"
expect notes_c_static "$work/build/notes_c_static"
expect notes_cpp "$work/build/notes_cpp"
expect notes_pkgconfig "$work/notes_pkgconfig"
NOTES_JITLESS=1 expect notes_c_jitless "$work/build/notes_c"
echo "installed package: all passed"
