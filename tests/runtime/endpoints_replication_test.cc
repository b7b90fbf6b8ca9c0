// The replication entry points over HTTP: POST /_replicate (one-shot,
// continuous, cancel), /_active_tasks, /_scheduler/jobs, the _replicator
// database and /_scheduler/docs.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <thread>

#include "runtime/endpoints_views.h"
#include "storage/view_functions.h"
#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

class ReplicationEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override { Start({}); }
  void Start(TestServerConfig cfg) {
    client_.reset();
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
  }

  ClientResponse Req(const std::string& method, const std::string& path,
                     const std::string& body = {}, Headers headers = {}) {
    return client_->JsonRequest(method, path, body, std::move(headers));
  }
  void Seed(const std::string& db, int n) {
    ASSERT_EQ(Req("PUT", "/" + db).status, 201);
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(Req("PUT", "/" + db + "/d" + std::to_string(i), R"({"i":1})").status, 201);
    }
  }
  int DocCount(const std::string& db) {
    auto r = Req("GET", "/" + db);
    if (r.status != 200) return -1;
    return ParseJson(r.body)["doc_count"].GetInt();
  }
  // A server with the admin admin:pw whose _replicator has the user bob
  // (password bobpw, roles `roles_json`) as a member; admin_ and bob_ are
  // their credentials.
  void StartWithMemberBob(const std::string& roles_json) {
    TestServerConfig cfg;
    cfg.couch.admins = {{"admin", "pw"}};
    Start(cfg);
    ASSERT_EQ(Req("PUT", "/_replicator", "", admin_).status, 201);
    ASSERT_EQ(Req("PUT", "/_replicator/_security", R"({"members":{"names":["bob"]}})", admin_).status, 200);
    ASSERT_EQ(Req("PUT", "/_users/org.couchdb.user:bob",
                  R"({"name":"bob","password":"bobpw","roles":)" + roles_json + R"(,"type":"user"})", admin_)
                  .status,
              201);
  }
  const Headers admin_ = {{"Authorization", BasicAuth("admin", "pw")}};
  const Headers bob_ = {{"Authorization", BasicAuth("bob", "bobpw")}};

  // Polls `pred` for up to two seconds.
  bool Eventually(const std::function<bool()>& pred) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pred();
  }
  std::string Url(const std::string& db) {
    return "http://127.0.0.1:" + std::to_string(server_->port()) + "/" + db;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(ReplicationEndpointsTest, OneShotAnswersWithTheCheckpointHistory) {
  Seed("a", 5);
  auto r = Req("POST", "/_replicate", R"({"source":"a","target":"b","create_target":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_TRUE(d["ok"].GetBool());
  EXPECT_EQ(d["replication_id_version"].GetInt(), 4);
  EXPECT_EQ(d["history"][0]["docs_written"].GetInt(), 5);
  EXPECT_EQ(DocCount("b"), 5);
  // Over HTTP to this same server, source given as {"url"}.
  r = Req("POST", "/_replicate",
          R"({"source":{"url":")" + Url("a") + R"("},"target":")" + Url("c") +
              R"(","create_target":true})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(DocCount("c"), 5);
  // Nothing new: still ok.
  r = Req("POST", "/_replicate", R"({"source":"a","target":"b"})");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ReplicationEndpointsTest, ContinuousShowsInTasksAndSchedulerAndCancels) {
  Seed("a", 1);
  ASSERT_EQ(Req("PUT", "/b").status, 201);
  auto r = Req("POST", "/_replicate", R"({"source":"a","target":"b","continuous":true})");
  ASSERT_EQ(r.status, 202) << r.body;
  std::string id = Str(ParseJson(r.body), "_local_id");
  EXPECT_TRUE(id.ends_with("+continuous")) << id;
  EXPECT_TRUE(Eventually([&] { return DocCount("b") == 1; }));
  ASSERT_EQ(Req("PUT", "/a/later", "{}").status, 201);
  EXPECT_TRUE(Eventually([&] { return DocCount("b") == 2; }));

  auto tasks = ParseJson(Req("GET", "/_active_tasks").body);
  ASSERT_EQ(tasks.Size(), 1u);
  EXPECT_EQ(Str(tasks[0], "type"), "replication");
  EXPECT_EQ(Str(tasks[0], "replication_id"), id);
  EXPECT_TRUE(tasks[0]["continuous"].GetBool());
  EXPECT_TRUE(tasks[0].HasMember("docs_written"));
  auto jobs = ParseJson(Req("GET", "/_scheduler/jobs").body);
  EXPECT_EQ(jobs["total_rows"].GetInt(), 1);
  EXPECT_EQ(Str(jobs["jobs"][0], "id"), id);
  EXPECT_EQ(Str(jobs["jobs"][0], "source"), "a");

  r = Req("POST", "/_replicate", R"({"replication_id":")" + id + R"(","cancel":true})");
  EXPECT_EQ(r.status, 200) << r.body;
  // Cancelled is gone at once, while its thread may still be stopping.
  r = Req("POST", "/_replicate", R"({"replication_id":")" + id + R"(","cancel":true})");
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(ParseJson(Req("GET", "/_scheduler/jobs").body)["total_rows"].GetInt(), 0);
  EXPECT_EQ(ParseJson(Req("GET", "/_active_tasks").body).Size(), 0u);
  EXPECT_TRUE(Eventually([&] {
    return ParseJson(Req("GET", "/_scheduler/jobs").body)["total_rows"].GetInt() == 0;
  }));
  r = Req("POST", "/_replicate", R"({"replication_id":")" + id + R"(","cancel":true})");
  EXPECT_EQ(r.status, 404) << r.body;
}

