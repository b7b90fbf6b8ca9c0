# Finds every third-party dependency and exposes it as an imported target.
# All of them come from Debian packages installed by scripts/setup.sh; V8 comes
# from libnode unpacked into .deps/libnode (see scripts/setup.sh for why).

find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(leveldb CONFIG REQUIRED)
find_package(RapidJSON CONFIG REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(ICU REQUIRED COMPONENTS uc i18n data)
find_package(Boost 1.74 REQUIRED COMPONENTS fiber context)
find_package(CLI11 CONFIG REQUIRED)
find_package(ZLIB REQUIRED)
# libcurl (OpenSSL flavour): the replicator's HTTP client (replication/).
find_package(CURL REQUIRED)
pkg_check_modules(LIBUV REQUIRED IMPORTED_TARGET libuv)

find_path(HTTP_PARSER_INCLUDE_DIR http_parser.h REQUIRED)
find_library(HTTP_PARSER_LIBRARY http_parser REQUIRED)
add_library(settee_dep_http_parser INTERFACE)
target_include_directories(settee_dep_http_parser SYSTEM INTERFACE ${HTTP_PARSER_INCLUDE_DIR})
target_link_libraries(settee_dep_http_parser INTERFACE ${HTTP_PARSER_LIBRARY})

# simdjson: the fast path of document parsing (storage/document.cc).
find_package(simdjson CONFIG REQUIRED)

# xxHash (revision ids: util/digest.h Xxh128Hex).
find_path(XXHASH_INCLUDE_DIR xxhash.h REQUIRED)
find_library(XXHASH_LIBRARY xxhash REQUIRED)
add_library(settee_dep_xxhash INTERFACE)
target_include_directories(settee_dep_xxhash SYSTEM INTERFACE ${XXHASH_INCLUDE_DIR})
target_link_libraries(settee_dep_xxhash INTERFACE ${XXHASH_LIBRARY})

# Snappy (LevelDB's block compression; the memory store's big values).
find_path(SNAPPY_INCLUDE_DIR snappy.h REQUIRED)
find_library(SNAPPY_LIBRARY snappy REQUIRED)
add_library(settee_dep_snappy INTERFACE)
target_include_directories(settee_dep_snappy SYSTEM INTERFACE ${SNAPPY_INCLUDE_DIR})
target_link_libraries(settee_dep_snappy INTERFACE ${SNAPPY_LIBRARY})

# RapidJSON's config exports variables, not a target.
add_library(settee_dep_rapidjson INTERFACE)
target_include_directories(settee_dep_rapidjson SYSTEM INTERFACE ${RAPIDJSON_INCLUDE_DIRS})
target_compile_definitions(settee_dep_rapidjson INTERFACE
  RAPIDJSON_HAS_STDSTRING=1)

if(SETTEE_WITH_JS)
  # V8 10.2 from Debian's libnode108 (dpkg -x'd into .deps/libnode).
  set(SETTEE_LIBNODE_PREFIX "${PROJECT_SOURCE_DIR}/.deps/libnode/usr" CACHE PATH
      "Prefix holding include/node/v8.h and lib/<triplet>/libnode.so")
  find_path(V8_INCLUDE_DIR v8.h PATHS "${SETTEE_LIBNODE_PREFIX}/include/node" NO_DEFAULT_PATH)
  find_library(LIBNODE_LIBRARY NAMES node libnode.so.108
    PATHS "${SETTEE_LIBNODE_PREFIX}/lib/${CMAKE_LIBRARY_ARCHITECTURE}" NO_DEFAULT_PATH)
  if(NOT V8_INCLUDE_DIR OR NOT LIBNODE_LIBRARY)
    message(FATAL_ERROR "V8 (libnode) not found under ${SETTEE_LIBNODE_PREFIX}; run scripts/setup.sh")
  endif()
  add_library(settee_dep_v8 INTERFACE)
  target_include_directories(settee_dep_v8 SYSTEM INTERFACE ${V8_INCLUDE_DIR})
  target_link_libraries(settee_dep_v8 INTERFACE ${LIBNODE_LIBRARY})
  # libnode's V8 is built without pointer compression or the sandbox, so
  # V8_COMPRESS_POINTERS / V8_ENABLE_SANDBOX must stay undefined here.
  get_filename_component(LIBNODE_DIR "${LIBNODE_LIBRARY}" DIRECTORY)
  set(CMAKE_BUILD_RPATH "${CMAKE_BUILD_RPATH};${LIBNODE_DIR}")
  set(CMAKE_INSTALL_RPATH "${CMAKE_INSTALL_RPATH};${LIBNODE_DIR}")
endif()

# The allocator every executable links (settee_dep_malloc): jemalloc. A
# document write makes a dozen short-lived allocations (parsed body, record,
# keys, batch entries). Measured with bench/database_bench in one run each:
# against glibc malloc, jemalloc cuts a 100-doc bulk insert on the memory
# backend from 4.6x to 3.8x of the raw batch put, and keeps the memory
# backend's _all_docs scan at ~2.5x of a raw scan; tcmalloc_minimal was as
# quick to write but scattered records across size-class spans, and that scan
# went to 5-6x on cache misses. Sanitizer and fuzz builds keep their own.
add_library(settee_dep_malloc INTERFACE)
if(SETTEE_JEMALLOC AND NOT SETTEE_SANITIZE AND NOT SETTEE_FUZZ)
  find_library(JEMALLOC_LIBRARY NAMES jemalloc REQUIRED)
  # Nothing references jemalloc's symbols directly: keep --as-needed from
  # dropping it.
  target_link_libraries(settee_dep_malloc INTERFACE
    "-Wl,--push-state,--no-as-needed" ${JEMALLOC_LIBRARY} "-Wl,--pop-state")
  # Its options (huge pages, slower purging): see the file.
  target_sources(settee_dep_malloc INTERFACE ${PROJECT_SOURCE_DIR}/util/jemalloc_conf.c)
endif()

if(SETTEE_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
if(SETTEE_BUILD_BENCH)
  find_package(benchmark REQUIRED)
endif()
