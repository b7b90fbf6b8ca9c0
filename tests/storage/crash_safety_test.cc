// Crash safety: a child process writes with sync on and reports every
// acknowledged write over a pipe; the parent kills it with SIGKILL at an
// arbitrary point, reopens the store and checks that every acknowledged
// write is there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "settee/store.h"
#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

[[noreturn]] void ChildWriter(const std::string& path, int ack_fd) {
  StoreOptions options;
  options.backend = StoreOptions::Backend::kLevelDB;
  options.path = path;
  options.sync = true;
  auto store = Store::Open(options);
  if (!store.ok()) _exit(2);
  auto db = (*store)->OpenDatabase("crash");
  if (!db.ok()) _exit(3);
  for (int i = 0;; ++i) {
    std::string id = "doc" + std::to_string(i);
    std::vector<std::string> bodies;
    // Alternate single puts and bulk writes: both must be durable when acked.
    if (i % 2 == 0) {
      if (!(*db)->Put(id, R"({"n":)" + std::to_string(i) + "}").ok()) _exit(4);
    } else {
      std::string a = R"({"_id":")" + id + R"(","n":)" + std::to_string(i) + "}";
      std::vector<DocUpdateResult> results;
      if (!(*db)->BulkDocs({a}, {}, &results).ok() || !results[0].status.ok()) _exit(5);
    }
    int32_t acked = i;
    if (write(ack_fd, &acked, sizeof acked) != sizeof acked) _exit(6);
  }
}

TEST(CrashSafety, AcknowledgedSyncWritesSurviveSigkill) {
  std::string path = testing::FreshTempDir("crash");
  {
    StoreOptions options;
    options.backend = StoreOptions::Backend::kLevelDB;
    options.path = path;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok());
    ASSERT_TRUE((*store)->CreateDatabase("crash").ok());
  }
  for (int round = 0; round < 3; ++round) {
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      ChildWriter(path, fds[1]);
    }
    close(fds[1]);
    // Let the child acknowledge a varying number of writes, then kill it
    // mid-flight (it is always in the middle of its next write).
    int32_t last_acked = -1;
    const int target = 50 + round * 75;
    while (last_acked < target) {
      int32_t v;
      ssize_t n = read(fds[0], &v, sizeof v);
      ASSERT_EQ(static_cast<ssize_t>(sizeof v), n) << "child died early";
      last_acked = v;
    }
    kill(pid, SIGKILL);
    // Acks already in the pipe were also acknowledged before the kill.
    int32_t v;
    while (read(fds[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) last_acked = v;
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);

    StoreOptions options;
    options.backend = StoreOptions::Backend::kLevelDB;
    options.path = path;
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto db = (*store)->OpenDatabase("crash");
    ASSERT_TRUE(db.ok());
    for (int i = 0; i <= last_acked; ++i) {
      auto doc = (*db)->Get("doc" + std::to_string(i));
      ASSERT_TRUE(doc.ok()) << "acknowledged write doc" << i << " lost in round " << round;
    }
    auto info = (*db)->Info();
    ASSERT_TRUE(info.ok());
    EXPECT_GE(info->doc_count, static_cast<uint64_t>(last_acked + 1));
    EXPECT_EQ(info->doc_count, info->update_seq) << "counters agree with the documents";
    // Next round starts over on a fresh database.
    ASSERT_TRUE((*store)->DeleteDatabase("crash").ok());
    ASSERT_TRUE((*store)->CreateDatabase("crash").ok());
  }
  std::filesystem::remove_all(path);
}

}  // namespace
}  // namespace settee
