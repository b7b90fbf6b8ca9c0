// The page allocator settee gives V8 (js/v8_init.cc): V8's own, except that
// heap pages V8 puts back into its page pool stay committed.
//
// V8 keeps young-generation pages it frees in a pool for reuse, and
// "uncommits" each one as it enters the pool: mprotect(PROT_NONE) and
// madvise(MADV_DONTNEED) on a V8 worker thread. Reusing the page commits it
// again (mprotect RW) and every 4 KiB of it faults afresh as the isolate
// allocates into it. A view build of 10,000 documents cycles several pages
// this way (views_bench, strace: ~6 page commits per build on the mapping
// isolate), and on the PVM guests we measure on a fresh page fault costs
// 10-30 us, each mprotect and madvise a TLB shootdown that waits on the
// other core when a second isolate thread of the process runs there.
//
// RetainingPageAllocator forwards everything to the allocator it wraps but
// this: a page-sized region that was made read-write and is then made
// inaccessible (the pool's uncommit) is left as it is, mapped and resident,
// and making it read-write again costs nothing. So does making a page
// read-write that already is: V8 10.2 asks that for some pages several
// times in their life (views_bench: 80 of 188 page-sized read-write
// requests), and each mprotect takes the process's mmap lock for writing,
// holding up the page faults of every other thread.
//
// The cost is resident memory: V8's pool holds at most about its young
// generation's pages (a few MiB per isolate with --max-semi-space-size=4),
// and V8 frees pooled pages (FreePages, forwarded) when it releases its
// pool. The memory of a retained page stays accessible while V8 considers
// it uncommitted: a stray write by V8 into a pooled page would go unnoticed
// instead of faulting. V8 makes no use of that fault (on macOS its uncommit
// does not even zero the pages), and executable memory is never retained.
//
// Thread safety: every method may be called from any thread (V8 calls them
// from isolate and worker threads alike).
#pragma once

#include <cstddef>
#include <mutex>
#include <set>

#include <v8-platform.h>

namespace settee::js {

class RetainingPageAllocator final : public v8::PageAllocator {
 public:
  // `base` does the work (not owned; outlives this). `page_size` is the
  // size of the regions retained: V8's heap page (256 KiB in V8 10.2).
  RetainingPageAllocator(v8::PageAllocator* base, size_t page_size);

  size_t AllocatePageSize() override;
  size_t CommitPageSize() override;
  void SetRandomMmapSeed(int64_t seed) override;
  void* GetRandomMmapAddr() override;
  void* AllocatePages(void* address, size_t length, size_t alignment, Permission permissions) override;
  bool FreePages(void* address, size_t length) override;
  bool ReleasePages(void* address, size_t length, size_t new_length) override;
  bool SetPermissions(void* address, size_t length, Permission permissions) override;
  bool DiscardSystemPages(void* address, size_t size) override;
  bool DecommitPages(void* address, size_t size) override;
  bool ReserveForSharedMemoryMapping(void* address, size_t size) override;
  std::unique_ptr<SharedMemory> AllocateSharedPages(size_t length, const void* original_address) override;
  bool CanAllocateSharedPages() override;

  // Pages currently retained (inaccessible to V8, still committed), for
  // tests and diagnostics.
  size_t retained_pages() const;

 private:
  // Forgets what is known of the pages in [address, address + length):
  // they are about to be unmapped or their permissions set by `base`.
  // REQUIRES: mu_.
  void ForgetLocked(const void* address, size_t length);

  v8::PageAllocator* const base_;
  const size_t page_size_;
  mutable std::mutex mu_;
  // Page-sized regions made read-write through this allocator; GUARDED_BY(mu_)
  std::set<const void*> read_write_;
  // Of those, the ones V8 has since made inaccessible (left committed);
  // GUARDED_BY(mu_)
  std::set<const void*> retained_;
};

}  // namespace settee::js