TEST_F(ReplicationEndpointsTest, BadRequestsGetCouchDbErrors) {
  Seed("a", 0);
  auto r = Req("POST", "/_replicate", R"({"target":"b"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "bad_request");
  // A filter whose design document is missing; filters that cannot be.
  EXPECT_EQ(Req("POST", "/_replicate", R"({"source":"a","target":"b","filter":"d/f"})").status,
            404);
  EXPECT_EQ(Req("POST", "/_replicate", R"({"source":"a","target":"b","filter":"nofilter"})").status,
            400);
  EXPECT_EQ(Req("POST", "/_replicate",
                R"({"source":"a","target":"b","selector":{"x":1},"doc_ids":["y"]})").status,
            400);
  EXPECT_EQ(Req("POST", "/_replicate", R"({"source":"a","target":"b","selector":{"x":{"$bad":1}}})").status,
            400);
  EXPECT_EQ(Req("POST", "/_replicate", "[]").status, 400);
  r = Req("POST", "/_replicate", R"({"source":"nope","target":"a"})");
  EXPECT_EQ(r.status, 404) << r.body;
  r = Req("POST", "/_replicate",
          R"({"source":"a","target":"http://127.0.0.1:1/x","retries_per_request":1})");
  EXPECT_EQ(r.status, 500) << r.body;  // unreachable, after bounded retries
}

TEST_F(ReplicationEndpointsTest, NeedsAServerAdmin) {
  TestServerConfig cfg;
  cfg.couch.admins = {{"admin", "pw"}};
  Start(cfg);
  EXPECT_EQ(Req("POST", "/_replicate", R"({"source":"a","target":"b"})").status, 401);
  EXPECT_EQ(Req("GET", "/_scheduler/jobs").status, 401);
  ASSERT_EQ(Req("PUT", "/a", "", {{"Authorization", BasicAuth("admin", "pw")}}).status, 201);
  auto r = Req("POST", "/_replicate",
               R"({"source":"a","target":{"url":")" + Url("b") +
                   R"(","headers":{"Authorization":")" + BasicAuth("admin", "pw") +
                   R"("}},"create_target":true})",
               {{"Authorization", BasicAuth("admin", "pw")}});
  EXPECT_EQ(r.status, 200) << r.body;
}

