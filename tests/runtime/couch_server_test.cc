// The CouchDB HTTP API end to end: a CouchServer on an ephemeral port, driven
// over real sockets; every test runs on both backends. Checks shapes, status
// codes and headers of each endpoint, and that bad input gets CouchDB errors.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <random>
#include <set>
#include <thread>

#include "runtime/http_message.h"
#include "storage/attachment_store.h"
#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

class CouchServerTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.backend = GetParam();
    cfg.http.limits.max_body_bytes = 1 << 20;
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
  }

  ClientResponse Req(const std::string& method, const std::string& path,
                     const std::string& body = {}, Headers headers = {}) {
    return client_->Request(method, path, body, std::move(headers));
  }
  json::Document J(const ClientResponse& r) { return ParseJson(r.body); }

  void CreateDb(const std::string& name) { ASSERT_EQ(Req("PUT", "/" + name).status, 201); }
  std::string PutDoc(const std::string& db, const std::string& id, const std::string& body) {
    auto r = Req("PUT", "/" + db + "/" + id, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Str(J(r), "rev");
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

INSTANTIATE_TEST_SUITE_P(Backends, CouchServerTest,
                         ::testing::Values(StoreOptions::Backend::kMemory,
                                           StoreOptions::Backend::kLevelDB),
                         [](const auto& info) {
                           return info.param == StoreOptions::Backend::kMemory ? "Memory"
                                                                               : "LevelDB";
                         });

// ---- server endpoints

TEST_P(CouchServerTest, RootWelcomesWithStableUuid) {
  auto r = Req("GET", "/");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("content-type"), "application/json");
  auto d = J(r);
  EXPECT_EQ(Str(d, "couchdb"), "Welcome");
  EXPECT_EQ(Str(d, "uuid"), server_->store()->uuid());
  EXPECT_EQ(Str(d, "uuid").size(), 32u);
  EXPECT_EQ(Str(J(Req("GET", "/")), "uuid"), Str(d, "uuid"));
  EXPECT_EQ(Str(d, "version").substr(0, 2), "3.");
}

// A JSON request body sent with Content-Encoding: gzip is decoded before
// the handler reads it, as CouchDB's maybe_decompress does (it was parsed as
// JSON and refused: "invalid UTF-8 JSON"); another encoding is 415, bytes
// that are not gzip 400, and a body that decodes past the request limit 413.
TEST_P(CouchServerTest, GzipEncodedRequestBodiesAreDecoded) {
  CreateDb("gz");
  auto gz = [](const std::string& text) {
    std::string out;
    EXPECT_TRUE(GzipCompress(text, &out));
    return out;
  };
  const Headers json_gzip = {{"Content-Type", "application/json"}, {"Content-Encoding", "gzip"}};
  auto r = Req("POST", "/gz/_bulk_docs", gz(R"({"docs":[{"_id":"a","v":1},{"_id":"b","v":2}]})"), json_gzip);
  EXPECT_EQ(r.status, 201) << r.body;
  r = Req("PUT", "/gz/c", gz(R"({"v":3})"), json_gzip);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(J(Req("GET", "/gz/c"))["v"].GetInt(), 3);
  r = Req("POST", "/gz/_all_docs", gz(R"({"keys":["a","b"]})"), json_gzip);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(J(r)["rows"].Size(), 2u);
  r = Req("PUT", "/gz/d", R"({"v":4})", {{"Content-Type", "application/json"}, {"Content-Encoding", "identity"}});
  EXPECT_EQ(r.status, 201) << r.body;
  r = Req("PUT", "/gz/e", R"({"v":5})", {{"Content-Type", "application/json"}, {"Content-Encoding", "br"}});
  EXPECT_EQ(r.status, 415) << r.body;
  r = Req("PUT", "/gz/e", R"({"v":5})", json_gzip);
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Request body is not properly gzipped.");  // CouchDB's
  // 65 MiB of spaces inside a JSON string, a few KiB of gzip: past the limit.
  r = Req("PUT", "/gz/bomb", gz(R"({"pad":")" + std::string(65 << 20, ' ') + R"("})"), json_gzip);
  EXPECT_EQ(r.status, 413) << r.body.substr(0, 200);
  EXPECT_EQ(Req("GET", "/gz/e").status, 404);
  EXPECT_EQ(Req("GET", "/gz/bomb").status, 404);
}

TEST_P(CouchServerTest, UpUuidsAndActiveTasks) {
  EXPECT_EQ(Str(J(Req("GET", "/_up")), "status"), "ok");
  auto r = Req("GET", "/_uuids?count=3");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("cache-control"), "must-revalidate, no-cache");
  EXPECT_EQ(r.HeaderOr("pragma"), "no-cache");
  auto d = J(r);
  ASSERT_EQ(d["uuids"].Size(), 3u);
  std::set<std::string> seen;
  for (auto& u : d["uuids"].GetArray()) {
    EXPECT_EQ(u.GetStringLength(), 32u);
    seen.insert(u.GetString());
  }
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(Req("GET", "/_uuids?count=1001").status, 400);
  EXPECT_EQ(Req("GET", "/_uuids?count=abc").status, 400);
  auto t = Req("GET", "/_active_tasks");
  EXPECT_EQ(t.status, 200);
  EXPECT_TRUE(J(t).IsArray());
}

TEST_P(CouchServerTest, AllDbsIsSortedAndTakesRangeOptions) {
  for (const char* n : {"b", "a", "c"}) CreateDb(n);
  // _users is created at startup, as CouchDB's single-node setup does.
  EXPECT_EQ(Req("GET", "/_all_dbs").body, "[\"_users\",\"a\",\"b\",\"c\"]\n");
  EXPECT_EQ(Req("GET", "/_all_dbs?descending=true&limit=2").body, "[\"c\",\"b\"]\n");
  EXPECT_EQ(Req("GET", "/_all_dbs?startkey=%22b%22").body, "[\"b\",\"c\"]\n");
  EXPECT_EQ(Req("GET", "/_all_dbs?skip=1&endkey=%22b%22").body, "[\"a\",\"b\"]\n");
  // couch_mrview_http:parse_params, as for _all_docs: booleans in any case,
  // the last of a repeated option, CouchDB's reasons.
  EXPECT_EQ(Req("GET", "/_all_dbs?descending=TRUE&limit=3&limit=1").body, "[\"c\"]\n");
  EXPECT_EQ(Req("GET", "/_all_dbs?startkey=%22a%22&startkey=%22b%22").body, "[\"b\",\"c\"]\n");
  auto r = Req("GET", "/_all_dbs?limit=x");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"error":"query_parse_error","reason":"Invalid value for integer: \"x\""})" "\n");
}

TEST_P(CouchServerTest, DbsInfoListsOrNamesDatabasesWithTheirInfo) {
  for (const char* n : {"b", "a"}) CreateDb(n);
  ASSERT_EQ(Req("PUT", "/a/doc", R"({"x":1})").status, 201);
  auto all = J(Req("GET", "/_dbs_info?startkey=%22a%22&limit=2"));
  ASSERT_TRUE(all.IsArray());
  ASSERT_EQ(all.Size(), 2u);
  EXPECT_EQ(std::string(all[0]["key"].GetString()), "a");
  EXPECT_EQ(std::string(all[0]["info"]["db_name"].GetString()), "a");
  EXPECT_EQ(all[0]["info"]["doc_count"].GetInt(), 1);
  EXPECT_EQ(std::string(all[1]["key"].GetString()), "b");

  auto some = J(Req("POST", "/_dbs_info", R"({"keys":["b","nope","a"]})"));
  ASSERT_TRUE(some.IsArray());
  ASSERT_EQ(some.Size(), 3u);
  EXPECT_EQ(std::string(some[0]["info"]["db_name"].GetString()), "b");
  EXPECT_EQ(std::string(some[1]["key"].GetString()), "nope");
  EXPECT_EQ(std::string(some[1]["error"].GetString()), "not_found");
  EXPECT_FALSE(some[1].HasMember("info"));
  EXPECT_EQ(some[2]["info"]["doc_count"].GetInt(), 1);

  auto missing = Req("POST", "/_dbs_info", R"({"names":["a"]})");
  EXPECT_EQ(missing.status, 400);
  EXPECT_EQ(std::string(J(missing)["error"].GetString()), "bad_request");
  std::string many = R"({"keys":[)";
  for (int i = 0; i <= 100; ++i) many += (i ? ",\"a\"" : "\"a\"");
  EXPECT_EQ(Req("POST", "/_dbs_info", many + "]}").status, 400);
  EXPECT_EQ(Req("POST", "/_dbs_info", R"({"keys":[1]})").status, 400);
  EXPECT_EQ(Req("PUT", "/_dbs_info").status, 405);
}

// ---- database endpoints

TEST_P(CouchServerTest, DatabaseLifecycle) {
  auto r = Req("PUT", "/mydb");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(r.body, "{\"ok\":true}\n");
  EXPECT_NE(r.HeaderOr("location").find("/mydb"), std::string::npos);
  r = Req("PUT", "/mydb");
  EXPECT_EQ(r.status, 412);
  EXPECT_EQ(Str(J(r), "error"), "file_exists");
  EXPECT_EQ(Req("HEAD", "/mydb").status, 200);
  EXPECT_EQ(Req("HEAD", "/nodb").status, 404);
  r = Req("GET", "/mydb");
  ASSERT_EQ(r.status, 200);
  auto d = J(r);
  EXPECT_EQ(Str(d, "db_name"), "mydb");
  EXPECT_EQ(Str(d, "instance_start_time"), "0");
  EXPECT_TRUE(d["update_seq"].IsNumber());
  EXPECT_EQ(d["doc_count"].GetInt(), 0);
  EXPECT_TRUE(d["sizes"].IsObject());
  EXPECT_EQ(Req("DELETE", "/mydb?rev=1-abc").status, 400);
  EXPECT_EQ(Req("DELETE", "/mydb").status, 200);
  r = Req("GET", "/mydb");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(J(r), "error"), "not_found");
  EXPECT_EQ(Str(J(r), "reason"), "Database does not exist.");
  EXPECT_EQ(Req("DELETE", "/mydb").status, 404);
}

TEST_P(CouchServerTest, IllegalDatabaseNamesAndPathTraversal) {
  for (const char* path : {"/BadName", "/_foo", "/1abc", "/..%2F..%2Fetc%2Fpasswd", "/a%2F..%2Fb",
                           "/a%00b", "/a.b"}) {
    auto r = Req("PUT", path);
    EXPECT_EQ(r.status, 400) << path;
    EXPECT_EQ(Str(J(r), "error"), "illegal_database_name") << path;
    EXPECT_EQ(Req("GET", std::string(path) + "/doc").status, 400) << path;
  }
  // '/' is legal in names when encoded.
  EXPECT_EQ(Req("PUT", "/a%2Fb").status, 201);
  EXPECT_EQ(Req("GET", "/a%2Fb").status, 200);
  EXPECT_EQ(Req("GET", "/x%zz").status, 400);
}

TEST_P(CouchServerTest, MethodNotAllowedAndUnknownPaths) {
  auto r = Req("PUT", "/_all_dbs");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Str(J(r), "error"), "method_not_allowed");
  CreateDb("db");
  EXPECT_EQ(Req("PUT", "/db/_all_docs").status, 405);
  EXPECT_EQ(Req("GET", "/db/_bulk_docs").status, 405);
  EXPECT_EQ(Req("PATCH", "/db").status, 405);
  r = Req("GET", "/db/doc/att/more/segments/than/anything");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(J(r), "error"), "not_found");
}

// ---- documents

