// Replication between local databases and a settee server over HTTP
// (HttpEndpoint + HttpClient against an in-process CouchServer on loopback).
#include "replication/http_endpoint.h"

#include <thread>

#include <gtest/gtest.h>

#include "replication/local_endpoint.h"
#include "replication/replicator.h"
#include "tests/replication/replication_test_util.h"
#include "tests/runtime/couch_test_util.h"
#include "tests/storage/store_test_util.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::replication {
namespace {

using settee::testing::ExpectSameDatabases;
using settee::testing::TempStore;
using settee::testing::TestServer;
using settee::testing::TestServerConfig;

class HttpEndpointTest : public ::testing::Test {
 protected:
  HttpEndpointTest() : local_(StoreOptions::Backend::kMemory) {}

  void StartServer(TestServerConfig cfg = {}) { server_ = std::make_unique<TestServer>(cfg); }

  std::string RemoteUrl(const std::string& db, const std::string& userinfo = "") {
    return "http://" + userinfo + "127.0.0.1:" + std::to_string(server_->port()) + "/" + db;
  }

  std::unique_ptr<Endpoint> Remote(const std::string& db, HttpEndpointOptions options = {},
                                   const std::string& userinfo = "") {
    auto url = ParseUrl(RemoteUrl(db, userinfo));
    EXPECT_TRUE(url.ok());
    return std::make_unique<HttpEndpoint>(*url, options);
  }
  std::unique_ptr<Endpoint> Local(const std::string& db) {
    return std::make_unique<LocalEndpoint>(local_.get(), db);
  }

  std::shared_ptr<Database> LocalDb(const std::string& name) {
    auto db = local_->OpenDatabase(name);
    if (!db.ok()) db = local_->CreateDatabase(name);
    return *db;
  }
  std::shared_ptr<Database> RemoteDb(const std::string& name) {
    auto db = server_->store()->OpenDatabase(name);
    EXPECT_TRUE(db.ok()) << name;
    return db.ok() ? *db : nullptr;
  }

  ReplicationOptions Options() {
    ReplicationOptions o;
    o.server_uuid = local_->uuid();
    o.initial_backoff = std::chrono::milliseconds(10);
    return o;
  }

  ReplicationStats Run(std::unique_ptr<Endpoint> from, std::unique_ptr<Endpoint> to,
                       ReplicationOptions options, Status* result = nullptr) {
    Replicator r(std::move(from), std::move(to), options);
    Status s = r.Run();
    if (result) *result = s;
    else EXPECT_TRUE(s.ok()) << s.ToString();
    return r.Stats();
  }

  std::string Put(Database& db, const std::string& id, const std::string& body) {
    auto r = db.Put(id, body);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->rev : "";
  }

  // Conflicts, a deletion, a long history, a design doc and a _local doc.
  void Seed(Database& db) {
    for (int i = 0; i < 120; ++i) Put(db, "doc" + std::to_string(i), R"({"i":1})");
    std::string rev = Put(db, "long", "{}");
    for (int i = 0; i < 40; ++i) rev = Put(db, "long", R"({"_rev":")" + rev + "\"}");
    std::string gone = Put(db, "gone", "{}");
    ASSERT_TRUE(db.Delete("gone", gone).ok());
    Put(db, "_design/app", R"({"language":"javascript"})");
    Put(db, "_local/private", "{}");
    // Two branches of one doc, as a replicated write brings them.
    std::vector<DocUpdateResult> results;
    UpdateOptions repl;
    repl.new_edits = false;
    ASSERT_TRUE(db.BulkDocs({R"({"_id":"split","_rev":"1-aaaa","v":1})",
                             R"({"_id":"split","_rev":"1-bbbb","v":2})"},
                            repl, &results)
                    .ok());
  }

  TempStore local_;
  std::unique_ptr<TestServer> server_;
};

