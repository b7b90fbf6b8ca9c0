// The _all_docs family (runtime/endpoints_database.cc) over real sockets, on
// both backends: a POST body's view options as CouchDB 3 reads them
// (couch_mrview_http:parse_body_and_query: the body, then the query string
// over it), the /queries forms parsed alike, and bad values answered with
// CouchDB's 400 shapes.
#include <gtest/gtest.h>

#include <string>

#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {


class DatabaseEndpointsTest : public BackendServerTest {
 protected:
  void SetUp() override {
    BackendServerTest::SetUp();
    ASSERT_EQ(Req("PUT", "/db").status, 201);
    for (const char* id : {"a", "b", "c", "d", "_design/x", "_design/y", "_local/l1", "_local/l2"}) {
      auto r = Req("PUT", std::string("/db/") + id, R"({"v":1})");
      ASSERT_EQ(r.status, 201) << id << " " << r.body;
    }
  }
  static json::Document J(const ClientResponse& r) { return ParseJson(r.body); }
  // The ids of an answer's rows, "<status>: <body>" when it is not 200.
  static std::string Ids(const json::Value& answer) {
    std::string out;
    for (const auto& row : answer["rows"].GetArray()) {
      if (!out.empty()) out += ",";
      out += row.HasMember("id") ? Str(row, "id") : "<" + Str(row, "error") + ">";
    }
    return out;
  }
  std::string Ids(const ClientResponse& r) {
    if (r.status != 200) return std::to_string(r.status) + ": " + r.body;
    return Ids(J(r));
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseEndpointsTest, BackendValues(), BackendName);

// PouchDB-style and hand-written bodies alike: every view option in a POST
// body counts, not only "keys".
TEST_P(DatabaseEndpointsTest, PostBodyOptionsAreRead) {
  auto r = Req("POST", "/db/_all_docs", R"({"include_docs":true,"limit":2,"skip":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  EXPECT_EQ(Ids(d), "_design/y,a");
  ASSERT_TRUE(d["rows"][0].HasMember("doc")) << r.body;
  EXPECT_EQ(d["rows"][0]["doc"]["v"].GetInt(), 1);
  EXPECT_EQ(d["offset"].GetInt(), 1);

  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs", R"({"descending":true,"startkey":"c","endkey":"b"})")), "c,b");
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs", R"({"start_key":"b","end_key":"d","inclusive_end":false})")),
            "b,c");
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs", R"({"key":"c"})")), "c");
  // Booleans may be strings, in any case (couch_mrview_http:parse_boolean).
  d = J(Req("POST", "/db/_all_docs", R"({"keys":["a","zz"],"include_docs":"TRUE"})"));
  EXPECT_EQ(Ids(d), "a,<not_found>");
  EXPECT_TRUE(d["rows"][0].HasMember("doc"));
  d = J(Req("POST", "/db/_all_docs", R"({"update_seq":true,"limit":0})"));
  EXPECT_TRUE(d.HasMember("update_seq"));
  // Members that are no view option are ignored, as CouchDB keeps them as
  // "extra" arguments.
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs", R"({"limit":1,"whatever":{"x":[1]},"queries":7})")), "_design/x");

  // _design_docs and _local_docs read the same body.
  EXPECT_EQ(Ids(Req("POST", "/db/_design_docs", R"({"descending":true})")), "_design/y,_design/x");
  d = J(Req("POST", "/db/_local_docs", R"({"include_docs":true,"limit":1})"));
  EXPECT_EQ(Ids(d), "_local/l1");
  EXPECT_TRUE(d["rows"][0].HasMember("doc"));
}

// The query string is parsed after the body, so it wins; key parameters
// fold in that order, so a body `key` with a query `startkey` is a range.
TEST_P(DatabaseEndpointsTest, QueryStringWinsOverTheBody) {
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs?limit=1", R"({"limit":3,"startkey":"a"})")), "a");
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs?descending=false", R"({"descending":true,"limit":1})")), "_design/x");
  auto d = J(Req("POST", "/db/_all_docs?include_docs=false&key=%22a%22", R"({"include_docs":true})"));
  EXPECT_FALSE(d["rows"][0].HasMember("doc"));
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs?startkey=%22a%22", R"({"key":"b"})")), "a,b");
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs?keys=%5B%22d%22%5D", R"({"keys":["a"]})")), "d");
  // A body `keys` with a query `key` is the usual conflict.
  auto r = Req("POST", "/db/_all_docs?key=%22a%22", R"({"keys":["a"]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "query_parse_error");
}

// A bad value in the body is a 400, never a crash: parse_boolean and
// parse_pos_int's query_parse_error with their reasons, and db_req's
// bad_request for a `keys` that is no array.
TEST_P(DatabaseEndpointsTest, BadBodyValuesAreCouchErrors) {
  struct Case {
    const char* body;
    const char* error;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"include_docs":"yes"})", "query_parse_error", R"(Invalid boolean parameter: "yes")"},
      {R"({"descending":1})", "query_parse_error", "Invalid boolean parameter: 1"},
      {R"({"conflicts":null})", "query_parse_error", "Invalid boolean parameter: null"},
      {R"({"limit":-1})", "query_parse_error", "Invalid value for positive integer: -1"},
      {R"({"limit":"10"})", "query_parse_error", R"(Invalid value for integer: <<"10">>)"},
      {R"({"skip":1.5})", "query_parse_error", "Invalid value for integer: 1.5"},
      // The value as Erlang prints jiffy's term for it: an object is
      // {[{Key,Value}]} keeping a repeated key's last value, an array of
      // character codes a string, a float in the shortest form.
      {R"({"skip":{}})", "query_parse_error", "Invalid value for integer: {[]}"},
      {R"({"skip":{"a":1,"b":[true,null],"a":"x"}})", "query_parse_error",
       R"(Invalid value for integer: {[{<<"b">>,[true,null]},{<<"a">>,<<"x">>}]})"},
      {R"({"limit":[104,105]})", "query_parse_error", R"(Invalid value for integer: "hi")"},
      {R"({"limit":["a",300]})", "query_parse_error", R"(Invalid value for integer: [<<"a">>,300])"},
      {R"({"limit":1e3})", "query_parse_error", "Invalid value for integer: 1.0e3"},
      {R"({"descending":[{}]})", "query_parse_error", "Invalid boolean parameter: [{[]}]"},
      {R"({"descending":[121,101,115]})", "query_parse_error", R"(Invalid boolean parameter: "yes")"},
      {R"({"keys":"a"})", "bad_request", "`keys` body member must be an array."},
      {R"({"keys":{"a":1}})", "bad_request", "`keys` body member must be an array."},
  };
  for (const char* path : {"/db/_all_docs", "/db/_design_docs", "/db/_local_docs"}) {
    for (const Case& c : cases) {
      auto r = Req("POST", path, c.body);
      ASSERT_EQ(r.status, 400) << path << " " << c.body << " " << r.body;
      auto d = J(r);
      EXPECT_EQ(Str(d, "error"), c.error) << path << " " << c.body;
      EXPECT_EQ(Str(d, "reason"), c.reason) << path << " " << c.body;
    }
  }
  EXPECT_EQ(Req("GET", "/db").status, 200);
  // A list of character codes is an Erlang string, read as the query
  // string's text is (list_to_integer, parse_boolean).
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs", R"({"limit":[50],"skip":[43,49],"descending":[84,82,85,69]})")),
            "c,b");
}