TEST_P(CouchServerTest, DocumentCrudWithHeaders) {
  CreateDb("db");
  auto r = Req("PUT", "/db/doc1", R"({"a":1})");
  ASSERT_EQ(r.status, 201);
  auto d = J(r);
  EXPECT_TRUE(d["ok"].GetBool());
  EXPECT_EQ(Str(d, "id"), "doc1");
  std::string rev1 = Str(d, "rev");
  EXPECT_EQ(rev1.substr(0, 2), "1-");
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + rev1 + "\"");
  EXPECT_NE(r.HeaderOr("location").find("/db/doc1"), std::string::npos);

  r = Req("GET", "/db/doc1");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + rev1 + "\"");
  EXPECT_EQ(r.HeaderOr("cache-control"), "must-revalidate");
  d = J(r);
  EXPECT_EQ(Str(d, "_id"), "doc1");
  EXPECT_EQ(Str(d, "_rev"), rev1);
  EXPECT_EQ(d["a"].GetInt(), 1);

  r = Req("GET", "/db/doc1", "", {{"If-None-Match", "\"" + rev1 + "\""}});
  EXPECT_EQ(r.status, 304);
  EXPECT_TRUE(r.body.empty());
  r = Req("HEAD", "/db/doc1");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + rev1 + "\"");

  r = Req("PUT", "/db/doc1", R"({"a":2})");
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(Str(J(r), "error"), "conflict");
  EXPECT_EQ(Str(J(r), "reason"), "Document update conflict.");

  r = Req("PUT", "/db/doc1?rev=" + rev1, R"({"a":2})");
  ASSERT_EQ(r.status, 201) << r.body;
  std::string rev2 = Str(J(r), "rev");
  EXPECT_EQ(rev2.substr(0, 2), "2-");
  r = Req("PUT", "/db/doc1?rev=" + rev1, R"({"_rev":")" + rev2 + R"(","a":3})");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/doc1", R"({"a":3})", {{"If-Match", "\"" + rev2 + "\""}});
  ASSERT_EQ(r.status, 201) << r.body;
  std::string rev3 = Str(J(r), "rev");

  r = Req("GET", "/db/doc1?rev=" + rev1);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(J(r)["a"].GetInt(), 1);

  r = Req("DELETE", "/db/doc1?rev=" + rev1);
  EXPECT_EQ(r.status, 409);
  r = Req("DELETE", "/db/doc1?rev=" + rev3);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(J(r)["ok"].GetBool());
  r = Req("GET", "/db/doc1");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(J(r), "reason"), "deleted");
  r = Req("GET", "/db/nothere");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(J(r), "reason"), "missing");
}

TEST_P(CouchServerTest, DocumentReadOptions) {
  CreateDb("db");
  std::string rev1 = PutDoc("db", "d", R"({"v":1})");
  auto r = Req("PUT", "/db/d?rev=" + rev1, R"({"v":2})");
  std::string rev2 = Str(J(r), "rev");
  auto d = J(Req("GET", "/db/d?revs=true"));
  ASSERT_TRUE(d.HasMember("_revisions"));
  EXPECT_EQ(d["_revisions"]["start"].GetInt(), 2);
  EXPECT_EQ(d["_revisions"]["ids"].Size(), 2u);
  d = J(Req("GET", "/db/d?revs_info=true"));
  ASSERT_TRUE(d.HasMember("_revs_info"));
  EXPECT_EQ(Str(d["_revs_info"][0], "rev"), rev2);
  d = J(Req("GET", "/db/d?local_seq=true"));
  EXPECT_TRUE(d.HasMember("_local_seq"));
  // chttpd_db:parse_doc_query folds over the query string: a flag is on
  // when any value is exactly "true" (a later "false" turns nothing off,
  // "TRUE" is not "true"), and the last `rev` wins.
  EXPECT_TRUE(J(Req("GET", "/db/d?revs=false&revs=true")).HasMember("_revisions"));
  EXPECT_TRUE(J(Req("GET", "/db/d?revs=true&revs=false")).HasMember("_revisions"));
  EXPECT_FALSE(J(Req("GET", "/db/d?revs=TRUE")).HasMember("_revisions"));
  EXPECT_TRUE(J(Req("GET", "/db/d?meta=no&meta=true")).HasMember("_revs_info"));
  EXPECT_EQ(Str(J(Req("GET", "/db/d?rev=" + rev2 + "&rev=" + rev1)), "_rev"), rev1);
  EXPECT_EQ(Str(J(Req("GET", "/db/d?rev=" + rev1 + "&rev=" + rev2)), "_rev"), rev2);
  auto open = J(Req("GET", "/db/d?open_revs=%5B%22" + rev1 + "%22%5D&open_revs=%5B%22" + rev2 + "%22%5D",
                    "", {{"Accept", "application/json"}}));
  ASSERT_TRUE(open.IsArray() && open.Size() == 1u) << json::Serialize(open);
  EXPECT_EQ(Str(open[0]["ok"], "_rev"), rev2);
}

