# Generates a copy of storage/document.cc whose simdjson fast path never
# succeeds, with its public functions renamed Ref*: the RapidJSON-only
# reference that document_diff_fuzzer compares the real ParseIncomingDoc with.
# Run at build time (cmake -P), so the copy tracks edits of document.cc.
#   cmake -DIN=<storage/document.cc> -DOUT=<generated .cc> -P make_reference_document.cmake
file(READ "${IN}" src)

# Every call of the fast path becomes a call that fails.
string(FIND "${src}" "ParseWithSimdjson(text" at)
if(at EQUAL -1)
  message(FATAL_ERROR "make_reference_document: no 'ParseWithSimdjson(text' call in ${IN}; "
                      "update tests/fuzz/make_reference_document.cmake")
endif()
string(REPLACE "ParseWithSimdjson(text" "SetteeFuzzNoFastPath(text" src "${src}")

# Public (external-linkage) functions get other names, so the copy links
# beside settee_storage.
foreach(name ParseIncomingDoc ParseBulkDocsBody ValidateDocId ComputeRevHash)
  string(REGEX REPLACE "([^A-Za-z0-9_])${name}" "\\1Ref${name}" src "${src}")
endforeach()

set(prelude "// GENERATED from ${IN} by tests/fuzz/make_reference_document.cmake. Do not edit.\n")
string(APPEND prelude "template <typename... Args>\nstatic bool SetteeFuzzNoFastPath(Args&&...) { return false; }\n")
# ParseWithSimdjson is left with no caller.
string(APPEND prelude "#pragma GCC diagnostic ignored \"-Wunused-function\"\n")
# The include of document.h must stay first-party; the prelude goes after the
# includes by prefixing the first 'namespace settee {'.
string(FIND "${src}" "namespace settee {" ns)
if(ns EQUAL -1)
  message(FATAL_ERROR "make_reference_document: no 'namespace settee {' in ${IN}")
endif()
string(SUBSTRING "${src}" 0 ${ns} head)
string(SUBSTRING "${src}" ${ns} -1 tail)
set(src "${head}${prelude}${tail}")

# Write only on change, so an unchanged document.cc does not rebuild.
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
  if(old STREQUAL src)
    return()
  endif()
endif()
file(WRITE "${OUT}" "${src}")