// A GET's query string as CouchDB's couch_mrview_http reads it: booleans
// in any case (parse_boolean lowers them), counts as Erlang's
// list_to_integer reads them, and the reasons showing the value as Erlang
// prints a string. Parameters fold in order, so a repeated one's last value
// wins.
TEST_P(DatabaseEndpointsTest, QueryStringValuesAsCouchDBReadsThem) {
  const std::pair<const char*, const char*> bad[] = {
      {"limit=x", R"(Invalid value for integer: "x")"},
      {"skip=x", R"(Invalid value for integer: "x")"},
      {"limit=1.5", R"(Invalid value for integer: "1.5")"},
      {"limit=", "Invalid value for integer: []"},
      {"limit=%01", "Invalid value for integer: [1]"},
      {"limit=-1", R"(Invalid value for positive integer: "-1")"},
      {"skip=-2", R"(Invalid value for positive integer: "-2")"},
      {"group_level=-1", R"(Invalid value for positive integer: "-1")"},
      {"descending=yes", R"(Invalid boolean parameter: "yes")"},
      {"include_docs=", "Invalid boolean parameter: []"},
      {"conflicts=a%22b", R"(Invalid boolean parameter: "a\"b")"},
      {"reduce=maybe", R"(Invalid boolean parameter: "maybe")"},
      {"sorted=1", R"(Invalid boolean parameter: "1")"},
      // The first is good: every value is parsed, not only the last.
      {"limit=1&limit=x", R"(Invalid value for integer: "x")"},
      {"limit=x&limit=1", R"(Invalid value for integer: "x")"},
  };
  for (const char* path : {"/db/_all_docs?", "/db/_design_docs?", "/db/_local_docs?"}) {
    for (const auto& [query, reason] : bad) {
      auto r = Req("GET", std::string(path) + query);
      ASSERT_EQ(r.status, 400) << path << query << " " << r.body;
      EXPECT_EQ(Str(J(r), "error"), "query_parse_error") << path << query;
      EXPECT_EQ(Str(J(r), "reason"), reason) << path << query;
    }
  }
  // Mixed case is taken; a sign and leading zeros are an integer's.
  auto d = J(Req("GET", "/db/_all_docs?include_docs=TRUE&descending=True&limit=%2B02"));
  EXPECT_EQ(Ids(d), "d,c");
  EXPECT_TRUE(d["rows"][0].HasMember("doc"));
  EXPECT_EQ(Ids(Req("GET", "/db/_all_docs?skip=-0&limit=99999999999999999999999&startkey=%22c%22")), "c,d");
  EXPECT_EQ(Ids(Req("GET", "/db/_design_docs?descending=FALSE")), "_design/x,_design/y");

  // The last value wins.
  EXPECT_EQ(Ids(Req("GET", "/db/_all_docs?limit=1&limit=3&startkey=%22a%22")), "a,b,c");
  EXPECT_EQ(Ids(Req("GET", "/db/_all_docs?limit=3&limit=1&startkey=%22a%22")), "a");
  EXPECT_EQ(Ids(Req("GET", "/db/_all_docs?descending=true&descending=false&limit=1")), "_design/x");
  EXPECT_EQ(Ids(Req("GET", "/db/_all_docs?skip=3&skip=0&limit=1")), "_design/x");
  d = J(Req("GET", "/db/_all_docs?include_docs=true&include_docs=false&key=%22a%22"));
  EXPECT_FALSE(d["rows"][0].HasMember("doc")) << json::Serialize(d);
  EXPECT_EQ(Ids(Req("GET", "/db/_local_docs?limit=2&limit=1")), "_local/l1");
  // In a POST too: the body first, then every query-string value in order.
  EXPECT_EQ(Ids(Req("POST", "/db/_all_docs?limit=1&limit=2", R"({"limit":3,"startkey":"a"})")), "a,b");
}