// A PUT's new_edits as parse_doc_query folds it: the last "true" or
// "false" decides, and another value is no error and changes nothing. A
// replicated write stores the body's _rev; an interactive one with a _rev
// that is not stored is a conflict.
TEST_P(CouchServerTest, PutReadsNewEditsAsCouchDBFoldsIt) {
  CreateDb("db");
  auto r = Req("PUT", "/db/a?new_edits=true&new_edits=false", R"({"_rev":"1-abc"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(Req("GET", "/db/a")), "_rev"), "1-abc");
  r = Req("PUT", "/db/b?new_edits=false&new_edits=maybe", R"({"_rev":"1-abc"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(Req("GET", "/db/b")), "_rev"), "1-abc");
  r = Req("PUT", "/db/c?new_edits=false&new_edits=true", R"({"_rev":"1-abc"})");
  EXPECT_EQ(r.status, 409) << r.body;
  r = Req("PUT", "/db/c?new_edits=yes", R"({"v":1})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "rev").substr(0, 2), "1-");
}

TEST_P(CouchServerTest, PostDbCreatesDocWithGeneratedId) {
  CreateDb("db");
  auto r = Req("POST", "/db", R"({"x":1})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto d = J(r);
  std::string id = Str(d, "id");
  EXPECT_FALSE(id.empty());
  EXPECT_NE(r.HeaderOr("location").find("/db/" + id), std::string::npos);
  EXPECT_EQ(Req("GET", "/db/" + id).status, 200);
  r = Req("POST", "/db", R"({"_id":"given"})");
  EXPECT_EQ(Str(J(r), "id"), "given");
  r = Req("POST", "/db?batch=ok", R"({"_id":"batched"})");
  EXPECT_EQ(r.status, 202);
}

TEST_P(CouchServerTest, BadBodiesGetCouchErrors) {
  CreateDb("db");
  auto r = Req("POST", "/db", R"({"x":1})", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(Str(J(r), "error"), "bad_content_type");
  r = Req("POST", "/db", "{not json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "bad_request");
  r = Req("POST", "/db", "[1,2]");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/x", "\"str\"");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/x", std::string(600, '[') + std::string(600, ']'));
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/x", "{\"a\":\"\xff\xfe\"}");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/_bad", R"({})");
  EXPECT_EQ(r.status, 400);
  r = Req("PUT", "/db/x", R"({"_foo":1})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "doc_validation");
  r = Req("POST", "/db/_bulk_docs", R"({"nodocs":[]})");
  EXPECT_EQ(r.status, 400);
  r = Req("POST", "/db/_bulk_docs", R"({"docs":{}})");
  EXPECT_EQ(r.status, 400);
  r = Req("POST", "/db/_all_docs", R"({"keys":"x"})");
  EXPECT_EQ(r.status, 400);
  r = Req("GET", "/db/_all_docs?limit=-1");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "query_parse_error");
  r = Req("GET", "/db/_all_docs?startkey=notjson");
  EXPECT_EQ(r.status, 400);
  // Still serving on the same connection.
  EXPECT_EQ(Req("GET", "/db").status, 200);
}

TEST_P(CouchServerTest, OversizeRequestBodyIs413) {
  CreateDb("db");
  std::string big = R"({"x":")" + std::string(2 << 20, 'a') + R"("})";
  TestClient c(server_->port());
  auto r = c.Request("PUT", "/db/big", big);
  EXPECT_EQ(r.status, 413);
  EXPECT_EQ(Str(J(r), "error"), "too_large");
}

// chttpd_db's extract_header_rev: If-Match is read whenever it is sent and
// set against the explicit revision (the body's _rev, else ?rev=): a
// malformed one is 400 "Invalid rev format", another revision 400
// "Document rev and etag have different values" (before a revision no
// stored one can be is a conflict); alone, it names the revision.
TEST_P(CouchServerTest, IfMatchIsSetAgainstTheExplicitRev) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  auto expect_400 = [&](const ClientResponse& r, const std::string& reason, const std::string& what) {
    EXPECT_EQ(r.status, 400) << what << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << what;
  };
  const std::string etag_differs = "Document rev and etag have different values";
  const std::string body_rev = R"({"_rev":")" + rev + R"("})";
  for (const std::string& garbage : {std::string("garbage"), std::string("\"\""), "W/\"" + rev + "\""}) {
    expect_400(Req("PUT", "/db/d?rev=" + rev, "{}", {{"If-Match", garbage}}), "Invalid rev format", garbage);
    expect_400(Req("PUT", "/db/d", body_rev, {{"If-Match", garbage}}), "Invalid rev format", garbage);
    expect_400(Req("PUT", "/db/d?rev=" + rev, body_rev, {{"If-Match", garbage}}), "Invalid rev format", garbage);
    expect_400(Req("DELETE", "/db/d?rev=" + rev, "", {{"If-Match", garbage}}), "Invalid rev format", garbage);
    expect_400(Req("COPY", "/db/d?rev=" + rev, "", {{"Destination", "c"}, {"If-Match", garbage}}),
               "Invalid rev format", garbage);
  }
  for (const std::string& other : {std::string("\"1-abc\""), std::string("0-a"), "\"2-" + rev.substr(2) + "\""}) {
    expect_400(Req("PUT", "/db/d?rev=" + rev, "{}", {{"If-Match", other}}), etag_differs, other);
    expect_400(Req("PUT", "/db/d", body_rev, {{"If-Match", other}}), etag_differs, other);
    expect_400(Req("DELETE", "/db/d?rev=" + rev, "", {{"If-Match", other}}), etag_differs, other);
    expect_400(Req("COPY", "/db/d?rev=" + rev, "", {{"Destination", "c"}, {"If-Match", other}}), etag_differs,
               other);
  }
  // Body and query string keep their own message, checked first.
  expect_400(Req("PUT", "/db/d?rev=1-abc", body_rev, {{"If-Match", "\"2-abc\""}}),
             "Document rev from request body and query string have different values", "body vs query");
  // A body _rev that is no string is parse_rev's error, from_json_obj's,
  // before any comparison (and so without ?rev= or If-Match).
  for (const std::string& body : {std::string(R"({"_rev":5})"), std::string(R"({"_rev":null})")}) {
    expect_400(Req("PUT", "/db/d?rev=" + rev, body), "Invalid rev format", body + " with ?rev=");
    expect_400(Req("PUT", "/db/d", body, {{"If-Match", "\"" + rev + "\""}}), "Invalid rev format",
               body + " with If-Match");
    expect_400(Req("PUT", "/db/d", body), "Invalid rev format", body);
  }
  // The body's _rev is what If-Match must be when both it and ?rev= are sent.
  expect_400(Req("PUT", "/db/d?rev=" + rev, body_rev, {{"If-Match", "\"1-abc\""}}), etag_differs, "both");
  // ?rev= empty is parse_rev(""), malformed.
  expect_400(Req("PUT", "/db/d?rev=", "{}"), "Invalid rev format", "empty ?rev=");
  // If-Match naming no stored revision, alone, is a conflict.
  EXPECT_EQ(Req("PUT", "/db/d", "{}", {{"If-Match", "\"1-abc\""}}).status, 409);
  // The same revision, however spelled, is one.
  auto r = Req("PUT", "/db/d?rev=" + rev, body_rev, {{"If-Match", "\"\"+0" + rev + "\"\""}});
  ASSERT_EQ(r.status, 201) << r.body;
  rev = Str(J(r), "rev");
  // COPY's source is If-Match's revision when no ?rev= is sent.
  std::string old_rev = PutDoc("db", "src", R"({"v":1})");
  r = Req("PUT", "/db/src", R"({"v":2})", {{"If-Match", "\"" + old_rev + "\""}});
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("COPY", "/db/src", "", {{"Destination", "c"}, {"If-Match", "\"" + old_rev + "\""}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(J(Req("GET", "/db/c"))["v"].GetInt(), 1);
  r = Req("COPY", "/db/src", "", {{"Destination", "c2"}, {"If-Match", "\"1-abc\""}});
  EXPECT_EQ(r.status, 404) << r.body;
  // DELETE by If-Match alone.
  r = Req("DELETE", "/db/d", "", {{"If-Match", "\"" + rev + "\""}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Req("GET", "/db/d").status, 404);
}

// chttpd_db's DELETE opens the document before anything else: a deleted
// one is 404 "deleted" whatever revision is named, its tombstone's or an
// older leaf's (a 409, or a second tombstone, before).
TEST_P(CouchServerTest, DeleteOfADeletedDocumentIsNotFound) {
  CreateDb("db");
  std::string rev1 = PutDoc("db", "d", "{}");
  auto r = Req("PUT", "/db/d?rev=" + rev1, "{}");
  std::string rev2 = Str(J(r), "rev");
  r = Req("DELETE", "/db/d?rev=" + rev2);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string tombstone = Str(J(r), "rev");
  for (const std::string& rev : {rev1, rev2, tombstone}) {
    for (const auto& [path, headers] :
         {std::pair<std::string, Headers>{"/db/d?rev=" + rev, {}}, {"/db/d", {{"If-Match", "\"" + rev + "\""}}}}) {
      r = Req("DELETE", path, "", headers);
      EXPECT_EQ(r.status, 404) << path << " " << r.body;
      EXPECT_EQ(Str(J(r), "reason"), "deleted") << path;
    }
  }
  EXPECT_EQ(Str(J(Req("GET", "/db/d?rev=" + tombstone)), "_rev"), tombstone);
  EXPECT_EQ(Req("GET", "/db/d?open_revs=all").body.find("\"4-"), std::string::npos) << "a second tombstone";
  EXPECT_EQ(Req("DELETE", "/db/_local/none?rev=0-1").status, 404);
}

TEST_P(CouchServerTest, CopyDocument) {
  CreateDb("db");
  PutDoc("db", "src", R"({"v":"hello"})");
  auto r = Req("COPY", "/db/src", "", {{"Destination", "dst"}});
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "id"), "dst");
  auto d = J(Req("GET", "/db/dst"));
  EXPECT_EQ(Str(d, "v"), "hello");
  std::string dst_rev = Str(d, "_rev");
  EXPECT_EQ(Req("COPY", "/db/src", "", {{"Destination", "dst"}}).status, 409);
  r = Req("COPY", "/db/src", "", {{"Destination", "dst?rev=" + dst_rev}});
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Req("COPY", "/db/src").status, 400);
  // chttpd_db's COPY reads the source revision before the Destination
  // header, which names a document, never a URL.
  r = Req("COPY", "/db/src?rev=1-" + std::string(32, 'z'));
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  for (const std::string url : {"http://127.0.0.1:5984/db/x", "https://example.com/db/x"}) {
    r = Req("COPY", "/db/src", "", {{"Destination", url}});
    EXPECT_EQ(r.status, 400) << url << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "Destination URL must be relative.") << url;
  }
  EXPECT_EQ(J(Req("GET", "/db/_all_docs"))["rows"].Size(), 2u);
  // Both revisions are read as couch_doc:parse_rev reads them: one no
  // stored revision can be is a source's 404 and a destination's 409,
  // "+N-x" is "N-x", a 32-character id that is not hex is 400.
  const std::string zs = "1-" + std::string(32, 'z');
  for (const std::string bad : {"1-", "0-a"}) {
    r = Req("COPY", "/db/src?rev=" + bad, "", {{"Destination", "new"}});
    EXPECT_EQ(r.status, 404) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "missing");
    EXPECT_EQ(Req("COPY", "/db/src", "", {{"Destination", "dst?rev=" + bad}}).status, 409) << bad;
    EXPECT_EQ(Req("COPY", "/db/src", "", {{"Destination", "new?rev=" + bad}}).status, 409) << bad;
  }
  EXPECT_EQ(Req("COPY", "/db/src?rev=" + zs, "", {{"Destination", "new"}}).status, 400);
  EXPECT_EQ(Req("COPY", "/db/src", "", {{"Destination", "dst?rev=" + zs}}).status, 400);
  const std::string src_rev = Str(J(Req("GET", "/db/src")), "_rev");
  dst_rev = Str(J(Req("GET", "/db/dst")), "_rev");
  r = Req("COPY", "/db/src?rev=%2B" + src_rev, "", {{"Destination", "dst?rev=" + dst_rev}});
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_P(CouchServerTest, DesignAndLocalDocumentRoutes) {
  CreateDb("db");
  auto r = Req("PUT", "/db/_design/app", R"({"views":{}})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "id"), "_design/app");
  EXPECT_EQ(Str(J(Req("GET", "/db/_design/app")), "_id"), "_design/app");
  EXPECT_EQ(Str(J(Req("GET", "/db/_design%2Fapp")), "_id"), "_design/app");

  r = Req("PUT", "/db/_local/cp", R"({"last_seq":1})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "rev"), "0-1");
  r = Req("PUT", "/db/_local/cp", R"({"last_seq":2,"_rev":"0-1"})");
  EXPECT_EQ(Str(J(r), "rev"), "0-2");
  auto d = J(Req("GET", "/db/_local/cp"));
  EXPECT_EQ(d["last_seq"].GetInt(), 2);
  EXPECT_EQ(Str(d, "_id"), "_local/cp");
  // Local docs stay out of _all_docs and _changes, but appear in _local_docs.
  d = J(Req("GET", "/db/_all_docs"));
  EXPECT_EQ(d["rows"].Size(), 1u);
  d = J(Req("GET", "/db/_changes"));
  EXPECT_EQ(d["results"].Size(), 1u);
  d = J(Req("GET", "/db/_local_docs?update_seq=true"));
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "_local/cp");
  // couch_mrview counts nothing in the _local namespace: all three are null.
  EXPECT_TRUE(d["total_rows"].IsNull());
  EXPECT_TRUE(d["offset"].IsNull());
  EXPECT_TRUE(d["update_seq"].IsNull());
  // _design_docs' total_rows counts design documents only.
  PutDoc("db", "A", "{}");
  PutDoc("db", "zed", "{}");
  d = J(Req("GET", "/db/_design_docs"));
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "_design/app");
  EXPECT_EQ(d["total_rows"].GetUint64(), 1u);
  d = J(Req("GET", "/db/_design_docs?limit=0"));  // a part of the namespace: counted apart
  EXPECT_EQ(d["rows"].Size(), 0u);
  EXPECT_EQ(d["total_rows"].GetUint64(), 1u);
  EXPECT_EQ(J(Req("GET", "/db/_all_docs"))["total_rows"].GetUint64(), 3u);
  r = Req("DELETE", "/db/_local/cp?rev=0-2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Req("GET", "/db/_local/cp").status, 404);
}

// _local_docs takes `keys` as _all_docs does: rows in request order, an
// unknown or non-local id and a non-string key as not_found rows.
TEST_P(CouchServerTest, LocalDocsByKeys) {
  CreateDb("db");
  ASSERT_EQ(Req("PUT", "/db/_local/a", R"({"v":1})").status, 201);
  ASSERT_EQ(Req("PUT", "/db/_local/b", R"({"v":2})").status, 201);
  ASSERT_EQ(Req("PUT", "/db/_local/b", R"({"v":3,"_rev":"0-1"})").status, 201);
  ASSERT_EQ(Req("PUT", "/db/plain", R"({})").status, 201);
  auto r = Req("POST", "/db/_local_docs?include_docs=true",
               R"({"keys":["_local/b","_local/missing","plain",7,"_local/a"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  const auto& rows = d["rows"];
  ASSERT_EQ(rows.Size(), 5u) << r.body;
  EXPECT_EQ(Str(rows[0], "id"), "_local/b");
  EXPECT_EQ(Str(rows[0]["value"], "rev"), "0-2");
  EXPECT_EQ(rows[0]["doc"]["v"].GetInt(), 3);
  EXPECT_EQ(Str(rows[1], "key"), "_local/missing");
  EXPECT_EQ(Str(rows[1], "error"), "not_found");
  EXPECT_EQ(Str(rows[2], "key"), "plain");
  EXPECT_EQ(Str(rows[2], "error"), "not_found");
  EXPECT_EQ(rows[3]["key"].GetInt(), 7);
  EXPECT_EQ(Str(rows[3], "error"), "not_found");
  EXPECT_EQ(Str(rows[4], "id"), "_local/a");
  EXPECT_EQ(Str(rows[4]["value"], "rev"), "0-1");
  d = J(Req("GET", "/db/_local_docs?keys=%5B%22_local%2Fa%22%2C%22_local%2Fb%22%5D&descending=true&limit=1"));
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "_local/b");
}

// ---- _all_docs

// A _local document PUT with a _revisions member (what GET ?revs=true gives
// for one) is stored, as CouchDB 3 stores it: {start: 0, ids: ["N"]} is the
// revision it edits.
TEST_P(CouchServerTest, LocalDocsAcceptRevisions) {
  CreateDb("db");
  auto r = Req("PUT", "/db/_local/x", R"({"v":1})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto got = Req("GET", "/db/_local/x?revs=true");
  ASSERT_EQ(got.status, 200);
  auto doc = J(got);
  if (!doc.HasMember("_revisions")) {
    doc.AddMember("_revisions", json::Value(rapidjson::kObjectType), doc.GetAllocator());
    doc["_revisions"].AddMember("start", 0, doc.GetAllocator());
    json::Value ids(rapidjson::kArrayType);
    ids.PushBack("1", doc.GetAllocator());
    doc["_revisions"].AddMember("ids", ids, doc.GetAllocator());
  }
  doc["v"].SetInt(2);
  r = Req("PUT", "/db/_local/x", json::Serialize(doc));
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "rev"), "0-2");
  EXPECT_EQ(J(Req("GET", "/db/_local/x"))["v"].GetInt(), 2);
  r = Req("POST", "/db/_bulk_docs",
          R"({"docs":[{"_id":"_local/y","_revisions":{"start":0,"ids":["5"]},"w":1}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r)[0], "rev"), "0-6");
  r = Req("PUT", "/db/_local/z", R"({"_revisions":{"start":0,"ids":[1]}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "doc_validation");
}

TEST_P(CouchServerTest, AllDocsOptions) {
  CreateDb("db");
  for (const char* id : {"a", "b", "c", "d", "e"}) PutDoc("db", id, R"({"n":1})");
  auto all = Req("GET", "/db/_all_docs");
  auto d = J(all);
  EXPECT_EQ(d["total_rows"].GetInt(), 5) << all.body;
  EXPECT_EQ(d["offset"].GetInt(), 0);
  ASSERT_EQ(d["rows"].Size(), 5u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "a");
  EXPECT_EQ(Str(d["rows"][0], "key"), "a");
  EXPECT_TRUE(d["rows"][0]["value"].HasMember("rev"));
  EXPECT_FALSE(d["rows"][0].HasMember("doc"));

  d = J(Req("GET", "/db/_all_docs?limit=2&skip=1"));
  ASSERT_EQ(d["rows"].Size(), 2u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "b");
  EXPECT_EQ(d["offset"].GetInt(), 1);
  // A keys query has no offset or update_seq (fabric_view_all_docs: null).
  d = J(Req("GET", "/db/_all_docs?keys=%5B%22b%22%5D&update_seq=true"));
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(d["total_rows"].GetInt(), 5);
  EXPECT_TRUE(d["offset"].IsNull());
  EXPECT_TRUE(d["update_seq"].IsNull());
  d = J(Req("GET", "/db/_all_docs?update_seq=true"));
  EXPECT_EQ(d["update_seq"].GetInt(), 5);

  d = J(Req("GET", "/db/_all_docs?descending=true&limit=2"));
  EXPECT_EQ(Str(d["rows"][0], "id"), "e");
  EXPECT_EQ(Str(d["rows"][1], "id"), "d");

  d = J(Req("GET", "/db/_all_docs?startkey=%22b%22&endkey=%22d%22"));
  EXPECT_EQ(d["rows"].Size(), 3u);
  d = J(Req("GET", "/db/_all_docs?start_key=%22b%22&end_key=%22d%22&inclusive_end=false"));
  EXPECT_EQ(d["rows"].Size(), 2u);
  d = J(Req("GET", "/db/_all_docs?key=%22c%22&include_docs=true"));
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(Str(d["rows"][0]["doc"], "_id"), "c");
  d = J(Req("GET", "/db/_all_docs?update_seq=true"));
  EXPECT_TRUE(d.HasMember("update_seq"));

  EXPECT_EQ(J(Req("GET", "/db/_all_docs?startkey=%22d%22&endkey=%22b%22&descending=true"))["rows"]
                .Size(),
            3u);
  auto r = Req("GET", "/db/_all_docs?keys=%5B%22a%22%5D&key=%22a%22");
  EXPECT_EQ(r.status, 400);
}

// CouchDB 3 runs no range check for _all_docs (couch_mrview:query_all_docs
// calls validate_args/1 only; check_range's query_parse_error is for views):
// an inverted range answers no rows, with the usual total_rows.
TEST_P(CouchServerTest, AllDocsInvertedRangeIsEmptyNotAnError) {
  CreateDb("db");
  for (const char* id : {"3", "4", "5", "6"}) PutDoc("db", id, "{}");
  for (const char* q : {"startkey=%225%22&endkey=%224%22",
                        "start_key=%225%22&end_key=%224%22&inclusive_end=false",
                        "startkey=%224%22&endkey=%225%22&descending=true"}) {
    auto r = Req("GET", std::string("/db/_all_docs?") + q);
    ASSERT_EQ(r.status, 200) << q << " " << r.body;
    auto d = J(r);
    EXPECT_EQ(d["total_rows"].GetInt(), 4) << q;
    EXPECT_EQ(d["rows"].Size(), 0u) << q;
    r = Req("POST", std::string("/db/_all_docs?") + q, "{}");
    EXPECT_EQ(r.status, 200) << q;
    EXPECT_EQ(J(r)["rows"].Size(), 0u) << q;
  }
  auto r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"startkey":"5","endkey":"4"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(J(r)["results"][0]["rows"].Size(), 0u);
  // _design_docs and _local_docs take the same options.
  EXPECT_EQ(Req("GET", "/db/_design_docs?startkey=%22_design%2Fz%22&endkey=%22_design%2Fa%22").status,
            200);
  EXPECT_EQ(Req("GET", "/db/_local_docs?startkey=%22_local%2Fz%22&endkey=%22_local%2Fa%22").status,
            200);
}

// `key` sets both ends of the range and a later startkey/endkey replaces one,
// in the order given (couch_mrview_http:parse_params folds the query string);
// only `keys` with `key`/`startkey`/`endkey` is an error.
TEST_P(CouchServerTest, AllDocsKeyWithStartkeyOrEndkeyRuns) {
  CreateDb("db");
  for (const char* id : {"a", "b", "c", "d"}) PutDoc("db", id, "{}");
  auto ids = [&](const std::string& query) {
    auto r = Req("GET", "/db/_all_docs?" + query);
    EXPECT_EQ(r.status, 200) << query << " " << r.body;
    std::string out;
    auto d = J(r);
    if (!d.IsObject() || !d.HasMember("rows")) return std::string("<error>");
    for (const auto& row : d["rows"].GetArray()) out += Str(row, "id");
    return out;
  };
  EXPECT_EQ(ids("key=%22b%22&startkey=%22a%22"), "ab");
  EXPECT_EQ(ids("key=%22b%22&endkey=%22c%22"), "bc");
  EXPECT_EQ(ids("startkey=%22a%22&key=%22b%22"), "b");
  EXPECT_EQ(ids("endkey=%22c%22&key=%22b%22"), "b");
  EXPECT_EQ(ids("start_key=%22a%22&end_key=%22d%22&key=%22c%22"), "c");
  auto r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"key":"c","endkey":"d"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(J(r)["results"][0]["rows"].Size(), 2u);
  for (const char* q : {"keys=%5B%22a%22%5D&startkey=%22a%22", "keys=%5B%22a%22%5D&endkey=%22a%22",
                        "keys=%5B%22a%22%5D&key=%22a%22"}) {
    r = Req("GET", std::string("/db/_all_docs?") + q);
    EXPECT_EQ(r.status, 400) << q;
    EXPECT_EQ(Str(J(r), "error"), "query_parse_error") << q;
  }
  r = Req("POST", "/db/_all_docs?key=%22a%22", R"({"keys":["a"]})");
  EXPECT_EQ(r.status, 400);
}

TEST_P(CouchServerTest, AllDocsWithKeys) {
  CreateDb("db");
  PutDoc("db", "a", "{}");
  std::string rev = PutDoc("db", "gone", "{}");
  ASSERT_EQ(Req("DELETE", "/db/gone?rev=" + rev).status, 200);
  auto r = Req("POST", "/db/_all_docs?include_docs=true", R"({"keys":["gone","nope","a"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  ASSERT_EQ(d["rows"].Size(), 3u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "gone");
  EXPECT_TRUE(d["rows"][0]["value"]["deleted"].GetBool());
  EXPECT_TRUE(d["rows"][0]["doc"].IsNull());
  EXPECT_EQ(Str(d["rows"][1], "key"), "nope");
  EXPECT_EQ(Str(d["rows"][1], "error"), "not_found");
  EXPECT_EQ(Str(d["rows"][2]["doc"], "_id"), "a");
  d = J(Req("GET", "/db/_all_docs?keys=%5B%22a%22%5D"));
  ASSERT_EQ(d["rows"].Size(), 1u);
}

TEST_P(CouchServerTest, AllDocsQueriesRunsEachQuery) {
  CreateDb("db");
  for (const char* id : {"a", "b", "c"}) PutDoc("db", id, "{}");
  auto r = Req("POST", "/db/_all_docs/queries",
               R"({"queries":[{"keys":["b","zz"]},{"limit":1,"descending":true},)"
               R"({"startkey":"b","include_docs":true}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  ASSERT_EQ(d["results"].Size(), 3u);
  EXPECT_EQ(d["results"][0]["rows"].Size(), 2u);
  EXPECT_EQ(Str(d["results"][0]["rows"][1], "error"), "not_found");
  ASSERT_EQ(d["results"][1]["rows"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][1]["rows"][0], "id"), "c");
  ASSERT_EQ(d["results"][2]["rows"].Size(), 2u);
  EXPECT_EQ(Str(d["results"][2]["rows"][0]["doc"], "_id"), "b");
  EXPECT_EQ(Req("POST", "/db/_all_docs/queries", R"({"queries":{}})").status, 400);
  EXPECT_EQ(Req("POST", "/db/_all_docs/queries", R"({"queries":[{"limit":"x"}]})").status, 400);
}

// ---- bulk and replication endpoints

TEST_P(CouchServerTest, BulkDocsNewEditsTrueAndFalse) {
  CreateDb("db");
  auto r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"a","v":1},{"_id":"b"},{"_id":"a"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto d = J(r);
  ASSERT_EQ(d.Size(), 3u);
  EXPECT_TRUE(d[0]["ok"].GetBool());
  EXPECT_EQ(Str(d[0], "id"), "a");
  EXPECT_EQ(Str(d[2], "error"), "conflict");

  // Replicated history creating a conflict: answered with [] and kept.
  r = Req("POST", "/db/_bulk_docs",
          R"({"new_edits":false,"docs":[{"_id":"a","_rev":"1-ffffffffffffffffffffffffffffffff","v":9}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, "[]\n");
  d = J(Req("GET", "/db/a?conflicts=true"));
  ASSERT_TRUE(d.HasMember("_conflicts")) << Req("GET", "/db/a?conflicts=true").body;
  EXPECT_EQ(d["_conflicts"].Size(), 1u);
}

// CouchDB's _bulk_docs checks every document before writing any
// (chttpd_db maps couch_db:doc_from_json_obj_validate and validate_revs over
// the list): one bad document refuses the request with 400 and nothing is
// written. Conflicts stay per document.
TEST_P(CouchServerTest, BulkDocsValidationRefusesTheWholeRequest) {
  CreateDb("db");
  struct Case {
    const char* body;
    const char* error;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"docs":[{"_id":"ok1"},{"_id":"x","_zing":4}]})", "doc_validation",
       "Bad special document member: _zing"},
      {R"({"docs":[{"_id":"ok1"},{"_id":"_zing"}]})", "illegal_docid",
       "Only reserved document ids may start with underscore."},
      {R"({"docs":[{"_id":"ok1"},{"_id":"_design/"}]})", "illegal_docid",
       "Only reserved document ids may start with underscore."},
      {R"({"docs":[{"_id":"ok1"},{"_id":12}]})", "illegal_docid", "Document id must be a string"},
      {R"({"docs":[{"_id":"ok1"},{"_id":"x","_rev":"nope"}]})", "bad_request", "Invalid rev format"},
      {R"({"new_edits":false,"docs":[{"_id":"ok1","_rev":"1-a"},{"_id":"z"}]})", "bad_request",
       "When `new_edits: false`, the document needs `_rev` or `_revisions` specified"},
  };
  for (const Case& c : cases) {
    auto r = Req("POST", "/db/_bulk_docs", c.body);
    EXPECT_EQ(r.status, 400) << c.body << " " << r.body;
    EXPECT_EQ(Str(J(r), "error"), c.error) << c.body;
    EXPECT_EQ(Str(J(r), "reason"), c.reason) << c.body;
  }
  auto r = Req("POST", "/db/_bulk_docs?new_edits=false", R"({"docs":[{"_id":"z"}]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Req("GET", "/db/ok1").status, 404);
  EXPECT_EQ(J(Req("GET", "/db"))["update_seq"].GetInt(), 0);
  // A conflict is still a row of a 201.
  ASSERT_EQ(Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"a"}]})").status, 201);
  r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"a"},{"_id":"b"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r)[0], "error"), "conflict");
  EXPECT_TRUE(J(r)[1]["ok"].GetBool());
}

