/* jemalloc's options for every settee executable (cmake/SetteeDeps.cmake,
 * settee_dep_malloc); the MALLOC_CONF environment variable still overrides.
 *
 * thp:always  arenas on transparent huge pages (the kernel's THP mode here is
 *             madvise): one fault maps 2 MiB. On the VMs we measure on a page
 *             fault costs microseconds (paravirtual page tables), and writes
 *             of big documents spent a third of their time faulting in fresh
 *             memory. One run each, settee bench --baseline none:
 *             bulk-inserts-large-docs (memory) 9.6 -> 5.5 ms, massive docs
 *             1188 -> 895 ms (memory) and 4895 -> 2000-2171 ms (LevelDB);
 *             peak RSS 344 -> 379 MB (memory), 428 -> 497 MB (LevelDB).
 *             A slower dirty decay (30 s) measured the same within noise.
 * muzzy_decay_ms:-1
 *             dirty pages past their decay are handed back lazily
 *             (MADV_FREE) and never forced out (MADV_DONTNEED): the kernel
 *             takes them only under memory pressure, and until then using
 *             them again costs no fault. A batch of big documents frees what
 *             the next one allocates, and jemalloc's decay purged much of it
 *             in between (its backlog counts pages newly dirtied, not pages
 *             reused): completing the 40 MB of a massive-docs batch in
 *             BuildEncodedDocs took 29-33 ms per batch, 6-8.5 ms with this
 *             (the write after it 16-19 -> 11-13 ms); peak RSS the same (a
 *             `settee run` of 10 such batches: 288 -> 287-291 MB). The cost:
 *             RSS after a burst stays up until the kernel wants the pages.
 * percpu_arena:percpu
 *             one arena per CPU, and a thread allocates from the arena of
 *             the CPU it runs on. By default jemalloc gives each new thread
 *             a fresh arena while there are fewer than 4 per CPU, and a
 *             fresh arena's first 2 MiB block faults in as a huge page:
 *             ~5 ms on our VMs (strace: the new thread's first syscall came
 *             5.2 ms after the block's madvise), paid again by every
 *             short-lived thread that lands on a new arena. A one-shot
 *             replication starts two threads, so the first pull of a
 *             process paid ~10 ms of faults (moving the thread to arena 0
 *             afterwards did not help: `thread.arena` creates the arena
 *             first). settee bench --suite basics --baseline none, four
 *             alternating runs a backend: pull-replication-one-generation
 *             memory 26.0-34.0 -> 9.0-15.4 ms, LevelDB 19.9-36.6 ->
 *             12.3-17.5 ms; the other cases the same within noise except
 *             LevelDB all-docs-skip-limit, 0.24-0.41 -> 0.30-0.40 ms
 *             (medians of five: 0.25 -> 0.35); peak RSS 190 -> 169 MB.
 *             Isolates on different CPUs still allocate from different
 *             arenas, so threads scale as before.
 * narenas:256
 *             keeps per-CPU arenas, and jemalloc quiet, in a process confined
 *             to some of the CPUs (taskset, a container's cpuset, a phone
 *             with cores offline). jemalloc counts the CPUs it may use but
 *             names an arena by the id of the CPU it runs on, so it cannot
 *             trust the count there: with narenas unset it wrote "Number of
 *             CPUs detected is not deterministic. Per-CPU arena disabled." to
 *             stderr of every settee command and fell back to the arena per
 *             new thread above; with it set, it reserves that many arena
 *             slots (or one per CPU, if more) for CPU ids to index, arenas
 *             still made only for the CPUs threads run on.
 * tcache_max:65536
 *             thread caches for sizes up to 64 KiB (jemalloc's default stops
 *             at 32 KiB). LevelDB allocates and frees a buffer the size of
 *             every block it reads from a table file, even when the file is
 *             mmap'd and the buffer goes unused: a 50 KB attachment chunk is
 *             a block of its own, and those 50 KB allocations went through
 *             the arena's locks, 40% of LevelDB's share of a read of 100
 *             such attachments (perf, many-attachments-binary); with this
 *             they come from the thread's cache (13%). A thread caches at
 *             most a few MB more, and jemalloc's tcache GC trims idle bins. */
const char* malloc_conf = "thp:always,muzzy_decay_ms:-1,percpu_arena:percpu,narenas:256,tcache_max:65536";
