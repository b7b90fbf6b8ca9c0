// ReplicatorDb (replication/replicator_db.h): the watcher of _replicator.
// Jobs from documents and their write-backs are tested end to end in
// tests/runtime/endpoints_replication_test.cc; here, the watcher itself.
#include "replication/replicator_db.h"

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/storage/store_test_util.h"

namespace settee::replication {
namespace {

using settee::testing::TempStore;

// A _replicator database that already holds documents when the watcher
// starts (a server restarted) and then sees no writes: the watcher reads it
// once and sleeps. It compared the database's seq with the last one its
// change listener had reported, which is none until the next write, so it
// read the feed again and again: one thread busy for as long as the server
// stayed idle. Counts the watcher's passes against the slices that passed
// (one pass per kWatchSlice while idle).
TEST(ReplicatorDb, AnIdleWatcherSleepsAfterARestart) {
  TempStore store(StoreOptions::Backend::kMemory);
  auto db = store->CreateDatabase(ReplicatorDb::kName);
  ASSERT_TRUE(db.ok());
  // Finished documents: they start no job.
  for (const char* id : {"a", "b"}) {
    auto r = (*db)->Put(id, R"({"source":"x","target":"y","_replication_state":"failed"})");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  ReplicationJobs jobs(store.get());
  ReplicatorDb watcher(store.get(), &jobs);
  const auto start = std::chrono::steady_clock::now();
  watcher.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const uint64_t passes = watcher.watch_passes();
  const auto slices = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start).count() /
                      ReplicatorDb::kWatchSlice.count();
  EXPECT_GE(passes, 1u);
  EXPECT_LE(passes, static_cast<uint64_t>(slices) + 2) << "over " << slices << " slices";
  // A write still wakes it at once: written just after a pass, it is read
  // within half a slice, long before the next timed pass would find it.
  const uint64_t before = watcher.watch_passes();
  while (watcher.watch_passes() == before) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const auto written = std::chrono::steady_clock::now();
  ASSERT_TRUE((*db)->Put("c", R"({"source":"x","target":"y","_replication_state":"failed"})").ok());
  while (watcher.Docs().size() < 3 &&
         std::chrono::steady_clock::now() - written < ReplicatorDb::kWatchSlice / 2) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(watcher.Docs().size(), 3u);
}

// A document whose job runs as someone who is not a server admin names
// local databases: CouchDB 3 takes no local endpoint (its jobs reach every
// database by HTTP, as their user_ctx), and settee's read and write the
// engine directly, past the databases' _security. Such a job fails with
// CouchDB's reason and copies nothing; a server admin's runs.
TEST(ReplicatorDb, OnlyServerAdminsJobsUseLocalEndpoints) {
  TempStore store(StoreOptions::Backend::kMemory);
  auto secret = store->CreateDatabase("secret");
  ASSERT_TRUE(secret.ok());
  ASSERT_TRUE((*secret)->Put("plans", R"({"launch":"codes"})").ok());
  ASSERT_TRUE(store->CreateDatabase("mine").ok());
  auto db = store->CreateDatabase(ReplicatorDb::kName);
  ASSERT_TRUE(db.ok());
  ReplicationJobs jobs(store.get());
  ReplicatorDb watcher(store.get(), &jobs);
  watcher.Start();
  ASSERT_TRUE((*db)->Put("bob", R"({"source":"secret","target":"mine","user_ctx":{"name":"bob","roles":["dev"]}})")
                  .ok());
  ASSERT_TRUE((*db)->Put("admin", R"({"source":"secret","target":"copy","create_target":true})").ok());
  ASSERT_TRUE((*db)->Put("admin-ctx", R"({"source":"secret","target":"copy2","create_target":true,)"
                                      R"("user_ctx":{"name":"root","roles":["_admin"]}})")
                  .ok());
  std::map<std::string, ReplicatorDocState> states;
  const auto start = std::chrono::steady_clock::now();
  auto settled = [&] {
    states.clear();
    for (auto& d : watcher.Docs()) states[d.doc_id] = d;
    if (states.size() < 3) return false;
    for (auto& [id, d] : states) {
      if (d.state != "completed" && d.state != "failed") return false;
    }
    return true;
  };
  while (!settled() && std::chrono::steady_clock::now() - start < std::chrono::seconds(20)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(states["bob"].state, "failed");
  EXPECT_EQ(states["bob"].reason, "local_endpoints_not_supported");
  EXPECT_TRUE((*store->OpenDatabase("mine"))->Get("plans").status().IsNotFound());
  EXPECT_EQ(states["admin"].state, "completed") << states["admin"].reason;
  EXPECT_EQ(states["admin-ctx"].state, "completed") << states["admin-ctx"].reason;
  EXPECT_TRUE((*store->OpenDatabase("copy"))->Get("plans").ok());
}

}  // namespace
}  // namespace settee::replication