// _bulk_docs parses its body once (in the engine); its errors keep
// CouchDB's reasons and the query's new_edits still overrides the body's.
TEST_P(CouchServerTest, BulkDocsBodyErrorsAndNewEditsOverride) {
  CreateDb("db");
  const std::pair<const char*, const char*> bad[] = {
      {"{", "invalid UTF-8 JSON"},
      {R"({"docs":[],"new_edits":1})", "`new_edits` parameter must be a boolean."},
      {R"({"docs":[{"_id":"a"},"b"]})", "Document must be a JSON object"},
  };
  for (const auto& [body, reason] : bad) {
    auto r = Req("POST", "/db/_bulk_docs", body);
    EXPECT_EQ(r.status, 400) << body;
    EXPECT_EQ(Str(J(r), "reason"), reason) << body;
  }
  EXPECT_EQ(Req("GET", "/db/a").status, 404);  // nothing was written
  // A number past 64 bits takes the RapidJSON path, and is kept as a double.
  auto r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"big","n":18446744073709551616}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto big = J(Req("GET", "/db/big"));
  ASSERT_TRUE(big.HasMember("n") && big["n"].IsDouble());
  EXPECT_EQ(big["n"].GetDouble(), 18446744073709551616.0);
  // new_edits=false in the query wins over the body's true: a replicated
  // write answers only failures.
  r = Req("POST", "/db/_bulk_docs?new_edits=false",
          R"({"new_edits":true,"docs":[{"_id":"r","_rev":"1-abc"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, "[]\n");
  EXPECT_EQ(Req("GET", "/db/r").status, 200);
}

