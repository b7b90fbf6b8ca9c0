// The views endpoints (runtime/endpoints_views.h) over real sockets, with the
// map/reduce functions on a real isolate pool (js/view_functions_js.h), on
// both backends: CouchDB's shapes and errors, temporary views, /queries,
// _info, _view_cleanup, and a server that outlives bad view code.
#include "runtime/endpoints_views.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "js/view_functions_js.h"
#include "tests/runtime/couch_test_util.h"
#include "util/json.h"

namespace settee::testing {
namespace {

class ViewEndpointsTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.backend = GetParam();
    cfg.setup = [](CouchServer& server) {
      js::PoolOptions pool;
      pool.store = server.store();
      pool.threads = 2;
      pool.limits.timeout_ms = 1000;
      RegisterViewEndpoints(server, std::make_shared<js::PoolViewFunctions>(pool));
    };
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
    ASSERT_EQ(Req("PUT", "/db").status, 201);
    std::string docs = R"({"docs":[)";
    for (int i = 0; i < 600; ++i) {
      if (i) docs += ',';
      docs += R"({"_id":"d)" + std::to_string(1000 + i) + R"(","n":)" + std::to_string(i % 7) +
              R"(,"tag":[)" + std::to_string(i % 2) + "," + std::to_string(i % 3) + "]}";
    }
    ASSERT_EQ(Req("POST", "/db/_bulk_docs", docs + "]}").status, 201);
    ASSERT_EQ(Req("PUT", "/db/_design/d", R"({"views":{
      "byn":{"map":"function (doc) { if (doc.n !== undefined) emit(doc.n, 1); }","reduce":"_count"},
      "tags":{"map":"function (doc) { if (doc.tag) emit(doc.tag, doc.n); }",
              "reduce":"function (k, v, rereduce) { return sum(v); }"},
      "odd":{"map":"function (doc) { if (doc.n === 6) emit([doc._id, function () {}], undefined); }"}}})")
                  .status,
              201);
  }

  ClientResponse Req(const std::string& method, const std::string& path, const std::string& body = {}) {
    Headers h;
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    auto r = client_->Request(method, path, body, h);
    if (!r.body.empty() && r.body.back() == '\n') r.body.pop_back();  // CouchDB's trailing newline
    return r;
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ViewEndpointsTest,
                         ::testing::Values(StoreOptions::Backend::kMemory, StoreOptions::Backend::kLevelDB),
                         [](const auto& info) {
                           return info.param == StoreOptions::Backend::kMemory ? "Memory" : "LevelDB";
                         });

TEST_P(ViewEndpointsTest, MapAndReduceAnswers) {
  auto r = Req("GET", "/db/_design/d/_view/byn?reduce=false&key=3&limit=2");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.HeaderOr("content-type"), "application/json");
  auto d = ParseJson(r.body);
  EXPECT_EQ(d["total_rows"].GetInt(), 600);
  EXPECT_EQ(d["offset"].GetInt(), 258);  // 86 rows each for keys 0, 1, 2
  ASSERT_EQ(d["rows"].Size(), 2u);
  EXPECT_EQ(Str(d["rows"][0], "id"), "d1003");
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn").body, R"({"rows":[{"key":null,"value":600}]})");
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?group=true&startkey=5").body,
            R"({"rows":[{"key":5,"value":85},{"key":6,"value":85}]})");
  // JS reduce with rereduce across the isolate threads' shares.
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/tags?group_level=1").body,
            R"({"rows":[{"key":[0],"value":898},{"key":[1],"value":897}]})");
  // Emitted functions and undefined become null, as JSON.stringify has it.
  d = ParseJson(Req("GET", "/db/_design/d/_view/odd?limit=1").body);
  EXPECT_EQ(json::Serialize(d["rows"][0]), R"({"id":"d1006","key":["d1006",null],"value":null})");
  // POST keys, and /queries.
  EXPECT_EQ(Req("POST", "/db/_design/d/_view/byn?group=true", R"({"keys":[6,0,6]})").body,
            R"({"rows":[{"key":6,"value":85},{"key":0,"value":86},{"key":6,"value":85}]})");
  r = Req("POST", "/db/_design/d/_view/byn/queries",
          R"({"queries":[{"reduce":false,"limit":1,"descending":true},{"keys":[1],"group":true}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  d = ParseJson(r.body);
  EXPECT_EQ(d["results"].Size(), 2u);
  EXPECT_EQ(Str(d["results"][0]["rows"][0], "id"), "d1594");
  EXPECT_EQ(json::Serialize(d["results"][1]["rows"]), R"([{"key":1,"value":86}])");
}

