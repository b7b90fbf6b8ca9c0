// Load check: 10 concurrent keep-alive clients hammer one server with a mix
// of reads and fixed-size writes for a bounded time. Every request must
// succeed, and the process's resident memory must stay flat between the
// warm-up and the end (no per-request leak). The workload rewrites a fixed set
// of _local docs, so the stored data does not grow.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

size_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages_total = 0, pages_resident = 0;
  statm >> pages_total >> pages_resident;
  return pages_resident * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

constexpr int kClients = 10;

// Runs the mixed workload on one connection until `stop`; counts failures.
void ClientLoop(int port, int client, std::atomic<bool>* stop, std::atomic<uint64_t>* ok,
                std::atomic<uint64_t>* failed) {
  TestClient c(port);
  uint64_t i = 0;
  while (!stop->load()) {
    ClientResponse r;
    switch (i % 6) {
      case 0: r = c.Request("GET", "/load/doc" + std::to_string(i % 50)); break;
      case 1: r = c.Request("GET", "/load/_all_docs?limit=10"); break;
      case 2:
        r = c.Request("PUT", "/load/_local/c" + std::to_string(client) + "-" + std::to_string(i % 20),
                      R"({"n":)" + std::to_string(i) + "}");
        break;
      case 3: r = c.Request("GET", "/"); break;
      case 4: r = c.Request("GET", "/load/_changes?limit=5"); break;
      case 5: r = c.Request("POST", "/load/_all_docs", R"({"keys":["doc1","doc2","nope"]})"); break;
    }
    if (r.status == 200 || r.status == 201) {
      ok->fetch_add(1);
    } else {
      failed->fetch_add(1);
      ADD_FAILURE() << "request " << i << " failed with " << r.status << " " << r.body;
      return;
    }
    ++i;
  }
}

void RunLoad(int port, std::chrono::milliseconds duration, std::atomic<uint64_t>* ok,
             std::atomic<uint64_t>* failed) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; ++t) {
    threads.emplace_back(ClientLoop, port, t, &stop, ok, failed);
  }
  std::this_thread::sleep_for(duration);
  stop.store(true);
  for (auto& t : threads) t.join();
}

class LoadTest : public ::testing::TestWithParam<StoreOptions::Backend> {};

INSTANTIATE_TEST_SUITE_P(Backends, LoadTest,
                         ::testing::Values(StoreOptions::Backend::kMemory,
                                           StoreOptions::Backend::kLevelDB),
                         [](const auto& info) {
                           return info.param == StoreOptions::Backend::kMemory ? "Memory"
                                                                               : "LevelDB";
                         });

TEST_P(LoadTest, TenClientsNoErrorsAndFlatMemory) {
  TestServerConfig cfg;
  cfg.backend = GetParam();
  cfg.http.threads = 2;
  TestServer server(cfg);
  {
    TestClient setup(server.port());
    ASSERT_EQ(setup.Request("PUT", "/load").status, 201);
    for (int i = 0; i < 50; ++i) {
      ASSERT_EQ(setup.Request("PUT", "/load/doc" + std::to_string(i), R"({"v":1})").status, 201);
    }
  }
  std::atomic<uint64_t> ok{0}, failed{0};
  // Warm-up: allocator pools, fiber stacks, thread caches reach steady state.
  RunLoad(server.port(), std::chrono::seconds(1), &ok, &failed);
  ASSERT_EQ(failed.load(), 0u);
  size_t rss_before = ResidentBytes();
  uint64_t ok_before = ok.load();
  RunLoad(server.port(), std::chrono::seconds(4), &ok, &failed);
  size_t rss_after = ResidentBytes();
  EXPECT_EQ(failed.load(), 0u);
  EXPECT_GT(ok.load(), ok_before);
#if defined(__SANITIZE_ADDRESS__)
  // ASan's quarantine holds freed memory on purpose; RSS says nothing here.
  (void)rss_after;
#else
  // Flat: growth bounded by a few MB whatever the request count.
  EXPECT_LT(rss_after, rss_before + (8u << 20))
      << "RSS grew from " << (rss_before >> 20) << " MB to " << (rss_after >> 20) << " MB over "
      << (ok.load() - ok_before) << " requests";
#endif
  RecordProperty("requests", std::to_string(ok.load()));
  RecordProperty("rss_mb_before", std::to_string(rss_before >> 20));
  RecordProperty("rss_mb_after", std::to_string(rss_after >> 20));
}

}  // namespace
}  // namespace settee::testing