TEST_P(CouchServerTest, OpenRevsAsJsonAndMultipart) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", R"({"v":1})");
  auto r = Req("GET", "/db/d?open_revs=all");
  ASSERT_EQ(r.status, 200);
  auto d = J(r);
  ASSERT_EQ(d.Size(), 1u);
  EXPECT_EQ(Str(d[0]["ok"], "_rev"), rev);
  r = Req("GET", "/db/d?open_revs=%5B%22" + rev + "%22,%229-deadbeef%22%5D");
  d = J(r);
  ASSERT_EQ(d.Size(), 2u);
  EXPECT_EQ(Str(d[1], "missing"), "9-deadbeef");

  r = Req("GET", "/db/d?open_revs=all&revs=true", "", {{"Accept", "multipart/mixed"}});
  ASSERT_EQ(r.status, 200);
  std::string ct = r.HeaderOr("content-type");
  ASSERT_EQ(ct.rfind("multipart/mixed; boundary=\"", 0), 0u) << ct;
  std::string boundary = ct.substr(ct.find('"') + 1);
  boundary.pop_back();
  EXPECT_NE(r.body.find("--" + boundary + "\r\nContent-Type: application/json\r\n\r\n{"),
            std::string::npos);
  EXPECT_NE(r.body.find("--" + boundary + "--"), std::string::npos);
  EXPECT_NE(r.body.find("\"_revisions\""), std::string::npos);
}

// Each malformed open_revs gets CouchDB's 400 (chttpd_db:parse_doc_query
// decodes it as JSON and hands it to couch_doc:parse_revs), on a document
// that exists or not; an empty list asks for nothing.
TEST_P(CouchServerTest, OpenRevsMalformedValuesAreBadRequests) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  const std::pair<const char*, const char*> bad[] = {
      {"notjson", "invalid UTF-8 JSON"},
      {"%5B%221-a%22", "invalid UTF-8 JSON"},
      {"%22all2%22", "Invalid list of revisions"},
      {"%7B%7D", "Invalid list of revisions"},
      {"7", "Invalid list of revisions"},
      {"null", "Invalid list of revisions"},
      {"%5B1%5D", "Invalid rev format"},
      {"%5Bnull%5D", "Invalid rev format"},
      {"%5B%5B%221-a%22%5D%5D", "Invalid rev format"},
      {"%5B%22abc%22%5D", "Invalid rev format"},
      {"%5B%22x-abc%22%5D", "Invalid rev format"},
      {"%5B%22-1-abc%22%5D", "Invalid rev format"},
      {"%5B%221-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz%22%5D", "Invalid rev format"},
  };
  for (const char* id : {"d", "nope"}) {
    for (const auto& [value, reason] : bad) {
      for (const char* accept : {"application/json", "multipart/mixed"}) {
        auto r = Req("GET", std::string("/db/") + id + "?open_revs=" + value, "",
                     {{"Accept", accept}});
        EXPECT_EQ(r.status, 400) << id << " " << value << " " << r.body;
        EXPECT_EQ(Str(J(r), "error"), "bad_request") << value;
        EXPECT_EQ(Str(J(r), "reason"), reason) << value;
      }
    }
  }
  auto r = Req("GET", "/db/d?open_revs=%5B%5D");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(J(r).Size(), 0u);
  r = Req("GET", "/db/d?open_revs=%5B%22" + rev + "%22%5D");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(J(r).Size(), 1u);
}

// Revisions CouchDB's parse_rev takes that no stored revision can be
// (generation 0 or past 64 bits, an empty id) are looked up and not found;
// a 32-character id that is not hex is malformed; a signed generation is
// read as its number.
TEST_P(CouchServerTest, RevsAreParsedAsCouchDBParsesThem) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  const std::string zs = "1-" + std::string(32, 'z');
  for (const std::string bad : {std::string("1-"), std::string("0-abc"), std::string("+2-abc"),
                                std::string("99999999999999999999999-abc")}) {
    auto r = Req("PUT", "/db/d?rev=" + http::PercentEncode(bad), "{}");
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "error"), "conflict") << bad;
    r = Req("PUT", "/db/d", R"({"_rev":")" + bad + R"("})");
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    r = Req("PUT", "/db/new", R"({"_rev":")" + bad + R"("})");
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    r = Req("PUT", "/db/d", "{}", {{"If-Match", "\"" + bad + "\""}});
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    r = Req("DELETE", "/db/d?rev=" + http::PercentEncode(bad));
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    r = Req("DELETE", "/db/nope?rev=" + http::PercentEncode(bad));
    EXPECT_EQ(r.status, 404) << bad << " " << r.body;
    r = Req("GET", "/db/d?rev=" + http::PercentEncode(bad));
    EXPECT_EQ(r.status, 404) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "missing") << bad;
    // new_edits=false would store it in CouchDB; settee cannot (but "+2-abc" is "2-abc").
    if (bad[0] == '+') continue;
    r = Req("PUT", "/db/d?new_edits=false", R"({"_rev":")" + bad + R"("})");
    EXPECT_EQ(r.status, 400) << bad << " " << r.body;
  }
  for (const std::string& path : {"/db/d?rev=" + zs, std::string("/db/d")}) {
    auto r = Req("PUT", path, R"({"_rev":")" + zs + R"("})");
    EXPECT_EQ(r.status, 400) << path << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  }
  EXPECT_EQ(Req("GET", "/db/d?rev=" + zs).status, 400);
  EXPECT_EQ(Req("DELETE", "/db/d?rev=" + zs).status, 400);
  // chttpd_db opens the document before it parses the rev: a missing or
  // deleted one is its 404 whatever the rev.
  for (const std::string& bad : {zs, std::string("x"), std::string("-1-a")}) {
    auto r = Req("DELETE", "/db/nope?rev=" + http::PercentEncode(bad));
    EXPECT_EQ(r.status, 404) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "reason"), "missing") << bad;
    EXPECT_EQ(Req("DELETE", "/db/d?rev=" + http::PercentEncode(bad)).status, 400) << bad;
  }
  std::string gone = PutDoc("db", "gone", "{}");
  ASSERT_EQ(Req("DELETE", "/db/gone?rev=" + gone).status, 200);
  auto gone_r = Req("DELETE", "/db/gone?rev=x");
  EXPECT_EQ(gone_r.status, 404) << gone_r.body;
  EXPECT_EQ(Str(J(gone_r), "reason"), "deleted");
  // "+1-x" is "1-x".
  auto r = Req("GET", "/db/d?rev=%2B" + rev);
  EXPECT_EQ(r.status, 200) << r.body;
  r = Req("PUT", "/db/d?rev=%2B" + rev, R"({"_rev":")" + rev + R"("})");
  EXPECT_EQ(r.status, 201) << r.body;
  // open_revs: each such revision is missing, in its place, as rev_to_str prints it.
  std::string rev2 = Str(J(r), "rev");
  r = Req("GET", "/db/d?open_revs=" + http::PercentEncode(R"(["1-","00-a",")" + rev2 + R"("])"));
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  ASSERT_EQ(d.Size(), 3u) << r.body;
  EXPECT_EQ(Str(d[0], "missing"), "1-");
  EXPECT_EQ(Str(d[1], "missing"), "0-a");
  EXPECT_EQ(Str(d[2]["ok"], "_rev"), rev2);
}

TEST_P(CouchServerTest, RevsDiffAndMissingRevs) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  auto r = Req("POST", "/db/_revs_diff",
               R"({"d":[")" + rev + R"(","2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],"new":["1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  ASSERT_TRUE(d.HasMember("d"));
  ASSERT_EQ(d["d"]["missing"].Size(), 1u);
  EXPECT_EQ(std::string(d["d"]["missing"][0].GetString()), "2-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_TRUE(d["d"].HasMember("possible_ancestors"));
  EXPECT_EQ(std::string(d["d"]["possible_ancestors"][0].GetString()), rev);
  EXPECT_EQ(d["new"]["missing"].Size(), 1u);
  r = Req("POST", "/db/_revs_diff", R"({"d":[")" + rev + R"("]})");
  EXPECT_EQ(r.body, "{}\n");
  r = Req("POST", "/db/_missing_revs", R"({"new":["1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]})");
  d = J(r);
  EXPECT_EQ(d["missing_revs"]["new"].Size(), 1u);
  EXPECT_EQ(Req("POST", "/db/_revs_diff", R"({"d":"x"})").status, 400);
}

// _bulk_docs reads each _rev as chttpd_db does (couch_doc:from_json_obj,
// parse_rev, for every document before any is written): a malformed one
// refuses the request; "+1-x" is "1-x"; one no stored revision can be is
// its document's conflict (couch_db:prep_and_validate_updates), or with
// new_edits=false its document's refusal, since settee cannot store it,
// unless _revisions names the revision in its place.
TEST_P(CouchServerTest, BulkDocsReadsRevsAsCouchDBParsesThem) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", R"({"v":0})");
  const std::string zs = "1-" + std::string(32, 'z');
  auto r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"a"},{"_id":"x","_rev":")" + zs + R"("}]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  EXPECT_EQ(Req("GET", "/db/a").status, 404);

  r = Req("POST", "/db/_bulk_docs",
          R"({"docs":[{"_id":"d","_rev":"1-","v":1},{"_id":"new","_rev":"0-abc"},)"
          R"({"_id":"d","_rev":"99999999999999999999999-abc"},{"_rev":"00-a"},{"_id":"ok"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  auto d = J(r);
  ASSERT_EQ(d.Size(), 5u) << r.body;
  for (rapidjson::SizeType i : {0u, 1u, 2u, 3u}) {
    EXPECT_EQ(Str(d[i], "error"), "conflict") << r.body;
    EXPECT_EQ(Str(d[i], "reason"), "Document update conflict.") << r.body;
  }
  EXPECT_EQ(Str(d[0], "id"), "d");
  EXPECT_EQ(Str(d[1], "id"), "new");
  EXPECT_EQ(Str(d[3], "id").size(), 32u) << r.body;  // the id it would have got
  EXPECT_TRUE(d[4]["ok"].GetBool()) << r.body;
  EXPECT_EQ(Req("GET", "/db/new").status, 404);
  EXPECT_EQ(Str(J(Req("GET", "/db/d")), "_rev"), rev);

  // A sign and leading zeros are list_to_integer's: "+1-h" and "01-h" are "1-h".
  r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"d","_rev":"+)" + rev + R"(","v":2}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  ASSERT_TRUE(J(r)[0].HasMember("ok")) << r.body;
  std::string rev2 = Str(J(r)[0], "rev");
  EXPECT_EQ(rev2.substr(0, 2), "2-");
  r = Req("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"d","_rev":"0)" + rev2 + R"(","v":3}]})");
  ASSERT_TRUE(J(r)[0].HasMember("ok")) << r.body;
  EXPECT_EQ(Str(J(Req("GET", "/db/d")), "_rev").substr(0, 2), "3-");

  // new_edits=false: "+3-abc" is stored as 3-abc; "0-abc" cannot be, and is
  // answered in its place; _revisions wins over a _rev that names nothing.
  r = Req("POST", "/db/_bulk_docs",
          R"({"new_edits":false,"docs":[{"_id":"r","_rev":"0-abc"},{"_id":"s","_rev":"+3-abc"},)"
          R"({"_id":"t","_rev":"1-","_revisions":{"start":2,"ids":["b","a"]}}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  d = J(r);
  ASSERT_EQ(d.Size(), 1u) << r.body;
  EXPECT_EQ(Str(d[0], "id"), "r");
  EXPECT_EQ(Str(d[0], "rev"), "0-abc");
  EXPECT_EQ(Str(d[0], "error"), "bad_request");
  EXPECT_EQ(Req("GET", "/db/r").status, 404);
  EXPECT_EQ(Str(J(Req("GET", "/db/s")), "_rev"), "3-abc");
  EXPECT_EQ(Str(J(Req("GET", "/db/t")), "_rev"), "2-b");

  // POST /db reads its body's _rev so too (chttpd_db's doc_from_json_obj_validate).
  for (const std::string bad : {std::string("1-"), std::string("0-abc"), std::string("+9-abc")}) {
    r = Req("POST", "/db", R"({"_id":"d","_rev":")" + bad + R"("})");
    EXPECT_EQ(r.status, 409) << bad << " " << r.body;
    EXPECT_EQ(Str(J(r), "error"), "conflict") << bad;
  }
  r = Req("POST", "/db", R"({"_id":"d","_rev":")" + zs + R"("})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format");
  const std::string rev3 = Str(J(Req("GET", "/db/d")), "_rev");
  r = Req("POST", "/db", R"({"_id":"d","_rev":"+)" + rev3 + R"("})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(J(r), "rev").substr(0, 2), "4-") << r.body;
}

// fabric:get_missing_revs parses each revision (couch_doc:parse_rev): one
// no stored revision can be is missing, as rev_to_str prints it, and counts
// for the possible ancestors by its generation; a malformed one is 400.
TEST_P(CouchServerTest, RevsDiffReadsRevsAsCouchDBParsesThem) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  auto r = Req("POST", "/db/_revs_diff",
               R"({"d":[")" + rev + R"(","1-","00-a","+1-x"],"e":["3-"],"new":["0-a"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"d":{"missing":["1-","0-a","1-x"]},"e":{"missing":["3-"]},"new":{"missing":["0-a"]}})" "\n");
  // A generation past every leaf's, however large, makes them possible ancestors.
  r = Req("POST", "/db/_revs_diff", R"({"d":["2-","99999999999999999999999-a"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"d":{"missing":["2-","99999999999999999999999-a"],"possible_ancestors":[")" + rev +
                        R"("]}})" "\n");
  r = Req("POST", "/db/_missing_revs", R"({"d":["1-",")" + rev + R"("],"x":["+01-a"]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"missing_revs":{"d":["1-"],"x":["1-a"]}})" "\n");
  for (const char* path : {"/db/_revs_diff", "/db/_missing_revs"}) {
    for (const std::string& bad : std::vector<std::string>{"x", "-1-a", "1-" + std::string(32, 'z')}) {
      r = Req("POST", path, R"({"d":[")" + bad + R"("]})");
      EXPECT_EQ(r.status, 400) << path << " " << bad << " " << r.body;
      EXPECT_EQ(Str(J(r), "reason"), "Invalid rev format") << path << " " << bad;
    }
  }
}

