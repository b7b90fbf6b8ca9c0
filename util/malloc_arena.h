// Which allocator arena a short-lived helper thread allocates from.
//
// Under jemalloc (every settee executable links it: cmake/SetteeDeps.cmake)
// a new thread is given an arena of its own while fewer than 4 per core
// exist, and a fresh arena maps fresh 2 MiB extents (thp:always,
// util/jemalloc_conf.c) whose first touch faults in a whole huge page: on
// the paravirtualized VMs we measure on, milliseconds each. A replication
// starts two threads (the job and its changes reader), so a one-shot pull of
// 1,000 small documents, ~10-15 ms warm, took ~30 ms when its threads opened
// new arenas (settee run, six alternating runs: first pulls 25-42 ms against
// 10-22 ms with one arena for the process).
#pragma once

namespace settee::util {

// Makes the calling thread allocate from the process's first arena (the one
// the main thread warmed) instead of a fresh one. For threads that live for
// one task and allocate moderately; threads that allocate heavily in
// parallel with others (isolates, storage writers) keep arenas of their own.
// A no-op when the process does not run on jemalloc (sanitizer builds, or
// libsettee embedded in a program with another allocator). Thread-safe; it
// affects the calling thread only.
void UseSharedMallocArena();

}  // namespace settee::util
