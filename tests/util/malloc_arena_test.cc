#include "util/malloc_arena.h"

#include <cstddef>
#include <thread>

#include <gtest/gtest.h>

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace settee::util {
namespace {

unsigned ThreadArena() {
  unsigned arena = ~0u;
  size_t len = sizeof(arena);
  EXPECT_EQ(mallctl("thread.arena", &arena, &len, nullptr, 0), 0);
  return arena;
}

// The test binary links jemalloc as every settee executable does (not under
// sanitizers): the weak reference must bind, or the call silently does nothing.
TEST(MallocArenaTest, AHelperThreadMovesToTheFirstArena) {
  if (mallctl == nullptr) GTEST_SKIP() << "not running on jemalloc (a sanitizer build)";
  unsigned before = ~0u, after = ~0u;
  std::thread([&] {
    // Make the thread take an arena of its own first, as a fresh thread does.
    delete[] new char[4096];
    before = ThreadArena();
    UseSharedMallocArena();
    after = ThreadArena();
    delete[] new char[4096];
  }).join();
  EXPECT_NE(before, 0u);  // a fresh thread on a 2-core machine gets arena 1..7
  EXPECT_EQ(after, 0u);
}

TEST(MallocArenaTest, OtherThreadsKeepTheirArenas) {
  if (mallctl == nullptr) GTEST_SKIP() << "not running on jemalloc (a sanitizer build)";
  const unsigned mine = ThreadArena();
  std::thread([] { UseSharedMallocArena(); }).join();
  EXPECT_EQ(ThreadArena(), mine);
}

}  // namespace
}  // namespace settee::util