TEST_P(CouchServerTest, BulkGetShapes) {
  CreateDb("db");
  std::string rev = PutDoc("db", "a", R"({"v":1})");
  auto r = Req("POST", "/db/_bulk_get?revs=true",
               R"({"docs":[{"id":"a"},{"id":"a","rev":")" + rev +
                   R"("},{"id":"missing"},{"noid":1}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  auto& results = d["results"];
  ASSERT_EQ(results.Size(), 4u);
  EXPECT_EQ(Str(results[0], "id"), "a");
  EXPECT_EQ(Str(results[0]["docs"][0]["ok"], "_rev"), rev);
  EXPECT_TRUE(results[0]["docs"][0]["ok"].HasMember("_revisions"));
  EXPECT_EQ(Str(results[1]["docs"][0]["ok"], "_id"), "a");
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "error"), "not_found");
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "id"), "missing");
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "rev"), "undefined");  // asked without a rev
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "reason"), "missing");
  EXPECT_EQ(Str(results[3]["docs"][0]["error"], "error"), "bad_request");
  // bulk_get_parse_doc_query reads flags as a document read does: another
  // value than "true" is no error and turns nothing off.
  r = Req("POST", "/db/_bulk_get?revs=yes", R"({"docs":[{"id":"a"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_FALSE(J(r)["results"][0]["docs"][0]["ok"].HasMember("_revisions")) << r.body;
  r = Req("POST", "/db/_bulk_get?revs=true&revs=false", R"({"docs":[{"id":"a"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(J(r)["results"][0]["docs"][0]["ok"].HasMember("_revisions")) << r.body;
}

// An item without a rev opens every leaf (chttpd_db:bulk_get_parse_revs
// asks open_revs for `all`): a conflicted document's revisions, a deleted
// document's tombstone; a missing one is not_found with rev "undefined".
// Before, the winner alone, and a deleted document was not_found "deleted".
TEST_P(CouchServerTest, BulkGetItemWithoutRevOpensEveryLeaf) {
  CreateDb("db");
  std::string rev = PutDoc("db", "c", R"({"v":1})");
  ASSERT_EQ(Req("PUT", "/db/c?new_edits=false", R"({"_rev":"1-b","v":2})").status, 201);
  std::string gone = PutDoc("db", "gone", "{}");
  auto r = Req("DELETE", "/db/gone?rev=" + gone);
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string tombstone = Str(J(r), "rev");
  r = Req("POST", "/db/_bulk_get", R"({"docs":[{"id":"c"},{"id":"gone"},{"id":"nope"},{"id":"c","rev":"1-b"}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  auto& results = d["results"];
  ASSERT_EQ(results.Size(), 4u) << r.body;
  std::set<std::string> leaves;
  for (const auto& item : results[0]["docs"].GetArray()) leaves.insert(Str(item["ok"], "_rev"));
  EXPECT_EQ(leaves, (std::set<std::string>{rev, "1-b"})) << r.body;
  ASSERT_EQ(results[1]["docs"].Size(), 1u) << r.body;
  EXPECT_EQ(Str(results[1]["docs"][0]["ok"], "_rev"), tombstone) << r.body;
  EXPECT_TRUE(results[1]["docs"][0]["ok"]["_deleted"].GetBool()) << r.body;
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "rev"), "undefined") << r.body;
  EXPECT_EQ(Str(results[2]["docs"][0]["error"], "reason"), "missing") << r.body;
  ASSERT_EQ(results[3]["docs"].Size(), 1u) << r.body;
  EXPECT_EQ(Str(results[3]["docs"][0]["ok"], "_rev"), "1-b") << r.body;
}

// An item's rev and atts_since are parsed as chttpd_db:bulk_get_parse_revs
// does (couch_doc:parse_rev), after its id is checked: a revision no stored
// one can be is not found, as rev_to_str prints it; a malformed rev or
// atts_since entry is the item's bad_request, naming the value that failed.
TEST_P(CouchServerTest, BulkGetReadsRevsAsCouchDBParsesThem) {
  CreateDb("db");
  std::string rev = PutDoc("db", "d", "{}");
  auto r = Req("POST", "/db/_bulk_get",
               R"({"docs":[{"id":"d","rev":"1-"},{"id":"nodoc","rev":"00-a"},{"id":"d","rev":"1-)" +
                   std::string(32, 'z') + R"("},{"id":"d","atts_since":["x"]},{"id":"d","atts_since":"x"},)"
                   R"({"id":"d","rev":"+)" + rev + R"(","atts_since":[5]},{"id":"_x","rev":"x"},)"
                   R"({"id":"d","rev":"+)" + rev + R"(","atts_since":["1-"]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  auto& results = d["results"];
  ASSERT_EQ(results.Size(), 8u) << r.body;
  auto error = [&](size_t i) -> const json::Value& { return results[i]["docs"][0]["error"]; };
  EXPECT_EQ(Str(error(0), "rev"), "1-");
  EXPECT_EQ(Str(error(0), "error"), "not_found");
  EXPECT_EQ(Str(error(0), "reason"), "missing");
  EXPECT_EQ(Str(error(1), "rev"), "0-a");
  EXPECT_EQ(Str(error(1), "error"), "not_found");
  EXPECT_EQ(Str(error(2), "rev"), "1-" + std::string(32, 'z'));
  EXPECT_EQ(Str(error(2), "reason"), "Invalid rev format");
  EXPECT_EQ(Str(error(3), "rev"), "x");
  EXPECT_EQ(Str(error(3), "reason"), "Invalid rev format");
  EXPECT_EQ(Str(error(4), "rev"), "x");
  EXPECT_EQ(Str(error(4), "reason"), "att_since value must be array of revs.");
  EXPECT_EQ(error(5)["rev"].GetInt(), 5) << r.body;
  EXPECT_EQ(Str(error(5), "reason"), "Invalid rev format");
  EXPECT_TRUE(error(6)["rev"].IsNull()) << r.body;  // the id fails first
  EXPECT_EQ(Str(results[7]["docs"][0]["ok"], "_rev"), rev) << r.body;
}

// chttpd_db:bulk_get_parse_doc_query refuses the parameters each item of
// the body names for itself (or that would write), the first in the query
// string's order, once the body has its docs.
TEST_P(CouchServerTest, BulkGetRefusesParametersItsItemsName) {
  CreateDb("db");
  PutDoc("db", "a", "{}");
  const std::string docs = R"({"docs":[{"id":"a"}]})";
  for (const char* query : {"open_revs=all", "new_edits=false", "w=1", "rev=1-abc", "atts_since=%5B%5D"}) {
    auto r = Req("POST", std::string("/db/_bulk_get?revs=true&") + query, docs);
    EXPECT_EQ(r.status, 400) << query << " " << r.body;
    const std::string name = std::string(query).substr(0, std::string(query).find('='));
    EXPECT_EQ(Str(J(r), "error"), "bad_request") << query;
    EXPECT_EQ(Str(J(r), "reason"), "\"" + name + "\" query parameter is not acceptable") << query;
  }
  auto r = Req("POST", "/db/_bulk_get?w=1&rev=1-abc", docs);
  EXPECT_EQ(Str(J(r), "reason"), R"("w" query parameter is not acceptable)") << r.body;
  r = Req("POST", "/db/_bulk_get?w=1", "{}");
  EXPECT_EQ(Str(J(r), "reason"), "Missing JSON list of 'docs'.") << r.body;
  EXPECT_EQ(Req("POST", "/db/_bulk_get?W=1&revision=1", docs).status, 200);
}

// ---- client strings come back as the same strings

