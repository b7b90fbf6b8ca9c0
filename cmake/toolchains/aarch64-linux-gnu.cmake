# Cross-compiling settee for aarch64 (arm64) Linux with Debian's cross
# compiler (apt-get install g++-aarch64-linux-gnu), against the arm64
# dependencies that scripts/arm64_sysroot.sh unpacks from Debian's packages:
#
#   scripts/arm64_sysroot.sh
#   cmake -S . -B build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake
#
# The C library and libstdc++ are the cross compiler's own
# (/usr/aarch64-linux-gnu); the rest is found under SETTEE_ARM64_SYSROOT.
# Programs run on x86-64 through qemu-user (CMAKE_CROSSCOMPILING_EMULATOR),
# so ctest and gtest_discover_tests work as in a native build.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

get_filename_component(_settee_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
set(SETTEE_ARM64_SYSROOT "${_settee_root}/.deps/sysroot-arm64" CACHE PATH
    "arm64 dependencies unpacked by scripts/arm64_sysroot.sh")
set(_lib "${SETTEE_ARM64_SYSROOT}/usr/lib/aarch64-linux-gnu")

# Libraries and package configs only from the sysroot (and the compiler's);
# headers from the sysroot first, then the host's architecture-independent
# ones (RapidJSON, CLI11).
set(CMAKE_FIND_ROOT_PATH "${SETTEE_ARM64_SYSROOT}" /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
# Multiarch headers (openssl/configuration.h, ...) live beside the others.
set(CMAKE_C_FLAGS_INIT "-isystem ${SETTEE_ARM64_SYSROOT}/usr/include/aarch64-linux-gnu -isystem ${SETTEE_ARM64_SYSROOT}/usr/include")
set(CMAKE_CXX_FLAGS_INIT "${CMAKE_C_FLAGS_INIT}")
# The sysroot's libraries for bare -l names (LevelDB's config says -lsnappy),
# for link-time lookups of libraries' own dependencies (libnode needs ICU,
# OpenSSL, ...), and as a run path so programs find them under qemu.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-L${_lib} -Wl,-rpath-link,${_lib} -Wl,-rpath,${_lib}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")

set(SETTEE_LIBNODE_PREFIX "${SETTEE_ARM64_SYSROOT}/usr" CACHE PATH "arm64 libnode")

set(ENV{PKG_CONFIG_DIR} "")
set(ENV{PKG_CONFIG_LIBDIR} "${_lib}/pkgconfig:${SETTEE_ARM64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${SETTEE_ARM64_SYSROOT}")

find_program(SETTEE_QEMU_AARCH64 qemu-aarch64-static qemu-aarch64)
if(SETTEE_QEMU_AARCH64)
  # The run path reaches a program's own libraries only; theirs (snappy for
  # LevelDB, ICU for libnode) come through the guest's LD_LIBRARY_PATH.
  set(CMAKE_CROSSCOMPILING_EMULATOR
      "${SETTEE_QEMU_AARCH64};-L;/usr/aarch64-linux-gnu;-E;LD_LIBRARY_PATH=${_lib}")
endif()
