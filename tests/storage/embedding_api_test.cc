// The public embedding API used the way an application would: only the
// headers in include/settee/, no internals.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "settee/store.h"

namespace {

TEST(EmbeddingApi, StoreDatabasesDocumentsQueriesAndListeners) {
  settee::StoreOptions options;
  options.backend = settee::StoreOptions::Backend::kMemory;
  auto store = settee::Store::Open(options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();

  auto db = (*store)->CreateDatabase("notes");
  ASSERT_TRUE(db.ok());
  EXPECT_EQ((std::vector<std::string>{"notes"}), (*store)->ListDatabases());

  // A listener sees commits from another thread.
  std::mutex mu;
  std::condition_variable cv;
  uint64_t seen = 0;
  uint64_t listener = (*db)->AddChangeListener([&](uint64_t seq) {
    std::lock_guard<std::mutex> lock(mu);
    seen = seq;
    cv.notify_all();
  });
  std::thread writer([&] {
    for (int i = 0; i < 3; ++i) {
      auto r = (*db)->Put("note-" + std::to_string(i), R"({"text":"hello"})");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
    }
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(30), [&] { return seen == 3; }));
  }
  writer.join();
  (*db)->RemoveChangeListener(listener);

  auto doc = (*db)->Get("note-1");
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(0u, doc->rfind(R"({"_id":"note-1","_rev":"1-)", 0)) << *doc;

  settee::AllDocsOptions all;
  all.start_key = "note-1";
  all.include_docs = true;
  settee::AllDocsResult rows;
  ASSERT_TRUE((*db)->AllDocs(all, &rows).ok());
  ASSERT_EQ(2u, rows.rows.size());
  EXPECT_EQ("note-1", rows.rows[0].id);

  uint64_t last_seq = 0;
  int changes = 0;
  ASSERT_TRUE((*db)->Changes({}, [&](const settee::ChangeRow&) { return ++changes < 2; },
                             &last_seq)
                  .ok());
  EXPECT_EQ(2, changes);
  EXPECT_EQ(2u, last_seq);

  // Errors are values carrying CouchDB's kind and reason.
  auto conflict = (*db)->Put("note-1", R"({"text":"again"})");
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ("conflict", conflict.status().ErrorName());
  EXPECT_TRUE((*store)->DeleteDatabase("notes").ok());
  EXPECT_EQ("not_found", (*db)->Get("note-1").status().ErrorName());
}

}  // namespace