TEST_P(ViewEndpointsTest, TempViewInfoAndCleanup) {
  auto r = Req("POST", "/db/_temp_view?group=true",
               R"({"map":"function (doc) { emit(doc.n % 2, doc.n); }","reduce":"_stats"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body,
            R"({"rows":[{"key":0,"value":{"sum":1026,"count":343,"min":0,"max":6,"sumsqr":4780}},)"
            R"({"key":1,"value":{"sum":769,"count":257,"min":1,"max":5,"sumsqr":2985}}]})");
  ASSERT_EQ(Req("GET", "/db/_design/d/_view/byn?limit=0").status, 200);
  auto info = ParseJson(Req("GET", "/db/_design/d/_info").body);
  EXPECT_EQ(Str(info, "name"), "d");
  EXPECT_EQ(info["view_index"]["update_seq"].GetInt(), 601);
  EXPECT_EQ(Str(info["view_index"], "signature").size(), 32u);
  r = Req("POST", "/db/_view_cleanup", "{}");
  EXPECT_EQ(r.status, 202);
  EXPECT_EQ(r.body, R"({"ok":true})");
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?limit=0&stale=ok").status, 200);
}

TEST_P(ViewEndpointsTest, BadInputGetsCouchErrors) {
  auto expect = [&](const std::string& method, const std::string& path, const std::string& body,
                    int status, const std::string& error) {
    auto r = Req(method, path, body);
    EXPECT_EQ(r.status, status) << path << " " << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "error"), error) << path << " " << r.body;
  };
  expect("GET", "/db/_design/d/_view/nope", "", 404, "not_found");
  expect("GET", "/db/_design/zz/_view/v", "", 404, "not_found");
  expect("GET", "/db/_design/d/_view/byn?startkey=3&endkey=1", "", 400, "query_parse_error");
  expect("GET", "/db/_design/d/_view/byn?include_docs=true", "", 400, "query_parse_error");
  expect("GET", "/db/_design/d/_view/byn?limit=-1", "", 400, "query_parse_error");
  expect("GET", "/db/_design/d/_view/byn?descending=maybe", "", 400, "query_parse_error");
  expect("GET", "/db/_design/d/_view/byn?key=%7Bbad", "", 400, "bad_request");
  expect("POST", "/db/_design/d/_view/byn", R"({"keys":[1]})", 400, "query_parse_error");
  // couch_mrview_util:get_view_keys checks the body before any option.
  expect("POST", "/db/_design/d/_view/byn", R"({"keys":1})", 400, "bad_request");
  expect("POST", "/db/_temp_view", R"({"map":"function (doc) { emit( }"})", 400, "compilation_error");

  expect("POST", "/db/_temp_view", R"({"map":3})", 400, "bad_request");
  // Loops forever: stopped by the time budget, 500 timeout, server alive.
  ASSERT_EQ(Req("PUT", "/db/_design/loop", R"({"views":{"v":{"map":"function (doc) { while (true) {} }"}}})").status, 201);
  expect("GET", "/db/_design/loop/_view/v", "", 500, "timeout");
  // Mango: malformed selectors, unknown operators, a sort no index covers.
  expect("POST", "/db/_find", R"({"selector":{"n":{"$nope":1}}})", 400, "invalid_operator");
  expect("POST", "/db/_find", R"({"selector":{"n":{"$in":3}}})", 400, "bad_request");
  expect("POST", "/db/_find", R"({"selector":3})", 400, "bad_request");
  expect("POST", "/db/_find", R"({"selector":{"n":1})", 400, "bad_request");
  expect("POST", "/db/_find", R"({"selector":{"n":1},"sort":["n"]})", 400, "no_usable_index");
  expect("POST", "/db/_explain", R"({"selector":{"n":{"$regex":"("}}})", 400, "bad_request");
  expect("POST", "/db/_index", R"({"index":{"fields":[]}})", 400, "bad_request");
  // mango_opts: a member that is no option is invalid_key (here a
  // partial_filter_selector outside `index`, which made a plain index).
  auto bad_key = Req("POST", "/db/_index", R"({"index":{"fields":["n"]},"partial_filter_selector":{"n":1}})");
  EXPECT_EQ(bad_key.status, 400);
  EXPECT_EQ(bad_key.body, R"({"error":"invalid_key","reason":"Invalid key partial_filter_selector for this request."})");
  expect("POST", "/db/_find", R"({"selector":{"n":1},"limt":1})", 400, "invalid_key");
  expect("POST", "/db/_explain", R"({"selector":{"n":1},"limt":1})", 400, "invalid_key");
  expect("POST", "/db/_find", R"({"limt":1})", 400, "bad_request");  // the missing selector first
  EXPECT_EQ(Req("POST", "/db/_find", R"({"selector":{"n":1},"r":1,"conflicts":false,"stable":false,"limit":1})").status, 200);
  expect("DELETE", "/db/_index/_design/nope/json/nope", "", 404, "not_found");
  // Another type (mango_httpd matches ddoc, type and name): no such index,
  // not a DELETE of document _index's attachment (409).
  ASSERT_EQ(Req("POST", "/db/_index", R"({"index":{"fields":["n"]},"ddoc":"ix","name":"n"})").status, 200);
  expect("DELETE", "/db/_index/_design/ix/text/n", "", 404, "not_found");
  expect("DELETE", "/db/_index/ix/text/n", "", 404, "not_found");
  EXPECT_EQ(Req("DELETE", "/db/_index/ix/json/n").body, R"({"ok":true})");
  auto sorted = Req("POST", "/db/_find", R"({"selector":{"n":1},"sort":["n"]})");
  EXPECT_EQ(sorted.body, R"({"error":"no_usable_index","reason":"No index exists for this sort, try indexing by the sort fields."})");
  EXPECT_EQ(Req("POST", "/db/_find", R"({"selector":{"n":{"$nope":1}}})").body,
            R"({"error":"invalid_operator","reason":"Invalid operator: $nope"})");
  auto found = Req("POST", "/db/_find", R"({"selector":{"n":6},"fields":["_id"],"limit":2})");
  EXPECT_EQ(found.status, 200) << found.body;
  EXPECT_NE(found.body.find(R"({"_id":"d1006"},{"_id":"d1013"})"), std::string::npos) << found.body;
  // Maps that emit what is not JSON (a cycle, a BigInt) or throw: those
  // documents are skipped (and logged), the others indexed. n is i % 7 over
  // 600 docs: 86 each for 0..4, 85 for 5 and 6.
  ASSERT_EQ(Req("PUT", "/db/_design/odd",
                R"({"views":{"v":{"map":"function (doc) { var o = {}; o.o = o; if (doc.n === 1) emit(o, 1);)"
                R"( else if (doc.n === 2) emit(doc._id, 1n); else if (doc.n === 3) throw new Error('no');)"
                R"( else emit(doc.n, null); }"}}})").status, 201);
  auto odd = Req("GET", "/db/_design/odd/_view/v?limit=0");
  EXPECT_EQ(odd.status, 200) << odd.body;
  EXPECT_EQ(odd.body, R"({"total_rows":342,"offset":0,"rows":[]})");
  // A reduce that does not shrink.
  ASSERT_EQ(Req("PUT", "/db/_design/big", R"({"views":{"v":{"map":"function (doc) { emit(doc._id, doc._id); }","reduce":"function (k, v) { return v.concat(v).concat(v); }"}}})").status, 201);
  auto r = Req("GET", "/db/_design/big/_view/v");
  EXPECT_EQ(r.status, 500) << r.body;
  EXPECT_NE(r.body.find("Reduce output must shrink"), std::string::npos) << r.body;
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn").body, R"({"rows":[{"key":null,"value":600}]})");
}

