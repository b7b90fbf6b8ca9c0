#!/bin/bash
# Gathers the arm64 (aarch64) builds of settee's dependencies from Debian's
# own packages into a sysroot, for cmake/toolchains/aarch64-linux-gnu.cmake:
#
#   dpkg --add-architecture arm64 && apt-get update   (once, if needed)
#   apt-get download <pkg>:arm64 ...                   (into .deps/arm64-debs)
#   dpkg -x each .deb                                  (into .deps/sysroot-arm64)
#
# Nothing is installed system-wide for arm64: the packages are only unpacked
# (as scripts/setup.sh does for libnode). The C library, libstdc++ and the
# dynamic loader come with the cross compiler (g++-aarch64-linux-gnu installs
# them under /usr/aarch64-linux-gnu). Re-running it is cheap: debs already
# downloaded are kept.
#
# Usage: scripts/arm64_sysroot.sh [SYSROOT]   (default .deps/sysroot-arm64)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${1:-$root/.deps/sysroot-arm64}
debs=$root/.deps/arm64-debs

# The -dev packages the build needs and the runtime libraries they and
# libnode link against. Keep in step with cmake/SetteeDeps.cmake.
packages=(
  libleveldb-dev libleveldb1d libsnappy-dev libsnappy1v5
  libuv1-dev libuv1
  libboost1.74-dev libboost-fiber1.74-dev libboost-fiber1.74.0 libboost-context1.74-dev libboost-context1.74.0
  libboost-filesystem1.74-dev libboost-filesystem1.74.0 libboost-atomic1.74-dev libboost-atomic1.74.0
  libboost-system1.74-dev libboost-system1.74.0
  libicu-dev libicu72 libssl-dev libssl3 zlib1g-dev zlib1g
  libsimdjson-dev libsimdjson14 libxxhash-dev libxxhash0 libhttp-parser-dev libhttp-parser2.9
  libjemalloc-dev libjemalloc2
  libgtest-dev libgmock-dev libbenchmark-dev libbenchmark1debian
  libnode-dev libnode108 libc-ares2 libnghttp2-14 libbrotli1
)
# Architecture-independent headers (rapidjson, CLI11) come from the host.

missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64-static >/dev/null || missing+=(qemu-user-static)
if [ ${#missing[@]} -gt 0 ]; then
  echo "arm64_sysroot: missing ${missing[*]}; install with:" >&2
  echo "  apt-get install --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "arm64_sysroot: adding the arm64 architecture to dpkg (dpkg --add-architecture arm64; apt-get update)"
  dpkg --add-architecture arm64
  apt-get update -qq
fi
if ! apt-cache show libleveldb-dev:arm64 >/dev/null 2>&1; then
  apt-get update -qq
fi

mkdir -p "$debs"
want=()
for p in "${packages[@]}"; do
  ls "$debs/${p}_"*"_arm64.deb" >/dev/null 2>&1 || want+=("$p:arm64")
done
if [ ${#want[@]} -gt 0 ]; then
  echo "arm64_sysroot: downloading ${#want[@]} packages"
  if ! (cd "$debs" && apt-get download "${want[@]}" >/dev/null); then
    for p in "${want[@]}"; do
      apt-cache show "$p" >/dev/null 2>&1 || echo "arm64_sysroot: no package $p in the apt sources" >&2
    done
    exit 1
  fi
fi

stamp="$sysroot/.settee-packages"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(ls "$debs")" ]; then
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  for deb in "$debs"/*_arm64.deb; do dpkg -x "$deb" "$sysroot"; done
  ls "$debs" > "$stamp"
fi
test -f "$sysroot/usr/include/node/v8.h" || { echo "arm64_sysroot: libnode-dev:arm64 did not unpack" >&2; exit 1; }
echo "arm64_sysroot: $sysroot ready ($(ls "$debs" | wc -l) packages)"
