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
# Usage: scripts/arm64_sysroot.sh [SYSROOT]   (default .deps/sysroot-arm64;
#        the .debs go to $SETTEE_ARM64_DEBS, default .deps/arm64-debs)
#
# It installs the cross compiler and qemu-user (g++-aarch64-linux-gnu,
# qemu-user-static) with apt-get when they are missing, as scripts/setup.sh
# does for the native build; scripts/setup.sh itself does not, CI does not
# cross-build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${1:-$root/.deps/sysroot-arm64}
debs=${SETTEE_ARM64_DEBS:-$root/.deps/arm64-debs}

# The -dev packages the build needs (keep in step with cmake/SetteeDeps.cmake).
# The shared libraries they link against, and theirs in turn (libnode's ICU,
# c-ares, nghttp2, brotli; libcurl's Kerberos, LDAP, ssh2, ...), are added by
# following the packages' Depends below, so that the linker resolves every
# library's own dependencies (-rpath-link) and qemu finds them at run time.
packages=(
  libleveldb-dev libsnappy-dev
  libuv1-dev
  libboost1.74-dev libboost-fiber1.74-dev libboost-context1.74-dev
  libboost-filesystem1.74-dev libboost-atomic1.74-dev libboost-system1.74-dev
  libicu-dev libssl-dev zlib1g-dev libcurl4-openssl-dev
  libsimdjson-dev libxxhash-dev libhttp-parser-dev libjemalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libnode-dev
)
# Architecture-independent headers (RapidJSON, CLI11) come from the host.
# The cross compiler and qemu-user, installed like scripts/setup.sh installs
# the native build's packages (only what is missing).
tools=(g++-aarch64-linux-gnu qemu-user-static file)

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
need_tools=()
for t in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$t" 2>/dev/null | grep -q 'install ok installed' || need_tools+=("$t")
done
if [ ${#need_tools[@]} -gt 0 ]; then
  echo "arm64_sysroot: installing ${need_tools[*]}"
  if ! { sudo_if_needed apt-get update -qq &&
         DEBIAN_FRONTEND=noninteractive sudo_if_needed apt-get install -y -qq --no-install-recommends "${need_tools[@]}"; }; then
    echo "arm64_sysroot: could not install ${need_tools[*]}; as root:" >&2
    echo "  apt-get install --no-install-recommends ${need_tools[*]}" >&2
    exit 1
  fi
fi
missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=("aarch64-linux-gnu-g++ (package g++-aarch64-linux-gnu)")
command -v qemu-aarch64-static >/dev/null || missing+=("qemu-aarch64-static (package qemu-user-static)")
if [ ${#missing[@]} -gt 0 ]; then
  printf 'arm64_sysroot: missing %s\n' "${missing[@]}" >&2
  echo "  install with: apt-get install --no-install-recommends g++-aarch64-linux-gnu qemu-user-static" >&2
  exit 1
fi

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "arm64_sysroot: adding the arm64 architecture to dpkg (dpkg --add-architecture arm64; apt-get update)"
  sudo_if_needed dpkg --add-architecture arm64
  sudo_if_needed apt-get update -qq
fi
if ! apt-cache show libleveldb-dev:arm64 >/dev/null 2>&1; then
  sudo_if_needed apt-get update -qq
fi
absent=()
for p in "${packages[@]}"; do
  apt-cache show "$p:arm64" >/dev/null 2>&1 || absent+=("$p:arm64")
done
if [ ${#absent[@]} -gt 0 ]; then
  echo "arm64_sysroot: the apt sources have no ${absent[*]}" >&2
  echo "  (needs Debian 12's main archive with arm64: dpkg --add-architecture arm64 && apt-get update)" >&2
  exit 1
fi

# The C library, libstdc++, libgcc and the sanitizers' runtimes come with the
# cross compiler, as <name>-arm64-cross packages: the walk stops there.
toolchain_provides=" gcc-12-base $(dpkg-query -W -f='${Package}\n' '*-arm64-cross' 2>/dev/null |
  sed -n 's/-arm64-cross$//p' | tr '\n' ' ') "

# Nothing to do when this package list was unpacked already (the walk below
# takes minutes: apt-cache is slow to start).
request="$(printf '%s\n' "${packages[@]}" | sort | tr '\n' ' ')"
if [ -f "$sysroot/.settee-request" ] && [ "$(cat "$sysroot/.settee-request")" = "$request" ] &&
   [ -f "$sysroot/usr/include/node/v8.h" ]; then
  echo "arm64_sysroot: $sysroot ready (unchanged)"
  exit 0
fi

# The closure over Depends of arm64 library packages: a -dev package's
# library, its libraries, and so on. Only lib*/zlib* packages are followed
# (libnode108 also depends on node-acorn and friends, JavaScript for node
# itself); what the cross compiler brings (libc6, ...) stops the walk.
closure=()
declare -A seen=()
queue=("${packages[@]}")
while [ ${#queue[@]} -gt 0 ]; do
  for p in "${queue[@]}"; do seen[$p]=1; closure+=("$p"); done
  next=()
  # One apt-cache call per level of the walk: it is slow to start.
  while read -r dep; do
    # Only arm64 packages: arch-independent ones print without the suffix.
    [ "${dep%:arm64}" != "$dep" ] || continue
    dep=${dep%:arm64}
    case "$toolchain_provides" in *" $dep "*) continue ;; esac
    case "$dep" in lib*|zlib*) ;; *) continue ;; esac
    [ -n "${seen[$dep]:-}" ] && continue
    seen[$dep]=1
    next+=("$dep")
  done < <(apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks \
             --no-replaces --no-enhances "${queue[@]/%/:arm64}" 2>/dev/null |
           sed -n 's/^ *|\{0,1\}\(Pre\)\{0,1\}Depends: \([^<>]*\)$/\2/p' | sort -u)
  for p in "${next[@]+"${next[@]}"}"; do unset "seen[$p]"; done
  queue=("${next[@]+"${next[@]}"}")
done

mkdir -p "$debs"
want=()
for p in "${closure[@]}"; do
  ls "$debs/${p}_"*"_arm64.deb" >/dev/null 2>&1 || want+=("$p:arm64")
done
if [ ${#want[@]} -gt 0 ]; then
  echo "arm64_sysroot: downloading ${#want[@]} packages: ${want[*]}"
  if ! (cd "$debs" && apt-get download "${want[@]}" >/dev/null); then
    echo "arm64_sysroot: apt-get download failed for some of: ${want[*]}" >&2
    exit 1
  fi
fi

# Unpack exactly the closure's packages (older downloads may linger in $debs).
files=()
for p in "${closure[@]}"; do
  f=$(ls "$debs/${p}_"*"_arm64.deb" | tail -1)
  files+=("$f")
done
stamp="$sysroot/.settee-packages"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$(printf '%s\n' "${files[@]##*/}" | sort)" ]; then
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  for deb in "${files[@]}"; do dpkg -x "$deb" "$sysroot"; done
  printf '%s\n' "${files[@]##*/}" | sort > "$stamp"
fi
# Some packages (zlib1g, libcom-err2, libkeyutils1) still ship /lib:
# merge it into /usr/lib as Debian's merged /usr does, so that one
# directory holds every library (the toolchain file's -L/-rpath-link, and
# qemu's LD_LIBRARY_PATH).
if [ -d "$sysroot/lib" ] && [ ! -L "$sysroot/lib" ]; then
  cp -a "$sysroot/lib/." "$sysroot/usr/lib/"
  rm -rf "$sysroot/lib"
  ln -s usr/lib "$sysroot/lib"
fi
test -f "$sysroot/usr/include/node/v8.h" || { echo "arm64_sysroot: libnode-dev:arm64 did not unpack" >&2; exit 1; }
echo "$request" > "$sysroot/.settee-request"
echo "arm64_sysroot: $sysroot ready (${#files[@]} packages)"