// Replicated into a local _users, each revision meets what an admin's
// write meets there (CouchDB runs couch_users_db's before_doc_update and
// the _auth validate function on replicated updates too): a plaintext
// password is hashed, a system role refused and counted as a failure.
TEST_F(ReplicationEndpointsTest, ReplicatingIntoUsersChecksAndHashesEachRevision) {
  TestServerConfig cfg;
  cfg.couch.admins = {{"admin", "pw"}};
  Start(cfg);
  ASSERT_EQ(Req("PUT", "/src", "", admin_).status, 201);
  ASSERT_EQ(Req("PUT", "/src/org.couchdb.user:ann", R"({"name":"ann","password":"annpw","roles":[],"type":"user"})",
                admin_)
                .status,
            201);
  ASSERT_EQ(Req("PUT", "/src/org.couchdb.user:eve",
                R"({"name":"eve","password":"evepw","roles":["_admin"],"type":"user"})", admin_)
                .status,
            201);
  auto r = Req("POST", "/_replicate", R"({"source":"src","target":"_users"})", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_EQ(d["history"][0]["docs_written"].GetInt(), 1) << r.body;
  EXPECT_EQ(d["history"][0]["doc_write_failures"].GetInt(), 1) << r.body;
  r = Req("GET", "/_users/org.couchdb.user:ann", "", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("annpw"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("derived_key"), std::string::npos) << r.body;
  EXPECT_EQ(Req("GET", "/_session", "", {{"Authorization", BasicAuth("ann", "annpw")}}).status, 200);
  EXPECT_EQ(Req("GET", "/_users/org.couchdb.user:eve", "", admin_).status, 404);
}

// Passes the documents whose body has "keep": what the design-doc filter
// "f/keep" would run in the JS runtime (the filter is mapped: an emit
// passes the document).
class KeepFilterFunctions : public views::ViewFunctions {
 public:
  Status Map(const views::MapCode&, const std::vector<std::string>& docs,
             std::string* out) override {
    *out = "[";
    for (size_t i = 0; i < docs.size(); ++i) {
      if (i) *out += ",";
      *out += docs[i].find("\"keep\"") != std::string::npos ? "[[[null,null]]]" : "[[]]";
    }
    *out += "]";
    return Status::OK();
  }
  Status Reduce(const views::MapCode&, const std::string&, std::string_view,
                std::string*) override {
    return Status::Internal("no reduce here");
  }
};

TEST_F(ReplicationEndpointsTest, ReplicatorDocumentsFoundAtStartUpUseFiltersSetUpByExtensions) {
  TestServerConfig cfg;
  cfg.setup = [](CouchServer& couch) {
    Store* store = couch.store();
    auto a = store->CreateDatabase("a");
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE((*a)->Put("kept", R"({"keep":true})").ok());
    ASSERT_TRUE((*a)->Put("dropped", R"({"other":true})").ok());
    ASSERT_TRUE(
        (*a)->Put("_design/f", R"({"filters":{"keep":"function (doc) { return doc.keep; }"}})")
            .ok());
    auto rep = store->CreateDatabase("_replicator");
    ASSERT_TRUE(rep.ok());
    ASSERT_TRUE((*rep)->Put("filtered", R"({"source":"a","target":"b","create_target":true,)"
                                        R"("filter":"f/keep"})")
                    .ok());
    // A watcher started before the end of setup would take the document up
    // now, without the view runtime the next line installs.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    couch.SetViewFunctions(std::make_shared<KeepFilterFunctions>());
  };
  Start(cfg);
  auto state = [&] {
    return Str(ParseJson(Req("GET", "/_replicator/filtered").body), "_replication_state");
  };
  EXPECT_TRUE(Eventually([&] { return state() == "completed"; })) << state();
  EXPECT_EQ(Req("GET", "/b/kept").status, 200);
  EXPECT_EQ(Req("GET", "/b/dropped").status, 404);
}

TEST_F(ReplicationEndpointsTest, ReplicatorDocumentsRunAndRecordTheirOutcome) {
  Seed("a", 3);
  ASSERT_EQ(Req("PUT", "/_replicator").status, 201);
  ASSERT_EQ(Req("PUT", "/_replicator/good",
                R"({"source":"a","target":"b","create_target":true})").status, 201);
  ASSERT_EQ(Req("PUT", "/_replicator/bad", R"({"source":"missing","target":"b"})").status, 201);
  auto state = [&](const std::string& id) {
    auto d = ParseJson(Req("GET", "/_replicator/" + id).body);
    return Str(d, "_replication_state");
  };
  EXPECT_TRUE(Eventually([&] { return state("good") == "completed"; }));
  EXPECT_EQ(DocCount("b"), 3);
  auto good = ParseJson(Req("GET", "/_replicator/good").body);
  EXPECT_EQ(good["_replication_stats"]["docs_written"].GetInt(), 3);
  EXPECT_TRUE(Eventually([&] { return state("bad") == "failed"; }));
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/bad").body), "_replication_state_reason"),
            "Database does not exist.");

  auto docs = ParseJson(Req("GET", "/_scheduler/docs").body);
  ASSERT_EQ(docs["total_rows"].GetInt(), 2);
  auto one = ParseJson(Req("GET", "/_scheduler/docs/_replicator/good").body);
  EXPECT_EQ(Str(one, "state"), "completed");
  EXPECT_EQ(Str(one, "doc_id"), "good");

  // A continuous document runs until it is deleted.
  ASSERT_EQ(Req("PUT", "/_replicator/live",
                R"({"source":"a","target":"c","create_target":true,"continuous":true})").status,
            201);
  EXPECT_TRUE(Eventually([&] { return DocCount("c") == 3; }));
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_scheduler/docs/_replicator/live").body), "state"),
            "running");
  auto rev = Str(ParseJson(Req("GET", "/_replicator/live").body), "_rev");
  ASSERT_EQ(Req("DELETE", "/_replicator/live?rev=" + rev).status, 200);
  EXPECT_TRUE(Eventually([&] {
    return ParseJson(Req("GET", "/_scheduler/jobs").body)["total_rows"].GetInt() == 0;
  }));
}