TEST_F(HttpEndpointTest, PushThenPullOverHttpKeepsEveryTree) {
  StartServer();
  auto a = LocalDb("a");
  Seed(*a);
  auto options = Options();
  options.create_target = true;
  options.batch_size = 50;
  auto pushed = Run(Local("a"), Remote("remote"), options);
  EXPECT_EQ(pushed.state, ReplicationState::kCompleted);
  EXPECT_EQ(pushed.docs_written, 125u);  // 120 + long + gone + design + 2 branches
  ExpectSameDatabases(*a, *RemoteDb("remote"));
  EXPECT_TRUE(RemoteDb("remote")->Get("_local/private").status().IsNotFound());

  auto pulled = Run(Remote("remote"), Local("b"), [&] {
    auto o = Options();
    o.create_target = true;
    return o;
  }());
  EXPECT_EQ(pulled.docs_written, 125u);
  ExpectSameDatabases(*a, *LocalDb("b"));
  // Checkpoints landed on both sides, the server's under the same id.
  Replicator probe(Remote("remote"), Local("b"), [&] {
    auto o = Options();
    o.create_target = true;
    return o;
  }());
  EXPECT_TRUE(RemoteDb("remote")->Get("_local/" + probe.id()).ok());
  EXPECT_TRUE(LocalDb("b")->Get("_local/" + probe.id()).ok());
  // And a second run has nothing to do.
  auto again = Run(Remote("remote"), Local("b"), [&] {
    auto o = Options();
    o.create_target = true;
    return o;
  }());
  EXPECT_EQ(again.missing_checked, 0u);
}

TEST_F(HttpEndpointTest, OpenRevsFallbackGivesTheSameResult) {
  StartServer();
  Seed(*LocalDb("a"));
  auto options = Options();
  options.create_target = true;
  Run(Local("a"), Remote("remote"), options);
  HttpEndpointOptions no_bulk_get;
  no_bulk_get.bulk_get = false;
  auto stats = Run(Remote("remote", no_bulk_get), Local("b"), options);
  EXPECT_EQ(stats.docs_written, 125u);
  ExpectSameDatabases(*LocalDb("a"), *LocalDb("b"));
}

// A 1 MB attachment replicated, its document edited without touching it,
// replicated again: the second run fetches no attachment body, whether it
// pulls with _bulk_get or open_revs, or pushes (the server takes the stub
// under new_edits=false), and both sides end identical.
TEST_F(HttpEndpointTest, AttsSinceKeepsKnownAttachmentBodiesOffTheWire) {
  StartServer();
  std::string big(1 << 20, '\0');
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>((i * 7919) >> 3);
  auto edit = [](Database& db) {
    auto doc = db.Get("doc");
    ASSERT_TRUE(doc.ok());
    json::Document d;
    ASSERT_TRUE(json::Parse(*doc, &d).ok());
    d.AddMember("edited", d.HasMember("edited") ? d["edited"].GetInt() + 1 : 1, d.GetAllocator());
    ASSERT_TRUE(db.Put("doc", json::Serialize(d)).ok());
  };
  auto replicate = [&](std::unique_ptr<Endpoint> from, std::unique_ptr<Endpoint> to) {
    auto options = Options();
    options.create_target = true;
    Replicator r(std::move(from), std::move(to), options);
    size_t fetched = 0;
    r.SetListener([&](const ReplicationEvent& e) {
      if (e.kind == ReplicationEvent::Kind::kChange) fetched += e.docs_json.size();
    });
    EXPECT_TRUE(r.Run().ok());
    EXPECT_EQ(r.Stats().doc_write_failures, 0u);
    EXPECT_EQ(r.Stats().docs_written, 1u);
    return fetched;
  };
  // Push: the server is the target.
  auto a = LocalDb("a");
  ASSERT_TRUE(a->PutAttachment("doc", "big.bin", "", "application/octet-stream", big).ok());
  EXPECT_GT(replicate(Local("a"), Remote("remote")), big.size());
  edit(*a);
  EXPECT_LT(replicate(Local("a"), Remote("remote")), 2000u);
  ExpectSameDatabases(*a, *RemoteDb("remote"));
  // Pull with _bulk_get, then with open_revs.
  EXPECT_GT(replicate(Remote("remote"), Local("b")), big.size());
  edit(*RemoteDb("remote"));
  EXPECT_LT(replicate(Remote("remote"), Local("b")), 2000u);
  ExpectSameDatabases(*RemoteDb("remote"), *LocalDb("b"));
  HttpEndpointOptions no_bulk_get;
  no_bulk_get.bulk_get = false;
  edit(*RemoteDb("remote"));
  EXPECT_LT(replicate(Remote("remote", no_bulk_get), Local("b")), 2000u);
  ExpectSameDatabases(*RemoteDb("remote"), *LocalDb("b"));
  auto reader = LocalDb("b")->OpenAttachment("doc", "big.bin");
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  std::string got;
  ASSERT_TRUE((*reader)->Read(0, UINT64_MAX, [&](std::string_view piece) {
    got.append(piece);
    return true;
  }).ok());
  EXPECT_EQ(got, big);
}

