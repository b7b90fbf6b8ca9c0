// Crash safety: a child process writes (with sync on, and without: a killed
// process must not lose an acknowledged write either way, only a power
// loss may without sync) and reports every acknowledged write over a pipe;
// the parent kills it with SIGKILL at an arbitrary point, reopens the store
// and checks that every acknowledged write is there.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "settee/store.h"
#include "tests/storage/store_test_util.h"

namespace settee {
namespace {

StoreOptions LevelDBAt(const std::string& path, bool sync = false) {
  StoreOptions options;
  options.backend = StoreOptions::Backend::kLevelDB;
  options.path = path;
  options.sync = sync;
  return options;
}

[[noreturn]] void ChildWriter(const std::string& path, bool sync, int ack_fd) {
  auto store = Store::Open(LevelDBAt(path, sync));
  if (!store.ok()) _exit(2);
  auto db = (*store)->OpenDatabase("crash");
  if (!db.ok()) _exit(3);
  for (int i = 0;; ++i) {
    std::string id = "doc" + std::to_string(i);
    std::vector<std::string> bodies;
    // Alternate single puts and bulk writes: both must be durable when acked.
    // Every tenth write is a batch of 30 documents of 2 KiB (a log record of
    // more than two 32 KiB blocks, which the log writes with pwritev rather
    // than through its mapping, storage/leveldb_env.h).
    if (i % 10 == 5) {
      std::vector<std::string> docs;
      for (int k = 0; k < 30; ++k) {
        std::string pad(2048, 'a');
        for (size_t c = 0; c < pad.size(); ++c) pad[c] = static_cast<char>('a' + (c * 7 + k + i) % 26);
        docs.push_back(R"({"_id":")" + (k == 0 ? id : id + "." + std::to_string(k)) + R"(","p":")" +
                       pad + R"("})");
      }
      std::vector<std::string_view> views(docs.begin(), docs.end());
      std::vector<DocUpdateResult> results;
      if (!(*db)->BulkDocs(views, {}, &results).ok() || results.size() != docs.size()) _exit(5);
      for (const auto& r : results) {
        if (!r.status.ok()) _exit(5);
      }
    } else if (i % 2 == 0) {
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

// Forks a child that runs `child(ack_fd)` (it never returns) and writes an
// int32 over the pipe after each acknowledged write; once it has
// acknowledged `target`, kills it with SIGKILL in the middle of its next
// write. *last_acked: the last acknowledgement it sent (those still in the
// pipe were sent before the kill too).
void KillChildAfter(const std::function<void(int)>& child, int target, int32_t* last_acked) {
  int fds[2];
  ASSERT_EQ(0, pipe(fds));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    child(fds[1]);
    _exit(99);  // not reached: the child writes until it is killed
  }
  close(fds[1]);
  *last_acked = -1;
  while (*last_acked < target) {
    int32_t v;
    ASSERT_EQ(static_cast<ssize_t>(sizeof v), read(fds[0], &v, sizeof v)) << "child died early";
    *last_acked = v;
  }
  kill(pid, SIGKILL);
  int32_t v;
  while (read(fds[0], &v, sizeof v) == static_cast<ssize_t>(sizeof v)) *last_acked = v;
  close(fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);
}

// A LevelDB store at `path` with the database "crash" the children write.
void CreateCrashDatabase(const std::string& path) {
  auto store = Store::Open(LevelDBAt(path));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->CreateDatabase("crash").ok());
}

void CheckWritesSurviveSigkill(bool sync) {
  std::string path = testing::FreshTempDir("crash");
  CreateCrashDatabase(path);
  if (::testing::Test::HasFatalFailure()) return;
  for (int round = 0; round < 3; ++round) {
    // A varying number of acknowledged writes before each kill.
    int32_t last_acked;
    KillChildAfter([&](int ack_fd) { ChildWriter(path, sync, ack_fd); }, 50 + round * 75, &last_acked);
    if (::testing::Test::HasFatalFailure()) return;

    auto store = Store::Open(LevelDBAt(path));
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto db = (*store)->OpenDatabase("crash");
    ASSERT_TRUE(db.ok());
    for (int i = 0; i <= last_acked; ++i) {
      auto doc = (*db)->Get("doc" + std::to_string(i));
      ASSERT_TRUE(doc.ok()) << "acknowledged write doc" << i << " lost in round " << round;
      if (i % 10 == 5) {
        ASSERT_TRUE((*db)->Get("doc" + std::to_string(i) + ".29").ok()) << "batch " << i;
      }
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

TEST(CrashSafety, AcknowledgedSyncWritesSurviveSigkill) { CheckWritesSurviveSigkill(true); }

// Without sync the log is appended through a memory mapping
// (storage/leveldb_env.h): a killed process leaves its pages in the page
// cache, and a log whose mapped tail is still zeros.
TEST(CrashSafety, AcknowledgedWritesSurviveSigkillWithoutSync) { CheckWritesSurviveSigkill(false); }

// Counters after a crash: a batch's counters ride in its last change block
// (docs/storage_format.md), so whatever the crash cut, the reopened
// database's counters must be exactly what its documents say. The child
// creates, edits and deletes, alone and in bulk batches of several, then
// dies. (It stays within one memtable: a forked child has none of the
// parent's threads, and LevelDB's background thread, once started in this
// process, would never flush for it.)
[[noreturn]] void ChildMixedWriter(const std::string& path, int round, int ack_fd) {
  auto store = Store::Open(LevelDBAt(path));
  if (!store.ok()) _exit(2);
  auto db = (*store)->OpenDatabase("crash");
  if (!db.ok()) _exit(3);
  std::vector<std::string> revs;  // of doc<i>, "" once deleted
  for (int i = 0;; ++i) {
    const std::string prefix = "r" + std::to_string(round) + "doc";
    const std::string id = prefix + std::to_string(i);
    const std::string pad(i % 40, 'x');  // bodies of varied sizes
    if (i % 4 == 3) {
      // A bulk batch of several: this doc, an edit and a deletion of older ones.
      std::vector<std::string> docs{R"({"_id":")" + id + R"(","p":")" + pad + R"("})"};
      const int edit = i - 2, gone = i - 3;
      if (!revs[edit].empty()) {
        docs.push_back(R"({"_id":")" + prefix + std::to_string(edit) + R"(","_rev":")" + revs[edit] +
                       R"(","p":"edited)" + pad + R"("})");
      }
      if (!revs[gone].empty()) {
        docs.push_back(R"({"_id":")" + prefix + std::to_string(gone) + R"(","_rev":")" + revs[gone] +
                       R"(","_deleted":true})");
      }
      std::vector<std::string_view> views(docs.begin(), docs.end());
      std::vector<DocUpdateResult> results;
      if (!(*db)->BulkDocs(views, {}, &results).ok()) _exit(5);
      for (const auto& r : results) if (!r.status.ok()) _exit(5);
      revs.push_back(results[0].rev);
      if (docs.size() > 1 && !revs[edit].empty()) revs[edit] = results[1].rev;
      if (!revs[gone].empty()) revs[gone].clear();
    } else {
      auto r = (*db)->Put(id, R"({"p":")" + pad + R"("})");
      if (!r.ok()) _exit(4);
      revs.push_back(r->rev);
      if (i % 4 == 2 && !revs[i - 1].empty()) {  // an edit alone
        auto e = (*db)->Put(prefix + std::to_string(i - 1),
                            R"({"_rev":")" + revs[i - 1] + R"(","p":"again"})");
        if (!e.ok()) _exit(4);
        revs[i - 1] = e->rev;
      }
    }
    int32_t acked = i;
    if (write(ack_fd, &acked, sizeof acked) != sizeof acked) _exit(6);
  }
}

