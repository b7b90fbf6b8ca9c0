// MmapLogEnv: a leveldb::Env whose write-ahead log files ("*.log") are
// appended through a shared memory mapping instead of a write() per record.
//
// LevelDB appends every write batch to its log and flushes it with one
// write() system call before the write returns (so an acknowledged write
// survives a killed process). On a virtual machine a system call is several
// microseconds, a third of a small document put, and all of it inside the
// database's one serialized write step. A store to a MAP_SHARED mapping of
// the file lands in the same page cache, so it survives a killed process
// just the same, with no system call: the file is grown a chunk at a time
// (posix_fallocate, then a new mapping), and a page costs one fault when
// first written. The chunk's blocks are reserved, not a sparse hole, so a
// full disk is an IOError from the write that grows the file, never a SIGBUS
// from a store into the mapping.
//
// What differs on disk: until the file is closed its tail past the last
// record is zeros (the rest of the mapped chunk). LevelDB's log reader skips
// zero-filled space as the preallocated tail of a mapped log (its own
// env_posix wrote logs this way until 1.19), so recovery after a crash reads
// exactly the records appended; a clean close truncates the file to them.
// Sync() is fdatasync(), which writes back pages dirtied through the
// mapping like any others: a sync write is as durable as before.
//
// Every other file (tables, MANIFEST, CURRENT, the info LOG) and every
// other call go to the wrapped Env unchanged.
//
// Thread safety: as leveldb::Env (any thread); a log file is written by
// LevelDB's one writer at a time, as its WritableFile contract requires.
#pragma once

#include <leveldb/env.h>

#include <string>

namespace settee {

// The process-wide MmapLogEnv over leveldb::Env::Default() (never
// destroyed, like the default Env).
leveldb::Env* MmapLogEnv();

// Opens `fname` (created or truncated) as a log file appended through a
// mapping grown `chunk_bytes` at a time (a multiple of the page size).
// Exposed for tests; MmapLogEnv uses it for "*.log" files.
leveldb::Status NewMmapLogFile(const std::string& fname, size_t chunk_bytes,
                               leveldb::WritableFile** result);

}  // namespace settee