// A JavaScript reduce that throws gives null for its groups, as CouchDB's
// runReduce (share/server/views.js) and PouchDB's tryReduce do: 200, not a
// failed query. Over 600 rows the cached blocks are rereduced too.
TEST_P(ViewEndpointsTest, ReduceThatThrowsGivesNull) {
  ASSERT_EQ(Req("PUT", "/db/_design/boom", R"({"views":{"v":{"map":"function (doc) { emit(doc.n, 1); }",)"
                R"("reduce":"function (k, v, re) { throw new Error('boom'); }"}}})").status, 201);
  auto r = Req("GET", "/db/_design/boom/_view/v");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"rows":[{"key":null,"value":null}]})");
  r = Req("GET", "/db/_design/boom/_view/v?group=true&limit=2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"rows":[{"key":0,"value":null},{"key":1,"value":null}]})");
  EXPECT_EQ(Req("GET", "/db/_design/boom/_view/v?reduce=false&limit=1").status, 200);
}

// Each of `keys` is a fold of its own: a key repeated next to itself gets a
// row each time, its rows not reduced twice into one row (built-in and
// JavaScript reduces, with and without skip).
TEST_P(ViewEndpointsTest, RepeatedKeysAnswerEachTime) {
  EXPECT_EQ(Req("POST", "/db/_design/d/_view/byn?group=true", R"({"keys":[6,6,0]})").body,
            R"({"rows":[{"key":6,"value":85},{"key":6,"value":85},{"key":0,"value":86}]})");
  EXPECT_EQ(Req("POST", "/db/_design/d/_view/byn?group=true&skip=1&limit=1", R"({"keys":[6,6,0]})").body,
            R"({"rows":[{"key":6,"value":85}]})");
  auto r = Req("POST", "/db/_design/d/_view/tags?group=true", R"({"keys":[[1,2],[1,2]]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  ASSERT_EQ(d["rows"].Size(), 2u) << r.body;
  EXPECT_EQ(json::Serialize(d["rows"][0]), json::Serialize(d["rows"][1]));
}

// couch_mrview_util:determine_group_level: group_level=0 is no grouping (one
// row, key null, for array keys and others alike, whatever group says), and
// group=false beside a positive level is refused.
TEST_P(ViewEndpointsTest, GroupLevelZeroIsNoGrouping) {
  const std::string all_n = R"({"rows":[{"key":null,"value":600}]})";
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?group_level=0").body, all_n);
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?group=true&group_level=0").body, all_n);
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/tags?group_level=0").body,
            Req("GET", "/db/_design/d/_view/tags").body);
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/tags?group=true&group_level=1").body,
            R"({"rows":[{"key":[0],"value":898},{"key":[1],"value":897}]})");
  auto r = Req("GET", "/db/_design/d/_view/tags?group=false&group_level=1");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(r.body, R"({"error":"query_parse_error","reason":"Can't specify group=false and group_level>0 at the same time"})");
  // Not grouping, so fine on a map-only view (validate_args: {_, 0} -> ok).
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/odd?group_level=0&limit=0").status, 200);
}