TEST_F(HttpEndpointTest, SelectorFiltersBothWaysOverHttp) {
  StartServer();
  auto a = LocalDb("a");
  for (int i = 0; i < 60; ++i) Put(*a, "d" + std::to_string(i), i % 2 ? R"({"n":1})" : R"({"n":2})");
  auto options = Options();
  options.create_target = true;
  options.batch_size = 7;
  ChangesFilterSpec spec;
  spec.selector = R"({"n":{"$gt":1}})";
  options.filter = spec;
  auto pushed = Run(Local("a"), Remote("remote"), options);
  EXPECT_EQ(pushed.docs_written, 30u);
  EXPECT_EQ(RemoteDb("remote")->Info()->doc_count, 30u);
  // Pulled back through the server's _changes?filter=_selector.
  RemoteDb("remote")->Put("odd", R"({"n":1})").ok();
  auto pulled = Run(Remote("remote"), Local("b"), options);
  EXPECT_EQ(pulled.docs_written, 30u);
  EXPECT_EQ(LocalDb("b")->Info()->doc_count, 30u);
  EXPECT_TRUE(LocalDb("b")->Get("odd").status().IsNotFound());
}

TEST_F(HttpEndpointTest, CredentialsInTheUrlOpenASession) {
  TestServerConfig cfg;
  cfg.couch.admins = {{"admin", "s3cret"}};
  StartServer(cfg);
  Put(*LocalDb("a"), "x", "{}");
  auto options = Options();
  options.create_target = true;
  auto stats = Run(Local("a"), Remote("secured", {}, "admin:s3cret@"), options);
  EXPECT_EQ(stats.docs_written, 1u);
  HttpEndpointOptions basic;
  basic.http.cookie_session = false;
  stats = Run(Remote("secured", basic, "admin:s3cret@"), Local("b"), options);
  EXPECT_EQ(stats.docs_written, 1u);

  Status s;
  stats = Run(Local("a"), Remote("secured", {}, "admin:wrong@"), options, &s);
  EXPECT_EQ(s.code(), Status::Code::kUnauthorized) << s.ToString();
  EXPECT_EQ(stats.state, ReplicationState::kFailed);
  EXPECT_EQ(stats.retries, 1u);  // not retried
  // Without credentials the server refuses too.
  stats = Run(Remote("secured"), Local("c"), options, &s);
  EXPECT_EQ(s.code(), Status::Code::kUnauthorized) << s.ToString();
}

TEST_F(HttpEndpointTest, UnreachableServerFailsAfterBoundedRetries) {
  auto url = ParseUrl("http://127.0.0.1:1/db");  // nothing listens on port 1
  ASSERT_TRUE(url.ok());
  LocalDb("a");
  auto options = Options();
  options.retries = 2;
  std::atomic<int> paused{0};
  Replicator r(Local("a"), std::make_unique<HttpEndpoint>(*url), options);
  r.SetListener([&](const ReplicationEvent& e) {
    if (e.kind == ReplicationEvent::Kind::kPaused && !e.error.ok()) ++paused;
  });
  Status s = r.Run();
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_EQ(r.Stats().state, ReplicationState::kFailed);
  EXPECT_EQ(r.Stats().retries, 3u);
  EXPECT_EQ(paused.load(), 2);
}

TEST_F(HttpEndpointTest, MissingRemoteDatabaseIsAClearError) {
  StartServer();
  Status s;
  auto stats = Run(Remote("nope"), Local("b"), Options(), &s);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_EQ(s.reason(), "Database does not exist.");
  EXPECT_EQ(stats.state, ReplicationState::kFailed);
}

