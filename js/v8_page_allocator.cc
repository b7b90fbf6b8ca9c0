#include "js/v8_page_allocator.h"

#include <iterator>

namespace settee::js {

RetainingPageAllocator::RetainingPageAllocator(v8::PageAllocator* base, size_t page_size)
    : base_(base), page_size_(page_size) {}

size_t RetainingPageAllocator::AllocatePageSize() { return base_->AllocatePageSize(); }
size_t RetainingPageAllocator::CommitPageSize() { return base_->CommitPageSize(); }
void RetainingPageAllocator::SetRandomMmapSeed(int64_t seed) { base_->SetRandomMmapSeed(seed); }
void* RetainingPageAllocator::GetRandomMmapAddr() { return base_->GetRandomMmapAddr(); }

void* RetainingPageAllocator::AllocatePages(void* address, size_t length, size_t alignment,
                                            Permission permissions) {
  return base_->AllocatePages(address, length, alignment, permissions);
}

void RetainingPageAllocator::ForgetLocked(const void* address, size_t length) {
  const char* from = static_cast<const char*>(address);
  const char* to = from + length;
  for (auto* set : {&read_write_, &retained_}) {
    // A region starting before `address` may reach into the range.
    auto it = set->lower_bound(from);
    if (it != set->begin()) {
      auto before = std::prev(it);
      if (static_cast<const char*>(*before) + page_size_ > from) it = before;
    }
    while (it != set->end() && static_cast<const char*>(*it) < to) it = set->erase(it);
  }
}

bool RetainingPageAllocator::FreePages(void* address, size_t length) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ForgetLocked(address, length);
  }
  return base_->FreePages(address, length);
}

bool RetainingPageAllocator::ReleasePages(void* address, size_t length, size_t new_length) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ForgetLocked(static_cast<char*>(address) + new_length, length - new_length);
  }
  return base_->ReleasePages(address, length, new_length);
}

bool RetainingPageAllocator::SetPermissions(void* address, size_t length, Permission permissions) {
  const bool page = length == page_size_;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (page && permissions == kNoAccess && read_write_.count(address)) {
      // The pool's uncommit: leave the page committed.
      retained_.insert(address);
      return true;
    }
    // The pool's commit of a page it uncommitted, or a page V8 makes
    // read-write again (V8 asks that of some pages repeatedly): it still is.
    if (page && permissions == kReadWrite && read_write_.count(address)) {
      retained_.erase(address);
      return true;
    }
    ForgetLocked(address, length);
  }
  // Anything else (executable code, guard pages, other sizes) as asked. V8
  // never changes one page's permissions from two threads at once.
  if (!base_->SetPermissions(address, length, permissions)) return false;
  if (page && permissions == kReadWrite) {
    std::lock_guard<std::mutex> g(mu_);
    read_write_.insert(address);
  }
  return true;
}

bool RetainingPageAllocator::DiscardSystemPages(void* address, size_t size) {
  return base_->DiscardSystemPages(address, size);
}

bool RetainingPageAllocator::DecommitPages(void* address, size_t size) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ForgetLocked(address, size);
  }
  return base_->DecommitPages(address, size);
}

bool RetainingPageAllocator::ReserveForSharedMemoryMapping(void* address, size_t size) {
  {
    std::lock_guard<std::mutex> g(mu_);
    ForgetLocked(address, size);
  }
  return base_->ReserveForSharedMemoryMapping(address, size);
}

std::unique_ptr<v8::PageAllocator::SharedMemory> RetainingPageAllocator::AllocateSharedPages(
    size_t length, const void* original_address) {
  return base_->AllocateSharedPages(length, original_address);
}

bool RetainingPageAllocator::CanAllocateSharedPages() { return base_->CanAllocateSharedPages(); }

size_t RetainingPageAllocator::retained_pages() const {
  std::lock_guard<std::mutex> g(mu_);
  return retained_.size();
}

}  // namespace settee::js