// A POST's body holds view options as the query string does, and the query
// string wins (couch_mrview_http:parse_body_and_query parses the body, then
// the query string over it). In /queries each object wins over the query
// string, whose `keys` it does not inherit (multi_query_view).
TEST_P(ViewEndpointsTest, PostBodyOptionsUnderTheQueryString) {
  auto first_key = [&](const std::string& path, const std::string& body) {
    auto r = Req("POST", path, body);
    EXPECT_EQ(r.status, 200) << path << " " << body << " " << r.body;
    auto d = ParseJson(r.body);
    if (!d.IsObject() || !d.HasMember("rows") || d["rows"].Empty()) return std::string("<none>");
    return json::Serialize(d["rows"][0]["key"]) + " x" + std::to_string(d["rows"].Size());
  };
  EXPECT_EQ(first_key("/db/_design/d/_view/byn", R"({"reduce":false,"descending":true,"limit":2})"), "6 x2");
  EXPECT_EQ(first_key("/db/_design/d/_view/byn?limit=1", R"({"reduce":false,"limit":3})"), "0 x1");
  EXPECT_EQ(first_key("/db/_design/d/_view/byn?descending=false", R"({"reduce":false,"descending":true})"),
            "0 x600");
  EXPECT_EQ(first_key("/db/_design/d/_view/byn?reduce=false&startkey=2", R"({"startkey":5,"limit":1})"),
            "2 x1");
  auto r = Req("POST", "/db/_design/d/_view/byn", R"({"reduce":"false","include_docs":true,"limit":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(ParseJson(r.body)["rows"][0].HasMember("doc")) << r.body;
  r = Req("POST", "/db/_design/d/_view/byn", R"({"include_docs":"yes"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "query_parse_error");
  // chttpd_view sends /queries elsewhere (apache/couchdb#2168).
  r = Req("POST", "/db/_design/d/_view/byn", R"({"queries":[{}]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body,
            R"({"error":"bad_request","reason":"The `queries` parameter is no longer supported at this endpoint"})");

  r = Req("POST", "/db/_design/d/_view/byn/queries?reduce=false&keys=%5B3%5D&limit=5",
          R"({"queries":[{"limit":1},{"keys":[4],"limit":2}]})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  ASSERT_EQ(d["results"].Size(), 2u);
  EXPECT_EQ(d["results"][0]["rows"].Size(), 1u);
  EXPECT_EQ(d["results"][0]["rows"][0]["key"].GetInt(), 0);
  EXPECT_EQ(d["results"][1]["rows"].Size(), 2u);
  EXPECT_EQ(d["results"][1]["rows"][0]["key"].GetInt(), 4);
}

// A POST body's options are decoded JSON, checked by their JSON type as
// couch_mrview_http:parse_params(.., [decoded]) checks them: "10" is no
// integer, "TRUE" is a boolean, a JSON true is no `update` value. The same
// holds in each /queries object. Never a crash.
TEST_P(ViewEndpointsTest, PostBodyValuesAreCheckedByTheirJsonType) {
  struct Case {
    const char* body;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"limit":"10"})", R"(Invalid value for integer: <<"10">>)"},
      {R"({"skip":1.5})", "Invalid value for integer: 1.5"},
      {R"({"limit":-1})", "Invalid value for positive integer: -1"},
      {R"({"group_level":null})", "Invalid value for integer: null"},
      {R"({"descending":"maybe"})", R"(Invalid boolean parameter: "maybe")"},
      {R"({"include_docs":1})", "Invalid boolean parameter: 1"},
      {R"({"update":true})", "Invalid value for `update`."},
      {R"({"stale":1})", "Invalid value for `stale`."},
      {R"({"stale":[111,107,33]})", "Invalid value for `stale`."},
      {R"({"group_level":{"a":{}}})", R"(Invalid value for integer: {[{<<"a">>,{[]}}]})"},
      {R"({"skip":-2.5e-7})", "Invalid value for integer: -2.5e-7"},
  };
  for (const Case& c : cases) {
    for (const std::string& path : {std::string("/db/_design/d/_view/byn"), std::string("/db/_design/d/_view/byn/queries")}) {
      const bool multi = path.size() > 8 && path.substr(path.size() - 8) == "/queries";
      auto r = Req("POST", path, multi ? std::string(R"({"queries":[)") + c.body + "]}" : std::string(c.body));
      ASSERT_EQ(r.status, 400) << path << " " << c.body << " " << r.body;
      auto d = ParseJson(r.body);
      EXPECT_EQ(Str(d, "error"), "query_parse_error") << path << " " << c.body;
      EXPECT_EQ(Str(d, "reason"), c.reason) << path << " " << c.body;
    }
  }
  // What CouchDB takes: booleans as strings of any case, a stale string,
  // a doc id bound.
  auto r = Req("POST", "/db/_design/d/_view/byn", R"({"reduce":"FALSE","descending":"True","limit":1})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  ASSERT_EQ(d["rows"].Size(), 1u) << r.body;
  EXPECT_EQ(d["rows"][0]["key"].GetInt(), 6) << r.body;
  r = Req("POST", "/db/_design/d/_view/byn",
          R"({"reduce":false,"key":3,"startkey_docid":"d1500","limit":1,"stale":"ok"})");
  ASSERT_EQ(r.status, 200) << r.body;
  d = ParseJson(r.body);
  ASSERT_EQ(d["rows"].Size(), 1u) << r.body;
  EXPECT_EQ(Str(d["rows"][0], "id"), "d1500") << r.body;
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?limit=0").status, 200);
  // couch_util:to_binary makes a doc id bound of a list (an iolist) as
  // list_to_binary does, and a list of character codes is a stale string.
  r = Req("POST", "/db/_design/d/_view/byn",
          R"({"reduce":false,"key":3,"startkey_docid":["d15",[48,48]],"limit":1,"stale":[111,107]})");
  ASSERT_EQ(r.status, 200) << r.body;
  d = ParseJson(r.body);
  ASSERT_EQ(d["rows"].Size(), 1u) << r.body;
  EXPECT_EQ(Str(d["rows"][0], "id"), "d1500") << r.body;
}

// A GET's query string as CouchDB's couch_mrview_http reads it: booleans
// in any case, counts as Erlang's list_to_integer reads them, reasons that
// show the value as Erlang prints a string, and the parameters folded in
// order (the last value wins; a start or end key after `key` replaces that
// end of the range).
TEST_P(ViewEndpointsTest, QueryStringValuesAsCouchDBReadsThem) {
  const std::pair<const char*, const char*> bad[] = {
      {"limit=x", R"(Invalid value for integer: "x")"},
      {"skip=1.5", R"(Invalid value for integer: "1.5")"},
      {"limit=", "Invalid value for integer: []"},
      {"limit=-1", R"(Invalid value for positive integer: "-1")"},
      {"skip=-3", R"(Invalid value for positive integer: "-3")"},
      {"group_level=x", R"(Invalid value for integer: "x")"},
      {"descending=yes", R"(Invalid boolean parameter: "yes")"},
      {"reduce=", "Invalid boolean parameter: []"},
      {"include_docs=%E2%82%AC", "Invalid boolean parameter: [226,130,172]"},
      {"sorted=maybe", R"(Invalid boolean parameter: "maybe")"},
      {"limit=2&limit=x", R"(Invalid value for integer: "x")"},
  };
  for (const auto& [query, reason] : bad) {
    auto r = Req("GET", std::string("/db/_design/d/_view/byn?") + query);
    EXPECT_EQ(r.status, 400) << query << " " << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "error"), "query_parse_error") << query;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), reason) << query;
  }
  auto rows = [&](const std::string& query) {
    auto r = Req("GET", "/db/_design/d/_view/byn?" + query);
    if (r.status != 200) return std::to_string(r.status) + ": " + r.body;
    auto d = ParseJson(r.body);
    std::string out;
    for (const auto& row : d["rows"].GetArray()) {
      if (!out.empty()) out += ",";
      out += json::Serialize(row["key"]);
    }
    return out;
  };
  // Mixed case is taken.
  EXPECT_EQ(rows("reduce=FALSE&descending=True&limit=2"), "6,6");
  EXPECT_EQ(rows("reduce=False&include_docs=TRUE&limit=1&skip=%2B0"), "0");
  EXPECT_EQ(rows("reduce=true&group=TRUE&limit=2"), "0,1");
  // The last value wins.
  EXPECT_EQ(rows("reduce=false&limit=1&limit=3"), "0,0,0");
  EXPECT_EQ(rows("reduce=false&limit=3&limit=1"), "0");
  EXPECT_EQ(rows("reduce=false&descending=true&descending=false&limit=1"), "0");
  EXPECT_EQ(rows("reduce=true&reduce=false&limit=1"), "0");
  EXPECT_EQ(rows("reduce=false&startkey=5&start_key=4&limit=1"), "4");
  EXPECT_EQ(rows("reduce=false&start_key=2&startkey=5&start_key=4&limit=1"), "4");
  // `key` sets both ends; a later startkey replaces the lower one.
  EXPECT_EQ(rows("reduce=false&key=3&startkey=2&skip=85&limit=2"), "2,3");
  EXPECT_EQ(rows("reduce=false&startkey=2&key=3&limit=1"), "3");
  EXPECT_EQ(rows("reduce=false&key=3&endkey=4&skip=85&limit=2"), "3,4");
}