TEST(CrashSafety, CountersAfterSigkillAgreeWithTheDocuments) {
  std::string path = testing::FreshTempDir("crash-counters");
  const StoreOptions options = LevelDBAt(path);
  CreateCrashDatabase(path);
  if (::testing::Test::HasFatalFailure()) return;
  // Rounds go on writing the same database (ids of their own): each starts
  // from what the last crash left, its counters recovered from the newest
  // block.
  for (int round = 0; round < 3; ++round) {
    int32_t last_acked;
    KillChildAfter([&](int ack_fd) { ChildMixedWriter(path, round, ack_fd); }, 400 + round * 500, &last_acked);
    if (::testing::Test::HasFatalFailure()) return;

    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto db = (*store)->OpenDatabase("crash");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    auto info = (*db)->Info();
    ASSERT_TRUE(info.ok());
    uint64_t live = 0, deleted = 0, newest = 0, last_seq = 0;
    ASSERT_TRUE((*db)->Changes({}, [&](const ChangeRow& r) {
      (r.deleted ? deleted : live) += 1;
      newest = std::max(newest, r.seq);
      return true;
    }, &last_seq).ok());
    EXPECT_EQ(live, info->doc_count) << "round " << round;
    EXPECT_EQ(deleted, info->doc_del_count) << "round " << round;
    EXPECT_EQ(newest, info->update_seq) << "round " << round;
    EXPECT_EQ(newest, last_seq) << "round " << round;
    EXPECT_GT(info->sizes_external, 0u);
  }
  std::filesystem::remove_all(path);
}

