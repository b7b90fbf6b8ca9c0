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
// A page's first store costs a page fault, and on a paravirtualized VM
// (PVM, as this project's machines) a second one in the hypervisor, whose
// shadow page table learns the page on its first access from user space:
// ~10-30 us a page, one per 4 KiB of log, about a microsecond of a
// small-document put, all inside LevelDB's serialized write. So chunks
// after a log's first are mapped ahead by one process-wide thread (the
// mapper): a quarter into a chunk the writer asks for the next one (so a
// log that stays small, an idle database's, has no chunk of dirty zeros
// mapped ahead), which the mapper reserves and maps while the writer fills
// the current one, makes its pages present and dirty (MADV_POPULATE_WRITE),
// and reads a byte of each page ahead of the writer. The writer waits only
// for the mapping (two system calls), never for the faulting: pages the
// mapper has not reached it faults in itself, and a chunk the mapper has
// not started it maps itself. The CPU is moved, not saved: to the mapper,
// off the writer's serialized path and onto an idle core if there is one.
// A log once synced maps its chunks itself (fdatasync cleans the pages
// faulted in ahead, so they would fault again).
//
// Large appends (24 KiB or more: LevelDB appends a record in fragments
// that fill its 32 KiB log blocks, so these are records or fragments that
// large, mostly the fragments of a record larger than a block, a batch of
// large documents), unless they land in pages the mapper has already
// faulted in, are written with pwritev instead: one system call copies them into the page cache without
// this process's page table learning the pages, where a store through the
// mapping would fault each fresh page the mapper has not reached (a batch
// of 100 2 KiB documents is ~190 KiB, 47 pages, more than the mapper
// faults in while the writer builds the next batch), and the chunks such a
// log maps stay unfaulted, so unmapping them is cheap. A large append into
// pages the mapper has already faulted in is copied there instead (no
// system call). Small appends wait until Flush() (LevelDB flushes after
// each fragment) so that a fragment's 7-byte header goes out with its
// payload, by the payload's route; small fragments written soon after a
// large one (the first and last of a large record) are written directly
// too, so a log of large records maps nothing. Either way the bytes are in
// the page cache when Flush() returns, and the file's bytes are the same.
//
// What differs on disk: until the file is closed its tail past the last
// record is zeros (the rest of the mapped chunk, if the end lies in one).
// LevelDB's log reader skips zero-filled space as the preallocated tail of
// a mapped log (its own env_posix wrote logs this way until 1.19), so
// recovery after a crash reads exactly the records appended; a clean close
// truncates the file to them.
// Sync() is fdatasync(), which writes back pages dirtied through the
// mapping like any others: a sync write is as durable as before.
//
// Every other file (tables, MANIFEST, CURRENT, the info LOG) and every
// other call go to the wrapped Env unchanged.
//
// Thread safety: as leveldb::Env (any thread); a log file is written by
// LevelDB's one writer at a time, as its WritableFile contract requires
// (the mapper touches only chunks the writer has handed it, and Close()
// waits until it has let go of the file's chunks).
#pragma once

#include <leveldb/env.h>

#include <string>

namespace settee {

// The process-wide MmapLogEnv over leveldb::Env::Default() (never
// destroyed, like the default Env). Its Schedule runs jobs on the default
// Env's background thread, named kLevelDBBackgroundThreadName.
leveldb::Env* MmapLogEnv();
inline constexpr char kLevelDBBackgroundThreadName[] = "leveldb-bg";

// Opens `fname` (created or truncated) as a log file appended through a
// mapping grown `chunk_bytes` at a time (a multiple of the page size; the
// first chunk is a quarter of that, at least a page, so the mapper's first
// is soon ahead of the writer), except appends of `direct_bytes` or more
// beyond the pages already faulted in, written with pwritev. Appended bytes reach the file at the latest when
// Flush(), Sync() or Close() returns.
// Exposed for tests; MmapLogEnv uses it for "*.log" files.
leveldb::Status NewMmapLogFile(const std::string& fname, size_t chunk_bytes, size_t direct_bytes,
                               leveldb::WritableFile** result);

}  // namespace settee