TEST_F(HttpEndpointTest, ContinuousPullDeliversWithinASecondAndCancelsPromptly) {
  StartServer();
  ASSERT_TRUE(server_->store()->CreateDatabase("remote").ok());
  auto remote = RemoteDb("remote");
  auto b = LocalDb("b");
  auto options = Options();
  options.continuous = true;
  Replicator r(Remote("remote"), Local("b"), options);
  std::thread job([&] { EXPECT_TRUE(r.Run().ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // now waiting on the feed
  Put(*remote, "live", "{}");
  auto start = std::chrono::steady_clock::now();
  while (!b->Get("live").ok() && std::chrono::steady_clock::now() - start < std::chrono::seconds(1)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_TRUE(b->Get("live").ok());
  auto cancel_start = std::chrono::steady_clock::now();
  r.Cancel();  // interrupts the long poll in flight
  job.join();
  EXPECT_LT(std::chrono::steady_clock::now() - cancel_start, std::chrono::seconds(2));
  EXPECT_EQ(r.Stats().state, ReplicationState::kCancelled);
}

// An attachment's whole body, as stored.
std::string ReadAttachment(Database& db, const std::string& id, const std::string& name) {
  auto reader = db.OpenAttachment(id, name);
  EXPECT_TRUE(reader.ok()) << id << "/" << name << ": " << reader.status().ToString();
  std::string got;
  if (reader.ok()) {
    EXPECT_TRUE((*reader)->Read(0, UINT64_MAX, [&](std::string_view piece) {
      got.append(piece);
      return true;
    }).ok());
  }
  return got;
}

// A target that takes requests of at most 1 MiB (settee's
// --max-request-size): a batch of documents with attachments that is bigger
// goes in several _bulk_docs requests, and a document bigger on its own as a
// multipart/related PUT (as CouchDB's replicator sends documents with
// attachments), its bodies streamed by the server. Before, the one
// _bulk_docs of the batch got 413 and the replication failed.
TEST_F(HttpEndpointTest, PushesBatchesAndDocumentsBiggerThanTheTargetsRequestLimit) {
  TestServerConfig cfg;
  cfg.http.limits.max_body_bytes = 1 << 20;
  StartServer(cfg);
  auto body = [](size_t size, int seed) {
    std::string b(size, '\0');
    for (size_t i = 0; i < size; ++i) b[i] = static_cast<char>((i * 7919 + seed * 104729) >> 3);
    return b;
  };
  auto a = LocalDb("a");
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(a->PutAttachment("d" + std::to_string(i), "f.bin", "", "application/octet-stream",
                                 body(300 << 10, i))
                    .ok());
  }
  ASSERT_TRUE(a->PutAttachment("big", "one.bin", "", "application/octet-stream", body(3 << 20, 9)).ok());
  auto rev = a->Get("big");
  ASSERT_TRUE(rev.ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(*rev, &d).ok());
  ASSERT_TRUE(a->PutAttachment("big", "two.txt", d["_rev"].GetString(), "text/plain", "small").ok());
  Put(*a, "plain", R"({"x":1})");
  auto options = Options();
  options.create_target = true;
  auto stats = Run(Local("a"), Remote("remote"), options);
  EXPECT_EQ(stats.doc_write_failures, 0u);
  EXPECT_EQ(stats.docs_written, 10u);
  auto remote = RemoteDb("remote");
  ExpectSameDatabases(*a, *remote);
  EXPECT_TRUE(ReadAttachment(*remote, "d7", "f.bin") == body(300 << 10, 7));
  EXPECT_TRUE(ReadAttachment(*remote, "big", "one.bin") == body(3 << 20, 9));
  EXPECT_EQ(ReadAttachment(*remote, "big", "two.txt"), "small");
}

// A document with an attachment body over max_request_bytes goes as
// multipart/related the first time, without a _bulk_docs the target would
// refuse first.
TEST_F(HttpEndpointTest, ADocumentOverTheRequestLimitGoesAsMultipartAtOnce) {
  StartServer();
  auto a = LocalDb("a");
  std::string bytes(200 << 10, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 131 + (i >> 9));
  ASSERT_TRUE(a->PutAttachment("big", "f.bin", "", "application/octet-stream", bytes).ok());
  auto options = Options();
  options.create_target = true;
  HttpEndpointOptions http;
  http.max_request_bytes = 64 << 10;
  auto stats = Run(Local("a"), Remote("remote", http), options);
  EXPECT_EQ(stats.doc_write_failures, 0u);
  EXPECT_EQ(stats.docs_written, 1u);
  auto remote = RemoteDb("remote");
  ExpectSameDatabases(*a, *remote);
  EXPECT_TRUE(ReadAttachment(*remote, "big", "f.bin") == bytes);
}

// A document over max_request_bytes without attachment bodies has nothing
// to stream: it goes in a _bulk_docs of its own, as CouchDB sends it, and
// only the target's 413 makes it a failure. Before, any such document was
// a too_large failure without being sent.
TEST_F(HttpEndpointTest, ALargeDocumentWithoutAttachmentsGoesInBulkDocs) {
  TestServerConfig cfg;
  cfg.http.limits.max_body_bytes = 256 << 10;
  StartServer(cfg);
  auto a = LocalDb("a");
  Put(*a, "large", R"({"text":")" + std::string(100 << 10, 'x') + "\"}");
  Put(*a, "huge", R"({"text":")" + std::string(400 << 10, 'y') + "\"}");
  Put(*a, "small", R"({"x":1})");
  auto options = Options();
  options.create_target = true;
  HttpEndpointOptions http;
  http.max_request_bytes = 64 << 10;
  auto stats = Run(Local("a"), Remote("remote", http), options);
  EXPECT_EQ(stats.docs_written, 2u);
  EXPECT_EQ(stats.doc_write_failures, 1u);  // "huge": the target's 413
  auto remote = RemoteDb("remote");
  auto large = remote->Get("large");
  ASSERT_TRUE(large.ok()) << large.status().ToString();
  EXPECT_EQ(*large, *a->Get("large"));
  EXPECT_TRUE(remote->Get("small").ok());
  EXPECT_TRUE(remote->Get("huge").status().IsNotFound());
}

// An attachment entry that names its stored `encoding` still carries the
// identity bytes inline (CouchDB's replicator reads them so); the multipart
// PUT sends them as such. Before, the entry kept "encoding":"gzip" and the
// target gunzipped the plain part and refused the document.
// (Its digest, the peer's of the gzip bytes, is not sent: the target
// would check the identity part against it.)
TEST_F(HttpEndpointTest, AnEncodedAttachmentEntryIsSentAsItsIdentityBytes) {
  StartServer();
  ASSERT_TRUE(server_->store()->CreateDatabase("enc").ok());
  std::string text;
  for (int i = 0; i < 2000; ++i) text += "line " + std::to_string(i) + " of some text\n";
  const std::string rev_id = "0123456789abcdef0123456789abcdef";
  DocBatch batch;
  batch.Append(R"({"_id":"e","_rev":"1-)" + rev_id +
               R"(","_revisions":{"start":1,"ids":[")" + rev_id +
               R"("]},"_attachments":{"t.txt":{"content_type":"text/plain","revpos":1,)"
               R"("encoding":"gzip","encoded_length":900,"digest":"md5-AAAAAAAAAAAAAAAAAAAAAA==",)"
               R"("length":)" +
               std::to_string(text.size()) + R"(,"data":")" + Base64Encode(text) + "\"}}}");
  HttpEndpointOptions http;
  http.max_request_bytes = 1024;  // the document goes as multipart
  auto url = ParseUrl(RemoteUrl("enc"));
  ASSERT_TRUE(url.ok());
  HttpEndpoint endpoint(*url, http);
  ASSERT_TRUE(endpoint.Open(false).ok());
  std::vector<DocUpdateResult> failures;
  Status s = endpoint.WriteDocs(batch, &failures);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(failures.empty()) << failures[0].status.ToString();
  auto remote = RemoteDb("enc");
  EXPECT_TRUE(ReadAttachment(*remote, "e", "t.txt") == text);
  auto doc = remote->Get("e");
  ASSERT_TRUE(doc.ok()) << doc.status().ToString();
  EXPECT_NE(doc->find("\"length\":" + std::to_string(text.size())), std::string::npos) << *doc;
}