// stale, stable and update change nothing for _all_docs, but CouchDB
// parses them (all_docs_view runs couch_mrview_http:parse_params) and
// refuses values it does not know, in the query string or a POST body.
TEST_P(DatabaseEndpointsTest, StaleStableAndUpdateAreChecked) {
  struct Case {
    const char* query;
    const char* body;
    const char* reason;
  };
  const Case cases[] = {
      {"stale=false", R"({"stale":"false"})", "Invalid value for `stale`."},
      {"stale=OK", R"({"stale":true})", "Invalid value for `stale`."},
      {"stable=yes", R"({"stable":"yes"})", "Invalid value for `stable`."},
      {"stable=", R"({"stable":true})", "Invalid value for `stable`."},
      {"update=never", R"({"update":"never"})", "Invalid value for `update`."},
      {"update=TRUE", R"({"update":false})", "Invalid value for `update`."},
  };
  for (const char* path : {"/db/_all_docs", "/db/_design_docs", "/db/_local_docs"}) {
    for (const Case& c : cases) {
      for (const bool post : {false, true}) {
        auto r = post ? Req("POST", path, c.body) : Req("GET", std::string(path) + "?" + c.query);
        const std::string what = std::string(path) + " " + (post ? c.body : c.query);
        ASSERT_EQ(r.status, 400) << what << " " << r.body;
        auto d = J(r);
        EXPECT_EQ(Str(d, "error"), "query_parse_error") << what;
        EXPECT_EQ(Str(d, "reason"), c.reason) << what;
      }
    }
    auto ok = Req("GET", std::string(path) + "?stale=update_after&stable=false&update=lazy");
    EXPECT_EQ(ok.status, 200) << path << " " << ok.body;
    ok = Req("POST", path, R"({"stale":"ok","stable":"true","update":"false"})");
    EXPECT_EQ(ok.status, 200) << path << " " << ok.body;
  }
  auto r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"stable":"no"}]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(J(r), "reason"), "Invalid value for `stable`.") << r.body;
}

