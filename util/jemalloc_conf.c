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
 *             A slower dirty decay (30 s) measured the same within noise. */
const char* malloc_conf = "thp:always";
