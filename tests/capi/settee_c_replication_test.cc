// The C API's replication calls (capi/settee_c_replication.cc) through
// libsettee.so: one-shot and continuous replications between databases of
// a store and to and from a real `settee serve` child over HTTP, status,
// wait, cancel, a store closed under running replications, and misuse.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "settee/settee.h"
#include "tests/capi/capi_test_util.h"
#ifdef SETTEE_BINARY
#include "tests/replication/serve_child.h"
#endif

namespace {

using settee_test::Err;
using settee_test::Str;
using testing::HasSubstr;

// A replication handle that frees itself.
struct Rep {
  settee_replication* p = nullptr;
  ~Rep() { settee_replication_free(p); }
  settee_replication** out() {
    settee_replication_free(p);
    p = nullptr;
    return &p;
  }
};

class CReplication : public testing::TestWithParam<settee_backend> {
 protected:
  void SetUp() override {
    settee_store_options o;
    settee_store_options_init(&o);
    o.backend = GetParam();
    dir_ = testing::TempDir() + "/settee_capi_repl_" + std::to_string(getpid());
    o.path = dir_.c_str();
    Err e;
    ASSERT_EQ(settee_store_open(&o, &store_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_create(store_, "src", &src_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_bulk_docs(src_,
                                  R"([{"_id":"a","type":"note"},{"_id":"b","type":"task"},)"
                                  R"({"_id":"c","type":"note"}])",
                                  1, nullptr, &e),
              SETTEE_OK);
  }
  void TearDown() override {
    settee_db_free(src_);
    settee_store_free(store_);
    if (GetParam() == SETTEE_BACKEND_LEVELDB) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // The ids in database `name`, as a JSON array, or "<code>".
  std::string Ids(const char* name) {
    settee_db* db = nullptr;
    Err e;
    if (settee_db_open(store_, name, &db, &e) != SETTEE_OK) return settee_code_name(e.e.code);
    Str all;
    settee_code c = settee_db_all_docs(db, nullptr, all.out(), &e);
    settee_db_free(db);
    if (c != SETTEE_OK) return settee_code_name(c);
    std::string ids = "[";
    for (size_t at = all.str().find("\"id\":\""); at != std::string::npos;
         at = all.str().find("\"id\":\"", at + 1)) {
      size_t end = all.str().find('"', at + 6);
      ids += (ids.size() > 1 ? "," : "") + all.str().substr(at + 6, end - at - 6);
    }
    return ids + "]";
  }
  // Waits up to 10 s for database `name` to hold `ids`.
  bool Eventually(const char* name, const std::string& ids) {
    for (int i = 0; i < 400; ++i) {
      if (Ids(name) == ids) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    return false;
  }
  int State(settee_replication* rep) {
    int state = -1;
    Err e;
    EXPECT_EQ(settee_replication_status(rep, &state, nullptr, &e), SETTEE_OK) << e.message();
    return state;
  }

  std::string dir_;
  settee_store* store_ = nullptr;
  settee_db* src_ = nullptr;
};

TEST_P(CReplication, OneShotCopiesEverythingAndReportsIt) {
  Err e;
  Rep rep;
  ASSERT_EQ(settee_replication_start(store_, "src", "dst", R"({"create_target":true})", rep.out(), &e),
            SETTEE_OK)
      << e.message();
  ASSERT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_OK) << e.message();
  EXPECT_EQ(Ids("dst"), "[a,b,c]");
  int state = -1;
  Str status;
  ASSERT_EQ(settee_replication_status(rep.p, &state, status.out(), &e), SETTEE_OK);
  EXPECT_EQ(state, SETTEE_REPLICATION_COMPLETED);
  EXPECT_THAT(status.str(), HasSubstr(R"("source":"src","target":"dst","continuous":false,"state":"completed",)"
                                      R"("docs_read":3,"docs_written":3,"doc_write_failures":0,)"));
  EXPECT_THAT(status.str(), HasSubstr(R"("checkpointed_source_seq":3,)"));
  EXPECT_THAT(status.str(), testing::Not(HasSubstr("\"error\"")));

  // Run again: it resumes from its checkpoint and has nothing to do.
  ASSERT_EQ(settee_db_put(src_, "d", "{}", nullptr, nullptr, &e), SETTEE_OK);
  ASSERT_EQ(settee_replication_start(store_, "src", "dst", nullptr, rep.out(), &e), SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_OK) << e.message();
  ASSERT_EQ(settee_replication_status(rep.p, nullptr, status.out(), &e), SETTEE_OK);
  EXPECT_THAT(status.str(), HasSubstr(R"("docs_read":1,"docs_written":1,)"));
  EXPECT_EQ(Ids("dst"), "[a,b,c,d]");
}

TEST_P(CReplication, OptionsFilterWhatIsCopied) {
  Err e;
  Rep rep;
  ASSERT_EQ(settee_replication_start(store_, "src", "ids", R"({"create_target":true,"doc_ids":["c","zz"]})",
                                     rep.out(), &e),
            SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_OK) << e.message();
  EXPECT_EQ(Ids("ids"), "[c]");
  ASSERT_EQ(settee_replication_start(store_, "src", "sel", R"({"create_target":true,"selector":{"type":"note"}})",
                                     rep.out(), &e),
            SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_OK) << e.message();
  EXPECT_EQ(Ids("sel"), "[a,c]");
  if (settee_has_js()) {  // a design-document filter runs on the store's view threads
    ASSERT_EQ(settee_db_put(src_, "_design/f",
                            R"({"filters":{"tasks":"function (doc, req) { return doc.type === req.query.t; }"}})",
                            nullptr, nullptr, &e),
              SETTEE_OK);
    ASSERT_EQ(settee_replication_start(store_, "src", "flt",
                                       R"({"create_target":true,"filter":"f/tasks","query_params":{"t":"task"}})",
                                       rep.out(), &e),
              SETTEE_OK)
        << e.message();
    ASSERT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_OK) << e.message();
    EXPECT_EQ(Ids("flt"), "[b]");
  }
}

TEST_P(CReplication, ContinuousFollowsUntilCancelled) {
  Err e;
  Rep rep;
  ASSERT_EQ(settee_replication_start(store_, "src", "live", R"({"continuous":true,"create_target":true})",
                                     rep.out(), &e),
            SETTEE_OK);
  ASSERT_TRUE(Eventually("live", "[a,b,c]"));
  ASSERT_EQ(settee_db_put(src_, "d", "{}", nullptr, nullptr, &e), SETTEE_OK);
  ASSERT_TRUE(Eventually("live", "[a,b,c,d]"));
  EXPECT_EQ(settee_replication_wait(rep.p, 50, &e), SETTEE_ERR_TIMEOUT);
  EXPECT_EQ(e.message(), "the replication is still running");
  EXPECT_THAT(State(rep.p), testing::AnyOf(SETTEE_REPLICATION_RUNNING, SETTEE_REPLICATION_PAUSED));
  Str status;
  ASSERT_EQ(settee_replication_status(rep.p, nullptr, status.out(), &e), SETTEE_OK);
  EXPECT_THAT(status.str(), HasSubstr("\"continuous\":true"));

  // The same replication again is the running one.
  Rep again;
  ASSERT_EQ(settee_replication_start(store_, "src", "live", R"({"create_target":true,"continuous":true})",
                                     again.out(), &e),
            SETTEE_OK);
  Str status2;
  ASSERT_EQ(settee_replication_status(again.p, nullptr, status2.out(), &e), SETTEE_OK);
  EXPECT_EQ(status2.str().substr(0, 60), status.str().substr(0, 60));  // the replication_id

  ASSERT_EQ(settee_replication_cancel(rep.p, &e), SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(rep.p, 10000, &e), SETTEE_OK) << e.message();
  EXPECT_EQ(State(rep.p), SETTEE_REPLICATION_CANCELLED);
  EXPECT_EQ(settee_replication_wait(again.p, 10000, &e), SETTEE_OK);
  EXPECT_EQ(settee_replication_cancel(rep.p, &e), SETTEE_OK);  // idempotent
}

TEST_P(CReplication, FailuresEndTheWaitWithTheirCode) {
  Err e;
  Rep rep;
  ASSERT_EQ(settee_replication_start(store_, "nope", "dst", nullptr, rep.out(), &e), SETTEE_OK);
  EXPECT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_ERR_NOT_FOUND);
  int state = -1;
  Str status;
  ASSERT_EQ(settee_replication_status(rep.p, &state, status.out(), &e), SETTEE_OK);
  EXPECT_EQ(state, SETTEE_REPLICATION_FAILED);
  EXPECT_THAT(status.str(), HasSubstr(R"("state":"failed")"));
  EXPECT_THAT(status.str(), HasSubstr(R"("error":{"error":"not_found","reason":)"));
  // Without create_target a missing target is an error too.
  ASSERT_EQ(settee_replication_start(store_, "src", "absent", nullptr, rep.out(), &e), SETTEE_OK);
  EXPECT_EQ(settee_replication_wait(rep.p, 0, &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(Ids("absent"), "not_found");
}

TEST_P(CReplication, StartRejectsBadInput) {
  Err e;
  Rep rep;
  auto start = [&](settee_store* s, const char* src, const char* dst, const char* options) {
    settee_code c = settee_replication_start(s, src, dst, options, rep.out(), &e);
    EXPECT_EQ(rep.p, nullptr);
    return c;
  };
  EXPECT_EQ(start(nullptr, "src", "dst", nullptr), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "store is NULL");
  EXPECT_EQ(start(store_, nullptr, "dst", nullptr), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(start(store_, "src", nullptr, nullptr), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(start(store_, "src\xff", "dst", nullptr), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(start(store_, "src", "dst", "{\"doc_ids\":[\"\xc3\"]}"), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(start(store_, "src", "dst", "{nope"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(start(store_, "src", "dst", "[]"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(e.message(), "options_json must be a JSON object");
  EXPECT_EQ(start(store_, "src", "dst", R"({"source":"x"})"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(start(store_, "src", "dst", R"({"cancel":true})"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(start(store_, "src", "dst", R"({"continuous":"yes"})"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(start(store_, "src", "dst", R"({"doc_ids":["a"],"selector":{}})"), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(start(store_, "src", "dst", R"({"selector":{"n":{"$nope":1}}})"), SETTEE_ERR_INVALID_OPERATOR);
  EXPECT_EQ(start(store_, "src", "dst", R"({"filter":"f/none"})"), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(start(store_, "Bad", "dst", nullptr), SETTEE_ERR_ILLEGAL_DATABASE_NAME);
  EXPECT_EQ(start(store_, "src", "ftp://host/db", nullptr), SETTEE_ERR_ILLEGAL_DATABASE_NAME);
  EXPECT_EQ(settee_replication_start(store_, "src", "dst", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(Ids("dst"), "not_found");  // nothing ran

  EXPECT_EQ(settee_replication_status(nullptr, nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "rep is NULL");
  EXPECT_EQ(settee_replication_wait(nullptr, 0, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_replication_cancel(nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  settee_replication_free(nullptr);
}

TEST_P(CReplication, ClosingTheStoreStopsItsReplications) {
  Err e;
  Rep live, done;
  ASSERT_EQ(settee_replication_start(store_, "src", "one", R"({"create_target":true})", done.out(), &e),
            SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(done.p, 0, &e), SETTEE_OK);
  ASSERT_EQ(settee_replication_start(store_, "src", "live", R"({"continuous":true,"create_target":true})",
                                     live.out(), &e),
            SETTEE_OK);
  ASSERT_TRUE(Eventually("live", "[a,b,c]"));
  // A waiter on another thread is woken by the close.
  settee_code waited = SETTEE_OK;
  std::thread waiter([&] { waited = settee_replication_wait(live.p, 0, nullptr); });
  ASSERT_EQ(settee_store_close(store_, &e), SETTEE_OK);
  waiter.join();
  EXPECT_EQ(waited, SETTEE_ERR_CLOSED);
  for (settee_replication* r : {live.p, done.p}) {
    EXPECT_EQ(settee_replication_status(r, nullptr, nullptr, &e), SETTEE_ERR_CLOSED);
    EXPECT_EQ(e.message(), "the store is closed");
    EXPECT_EQ(settee_replication_wait(r, 0, &e), SETTEE_ERR_CLOSED);
    EXPECT_EQ(settee_replication_cancel(r, &e), SETTEE_ERR_CLOSED);
  }
  Rep after;
  EXPECT_EQ(settee_replication_start(store_, "src", "dst", nullptr, after.out(), &e), SETTEE_ERR_CLOSED);
  // The handles are freed after their store's close (by Rep), as they must be.
}

INSTANTIATE_TEST_SUITE_P(Backends, CReplication, testing::Values(SETTEE_BACKEND_MEMORY, SETTEE_BACKEND_LEVELDB),
                         [](const auto& info) {
                           return info.param == SETTEE_BACKEND_MEMORY ? "memory" : "leveldb";
                         });

#ifdef SETTEE_BINARY
// Both directions with a real server: the store's database to a URL
// (created there), then back from it into a new local database.
TEST(CReplicationHttp, ToAndFromAServer) {
  settee::testing::ServeChild server(
      SETTEE_BINARY, testing::TempDir() + "/capi_repl_serve_" + std::to_string(getpid()) + ".log");
  const std::string url = server.Url();
  ASSERT_FALSE(url.empty()) << "settee serve did not start: " << server.Log();
  settee_store_options o;
  settee_store_options_init(&o);
  o.backend = SETTEE_BACKEND_MEMORY;
  settee_store* store = nullptr;
  Err e;
  ASSERT_EQ(settee_store_open(&o, &store, &e), SETTEE_OK);
  ASSERT_EQ(settee_db_create(store, "local", nullptr, &e), SETTEE_OK);
  settee_db* local = nullptr;
  ASSERT_EQ(settee_db_open(store, "local", &local, &e), SETTEE_OK);
  ASSERT_EQ(settee_db_put(local, "x", R"({"n":1})", nullptr, nullptr, &e), SETTEE_OK);
  ASSERT_EQ(settee_db_put(local, "y", R"({"n":2})", nullptr, nullptr, &e), SETTEE_OK);

  Rep push, pull;
  ASSERT_EQ(settee_replication_start(store, "local", (url + "/remote").c_str(), R"({"create_target":true})",
                                     push.out(), &e),
            SETTEE_OK)
      << e.message();
  ASSERT_EQ(settee_replication_wait(push.p, 30000, &e), SETTEE_OK) << e.message();
  Str status;
  ASSERT_EQ(settee_replication_status(push.p, nullptr, status.out(), &e), SETTEE_OK);
  EXPECT_THAT(status.str(), HasSubstr("\"target\":\"" + url + "/remote/\""));
  EXPECT_THAT(status.str(), HasSubstr(R"("docs_written":2,)"));

  ASSERT_EQ(settee_replication_start(store, (url + "/remote").c_str(), "back", R"({"create_target":true})",
                                     pull.out(), &e),
            SETTEE_OK);
  ASSERT_EQ(settee_replication_wait(pull.p, 30000, &e), SETTEE_OK) << e.message();
  settee_db* back = nullptr;
  ASSERT_EQ(settee_db_open(store, "back", &back, &e), SETTEE_OK);
  Str doc;
  ASSERT_EQ(settee_db_get(back, "y", nullptr, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr(R"("n":2)"));
  settee_db_free(back);
  settee_db_free(local);

  // A server that is not there fails a one-shot replication.
  ASSERT_EQ(settee_replication_start(store, (url + "/missing").c_str(), "gone", R"({"retries_per_request":0})",
                                     pull.out(), &e),
            SETTEE_OK);
  EXPECT_EQ(settee_replication_wait(pull.p, 30000, &e), SETTEE_ERR_NOT_FOUND) << e.message();
  settee_store_free(store);
}
#endif

}  // namespace
