// POST /{db}/_changes (runtime/endpoints_changes.cc) over real sockets, on
// both backends: what CouchDB 3 reads from the body and what only from the
// query string (chttpd_db:handle_changes_req, couch_changes:get_doc_ids).
#include <gtest/gtest.h>

#include <string>

#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {


class ChangesEndpointsTest : public BackendServerTest {
 protected:
  void SetUp() override {
    BackendServerTest::SetUp();
    ASSERT_EQ(Req("PUT", "/db").status, 201);
    for (const char* id : {"a", "b", "c"}) ASSERT_EQ(Req("PUT", std::string("/db/") + id, "{}").status, 201);
  }
  // The ids of a normal feed's rows, or "<status>: <body>".
  std::string Ids(const ClientResponse& r) {
    if (r.status != 200) return std::to_string(r.status) + ": " + r.body;
    std::string out;
    for (const auto& row : ParseJson(r.body)["results"].GetArray()) {
      if (!out.empty()) out += ",";
      out += Str(row, "id");
      if (row.HasMember("doc")) out += "+doc";
    }
    return out;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, ChangesEndpointsTest, BackendValues(), BackendName);

// A POST's doc_ids are its body's, never the query string's; a GET's are
// the query string's. No other option is read from the body.
TEST_P(ChangesEndpointsTest, PostReadsDocIdsFromTheBodyOnly) {
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?filter=_doc_ids", R"({"doc_ids":["c","a"]})")), "a,c");
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D", R"({"doc_ids":["b"]})")), "b");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D")), "a");
  const std::string not_a_list =
      R"(400: {"error":"bad_request","reason":"`doc_ids` filter parameter is not a list of doc ids."})" "\n";
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D", "{}")), not_a_list);
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?filter=_doc_ids", R"({"doc_ids":"a"})")), not_a_list);
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?filter=_doc_ids", R"({"doc_ids":[1]})")), not_a_list);
  // parse_changes_query reads the query string alone.
  EXPECT_EQ(Ids(Req("POST", "/db/_changes", R"({"limit":1,"include_docs":true,"descending":true})")), "a,b,c");
  EXPECT_EQ(Ids(Req("POST", "/db/_changes?limit=1&include_docs=true", R"({"limit":3})")), "a+doc");
}

}  // namespace
}  // namespace settee::testing