// CouchDB refuses a malformed replication document with 403 forbidden and
// its validate_doc_update's reason (replication/replicator_doc_check.h), on
// every write path, and does not store it; _bulk_docs answers it in its
// place and writes the others.
TEST_F(ReplicationEndpointsTest, MalformedReplicatorDocumentsAreRefused) {
  Seed("a", 2);
  ASSERT_EQ(Req("PUT", "/_replicator").status, 201);
  auto r = Req("PUT", "/_replicator/bad", R"({"source":"a","target":"b","continuous":"yes"})");
  EXPECT_EQ(r.status, 403) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_EQ(Str(d, "error"), "forbidden");
  EXPECT_EQ(Str(d, "reason"), "The `continuous' field must be a boolean.");
  EXPECT_EQ(Req("GET", "/_replicator/bad").status, 404);
  r = Req("POST", "/_replicator", R"({"_id":"posted","target":"b"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"),
            "The `source' property must exist and be either a string or an object.");
  EXPECT_EQ(Req("GET", "/_replicator/posted").status, 404);
  // A multipart/related PUT: its JSON part is checked before anything is written.
  r = client_->Request("PUT", "/_replicator/multi",
                       "--B\r\nContent-Type: application/json\r\n\r\n"
                       R"({"source":"a","target":"b","doc_ids":"d0"})"
                       "\r\n--B--",
                       {{"Content-Type", "multipart/related; boundary=B"}});
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "The `doc_ids' field must be an array of strings.");
  EXPECT_EQ(Req("GET", "/_replicator/multi").status, 404);

  r = Req("POST", "/_replicator/_bulk_docs",
          R"({"docs":[{"_id":"ok1","source":"a","target":"b1","create_target":true},)"
          R"({"_id":"no","source":"a","target":"b","filter":"f/g","selector":{}},)"
          R"({"_id":"ok2","source":{"url":")" + Url("a") + R"(","headers":{"X-A":"1"}},)"
          R"("target":"b2","create_target":true,"doc_ids":["d0"]}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto rows = ParseJson(r.body);
  ASSERT_EQ(rows.Size(), 3u) << r.body;
  EXPECT_EQ(Str(rows[0], "id"), "ok1");
  EXPECT_TRUE(rows[0]["ok"].GetBool());
  EXPECT_EQ(Str(rows[1], "id"), "no");
  EXPECT_EQ(Str(rows[1], "error"), "forbidden");
  EXPECT_EQ(Str(rows[1], "reason"), "`filter' field is incompatible with `selector' and `doc_ids'.");
  EXPECT_EQ(Str(rows[2], "id"), "ok2");
  EXPECT_TRUE(rows[2]["ok"].GetBool());
  EXPECT_EQ(Req("GET", "/_replicator/no").status, 404);
  // The documents accepted run.
  EXPECT_TRUE(Eventually([&] { return DocCount("b1") == 2 && DocCount("b2") == 1; }));

  // Exempt: design and _local documents, deletions, failed documents.
  EXPECT_EQ(Req("PUT", "/_replicator/_design/x", R"({"source":1})").status, 201);
  EXPECT_EQ(Req("PUT", "/_replicator/_local/x", R"({"source":1})").status, 201);
  EXPECT_EQ(Req("PUT", "/_replicator/gone", R"({"_deleted":true})").status, 201);
  EXPECT_EQ(Req("PUT", "/_replicator/given-up", R"({"source":1,"_replication_state":"failed"})").status, 201);
}

