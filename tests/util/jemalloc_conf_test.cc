// util/jemalloc_conf.c: the options every settee executable (and this test)
// runs jemalloc with.
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace {

bool OnJemalloc() { return mallctl != nullptr; }

unsigned ThreadArena() {
  unsigned arena = ~0u;
  size_t len = sizeof(arena);
  EXPECT_EQ(mallctl("thread.arena", &arena, &len, nullptr, 0), 0);
  return arena;
}

TEST(JemallocConfTest, ArenasArePerCpu) {
  if (!OnJemalloc()) GTEST_SKIP() << "not running on jemalloc (a sanitizer build)";
  const char* mode = nullptr;
  size_t len = sizeof(mode);
  ASSERT_EQ(mallctl("opt.percpu_arena", &mode, &len, nullptr, 0), 0);
  EXPECT_STREQ(mode, "percpu");
}

// Threads alive at once share the per-CPU arenas instead of each opening a
// fresh one (whose first huge page costs milliseconds to fault in). By
// default jemalloc gives each new thread a fresh arena, numbered from 1, up
// to 4 per CPU, so on a machine of fewer than 13 CPUs some of these 12 land
// at or past the CPU count and this fails without percpu_arena
// (ArenasArePerCpu checks the option itself on any machine).
TEST(JemallocConfTest, NewThreadsDoNotOpenArenasOfTheirOwn) {
  if (!OnJemalloc()) GTEST_SKIP() << "not running on jemalloc (a sanitizer build)";
  const unsigned cpus = std::thread::hardware_concurrency();
  constexpr int kThreads = 12;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  std::vector<unsigned> arenas(kThreads, ~0u);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; i++) {
    threads.emplace_back([&, i] {
      delete[] new char[4096];  // a fresh thread picks its arena on first use
      arenas[i] = ThreadArena();
      std::unique_lock<std::mutex> lock(mu);
      arrived++;
      cv.notify_all();
      cv.wait(lock, [&] { return arrived == kThreads; });  // all alive at once
    });
  }
  for (auto& t : threads) t.join();
  for (unsigned arena : arenas) EXPECT_LT(arena, cpus);
}

}  // namespace
