// util/jemalloc_conf.c: the options every settee executable (and this test)
// runs jemalloc with.
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
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

// A process confined to one CPU (taskset, a container's cpuset) keeps its
// per-CPU arenas and jemalloc writes nothing to stderr: this test binary runs
// ArenasArePerCpu again in a child bound to the last online CPU, whose id is
// past the one CPU the child may use (the case jemalloc cannot trust without
// an explicit narenas, and said so on stderr).
TEST(JemallocConfTest, ConfinedToOneCpuArenasStayPerCpuAndQuiet) {
  if (!OnJemalloc()) GTEST_SKIP() << "not running on jemalloc (a sanitizer build)";
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online < 2) GTEST_SKIP() << "one CPU online: there is nothing to confine the child to";
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(online - 1, &one);
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) _exit(3);
    unsetenv("MALLOC_CONF");  // the compiled-in options only
    execl("/proc/self/exe", "jemalloc_conf_test", "--gtest_filter=JemallocConfTest.ArenasArePerCpu",
          static_cast<char*>(nullptr));
    _exit(4);
  }
  close(out[1]);
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(out[0], buf, sizeof(buf))) > 0;) output.append(buf, static_cast<size_t>(n));
  close(out[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 0) << output;
  EXPECT_EQ(output.find("<jemalloc>"), std::string::npos) << output;
  EXPECT_NE(output.find("[  PASSED  ] 1 test"), std::string::npos) << output;
}

}  // namespace