// A non-admin must name itself in user_ctx and claim only roles it holds.
TEST_F(ReplicationEndpointsTest, NonAdminReplicatorDocumentsRunAsTheirWriter) {
  StartWithMemberBob(R"(["ops"])");
  ASSERT_FALSE(HasFatalFailure());
  const Headers& admin = admin_;
  const Headers& bob = bob_;
  const std::string ends = R"("source":"http://127.0.0.1:1/a","target":"http://127.0.0.1:1/b")";
  auto r = Req("PUT", "/_replicator/r1", "{" + ends + "}", bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"),
            "The `user_ctx' property is missing (it is optional for admins only).");
  r = Req("PUT", "/_replicator/r2", "{" + ends + R"(,"user_ctx":{"name":"bob","roles":["_admin"]}})", bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Invalid role (`_admin') in the `user_ctx'");
  r = Req("PUT", "/_replicator/r3", "{" + ends + R"(,"user_ctx":{"name":"admin"}})", bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "The given `user_ctx.name' is not valid");
  r = Req("PUT", "/_replicator/r4", "{" + ends + R"(,"user_ctx":{"name":"bob","roles":["ops"]}})", bob);
  EXPECT_EQ(r.status, 201) << r.body;
  // An admin may leave user_ctx out.
  EXPECT_EQ(Req("PUT", "/_replicator/r5", "{" + ends + "}", admin).status, 201);
  // before_doc_update stamps each document with its writer as "owner"; a
  // non-admin may not write another's (the whole _bulk_docs request fails).
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/r4", "", admin).body), "owner"), "bob");
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/r5", "", admin).body), "owner"), "admin");
  const std::string other = "Can't update replication documents from other users.";
  const std::string bobs_ctx = R"(,"user_ctx":{"name":"bob"})";
  r = Req("PUT", "/_replicator/r7", "{" + ends + bobs_ctx + R"(,"owner":"admin"})", bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), other);
  r = Req("POST", "/_replicator/_bulk_docs",
          R"({"docs":[{"_id":"r8",)" + ends + bobs_ctx + R"(},{"_id":"r7",)" + ends + bobs_ctx + R"(,"owner":null}]})",
          bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), other);
  EXPECT_EQ(Req("GET", "/_replicator/r8", "", admin).status, 404);
  // An admin keeps the owner given.
  r = Req("PUT", "/_replicator/r9", "{" + ends + R"(,"owner":"carol"})", admin);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/r9", "", admin).body), "owner"), "carol");
  // A multipart/related PUT's JSON part is stamped too.
  Headers multipart = bob;
  multipart.emplace_back("Content-Type", "multipart/related; boundary=B");
  r = client_->Request("PUT", "/_replicator/r10",
                       "--B\r\nContent-Type: application/json\r\n\r\n{" + ends + bobs_ctx + "}\r\n--B--", multipart);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/r10", "", admin).body), "owner"), "bob");
  EXPECT_EQ(Req("PUT", "/_replicator/r6", "{" + ends + R"(,"user_ctx":{"name":"carol"}})", admin).status, 201);

  // Deletions: only an admin or the user a document runs as (its stored
  // user_ctx.name), by DELETE, a PUT of _deleted and _bulk_docs. The
  // replicator records outcomes in these documents meanwhile, so each try
  // takes the current revision and a conflict tries again.
  const std::string reason =
      "Replication documents can only be deleted by admins or by the users who created them.";
  auto current_rev = [&](const std::string& id) {
    return Str(ParseJson(Req("GET", "/_replicator/" + id, "", admin).body), "_rev");
  };
  auto retried = [&](auto write) {
    ClientResponse res;
    for (int i = 0; i < 20; ++i) {
      res = write();
      if (res.status != 409 && res.body.find("conflict") == std::string::npos) break;
    }
    return res;
  };
  for (const char* id : {"r5", "r6"}) {
    r = retried([&] { return Req("DELETE", std::string("/_replicator/") + id + "?rev=" + current_rev(id), "", bob); });
    EXPECT_EQ(r.status, 403) << id << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), reason) << id;
    r = retried([&] {
      return Req("PUT", std::string("/_replicator/") + id, R"({"_deleted":true,"_rev":")" + current_rev(id) + "\"}", bob);
    });
    EXPECT_EQ(r.status, 403) << id << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), reason) << id;
  }
  // _bulk_docs answers the refusal in its place and deletes bob's own.
  r = retried([&] {
    return Req("POST", "/_replicator/_bulk_docs",
               R"({"docs":[{"_id":"r6","_deleted":true,"_rev":")" + current_rev("r6") +
                   R"("},{"_id":"r4","_deleted":true,"_rev":")" + current_rev("r4") + "\"}]}",
               bob);
  });
  ASSERT_EQ(r.status, 201) << r.body;
  auto rows = ParseJson(r.body);
  ASSERT_TRUE(rows.IsArray() && rows.Size() == 2) << r.body;
  EXPECT_EQ(Str(rows[0], "error"), "forbidden");
  EXPECT_EQ(Str(rows[0], "reason"), reason);
  EXPECT_TRUE(rows[1].HasMember("ok")) << r.body;
  EXPECT_EQ(Req("GET", "/_replicator/r4", "", admin).status, 404);
  EXPECT_EQ(Req("GET", "/_replicator/r6", "", admin).status, 200);
  // An admin deletes anyone's.
  r = retried([&] { return Req("DELETE", "/_replicator/r6?rev=" + current_rev("r6"), "", admin); });
  EXPECT_EQ(r.status, 200) << r.body;
}