// A peer that looks like CouchDB at first and then misbehaves: routes added
// to the test server for database "odd".
TEST_F(HttpEndpointTest, MisbehavingPeersFailCleanlyAndLeaveTheTargetAlone) {
  TestServerConfig cfg;
  std::atomic<int> changes_calls{0};
  cfg.setup = [&](CouchServer& server) {
    server.router().Add("GET,HEAD", "/odd", [](RequestContext& ctx) {
      return ctx.SendJson(200, R"({"db_name":"odd","update_seq":3})");
    });
    server.router().Add("GET", "/odd/_local/{id}",
                        [](RequestContext& ctx) { return Status::NotFound("missing"); });
    server.router().Add("GET", "/odd/_changes", [&](RequestContext& ctx) {
      // First a malformed body, then a server error.
      if (changes_calls++ % 2 == 0) return ctx.SendJson(200, R"({"results":[{"seq":1,"id":)");
      return ctx.SendJson(500, R"({"error":"unknown_error","reason":"boom"})");
    });
  };
  StartServer(cfg);
  auto b = LocalDb("b");
  auto options = Options();
  options.retries = 2;
  Status s;
  auto stats = Run(Remote("odd"), Local("b"), options, &s);
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_EQ(stats.state, ReplicationState::kFailed);
  EXPECT_EQ(changes_calls.load(), 3);  // one attempt and two retries
  EXPECT_EQ((*b->Info()).doc_count, 0u);
  EXPECT_EQ(b->UpdateSeq(), 0u);
  Replicator probe(Remote("odd"), Local("b"), options);
  EXPECT_TRUE(b->Get("_local/" + probe.id()).status().IsNotFound());  // no checkpoint either
}

}  // namespace
}  // namespace settee::replication