// couch_mrview_http:parse_param's reasons for stale, stable and update name
// no value, and an unknown `stable` is refused as the others are.
TEST_P(ViewEndpointsTest, StaleStableAndUpdateReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {"stale=no", "Invalid value for `stale`."},
      {"stable=maybe", "Invalid value for `stable`."},
      {"update=soon", "Invalid value for `update`."},
  };
  for (const auto& [query, reason] : cases) {
    auto r = Req("GET", std::string("/db/_design/d/_view/byn?") + query);
    ASSERT_EQ(r.status, 400) << query << " " << r.body;
    EXPECT_EQ(Str(ParseJson(r.body), "error"), "query_parse_error") << query;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), reason) << query;
  }
  EXPECT_EQ(Req("GET", "/db/_design/d/_view/byn?stable=true&update=false").status, 200);
}

TEST_P(ViewEndpointsTest, ChangesFilters) {
  ASSERT_EQ(Req("PUT", "/db/_design/f", R"({"filters":{"mod":"function (doc, req) { return doc.n === Number(req.query.n); }"}})").status, 201);
  auto ids = [&](const std::string& path, const std::string& body = {}) {
    auto r = Req(body.empty() ? "GET" : "POST", path, body);
    EXPECT_EQ(r.status, 200) << path << " " << r.body;
    std::string out;
    auto d = ParseJson(r.body);
    if (!d.IsObject() || !d.HasMember("results")) return out;
    for (auto& row : d["results"].GetArray()) out += std::string(out.empty() ? "" : " ") + Str(row, "id");
    return out;
  };
  // n == 6 for d1006, d1013, ... (every 7th of 600): 85 docs; check the first ones.
  EXPECT_EQ(ids("/db/_changes?filter=f/mod&n=6&limit=2"), "d1006 d1013");
  EXPECT_EQ(ids("/db/_changes?filter=_view&view=d/odd&limit=2"), "d1006 d1013");
  EXPECT_EQ(ids("/db/_changes?filter=_selector&limit=2", R"({"selector":{"n":6}})"), "d1006 d1013");
  // Past one filter chunk (512 changes): all 85, the last ones too, and a
  // limit that ends inside the second chunk resumes after its last row.
  auto all = ids("/db/_changes?filter=f/mod&n=6");
  EXPECT_EQ(std::count(all.begin(), all.end(), ' ') + 1, 85);
  EXPECT_EQ(all.substr(all.size() - 5), "d1594");
  auto r = Req("GET", "/db/_changes?filter=_view&view=d/odd&limit=80");
  auto d = ParseJson(r.body);
  ASSERT_EQ(d["results"].Size(), 80u);
  EXPECT_EQ(Str(d["results"][79], "id"), "d1559");
  EXPECT_EQ(ids("/db/_changes?filter=_view&view=d/odd&since=" + std::to_string(d["last_seq"].GetUint64())),
            "d1566 d1573 d1580 d1587 d1594");
  EXPECT_EQ(Req("GET", "/db/_changes?filter=f/none").status, 404);
  EXPECT_EQ(Req("GET", "/db/_changes?filter=_view&view=d/none").status, 404);
  EXPECT_EQ(Req("POST", "/db/_changes?filter=_selector", R"({"selector":{"n":{"$x":1}}})").status, 400);
}


