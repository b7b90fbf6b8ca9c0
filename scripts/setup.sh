#!/usr/bin/env bash
# Installs everything settee needs to build and test on a Debian 12 machine.
# Safe to run repeatedly: it only installs what is missing.
#
# V8 comes from Debian's libnode (Node 18, V8 10.2). The machine's own nodejs
# package (used for the npm-based compatibility tests) conflicts with
# libnode108, so libnode is unpacked with `dpkg -x` into .deps/libnode inside
# the source tree instead of being installed system-wide. CMake finds it there.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"

packages=(
  build-essential cmake pkg-config git
  libleveldb-dev libsnappy-dev libuv1-dev libboost-fiber-dev libboost-context-dev
  rapidjson-dev libsimdjson-dev libhttp-parser-dev libcli11-dev
  libicu-dev libssl-dev zlib1g-dev libxxhash-dev libjemalloc-dev
  libcurl4-openssl-dev  # the replicator's HTTP client; the http bench suite seeds servers with it
  libgtest-dev libgmock-dev libbenchmark-dev
  # runtime libraries that libnode108 links against
  libbrotli1 libc-ares2 libnghttp2-14 libicu72 libuv1
  # for the compatibility tests and benchmarks
  nodejs curl wrk
  # node's stream module: embedded into the binary by js/CMakeLists.txt
  node-readable-stream
)

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_if_needed apt-get update -qq
  # nodejs may come from another repository (nodesource); do not replace it.
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# npm is bundled with nodesource's nodejs but a separate package on plain Debian.
if ! command -v npm >/dev/null 2>&1; then
  DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends npm
fi

if [ ! -f "$deps/libnode/usr/include/node/v8.h" ]; then
  echo "setup: unpacking libnode (V8) into $deps/libnode"
  mkdir -p "$deps/debs" "$deps/libnode"
  (cd "$deps/debs" && apt-get download libnode108 libnode-dev)
  for deb in "$deps"/debs/*.deb; do dpkg -x "$deb" "$deps/libnode"; done
fi
echo "setup: all dependencies present"
