// /{db}/_changes (runtime/endpoints_changes.cc) over real sockets, on both
// backends: what CouchDB 3 reads from a POST's body and what only from the
// query string (chttpd_db:handle_changes_req, couch_changes:get_doc_ids),
// and the query string read as parse_changes_query folds it.
#include <gtest/gtest.h>

#include <string>
#include <utility>

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

// chttpd_db:parse_changes_query folds over the query string with each
// name lowered: a repeated option ends as its last value says, and a flag
// is set by exactly "true" alone (another value is no error and a later
// "false" turns nothing off). doc_ids alone is read by qs_value, the first.
TEST_P(ChangesEndpointsTest, QueryStringIsFoldedAsCouchDBFoldsIt) {
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?limit=1&limit=2")), "a,b");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?since=3&since=1")), "b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?since=0&last-event-id=2")), "c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?feed=bogus&feed=normal")), "a,b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?style=bogus&style=all_docs")), "a,b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?filter=bogus&filter=_design")), "");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?descending=false&descending=true")), "c,b,a");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?descending=true&descending=false")), "c,b,a");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?descending=yes&include_docs=TRUE&conflicts=1&attachments=no"
                           "&att_encoding_info=")),
            "a,b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?Descending=true&INCLUDE_DOCS=true&Limit=1")), "c+doc");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?filter=_doc_ids&doc_ids=%5B%22a%22%5D&doc_ids=%5B%22b%22%5D")), "a");
  // feed=live is continuous's other name.
  auto r = Req("GET", "/db/_changes?feed=live&limit=1");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("\"results\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("{\"last_seq\":"), std::string::npos) << r.body;
}

// A heartbeat or seq_interval that is no positive integer is refused with
// parse_changes_query's reasons (heartbeat=false too), where it stands.
TEST_P(ChangesEndpointsTest, BadHeartbeatAndSeqIntervalAreRefused) {
  const std::string invalid = "Invalid heartbeat value. Expecting a positive integer value (in milliseconds).";
  const std::string not_positive = "The heartbeat value should be a positive integer (in milliseconds).";
  const std::pair<std::string, std::string> bad[] = {
      {"heartbeat=false", invalid},
      {"heartbeat=a1000", invalid},
      {"heartbeat=1000&heartbeat=x", invalid},
      {"heartbeat=-1000", not_positive},
      {"heartbeat=0", not_positive},
      {"seq_interval=0", "invalid_seq_interval"},
      {"seq_interval=x", "invalid_seq_interval"},
  };
  for (const auto& [query, reason] : bad) {
    EXPECT_EQ(Ids(Req("GET", "/db/_changes?" + query)),
              R"(400: {"error":"bad_request","reason":")" + reason + "\"}\n")
        << query;
  }
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?heartbeat=%2B1000&seq_interval=5")), "a,b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_changes?heartbeat=true")), "a,b,c");
}

}  // namespace
}  // namespace settee::testing