// validate_doc_update over HTTP (runtime/endpoints_views.h,
// InstallValidateFunctions): the functions on a real isolate pool, with
// CouchDB's arguments, statuses and _bulk_docs results, and replicated
// writes refused and counted.
class ValidateEndpointsTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.backend = GetParam();
    cfg.couch.admins = {{"admin", "s3cret"}};
    cfg.setup = [](CouchServer& server) {
      js::PoolOptions pool;
      pool.store = server.store();
      pool.threads = 1;
      pool.limits.timeout_ms = 1000;
      auto functions = std::make_shared<js::PoolViewFunctions>(pool);
      RegisterViewEndpoints(server, functions);
      InstallValidateFunctions(server, functions);
    };
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
    ASSERT_EQ(Admin("PUT", "/db").status, 201);
    // Public, so that anonymous writers reach the function.
    ASSERT_EQ(Admin("PUT", "/db/_security", R"({"members":{"names":[],"roles":[]},"admins":{"names":["boss"],"roles":[]}})").status, 200);
    ASSERT_EQ(Admin("PUT", "/db/_design/v", R"({"validate_doc_update":)" + json::Quote(kValidate) + "}").status, 201);
  }

  static constexpr const char* kValidate = R"(function (newDoc, oldDoc, userCtx, secObj) {
    if (newDoc.forbid) throw({forbidden: 'no ' + newDoc._id});
    if (!userCtx.name && userCtx.roles.indexOf('_admin') < 0) throw({unauthorized: 'log in'});
    if (oldDoc && oldDoc.locked && !newDoc.unlock) throw({forbidden: 'locked at ' + oldDoc._rev});
    if (newDoc.boom) throw new TypeError('kaboom');
    if (newDoc.who !== undefined && newDoc.who !== [userCtx.db, userCtx.name, secObj.admins.names[0], this._id].join()) {
      throw({forbidden: 'who'});
    }
  })";

  ClientResponse Req(const std::string& method, const std::string& path, const std::string& body = {},
                     Headers h = {}) {
    if (!body.empty()) h.emplace_back("Content-Type", "application/json");
    auto r = client_->Request(method, path, body, h);
    if (!r.body.empty() && r.body.back() == '\n') r.body.pop_back();
    return r;
  }
  ClientResponse Admin(const std::string& method, const std::string& path, const std::string& body = {}) {
    return Req(method, path, body, {{"Authorization", BasicAuth("admin", "s3cret")}});
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

INSTANTIATE_TEST_SUITE_P(Backends, ValidateEndpointsTest,
                         ::testing::Values(StoreOptions::Backend::kMemory, StoreOptions::Backend::kLevelDB),
                         [](const auto& info) {
                           return info.param == StoreOptions::Backend::kMemory ? "Memory" : "LevelDB";
                         });

TEST_P(ValidateEndpointsTest, RefusalsAreCouchErrors) {
  auto r = Admin("PUT", "/db/a", R"({"forbid":true})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"no a"})");
  r = Req("PUT", "/db/a", R"({"x":1})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"error":"unauthorized","reason":"log in"})");
  r = Admin("POST", "/db", R"({"forbid":true})");  // the generated id is the function's
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Str(ParseJson(r.body), "reason").size(), 3 + 32u) << r.body;  // "no " and a uuid
  r = Admin("PUT", "/db/a", R"({"boom":true})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"error":"unknown_error","reason":"TypeError: kaboom"})");
  // userCtx {db, name, roles}, secObj and `this` (the design document).
  EXPECT_EQ(Admin("PUT", "/db/w", R"({"who":"db,admin,boss,_design/v"})").status, 201);
  EXPECT_EQ(Admin("PUT", "/db/w2", R"({"who":"someone else"})").status, 403);
  // Design documents are not validated (only db admins may write them).
  EXPECT_EQ(Admin("PUT", "/db/_design/x", R"({"forbid":true})").status, 201);
  EXPECT_EQ(Admin("GET", "/db/a").status, 404);
}