// Strings that look like other JSON (digits, true, null, numbers, arrays),
// need escaping, or are not ASCII, assembled at random (seeded: the same
// strings every run) so that every place that gives a client's string back
// is tried with all of them.
std::vector<std::string> TrickyStrings(size_t n) {
  static const char* const kPieces[] = {
      "1000", "0", "2", "-1", "1e5", "3.25", "true", "false", "null", "[1]", "{}", "{\"a\":1}",
      "\"", "\\", "\\n", "\n", "\t", "\x01", "\x1f", "/", " ", "%2F", "?", "#", "&", "+", "=",
      "\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x98\x80", "\xef\xbf\xbf", "\xee\x80\x80",
      "a", "Z", "-", "_", ",", ":", "\\u0041", "'", "<x>"};
  std::mt19937 rng(20261201);
  std::vector<std::string> out = {"1000", "2", "0", "true", "null", "false", "-1", "1e5",
                                  "[\"x\"]", "\"quoted\"", "back\\slash", "\xf0\x9f\x98\x80"};
  std::uniform_int_distribution<size_t> piece(0, std::size(kPieces) - 1);
  std::uniform_int_distribution<int> length(1, 5);
  while (out.size() < n) {
    std::string s;
    for (int i = length(rng); i > 0; --i) s += kPieces[piece(rng)];
    if (s[0] == '_') s.insert(0, "x");  // ids may not start with '_'
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

TEST_P(CouchServerTest, ClientStringsRoundTripUnchanged) {
  CreateDb("db");
  const std::vector<std::string> all = TrickyStrings(80);
  // The first half are written as documents, the rest stay missing.
  const size_t half = all.size() / 2;
  std::vector<std::string> present(all.begin(), all.begin() + half);
  std::vector<std::string> missing(all.begin() + half, all.end());
  auto json_list = [](const std::vector<std::string>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + json::Quote(v[i]);
    return out + "]";
  };
  auto is = [](const json::Value& v, const std::string& s) {
    return v.IsString() && std::string(v.GetString(), v.GetStringLength()) == s;
  };

  // Document ids: PUT by URL, and _bulk_docs results.
  for (size_t i = 0; i < present.size(); i += 2) {
    auto r = Req("PUT", "/db/" + http::PercentEncode(present[i]), "{}");
    ASSERT_EQ(r.status, 201) << r.body;
    EXPECT_TRUE(is(J(r)["id"], present[i])) << r.body;
  }
  std::string docs = R"({"docs":[)";
  for (size_t i = 1; i < present.size(); i += 2) {
    docs += (i > 1 ? "," : "") + std::string(R"({"_id":)") + json::Quote(present[i]) + "}";
  }
  auto r = Req("POST", "/db/_bulk_docs", docs + "]}");
  ASSERT_EQ(r.status, 201) << r.body;
  auto written = J(r);
  for (size_t i = 1, k = 0; i < present.size(); i += 2, ++k) {
    EXPECT_TRUE(is(written[k]["id"], present[i])) << present[i];
  }
  for (const std::string& id : present) {
    r = Req("GET", "/db/" + http::PercentEncode(id));
    ASSERT_EQ(r.status, 200) << id;
    EXPECT_TRUE(is(J(r)["_id"], id)) << r.body;
  }

  // _all_docs keys, POST and GET: rows and not_found rows keep each key.
  const std::string keys = json_list(all);
  for (int post = 0; post < 2; ++post) {
    r = post ? Req("POST", "/db/_all_docs", R"({"keys":)" + keys + "}")
             : Req("GET", "/db/_all_docs?keys=" + http::PercentEncode(keys));
    ASSERT_EQ(r.status, 200) << r.body;
    auto d = J(r);
    ASSERT_EQ(d["rows"].Size(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
      const json::Value& row = d["rows"][static_cast<rapidjson::SizeType>(i)];
      EXPECT_TRUE(is(row["key"], all[i])) << "post=" << post << " " << all[i];
      if (i < half) {
        EXPECT_TRUE(is(row["id"], all[i])) << all[i];
      } else {
        EXPECT_EQ(Str(row, "error"), "not_found") << all[i];
      }
    }
  }
  // key= for one document, and the same through /queries.
  for (const std::string& id : {present.front(), present.back()}) {
    auto d = J(Req("GET", "/db/_all_docs?key=" + http::PercentEncode(json::Quote(id))));
    ASSERT_EQ(d["rows"].Size(), 1u) << id;
    EXPECT_TRUE(is(d["rows"][0]["key"], id));
  }
  r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"keys":)" + keys + "}]}");
  ASSERT_EQ(r.status, 200);
  auto q = J(r)["results"][0]["rows"].GetArray();
  for (size_t i = 0; i < all.size(); ++i) EXPECT_TRUE(is(q[static_cast<rapidjson::SizeType>(i)]["key"], all[i]));
  // Keys that are not strings come back as the same JSON values.
  const char* others = R"([1000,null,true,-1.5,{"a":[1]},["x"]])";
  r = Req("POST", "/db/_all_docs", std::string(R"({"keys":)") + others + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  auto sent = ParseJson(others);
  auto rows = J(r);
  ASSERT_EQ(rows["rows"].Size(), sent.Size());
  for (rapidjson::SizeType i = 0; i < sent.Size(); ++i) {
    EXPECT_TRUE(rows["rows"][i]["key"] == sent[i]) << r.body;
    EXPECT_EQ(Str(rows["rows"][i], "error"), "not_found");
  }

  // _bulk_get: found and missing ids, and revs that do not exist.
  std::string items = R"({"docs":[)";
  for (size_t i = 0; i < all.size(); ++i) {
    items += (i ? "," : "") + std::string(R"({"id":)") + json::Quote(all[i]) +
             R"(,"rev":)" + json::Quote("9-" + all[i]) + "}";
  }
  r = Req("POST", "/db/_bulk_get", items + "]}");
  ASSERT_EQ(r.status, 200) << r.body;
  auto got = J(r);
  for (size_t i = 0; i < all.size(); ++i) {
    const json::Value& res = got["results"][static_cast<rapidjson::SizeType>(i)];
    EXPECT_TRUE(is(res["id"], all[i])) << all[i];
    EXPECT_TRUE(is(res["docs"][0]["error"]["id"], all[i])) << all[i];
    EXPECT_TRUE(is(res["docs"][0]["error"]["rev"], "9-" + all[i])) << all[i];
  }

  // _revs_diff: ids as member names and revs in "missing".
  std::string diff = "{";
  for (size_t i = 0; i < all.size(); ++i) {
    diff += (i ? "," : "") + json::Quote(all[i]) + ":[" + json::Quote("7-" + all[i]) + "]";
  }
  r = Req("POST", "/db/_revs_diff", diff + "}");
  ASSERT_EQ(r.status, 200) << r.body;
  auto missing_revs = J(r);
  ASSERT_EQ(missing_revs.MemberCount(), all.size());
  for (const std::string& id : all) {
    auto m = missing_revs.FindMember(json::StringValue(id, missing_revs.GetAllocator()));
    ASSERT_NE(m, missing_revs.MemberEnd()) << id;
    EXPECT_TRUE(is(m->value["missing"][0], "7-" + id)) << id;
  }

  // _changes with doc_ids, in the query and in the body.
  for (int post = 0; post < 2; ++post) {
    r = post ? Req("POST", "/db/_changes?filter=_doc_ids", R"({"doc_ids":)" + keys + "}")
             : Req("GET", "/db/_changes?filter=_doc_ids&doc_ids=" + http::PercentEncode(keys));
    ASSERT_EQ(r.status, 200) << r.body;
    std::set<std::string> ids;
    for (const auto& row : J(r)["results"].GetArray()) ids.insert(Str(row, "id"));
    EXPECT_EQ(ids, std::set<std::string>(present.begin(), present.end())) << "post=" << post;
  }
}

// ---- maintenance

TEST_P(CouchServerTest, RevsLimitSecurityCompactCommit) {
  CreateDb("db");
  EXPECT_EQ(Req("GET", "/db/_revs_limit").body, "1000\n");
  EXPECT_EQ(Req("PUT", "/db/_revs_limit", "5").status, 200);
  EXPECT_EQ(Req("GET", "/db/_revs_limit").body, "5\n");
  EXPECT_EQ(Req("PUT", "/db/_revs_limit", "\"x\"").status, 400);
  EXPECT_EQ(Req("PUT", "/db/_revs_limit", "0").status, 400);

  auto sec0 = J(Req("GET", "/db/_security"));  // CouchDB 3's admin-only default
  EXPECT_EQ(std::string(sec0["members"]["roles"][0].GetString()), "_admin");
  std::string sec = R"({"admins":{"names":["boss"],"roles":[]},"members":{"names":[],"roles":["r"]}})";
  EXPECT_EQ(Req("PUT", "/db/_security", sec).status, 200);
  EXPECT_EQ(J(Req("GET", "/db/_security"))["admins"]["names"].Size(), 1u);
  EXPECT_EQ(Req("PUT", "/db/_security", "[1]").status, 400);
  EXPECT_EQ(Req("PUT", "/db/_security", R"({"admins":[]})").status, 400);

  EXPECT_EQ(Req("POST", "/db/_compact", "", {{"Content-Type", "application/json"}}).status, 202);
  EXPECT_EQ(Req("POST", "/db/_compact").status, 415);
  auto r = Req("POST", "/db/_ensure_full_commit", "", {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(Str(J(r), "instance_start_time"), "0");
}

// GET /db answers compact_running from the _compact request until the
// compaction ends (PouchDB's compact() polls it, then reads).
TEST_P(CouchServerTest, CompactRunningFromTheRequestToTheEnd) {
  CreateDb("db");
  EXPECT_FALSE(J(Req("GET", "/db"))["compact_running"].GetBool());
  // Every worker busy, so the compaction stays queued until released.
  std::promise<void> release, hold;
  std::shared_future<void> released = release.get_future().share();
  std::atomic<int> blocked{0};
  const int workers = server_->couch()->workers().size();
  for (int i = 0; i < workers; ++i) {
    server_->couch()->workers().Post([released, &blocked] {
      ++blocked;
      released.wait();
    });
  }
  while (blocked.load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(Req("POST", "/db/_compact", "", {{"Content-Type", "application/json"}}).status, 202);
  EXPECT_TRUE(J(Req("GET", "/db"))["compact_running"].GetBool());
  auto dbs = J(Req("POST", "/_dbs_info", R"({"keys":["db"]})"));
  EXPECT_TRUE(dbs[0]["info"]["compact_running"].GetBool());
  release.set_value();
  bool running = true;
  for (int i = 0; i < 2000 && running; ++i) {
    running = J(Req("GET", "/db"))["compact_running"].GetBool();
    if (running) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_FALSE(running);
  // The flag is the instance's: a database of the same name created while
  // the deleted one compacts is not compacting.
  std::shared_future<void> held = hold.get_future().share();
  for (int i = 0; i < workers; ++i) {
    server_->couch()->workers().Post([held, &blocked] {
      ++blocked;
      held.wait();
    });
  }
  while (blocked.load() < 2 * workers) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(Req("POST", "/db/_compact", "", {{"Content-Type", "application/json"}}).status, 202);
  ASSERT_EQ(Req("DELETE", "/db").status, 200);
  CreateDb("db");
  EXPECT_FALSE(J(Req("GET", "/db"))["compact_running"].GetBool());
  hold.set_value();
}

// ---- _changes

TEST_P(CouchServerTest, ChangesNormalFeed) {
  CreateDb("db");
  std::string rev_a = PutDoc("db", "a", "{}");
  PutDoc("db", "b", "{}");
  ASSERT_EQ(Req("PUT", "/db/a?rev=" + rev_a, R"({"v":2})").status, 201);
  auto r = Req("GET", "/db/_changes");
  ASSERT_EQ(r.status, 200);
  auto d = J(r);
  ASSERT_EQ(d["results"].Size(), 2u);  // each doc once, at its latest seq
  EXPECT_EQ(Str(d["results"][0], "id"), "b");
  EXPECT_EQ(Str(d["results"][1], "id"), "a");
  EXPECT_EQ(d["last_seq"].GetUint64(), d["results"][1]["seq"].GetUint64());
  EXPECT_TRUE(d["results"][0]["changes"][0].HasMember("rev"));

  d = J(Req("GET", "/db/_changes?limit=1"));
  EXPECT_EQ(d["results"].Size(), 1u);
  uint64_t first = d["last_seq"].GetUint64();
  d = J(Req("GET", "/db/_changes?since=" + std::to_string(first)));
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "a");
  d = J(Req("GET", "/db/_changes?since=%22" + std::to_string(first) + "%22"));
  EXPECT_EQ(d["results"].Size(), 1u);
  d = J(Req("GET", "/db/_changes?descending=true&limit=1"));
  EXPECT_EQ(Str(d["results"][0], "id"), "a");
  d = J(Req("GET", "/db/_changes?include_docs=true"));
  EXPECT_EQ(d["results"][1]["doc"]["v"].GetInt(), 2);
  d = J(Req("GET", "/db/_changes?since=now"));
  EXPECT_EQ(d["results"].Size(), 0u);
  EXPECT_EQ(d["last_seq"].GetUint64(), J(Req("GET", "/db"))["update_seq"].GetUint64());

  d = J(Req("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22b%22%5D"));
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "b");
  r = Req("POST", "/db/_changes?filter=_doc_ids", R"({"doc_ids":["a"]})");
  d = J(r);
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "a");
  EXPECT_EQ(Req("GET", "/db/_changes?filter=_doc_ids").status, 400);
  EXPECT_EQ(Req("GET", "/db/_changes?since=garbage").status, 400);
  EXPECT_EQ(Req("GET", "/db/_changes?feed=bogus").status, 400);
  // Unknown filters get couch_changes:configure_filter's reasons.
  r = Req("GET", "/db/_changes?filter=_bogus");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "reason"), "unknown builtin filter name");
  r = Req("GET", "/db/_changes?filter=nameonly");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "reason"), "`filter` must be of the form `designname/filtername`");
}