// CouchDB's after_doc_read (couch_replicator_docs): a reader who is neither an
// admin of _replicator nor the document's owner gets it without the
// credentials in its endpoints, under a revision id of its own, on every
// read path.
TEST_F(ReplicationEndpointsTest, OthersReplicatorDocumentsAreReadWithoutCredentials) {
  TestServerConfig cfg;
  cfg.couch.admins = {{"admin", "pw"}};
  cfg.setup = [](CouchServer& server) { RegisterViewEndpoints(server, nullptr); };
  Start(cfg);
  Headers admin = {{"Authorization", BasicAuth("admin", "pw")}};
  Headers bob = {{"Authorization", BasicAuth("bob", "bobpw")}};
  Headers dave = {{"Authorization", BasicAuth("dave", "davepw")}};
  ASSERT_EQ(Req("PUT", "/_replicator", "", admin).status, 201);
  ASSERT_EQ(Req("PUT", "/_replicator/_security",
                R"({"members":{"names":["bob"]},"admins":{"names":["dave"]}})", admin)
                .status,
            200);
  for (const char* name : {"bob", "dave"}) {
    const std::string n = name;
    ASSERT_EQ(Req("PUT", "/_users/org.couchdb.user:" + n,
                  R"({"name":")" + n + R"(","password":")" + n + R"(pw","roles":[],"type":"user"})", admin)
                  .status,
              201);
  }
  // Marked failed, so the replicator leaves them (and their revisions) alone.
  // Carol's secret is "secret" (c2VjcmV0 in base64), bob's "bobsown".
  auto body = [](const std::string& secret, const std::string& encoded) {
    return R"("source":"http://u:)" + secret + R"(@127.0.0.1:1/a","target":{"url":"http://127.0.0.1:1/b",)"
           R"("headers":{"Authorization":"Basic )" + encoded + R"("},"auth":{"basic":{"password":")" + secret +
           R"("}}},"_replication_state":"failed")";
  };
  auto r = Req("PUT", "/_replicator/carols", "{" + body("secret", "c2VjcmV0") + R"(,"owner":"carol"})", admin);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string carols_rev = Str(ParseJson(r.body), "rev");
  r = Req("PUT", "/_replicator/bobs", "{" + body("bobsown", "Ym9ic293bg==") + R"(,"user_ctx":{"name":"bob"}})", bob);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string bobs_rev = Str(ParseJson(r.body), "rev");
  auto has_secret = [](const std::string& text) {
    return text.find("secret") != std::string::npos || text.find("c2VjcmV0") != std::string::npos;
  };

  // GET: stripped for bob; whole for the owner, a server admin, a db admin.
  r = Req("GET", "/_replicator/carols", "", bob);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(has_secret(r.body)) << r.body;
  auto doc = ParseJson(r.body);
  EXPECT_EQ(Str(doc, "source"), "http://127.0.0.1:1/a");
  EXPECT_EQ(json::Serialize(doc["target"]), R"({"url":"http://127.0.0.1:1/b"})");
  EXPECT_EQ(Str(doc, "owner"), "carol");
  const std::string stripped_rev = Str(doc, "_rev");
  EXPECT_EQ(stripped_rev.substr(0, 2), "1-");
  EXPECT_NE(stripped_rev, carols_rev);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + stripped_rev + "\"");
  // The same stripped revision id every time.
  EXPECT_EQ(Str(ParseJson(Req("GET", "/_replicator/carols?revs=true", "", bob).body), "_rev"), stripped_rev);
  r = Req("GET", "/_replicator/bobs", "", bob);
  EXPECT_NE(r.body.find("bobsown"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("Ym9ic293bg=="), std::string::npos) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "_rev"), bobs_rev);
  for (const Headers* whole : {&admin, &dave}) {
    r = Req("GET", "/_replicator/carols", "", *whole);
    EXPECT_TRUE(has_secret(r.body)) << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "_rev"), carols_rev);
  }

  // An index (a db admin's design document): _find reads through it, and
  // its view answers include_docs.
  r = Req("POST", "/_replicator/_index",
          R"({"index":{"fields":["owner"]},"ddoc":"idx","name":"by_owner","type":"json"})", dave);
  ASSERT_EQ(r.status, 200) << r.body;

  // Every other way bob reads carol's document.
  for (const auto& [method, path, req_body] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/_replicator/carols?open_revs=all", ""},
           {"GET", "/_replicator/carols?open_revs=[\"" + carols_rev + "\"]", ""},
           {"POST", "/_replicator/_bulk_get", R"({"docs":[{"id":"carols"}]})"},
           {"POST", "/_replicator/_find", R"({"selector":{"owner":"carol"}})"},
           {"GET", "/_replicator/_design/idx/_view/by_owner?include_docs=true&reduce=false", ""},
       }) {
    r = Req(method, path, req_body, bob);
    EXPECT_EQ(r.status, 200) << path << r.body;
    EXPECT_NE(r.body.find("carols"), std::string::npos) << path << r.body;
    EXPECT_FALSE(has_secret(r.body)) << path << r.body;
    EXPECT_NE(r.body.find(stripped_rev), std::string::npos) << path << r.body;
  }
  // The multipart answers: open_revs as multipart/mixed, a document with
  // its attachments as multipart/related.
  for (const auto& [path, accept] : std::vector<std::pair<std::string, std::string>>{
           {"/_replicator/carols?open_revs=all", "multipart/mixed"},
           {"/_replicator/carols?attachments=true", "multipart/related"},
       }) {
    Headers h = bob;
    h.emplace_back("Accept", accept);
    r = client_->Request("GET", path, "", h);
    EXPECT_EQ(r.status, 200) << path << r.body;
    EXPECT_NE(r.HeaderOr("content-type").find(accept), std::string::npos) << path;
    EXPECT_FALSE(has_secret(r.body)) << path << r.body;
    EXPECT_NE(r.body.find(stripped_rev), std::string::npos) << path << r.body;
  }
  // A selector on the credentials finds nothing: _find matches the stripped
  // document, as CouchDB's does.
  r = Req("POST", "/_replicator/_find", R"({"selector":{"_id":"carols","target.headers":{"$exists":true}}})", bob);
  EXPECT_EQ(ParseJson(r.body)["docs"].Size(), 0u) << r.body;
  r = Req("POST", "/_replicator/_find", R"({"selector":{"_id":"carols","target.headers":{"$exists":true}}})", admin);
  EXPECT_EQ(ParseJson(r.body)["docs"].Size(), 1u) << r.body;
  // _all_docs and _changes are the server admins' (chttpd_auth_request),
  // whose documents are whole.
  for (const char* path : {"/_replicator/_all_docs?include_docs=true", "/_replicator/_changes?include_docs=true"}) {
    r = Req("GET", path, "", bob);
    EXPECT_EQ(r.status, 401) << path << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), "You are not a server admin.") << path;
    EXPECT_EQ(Req("GET", path, "", dave).status, 401) << path;
    r = Req("GET", path, "", admin);
    EXPECT_EQ(r.status, 200) << path << r.body;
    EXPECT_TRUE(has_secret(r.body)) << path << r.body;
  }
  EXPECT_EQ(Req("POST", "/_replicator/_all_docs", R"({"keys":["carols"]})", bob).status, 401);

  // A later revision's stripped id is of its generation, on its parent;
  // _revisions names it at the head and the stored history below it.
  r = Req("PUT", "/_replicator/carols",
          "{" + body("secret", "c2VjcmV0") + R"(,"owner":"carol","_rev":")" + carols_rev + "\"}", admin);
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string second = Str(ParseJson(r.body), "rev");
  doc = ParseJson(Req("GET", "/_replicator/carols?revs=true", "", bob).body);
  const std::string stripped_second = Str(doc, "_rev");
  EXPECT_EQ(stripped_second.substr(0, 2), "2-");
  EXPECT_NE(stripped_second, second);
  EXPECT_NE(stripped_second.substr(2), stripped_rev.substr(2));
  ASSERT_TRUE(doc.HasMember("_revisions"));
  EXPECT_EQ(json::Serialize(doc["_revisions"]),
            R"({"start":2,"ids":[")" + stripped_second.substr(2) + R"(",")" + carols_rev.substr(2) + "\"]}");
  // _revs_info lists the stored revisions: CouchDB's doc_meta_info reads it
  // from the revision tree, beside the #doc after_doc_read rewrote, so only
  // _rev (and _revisions) carry the stripped id.
  doc = ParseJson(Req("GET", "/_replicator/carols?revs_info=true", "", bob).body);
  EXPECT_EQ(Str(doc, "_rev"), stripped_second);
  ASSERT_TRUE(doc.HasMember("_revs_info"));
  EXPECT_EQ(json::Serialize(doc["_revs_info"]), R"([{"rev":")" + second + R"(","status":"available"},)"
                                                R"({"rev":")" + carols_rev + R"(","status":"available"}])");
}

