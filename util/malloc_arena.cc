#include "util/malloc_arena.h"

#include <cstddef>

// jemalloc's control interface, referenced weakly: libsettee does not link
// jemalloc, the executables do, and a program embedding libsettee may not.
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace settee::util {

void UseSharedMallocArena() {
  if (mallctl == nullptr) return;
  unsigned arena = 0;
  // Failure leaves the thread on the arena jemalloc chose: only slower.
  mallctl("thread.arena", nullptr, nullptr, &arena, sizeof(arena));
}

}  // namespace settee::util