// Purges under SIGKILL: a purge writes a document's record (or its
// deletion), its revision bodies, change blocks, obsolete markers, purge
// infos and the counters key in one batch, so whatever the kill cut, the
// reopened database has each purge whole or not at all. The child gives
// each document two branches, purges one (the document stays, with a new
// change) and, in the same request, the last branch of the previous one
// (which disappears), acknowledging each purge.
[[noreturn]] void ChildPurger(const std::string& path, int ack_fd) {
  auto store = Store::Open(LevelDBAt(path));
  if (!store.ok()) _exit(2);
  auto db = (*store)->OpenDatabase("crash");
  if (!db.ok()) _exit(3);
  const std::string a(32, 'a'), b(32, 'b');
  UpdateOptions repl;
  repl.new_edits = false;
  for (int i = 0;; ++i) {
    const std::string id = "p" + std::to_string(i);
    const std::string pad(i % 50, 'x');
    for (const std::string* h : {&a, &b}) {
      if (!(*db)->Put(id, R"({"_id":")" + id + R"(","_rev":"1-)" + *h + R"(","p":")" + pad + R"("})", repl).ok()) {
        _exit(4);
      }
    }
    std::vector<PurgeRequest> req{{id, {"1-" + (i % 2 ? a : b)}}};
    // The branch the previous request left of the previous document.
    if (i > 0) req.push_back({"p" + std::to_string(i - 1), {"1-" + ((i - 1) % 2 ? b : a)}});
    std::vector<PurgeResult> out;
    if (!(*db)->Purge(req, &out).ok() || out[0].purged.size() != 1) _exit(5);
    if (i > 0 && !out[1].doc_removed) _exit(5);
    int32_t acked = i;
    if (write(ack_fd, &acked, sizeof acked) != sizeof acked) _exit(6);
  }
}

TEST(CrashSafety, PurgesAfterSigkillAreWholeOrAbsent) {
  std::string path = testing::FreshTempDir("crash-purge");
  CreateCrashDatabase(path);
  if (::testing::Test::HasFatalFailure()) return;
  int32_t last_acked;
  KillChildAfter([&](int ack_fd) { ChildPurger(path, ack_fd); }, 150, &last_acked);
  if (::testing::Test::HasFatalFailure()) return;
  auto store = Store::Open(LevelDBAt(path));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  auto db = (*store)->OpenDatabase("crash");
  ASSERT_TRUE(db.ok());
  // Every acknowledged purge of a document's last branch holds.
  for (int i = 0; i < last_acked; ++i) {
    auto doc = (*db)->Get("p" + std::to_string(i));
    ASSERT_TRUE(doc.status().IsNotFound()) << "p" << i << " came back";
  }
  EXPECT_GE((*db)->PurgeSeq(), static_cast<uint64_t>(2 * last_acked + 1));
  // Counters, changes and records agree: no purge was cut in half.
  auto info = (*db)->Info();
  ASSERT_TRUE(info.ok());
  uint64_t live = 0, newest = 0, last_seq = 0;
  ASSERT_TRUE((*db)->Changes({}, [&](const ChangeRow& r) {
    ++live;
    newest = std::max(newest, r.seq);
    auto doc = (*db)->Get(r.id);
    EXPECT_TRUE(doc.ok()) << r.id;
    if (doc.ok()) {
      EXPECT_NE(doc->find(r.revs[0]), std::string::npos) << r.id;
    }
    return true;
  }, &last_seq).ok());
  EXPECT_EQ(live, info->doc_count);
  EXPECT_EQ(info->doc_del_count, 0u);
  EXPECT_LE(newest, info->update_seq);
  EXPECT_EQ(last_seq, info->update_seq);
  AllDocsResult all;
  ASSERT_TRUE((*db)->AllDocs({}, &all).ok());
  EXPECT_EQ(all.rows.size(), info->doc_count);
  // Purged documents have exactly one branch left; only the one the kill
  // caught between its writes and its purge may still have two.
  for (const AllDocsRow& row : all.rows) {
    std::vector<OpenRevResult> leaves;
    ASSERT_TRUE((*db)->GetOpenRevs(row.id, {}, {}, &leaves).ok());
    const int index = std::stoi(row.id.substr(1));
    EXPECT_LE(index, last_acked + 1) << row.id;
    if (index <= last_acked) {
      EXPECT_EQ(leaves.size(), 1u) << row.id;
    }
  }
  std::filesystem::remove_all(path);
}