// POST .../queries: each object's options over the query string's
// (chttpd_db:multi_all_docs_view), checked by the same parser as a body's;
// _design_docs and _local_docs have the form too.
TEST_P(DatabaseEndpointsTest, QueriesReadEachObjectOverTheQueryString) {
  auto r = Req("POST", "/db/_all_docs/queries?limit=1&include_docs=true",
               R"({"queries":[{},{"limit":2,"startkey":"b"},{"include_docs":"false","keys":["c"]}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = J(r);
  ASSERT_EQ(d["results"].Size(), 3u);
  EXPECT_EQ(Ids(d["results"][0]), "_design/x");
  EXPECT_TRUE(d["results"][0]["rows"][0].HasMember("doc"));
  EXPECT_EQ(Ids(d["results"][1]), "b,c");
  EXPECT_TRUE(d["results"][1]["rows"][0].HasMember("doc"));
  EXPECT_EQ(Ids(d["results"][2]), "c");
  EXPECT_FALSE(d["results"][2]["rows"][0].HasMember("doc"));
  // The query string's `keys` is not carried into the objects.
  d = J(Req("POST", "/db/_all_docs/queries?keys=%5B%22a%22%5D", R"({"queries":[{"limit":1}]})"));
  EXPECT_EQ(Ids(d["results"][0]), "_design/x");

  r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"include_docs":"yes"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "reason"), R"(Invalid boolean parameter: "yes")");
  r = Req("POST", "/db/_all_docs/queries", R"({"queries":[{"limit":"2"}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(J(r), "error"), "query_parse_error");

  d = J(Req("POST", "/db/_design_docs/queries", R"({"queries":[{"descending":true},{"key":"_design/x"}]})"));
  ASSERT_EQ(d["results"].Size(), 2u);
  EXPECT_EQ(Ids(d["results"][0]), "_design/y,_design/x");
  EXPECT_EQ(Ids(d["results"][1]), "_design/x");
  d = J(Req("POST", "/db/_local_docs/queries", R"({"queries":[{"limit":1,"descending":true}]})"));
  EXPECT_EQ(Ids(d["results"][0]), "_local/l2");
}

}  // namespace
}  // namespace settee::testing