// A design document whose views could not run is refused when it is
// written, as CouchDB refuses it: alone, in _bulk_docs, and replicated.
TEST_P(ValidateEndpointsTest, DesignDocumentsThatCouldNotRunAreRefused) {
  auto r = Admin("PUT", "/db/_design/broken", R"({"views":{"v":{"map":"function (doc) { emit( }"}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"x({"error":"compilation_error","reason":"Compilation of the map function in the 'v' view )x"
                    R"x(failed: Expression does not eval to a function. (function (doc) { emit( })"})x");
  r = Admin("PUT", "/db/_design/broken", R"({"views":{"v":{"map":"function (doc) {}","reduce":"function ("}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "compilation_error");
  r = Admin("PUT", "/db/_design/broken", R"({"views":{"v":{"map":3}}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body, R"({"error":"invalid_design_doc","reason":"`views.v.map` field must have string type"})");
  r = Admin("POST", "/db/_bulk_docs",
            R"({"docs":[{"_id":"fine","x":1},{"_id":"_design/b","views":{"v":{"map":"nope("}}}]})");
  EXPECT_EQ(r.status, 201);
  auto results = ParseJson(r.body);
  EXPECT_EQ(Str(results[1], "error"), "compilation_error") << r.body;
  EXPECT_TRUE(results[0].HasMember("ok")) << r.body;
  r = Admin("POST", "/db/_bulk_docs",
            R"({"new_edits":false,"docs":[{"_id":"_design/c","_rev":"1-abc","views":{"v":{"map":"nope("}}}]})");
  EXPECT_EQ(r.status, 201);
  EXPECT_EQ(Str(ParseJson(r.body)[0], "error"), "compilation_error") << r.body;
  for (const char* id : {"broken", "b", "c"}) {
    EXPECT_EQ(Admin("GET", std::string("/db/_design/") + id).status, 404) << id;
  }
  EXPECT_EQ(Admin("PUT", "/db/_design/good", R"({"views":{"v":{"map":"function (doc) { emit(doc.x); }"}}})").status,
            201);
}

TEST_P(ValidateEndpointsTest, OldDocGuardsEditsDeletesAndAttachments) {
  auto r = Admin("PUT", "/db/l", R"({"locked":true})");
  ASSERT_EQ(r.status, 201);
  std::string rev = ParseJson(r.body)["rev"].GetString();
  r = Admin("PUT", "/db/l", R"({"_rev":")" + rev + R"(","x":2})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"locked at )" + rev + R"("})");
  EXPECT_EQ(Admin("DELETE", "/db/l?rev=" + rev).status, 403);
  EXPECT_EQ(client_->Request("PUT", "/db/l/f.txt?rev=" + rev, "hi",
                             {{"Content-Type", "text/plain"},
                              {"Authorization", BasicAuth("admin", "s3cret")}})
                .status,
            403);
  r = Admin("PUT", "/db/l", R"({"_rev":")" + rev + R"(","unlock":true})");
  EXPECT_EQ(r.status, 201) << r.body;
}

TEST_P(ValidateEndpointsTest, BulkDocsAnswersPerDocument) {
  auto r = Admin("POST", "/db/_bulk_docs", R"({"docs":[{"_id":"a"},{"_id":"b","forbid":true},{"_id":"c"}]})");
  ASSERT_EQ(r.status, 201);
  auto d = ParseJson(r.body);
  ASSERT_EQ(d.Size(), 3u);
  EXPECT_TRUE(d[0]["ok"].GetBool());
  EXPECT_EQ(Str(d[1], "id"), "b");
  EXPECT_EQ(Str(d[1], "error"), "forbidden");
  EXPECT_EQ(Str(d[1], "reason"), "no b");
  EXPECT_TRUE(d[2]["ok"].GetBool());
  // Replicated writes answer their refusals only.
  r = Admin("POST", "/db/_bulk_docs",
            R"({"new_edits":false,"docs":[{"_id":"r1","_rev":"1-aa"},{"_id":"r2","_rev":"1-bb","forbid":true}]})");
  ASSERT_EQ(r.status, 201);
  d = ParseJson(r.body);
  ASSERT_EQ(d.Size(), 1u) << r.body;
  EXPECT_EQ(Str(d[0], "id"), "r2");
  EXPECT_EQ(Str(d[0], "rev"), "1-bb");
  EXPECT_EQ(Str(d[0], "error"), "forbidden");
  EXPECT_EQ(Admin("GET", "/db/r1").status, 200);
  EXPECT_EQ(Admin("GET", "/db/r2").status, 404);
}

TEST_P(ValidateEndpointsTest, ReplicationCountsRefusedWrites) {
  ASSERT_EQ(Admin("PUT", "/src").status, 201);
  ASSERT_EQ(Admin("POST", "/src/_bulk_docs",
                  R"({"docs":[{"_id":"ok1"},{"_id":"bad","forbid":true},{"_id":"ok2"}]})")
                .status,
            201);
  // Into db (which has the function): locally, then over HTTP.
  auto r = Admin("POST", "/_replicate", R"({"source":"src","target":"db"})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_EQ(d["history"][0]["docs_written"].GetInt(), 2);
  EXPECT_EQ(d["history"][0]["doc_write_failures"].GetInt(), 1);
  EXPECT_EQ(Admin("GET", "/db/bad").status, 404);
  EXPECT_EQ(Admin("GET", "/db/ok2").status, 200);
  ASSERT_EQ(Admin("PUT", "/db2").status, 201);
  ASSERT_EQ(Admin("PUT", "/db2/_design/v", R"({"validate_doc_update":)" + json::Quote(kValidate) + "}").status, 201);
  std::string url = "http://admin:s3cret@127.0.0.1:" + std::to_string(server_->port()) + "/db2";
  r = Admin("POST", "/_replicate", R"({"source":"src","target":")" + url + R"("})");
  ASSERT_EQ(r.status, 200) << r.body;
  d = ParseJson(r.body);
  EXPECT_EQ(d["history"][0]["doc_write_failures"].GetInt(), 1);
  EXPECT_EQ(Admin("GET", "/db2/bad").status, 404);
  EXPECT_EQ(Admin("GET", "/db2/ok1").status, 200);
}

}  // namespace
}  // namespace settee::testing