// The same with concurrent writers: kWriterThreads threads, two per
// database, group-committed together, each acknowledging (thread, index)
// over the pipe (writes of 8 bytes to a pipe are atomic).
constexpr int kWriterThreads = 4;
constexpr int kCrashDatabases = 2;

std::string CrashDbName(int t) { return "crash" + std::to_string(t % kCrashDatabases); }

[[noreturn]] void ConcurrentChildWriters(const std::string& path, int ack_fd) {
  auto store = Store::Open(LevelDBAt(path, true));
  if (!store.ok()) _exit(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      auto db = (*store)->OpenDatabase(CrashDbName(t));
      if (!db.ok()) _exit(3);
      for (int32_t i = 0;; ++i) {
        std::string id = "t" + std::to_string(t) + "_" + std::to_string(i);
        if (i % 2 == 0) {
          if (!(*db)->Put(id, R"({"n":)" + std::to_string(i) + "}").ok()) _exit(4);
        } else {
          std::string a = R"({"_id":")" + id + R"(","n":)" + std::to_string(i) + "}";
          std::vector<DocUpdateResult> results;
          if (!(*db)->BulkDocs({a}, {}, &results).ok() || !results[0].status.ok()) _exit(5);
        }
        int32_t ack[2] = {t, i};
        if (write(ack_fd, ack, sizeof ack) != sizeof ack) _exit(6);
      }
    });
  }
  for (auto& th : threads) th.join();
  _exit(7);
}

TEST(CrashSafety, AcknowledgedConcurrentWritesSurviveSigkill) {
  std::string path = testing::FreshTempDir("crash-mt");
  auto open = [&] {
    return Store::Open(LevelDBAt(path));
  };
  {
    auto store = open();
    ASSERT_TRUE(store.ok());
    for (int d = 0; d < kCrashDatabases; ++d) {
      ASSERT_TRUE((*store)->CreateDatabase(CrashDbName(d)).ok());
    }
  }
  for (int round = 0; round < 2; ++round) {
    int fds[2];
    ASSERT_EQ(0, pipe(fds));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      ConcurrentChildWriters(path, fds[1]);
    }
    close(fds[1]);
    std::vector<int32_t> last_acked(kWriterThreads, -1);
    int acks = 0;
    const int target = 200 + round * 150;
    int32_t ack[2];
    while (acks < target) {
      ASSERT_EQ(static_cast<ssize_t>(sizeof ack), read(fds[0], ack, sizeof ack)) << "child died early";
      last_acked.at(ack[0]) = ack[1];
      ++acks;
    }
    kill(pid, SIGKILL);
    while (read(fds[0], ack, sizeof ack) == static_cast<ssize_t>(sizeof ack)) last_acked.at(ack[0]) = ack[1];
    close(fds[0]);
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    ASSERT_TRUE(WIFSIGNALED(wstatus)) << "child exited with " << WEXITSTATUS(wstatus);

    auto store = open();
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    for (int t = 0; t < kWriterThreads; ++t) {
      auto db = (*store)->OpenDatabase(CrashDbName(t));
      ASSERT_TRUE(db.ok());
      for (int i = 0; i <= last_acked[t]; ++i) {
        auto doc = (*db)->Get("t" + std::to_string(t) + "_" + std::to_string(i));
        ASSERT_TRUE(doc.ok()) << "acknowledged write of thread " << t << " #" << i
                              << " lost in round " << round;
      }
    }
    for (int d = 0; d < kCrashDatabases; ++d) {
      auto db = (*store)->OpenDatabase(CrashDbName(d));
      ASSERT_TRUE(db.ok());
      auto info = (*db)->Info();
      ASSERT_TRUE(info.ok());
      uint64_t acked = 0;
      for (int t = d; t < kWriterThreads; t += kCrashDatabases) acked += last_acked[t] + 1;
      EXPECT_GE(info->doc_count, acked);
      EXPECT_EQ(info->doc_count, info->update_seq) << "counters agree with the documents";
      uint64_t listed = 0, last_seq = 0;
      ASSERT_TRUE((*db)->Changes({}, [&](const ChangeRow&) { return ++listed, true; }, &last_seq).ok());
      EXPECT_EQ(listed, info->doc_count) << "every document in the feed once";
      ASSERT_TRUE((*store)->DeleteDatabase(CrashDbName(d)).ok());
      ASSERT_TRUE((*store)->CreateDatabase(CrashDbName(d)).ok());
    }
  }
  std::filesystem::remove_all(path);
}

}  // namespace
}  // namespace settee