// CouchDB's COPY opens the source as the requester reads it (couch_doc_open
// with their user_ctx, through after_doc_read) and writes that #doc under
// the new id through before_doc_update.
TEST_F(ReplicationEndpointsTest, NonOwnersCopyReplicatorDocumentsAsTheyReadThem) {
  StartWithMemberBob("[]");
  // Marked failed, so the replicator leaves them alone.
  const std::string secret = R"({"source":"http://u:secret@127.0.0.1:1/a","target":{"url":"http://127.0.0.1:1/b",)"
                             R"("headers":{"Authorization":"Basic c2VjcmV0"}},"_replication_state":"failed")";
  auto has_secret = [](const std::string& text) {
    return text.find("secret") != std::string::npos || text.find("c2VjcmV0") != std::string::npos;
  };
  // Another user's document keeps its owner in the stripped copy, which
  // before_doc_update refuses: nothing is written.
  auto r = Req("PUT", "/_replicator/carols", secret + R"(,"owner":"carol"})", admin_);
  ASSERT_EQ(r.status, 201) << r.body;
  Headers h = bob_;
  h.emplace_back("Destination", "carols_copy");
  r = Req("COPY", "/_replicator/carols", "", h);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Can't update replication documents from other users.");
  EXPECT_EQ(Req("GET", "/_replicator/carols_copy", "", admin_).status, 404);
  // A document with no owner (from before CouchDB stamped one, or written
  // by the node itself: here straight into the store) is nobody's: bob
  // reads it stripped, and his copy, stamped his, is what he read.
  auto db = server_->store()->OpenDatabase("_replicator");
  ASSERT_TRUE(db.ok());
  auto put = (*db)->Put("legacy", secret + "}");
  ASSERT_TRUE(put.ok() && put->status.ok());
  r = Req("GET", "/_replicator/legacy", "", bob_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(has_secret(r.body)) << r.body;
  h = bob_;
  h.emplace_back("Destination", "legacy_copy");
  r = Req("COPY", "/_replicator/legacy", "", h);
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("GET", "/_replicator/legacy_copy", "", admin_);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(has_secret(r.body)) << r.body;
  auto doc = ParseJson(r.body);
  EXPECT_EQ(Str(doc, "owner"), "bob");
  EXPECT_EQ(Str(doc, "source"), "http://127.0.0.1:1/a");
  EXPECT_EQ(json::Serialize(doc["target"]), R"({"url":"http://127.0.0.1:1/b"})");
  // The admin's copy is whole.
  h = admin_;
  h.emplace_back("Destination", "admins_copy");
  ASSERT_EQ(Req("COPY", "/_replicator/legacy", "", h).status, 201);
  EXPECT_TRUE(has_secret(Req("GET", "/_replicator/admins_copy", "", admin_).body));
}

// CouchDB's before_doc_update stamps a deletion too: its tombstone keeps
// {"owner": the deleter's name}, whichever way it is written (chttpd_db's
// DELETE writes {"_deleted":true} through the same hook).
TEST_F(ReplicationEndpointsTest, DeletionsKeepTheirOwnerInTheTombstone) {
  StartWithMemberBob("[]");
  ASSERT_FALSE(HasFatalFailure());
  const Headers& admin = admin_;
  const Headers& bob = bob_;
  // Marked failed, so the replicator leaves their revisions alone.
  const std::string doc =
      R"({"source":"http://127.0.0.1:1/a","target":"http://127.0.0.1:1/b","user_ctx":{"name":"bob"},)"
      R"("_replication_state":"failed"})";
  std::map<std::string, std::string> revs;
  for (const char* id : {"d1", "d2", "d3", "d4", "d5"}) {
    auto r = Req("PUT", std::string("/_replicator/") + id, doc, bob);
    ASSERT_EQ(r.status, 201) << r.body;
    revs[id] = Str(ParseJson(r.body), "rev");
  }
  // The tombstone's body as stored, read by an admin at its revision.
  auto tombstone = [&](const std::string& id, const ClientResponse& r) {
    EXPECT_TRUE(r.status == 200 || r.status == 201) << id << r.body;
    auto answer = ParseJson(r.body);
    auto rows = answer.IsArray() ? ParseJson(json::Serialize(answer[0])) : ParseJson(r.body);
    auto got = ParseJson(Req("GET", "/_replicator/" + id + "?rev=" + Str(rows, "rev"), "", admin).body);
    got.RemoveMember("_rev");
    return json::Serialize(got);
  };
  EXPECT_EQ(tombstone("d1", Req("DELETE", "/_replicator/d1?rev=" + revs["d1"], "", bob)),
            R"({"_id":"d1","owner":"bob","_deleted":true})");
  EXPECT_EQ(tombstone("d2", Req("PUT", "/_replicator/d2", R"({"_deleted":true,"_rev":")" + revs["d2"] + "\"}", bob)),
            R"({"_id":"d2","owner":"bob","_deleted":true})");
  EXPECT_EQ(tombstone("d3", Req("POST", "/_replicator/_bulk_docs",
                                R"({"docs":[{"_id":"d3","_deleted":true,"_rev":")" + revs["d3"] + "\"}]}", bob)),
            R"({"_id":"d3","owner":"bob","_deleted":true})");
  // An admin's deletion is stamped with the admin's name.
  EXPECT_EQ(tombstone("d4", Req("DELETE", "/_replicator/d4?rev=" + revs["d4"], "", admin)),
            R"({"_id":"d4","owner":"admin","_deleted":true})");
  // A deletion naming another owner is another user's write.
  auto r = Req("PUT", "/_replicator/d5", R"({"_deleted":true,"owner":"carol","_rev":")" + revs["d5"] + "\"}", bob);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Can't update replication documents from other users.");
  // A rev-less DELETE is still the write's conflict.
  EXPECT_EQ(Req("DELETE", "/_replicator/d5", "", bob).status, 409);
}

}  // namespace
}  // namespace settee::testing
