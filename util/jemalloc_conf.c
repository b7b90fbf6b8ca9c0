/* jemalloc's options for every settee executable (cmake/SetteeDeps.cmake,
 * settee_dep_malloc); the MALLOC_CONF environment variable still overrides.
 *
 * thp:always     arenas on transparent huge pages (the kernel's THP mode here
 *                is madvise): one fault maps 2 MiB. On the VMs we measure on
 *                a page fault costs microseconds (paravirtual page tables),
 *                and a store growing by hundreds of megabytes (the bench's
 *                massive documents) spent a third of its time faulting:
 *                bulk-inserts-large-docs 9.6 -> 5.5 ms, massive docs
 *                1188 -> 895 ms, peak RSS 344 -> 379 MB, in one run each.
 * dirty_decay_ms freed pages return to the kernel over 30 s instead of 10 s,
 *                so that memory a big write batch freed is still there for
 *                the next one rather than faulted in again (massive docs
 *                895 -> ~800 ms). */
const char* malloc_conf = "thp:always,dirty_decay_ms:30000";
