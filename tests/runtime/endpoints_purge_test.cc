// POST /{db}/_purge and /{db}/_purged_infos_limit against CouchDB 3's
// answers (chttpd_db, chttpd_db_test's purge cases), on both backends: the
// purged document leaves _all_docs, _changes and views' and Mango's rows;
// bad input gets CouchDB's error shapes; only admins purge.
#include <gtest/gtest.h>

#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

class PurgeEndpointsTest : public BackendServerTest {
 protected:
  std::string PutDoc(const std::string& path, const std::string& body) {
    auto r = Req("PUT", path, body);
    EXPECT_EQ(r.status, 201) << r.body;
    return Str(ParseJson(r.body), "rev");
  }
};

TEST_P(PurgeEndpointsTest, PurgeRemovesTheDocumentEverywhere) {
  ASSERT_EQ(Req("PUT", "/db").status, 201);
  std::string a = PutDoc("/db/a", R"({"k":1})");
  std::string b = PutDoc("/db/b", R"({"k":2})");
  auto idx = Req("POST", "/db/_index", R"({"index":{"fields":["k"]},"ddoc":"m","name":"by-k"})");
  ASSERT_EQ(idx.status, 200) << idx.body;
  auto find = [&] {
    auto r = Req("POST", "/db/_find", R"({"selector":{"k":{"$gt":0}},"fields":["_id"],"use_index":"_design/m"})");
    EXPECT_EQ(r.status, 200) << r.body;
    return ParseJson(r.body)["docs"].Size();
  };
  EXPECT_EQ(find(), 2u);
  auto info = ParseJson(Req("GET", "/db").body);
  EXPECT_EQ(Str(info, "purge_seq"), "0");
  const int seq_before = info["update_seq"].GetInt();

  auto r = Req("POST", "/db/_purge", R"({"a":[")" + a + R"(","1-00000000000000000000000000000000"],"missing":["1-abc"]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, R"({"purge_seq":null,"purged":{"a":[")" + a + R"("],"missing":[]}})" "\n");
  EXPECT_EQ(Req("GET", "/db/a").body, R"({"error":"not_found","reason":"missing"})" "\n");
  auto all = ParseJson(Req("GET", "/db/_all_docs").body);
  EXPECT_EQ(all["total_rows"].GetInt(), 2);  // b and the design doc
  auto changes = ParseJson(Req("GET", "/db/_changes").body);
  for (auto& row : changes["results"].GetArray()) EXPECT_STRNE(row["id"].GetString(), "a");
  info = ParseJson(Req("GET", "/db").body);
  EXPECT_EQ(Str(info, "purge_seq"), "2");  // one per requested document
  EXPECT_EQ(info["update_seq"].GetInt(), seq_before + 1);
  EXPECT_EQ(info["doc_count"].GetInt(), 2);
  EXPECT_EQ(find(), 1u);  // the index built before the purge dropped a's row
  (void)b;
}

// couch_doc:parse_revs reads the revisions: one no stored revision can be
// ("1-", "0-a", a generation past 64 bits) purges nothing, "+1-x" is "1-x",
// and a 32-character id that is not hex is malformed.
TEST_P(PurgeEndpointsTest, RevsAreParsedAsCouchDBParsesThem) {
  ASSERT_EQ(Req("PUT", "/db").status, 201);
  std::string a = PutDoc("/db/a", "{}");
  PutDoc("/db/b", "{}");
  auto r = Req("POST", "/db/_purge", R"({"a":["1-","0-a","99999999999999999999-a"],"b":["1-"]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, R"({"purge_seq":null,"purged":{"a":[],"b":[]}})" "\n");
  EXPECT_EQ(Req("GET", "/db/a").status, 200);
  r = Req("POST", "/db/_purge", R"({"b":["1-)" + std::string(32, 'z') + R"("]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Invalid rev format");
  r = Req("POST", "/db/_purge", R"({"a":["+)" + a + R"("]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, R"({"purge_seq":null,"purged":{"a":[")" + a + R"("]}})" "\n");
  EXPECT_EQ(Req("GET", "/db/a").status, 404);
}

TEST_P(PurgeEndpointsTest, BadInputGetsCouchErrors) {
  ASSERT_EQ(Req("PUT", "/db").status, 201);
  std::string a = PutDoc("/db/a", "{}");
  auto r = Req("POST", "/db/_purge", R"(["a"])");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "bad_request");
  r = Req("POST", "/db/_purge", R"({"a":["junk"]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"error":"bad_request","reason":"Invalid rev format"})" "\n");
  r = Req("POST", "/db/_purge", R"({"a":"1-abc"})");
  EXPECT_EQ(r.status, 400);
  r = client_->Request("POST", "/db/_purge", R"({"a":[]})", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 415);
  r = Req("GET", "/db/_purge");
  EXPECT_EQ(r.status, 405);
  r = Req("POST", "/nodb/_purge", R"({"a":[]})");
  EXPECT_EQ(r.status, 404);
  // CouchDB's [purge] limits, changed live through the config.
  r = Req("PUT", "/_node/_local/_config/purge/max_document_id_number", R"("1")");
  ASSERT_EQ(r.status, 200) << r.body;
  r = Req("POST", "/db/_purge", R"({"a":[],"b":[]})");
  EXPECT_EQ(r.body, R"({"error":"bad_request","reason":"Exceeded maximum number of documents."})" "\n");
  ASSERT_EQ(Req("PUT", "/_node/_local/_config/purge/max_revisions_number", R"("1")").status, 200);
  r = Req("POST", "/db/_purge", R"({"a":["1-a","1-b"]})");
  EXPECT_EQ(r.body, R"({"error":"bad_request","reason":"Exceeded maximum number of revisions."})" "\n");
  // Nothing was purged by the refused requests.
  EXPECT_EQ(Req("GET", "/db/a").status, 200);
  EXPECT_EQ(Str(ParseJson(Req("GET", "/db").body), "purge_seq"), "0");
  (void)a;
}

TEST_P(PurgeEndpointsTest, PurgedInfosLimit) {
  ASSERT_EQ(Req("PUT", "/db").status, 201);
  auto r = Req("GET", "/db/_purged_infos_limit");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "1000\n");
  r = Req("PUT", "/db/_purged_infos_limit", "2");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, R"({"ok":true})" "\n");
  EXPECT_EQ(Req("GET", "/db/_purge_infos_limit").body, "2\n");
  for (const char* bad : {"0", "-1", "\"5\"", "1.5", "x"}) {
    r = Req("PUT", "/db/_purged_infos_limit", bad);
    EXPECT_EQ(r.status, 400) << bad;
    EXPECT_EQ(r.body, R"({"error":"bad_request","reason":"`purge_infos_limit` must be positive integer"})" "\n");
  }
  EXPECT_EQ(Req("POST", "/db/_purged_infos_limit", "2").status, 405);
}

TEST_P(PurgeEndpointsTest, OnlyAdminsPurge) {
  TestServerConfig cfg;
  cfg.couch.admins = {{"admin", "pw"}};
  Start(cfg);
  const Headers admin = {{"Authorization", BasicAuth("admin", "pw")}};
  ASSERT_EQ(Req("PUT", "/db", "", admin).status, 201);
  ASSERT_EQ(Req("PUT", "/db/_security", R"({"members":{"names":[]},"admins":{"names":[]}})", admin).status, 200);
  auto r = Req("PUT", "/db/a", "{}");  // public database: anyone writes
  ASSERT_EQ(r.status, 201) << r.body;
  const std::string rev = Str(ParseJson(r.body), "rev");
  r = Req("POST", "/db/_purge", R"({"a":[")" + rev + R"("]})");
  EXPECT_EQ(r.status, 401) << r.body;
  r = Req("POST", "/db/_purge", R"({"a":[")" + rev + R"("]})", admin);
  EXPECT_EQ(r.status, 201) << r.body;
}

INSTANTIATE_TEST_SUITE_P(Backends, PurgeEndpointsTest, BackendValues(), BackendName);

}  // namespace
}  // namespace settee::testing