// Normal and longpoll feeds end with "pending", the changes after last_seq
// (CouchDB's fabric_rpc:changes counts them), which PouchDB's replicator
// reports; a feed cut by its limit has some, one that ran out none.
TEST_P(CouchServerTest, ChangesReportPending) {
  CreateDb("db");
  std::string docs = R"({"docs":[)";
  for (int i = 0; i < 10; ++i) docs += (i ? "," : "") + std::string(R"({"_id":"d)") + std::to_string(i) + "\"}";
  ASSERT_EQ(Req("POST", "/db/_bulk_docs", docs + "]}").status, 201);
  std::string rev = Str(J(Req("GET", "/db/d3")), "_rev");
  ASSERT_EQ(Req("PUT", "/db/d3?rev=" + rev, "{}").status, 201);  // seq 11; seq 4 superseded
  PutDoc("db", "e", "{}");                                        // seq 12
  // 11 changes in all: d0..d9 once each, and e.
  uint64_t since = 0;
  uint64_t seen = 0;
  for (int batch = 0; batch < 5; ++batch) {
    auto r = Req("GET", "/db/_changes?style=all_docs&limit=3&since=" + std::to_string(since));
    ASSERT_EQ(r.status, 200);
    auto d = J(r);
    seen += d["results"].Size();
    ASSERT_TRUE(d.HasMember("pending")) << r.body;
    EXPECT_EQ(d["pending"].GetUint64(), 11 - seen) << r.body;
    since = d["last_seq"].GetUint64();
  }
  EXPECT_EQ(seen, 11u);
  auto d = J(Req("GET", "/db/_changes"));
  EXPECT_EQ(d["pending"].GetUint64(), 0u);
  // Filtered feeds count every change after last_seq, as CouchDB does.
  d = J(Req("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22d1%22,%22d2%22%5D&limit=1"));
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(d["pending"].GetUint64(), 9u);
  // Descending: the changes below the last row.
  d = J(Req("GET", "/db/_changes?descending=true&limit=4"));
  ASSERT_EQ(d["results"].Size(), 4u);
  EXPECT_EQ(d["pending"].GetUint64(), 7u);
  // Longpoll with changes waiting answers at once, with the same count.
  d = J(Req("GET", "/db/_changes?feed=longpoll&limit=2"));
  EXPECT_EQ(d["pending"].GetUint64(), 9u);
  // Compaction keeps the count.
  ASSERT_EQ(Req("POST", "/db/_compact", "", {{"Content-Type", "application/json"}}).status, 202);
  for (int i = 0; i < 200 && J(Req("GET", "/_active_tasks")).Size() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  d = J(Req("GET", "/db/_changes?limit=2"));
  EXPECT_EQ(d["pending"].GetUint64(), 9u);
  // A filter this endpoint applies (_design) counts its limit in the rows
  // it lets through, not in those it hides.
  PutDoc("db", "_design/x", "{}");  // after twelve other changes
  d = J(Req("GET", "/db/_changes?filter=_design&limit=1"));
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "_design/x");
  EXPECT_EQ(d["pending"].GetUint64(), 0u);
  d = J(Req("GET", "/db/_changes?filter=_design&limit=0"));
  EXPECT_EQ(d["results"].Size(), 0u);
}

TEST_P(CouchServerTest, ChangesDeletedAndAllDocsStyle) {
  CreateDb("db");
  std::string rev = PutDoc("db", "a", "{}");
  ASSERT_EQ(Req("DELETE", "/db/a?rev=" + rev).status, 200);
  auto d = J(Req("GET", "/db/_changes?style=all_docs"));
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_TRUE(d["results"][0]["deleted"].GetBool());
}

TEST_P(CouchServerTest, LongpollWaitsForChangeFromAnotherConnection) {
  CreateDb("db");
  PutDoc("db", "before", "{}");
  // The seq before "after", not since=now: on a loaded machine the server
  // may read the request only after the PUT below, and `now` would then
  // skip the very change the poll waits for.
  const int64_t seq = J(Req("GET", "/db"))["update_seq"].GetInt64();
  TestClient waiter(server_->port());
  ASSERT_TRUE(waiter.Send("GET", "/db/_changes?feed=longpoll&since=" + std::to_string(seq)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  PutDoc("db", "after", "{}");
  auto r = waiter.ReadResponse();
  ASSERT_TRUE(r.has_value());
  auto d = ParseJson(r->body);
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "after");
}

TEST_P(CouchServerTest, LongpollTimesOutWithEmptyResults) {
  CreateDb("db");
  auto r = Req("GET", "/db/_changes?feed=longpoll&since=now&timeout=50");
  ASSERT_EQ(r.status, 200);
  auto d = J(r);
  EXPECT_EQ(d["results"].Size(), 0u);
  EXPECT_TRUE(d.HasMember("last_seq"));
}

TEST_P(CouchServerTest, LongpollWithHeartbeatStreamsNewlines) {
  CreateDb("db");
  TestClient waiter(server_->port());
  ASSERT_TRUE(waiter.Send("GET", "/db/_changes?feed=longpoll&since=now&heartbeat=20"));
  // Heartbeats arrive while nothing changes; then the change ends the poll.
  std::string head = waiter.ReadUntil("\r\n1\r\n\n\r\n");
  EXPECT_NE(head.find("Transfer-Encoding: chunked"), std::string::npos);
  PutDoc("db", "x", "{}");
  std::string rest = waiter.ReadUntil("0\r\n\r\n");
  EXPECT_NE(rest.find("\"id\":\"x\""), std::string::npos);
  EXPECT_NE(rest.find("\"last_seq\""), std::string::npos);
}

TEST_P(CouchServerTest, ContinuousFeedStreamsRowsThenLastSeq) {
  CreateDb("db");
  PutDoc("db", "a", "{}");
  TestClient c(server_->port());
  ASSERT_TRUE(c.Send("GET", "/db/_changes?feed=continuous&timeout=200"));
  std::string first = c.ReadUntil("\"id\":\"a\"");
  EXPECT_NE(first.find("\"id\":\"a\""), std::string::npos);
  PutDoc("db", "b", "{}");
  std::string rest = c.ReadUntil("0\r\n\r\n");
  EXPECT_NE(rest.find("\"id\":\"b\""), std::string::npos);
  EXPECT_NE(rest.find("{\"last_seq\":"), std::string::npos);
  // With a limit the feed ends at once.
  auto r = Req("GET", "/db/_changes?feed=continuous&limit=1");
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("\"last_seq\""), std::string::npos);
}

TEST_P(CouchServerTest, EventSourceFeed) {
  CreateDb("db");
  PutDoc("db", "a", "{}");
  TestClient c(server_->port());
  ASSERT_TRUE(c.Send("GET", "/db/_changes?feed=eventsource&timeout=100"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->HeaderOr("content-type"), "text/event-stream");
  EXPECT_EQ(r->HeaderOr("cache-control"), "no-cache");
  EXPECT_NE(r->body.find("data: {\"seq\":1,\"id\":\"a\""), std::string::npos) << r->body;
  EXPECT_NE(r->body.find("\nid: 1\n\n"), std::string::npos);
  auto r2 = Req("GET", "/db/_changes?feed=eventsource&timeout=50", "", {{"Last-Event-ID", "1"}});
  EXPECT_EQ(r2.body.find("data:"), std::string::npos);
}

TEST_P(CouchServerTest, ChangesFeedEndsWhenDatabaseIsDeleted) {
  CreateDb("db");
  TestClient waiter(server_->port());
  ASSERT_TRUE(waiter.Send("GET", "/db/_changes?feed=continuous&since=now&heartbeat=1000"));
  // The feed's headers mean it is open: deleting earlier would answer its GET with a 404 instead.
  std::string head = waiter.ReadUntil("\r\n\r\n");
  ASSERT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  ASSERT_EQ(Req("DELETE", "/db").status, 200);
  std::string rest = head + waiter.ReadUntil("0\r\n\r\n");
  EXPECT_NE(rest.find("last_seq"), std::string::npos) << rest;
}

// ---- fsync'd writes run on the worker pool

TEST(CouchServerSyncTest, SyncWritesGoThroughWorkersWhileLoopsServeOthers) {
  TestServerConfig cfg;
  cfg.backend = StoreOptions::Backend::kLevelDB;
  cfg.sync = true;
  TestServer server(cfg);
  TestClient c(server.port());
  ASSERT_EQ(c.Request("PUT", "/db").status, 201);
  std::vector<std::thread> writers;
  std::atomic<int> created{0};
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      TestClient w(server.port());
      for (int i = 0; i < 20; ++i) {
        auto r = w.Request("PUT", "/db/t" + std::to_string(t) + "-" + std::to_string(i), "{}");
        if (r.status == 201) ++created;
      }
    });
  }
  for (int i = 0; i < 20; ++i) EXPECT_EQ(c.Request("GET", "/db").status, 200);
  for (auto& w : writers) w.join();
  EXPECT_EQ(created.load(), 80);
  auto r = c.Request("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"b1"},{"_id":"b2"}]})");
  EXPECT_EQ(r.status, 201);
  auto d = ParseJson(c.Request("GET", "/db").body);
  EXPECT_EQ(d["doc_count"].GetInt(), 82);
}

// ---- extension points: routes and _changes filters from other modules

TEST(CouchServerExtensionTest, RegisteredRoutesAndChangesFilters) {
  TestServerConfig cfg;
  cfg.setup = [](CouchServer& server) {
    server.router().Add("GET", "/{db}/_design/{ddoc}/_view/{view}", [](RequestContext& ctx) {
      return ctx.SendJson(200, R"({"view":)" + json::Quote(ctx.params[2]) + "}");
    });
    // filter=app/odd: docs whose "n" is odd (needs bodies).
    server.SetChangesFilter("*", [](RequestContext&, Database&, const std::string& name,
                                    const json::Value*) -> Result<ChangesFilter> {
      if (name != "app/odd") return Status::NotFound("missing json key: filters");
      ChangesFilter f;
      f.needs_docs = true;
      f.accept = [](const ChangeRow& row) { return row.doc.find("\"n\":1") != std::string::npos; };
      return f;
    });
    server.SetChangesFilter("_selector", [](RequestContext&, Database&, const std::string&,
                                            const json::Value* body) -> Result<ChangesFilter> {
      if (body == nullptr) return Status::BadRequest("Selector must be specified in POST payload");
      ChangesFilter f;
      f.accept = [](const ChangeRow& row) { return row.id == "b"; };
      return f;
    });
  };
  TestServer server(cfg);
  TestClient c(server.port());
  ASSERT_EQ(c.Request("PUT", "/db").status, 201);
  ASSERT_EQ(c.Request("PUT", "/db/a", R"({"n":1})").status, 201);
  ASSERT_EQ(c.Request("PUT", "/db/b", R"({"n":2})").status, 201);
  EXPECT_EQ(c.Request("GET", "/db/_design/app/_view/by_n").body, "{\"view\":\"by_n\"}\n");

  auto d = ParseJson(c.Request("GET", "/db/_changes?filter=app/odd").body);
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "a");
  EXPECT_FALSE(d["results"][0].HasMember("doc"));  // needed by the filter, not asked for
  d = ParseJson(c.Request("GET", "/db/_changes?filter=app/odd&include_docs=true").body);
  EXPECT_TRUE(d["results"][0].HasMember("doc"));
  EXPECT_EQ(c.Request("GET", "/db/_changes?filter=app/nope").status, 404);
  d = ParseJson(c.Request("POST", "/db/_changes?filter=_selector", R"({"selector":{}})").body);
  ASSERT_EQ(d["results"].Size(), 1u);
  EXPECT_EQ(Str(d["results"][0], "id"), "b");
  EXPECT_EQ(c.Request("GET", "/db/_changes?filter=_selector").status, 400);
  EXPECT_EQ(c.Request("GET", "/db/_changes?filter=_view").status, 400);  // none registered
}

// ---- CORS

TEST(CouchServerCorsTest, PreflightAndSimpleRequests) {
  TestServerConfig cfg;
  cfg.couch.cors_origins = {"http://app.example"};
  TestServer server(cfg);
  TestClient c(server.port());
  auto r = c.Request("OPTIONS", "/db/_all_docs", "",
                     {{"Origin", "http://app.example"}, {"Access-Control-Request-Method", "POST"}});
  EXPECT_EQ(r.status, 204);
  EXPECT_EQ(r.HeaderOr("access-control-allow-origin"), "http://app.example");
  EXPECT_EQ(r.HeaderOr("access-control-allow-credentials"), "true");
  EXPECT_NE(r.HeaderOr("access-control-allow-methods").find("PUT"), std::string::npos);
  r = c.Request("GET", "/", "", {{"Origin", "http://app.example"}});
  EXPECT_EQ(r.HeaderOr("access-control-allow-origin"), "http://app.example");
  EXPECT_NE(r.HeaderOr("access-control-expose-headers").find("etag"), std::string::npos);
  r = c.Request("GET", "/", "", {{"Origin", "http://evil.example"}});
  EXPECT_EQ(r.Header("access-control-allow-origin"), nullptr);
}

}  // namespace
}  // namespace settee::testing
