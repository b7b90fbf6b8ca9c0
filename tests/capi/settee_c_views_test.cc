// The C API's view queries (capi/settee_c_views.cc) through libsettee.so:
// JavaScript map/reduce and built-in reduces with the usual options, the
// store's design-document functions (views, validate_doc_update, their
// time limit), errors and misuse, on both backends. In a build without the
// JS runtime the JavaScript cases check that they are UNSUPPORTED.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "settee/settee.h"
#include "tests/capi/capi_test_util.h"

namespace {

using settee_test::Err;
using settee_test::Str;
using testing::HasSubstr;

// A design document with JavaScript maps, a built-in reduce and a
// JavaScript one; and (apart, since a design document's views are one
// index) a map that does not compile and one that never ends.
constexpr const char* kDesign = R"({"_id":"_design/notes","views":{)"
    R"("by_type":{"map":"function (doc) { if (doc.type) emit([doc.type, doc.n], doc.n); }","reduce":"_sum"},)"
    R"("js_count":{"map":"function (doc) { emit(doc.type || null, 1); }",)"
    R"("reduce":"function (keys, values, rereduce) { return sum(values); }"}}})";
constexpr const char* kBroken = R"({"_id":"_design/broken","views":{"v":{"map":"function (doc) { emit(doc._id, ; }"}}})";
constexpr const char* kForever = R"({"_id":"_design/forever","views":{"v":{"map":"function (doc) { for (;;) {} }"}}})";

class CViews : public testing::TestWithParam<settee_backend> {
 protected:
  void SetUp() override {
    settee_store_options o;
    settee_store_options_init(&o);
    o.backend = GetParam();
    dir_ = testing::TempDir() + "/settee_capi_views_" + std::to_string(getpid());
    o.path = dir_.c_str();
    o.view_threads = 2;
    o.view_timeout_ms = 500;  // the "forever" view
    Err e;
    ASSERT_EQ(settee_store_open(&o, &store_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_create(store_, "db", &db_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_bulk_docs(db_,
                                  R"([{"_id":"a","type":"note","n":3},{"_id":"b","type":"task","n":1},)"
                                  R"({"_id":"c","type":"note","n":1},{"_id":"d","type":"note","n":2}])",
                                  1, nullptr, &e),
              SETTEE_OK);
    for (const char* ddoc : {kDesign, kForever}) {
      ASSERT_EQ(settee_db_put(db_, nullptr, ddoc, nullptr, nullptr, &e), SETTEE_OK) << e.message();
    }
  }
  void TearDown() override {
    settee_db_free(db_);
    settee_store_free(store_);
    if (GetParam() == SETTEE_BACKEND_LEVELDB) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  // The query's answer, or "<code>: message".
  std::string Query(const char* view, const char* options, const char* ddoc = "notes") {
    Err e;
    Str out;
    settee_code c = settee_db_query(db_, ddoc, view, options, out.out(), &e);
    if (c != SETTEE_OK) return std::string(settee_code_name(c)) + ": " + e.message();
    return out.str();
  }

  std::string dir_;
  settee_store* store_ = nullptr;
  settee_db* db_ = nullptr;
};

TEST_P(CViews, MapQueriesTakeTheUsualOptions) {
  if (!settee_has_js()) {
    EXPECT_THAT(Query("by_type", R"({"reduce":false})"), testing::StartsWith("unsupported: JavaScript views"));
    return;
  }
  EXPECT_EQ(Query("by_type", R"({"reduce":false})"),
            R"({"total_rows":4,"offset":0,"rows":[{"id":"c","key":["note",1],"value":1},)"
            R"({"id":"d","key":["note",2],"value":2},{"id":"a","key":["note",3],"value":3},)"
            R"({"id":"b","key":["task",1],"value":1}]})");
  EXPECT_EQ(Query("_design/notes/x", "{}", "_design/notes"), "not_found: missing_named_view");
  std::string page = Query("by_type", R"({"reduce":false,"startkey":["note",2],"endkey":["note",{}],)"
                                      R"("descending":false,"limit":1,"skip":1,"include_docs":true})");
  EXPECT_THAT(page, testing::StartsWith(R"({"total_rows":4,"offset":2,"rows":[{"id":"a","key":["note",3],)"
                                        R"("value":3,"doc":{"_id":"a","_rev":"1-)"));
  EXPECT_THAT(page, HasSubstr(R"(","type":"note","n":3}}]})"));
  EXPECT_EQ(Query("by_type", R"({"reduce":false,"descending":true,"endkey":["note",3],"inclusive_end":false})"),
            R"({"total_rows":4,"offset":0,"rows":[{"id":"b","key":["task",1],"value":1}]})");
  EXPECT_EQ(Query("by_type", R"({"reduce":false,"keys":[["task",1],["note",1]]})"),
            R"({"total_rows":4,"offset":0,"rows":[{"id":"b","key":["task",1],"value":1},)"
            R"({"id":"c","key":["note",1],"value":1}]})");
  EXPECT_EQ(Query("by_type", R"({"reduce":false,"key":["note",2],"update_seq":true})"),
            R"({"total_rows":4,"offset":1,"update_seq":6,"rows":[{"id":"d","key":["note",2],"value":2}]})");
  // The index follows writes.
  Err e;
  ASSERT_EQ(settee_db_put(db_, "e", R"({"type":"task","n":7})", nullptr, nullptr, &e), SETTEE_OK);
  EXPECT_THAT(Query("by_type", R"({"reduce":false,"startkey":["task"]})"),
              HasSubstr(R"({"id":"e","key":["task",7],"value":7}]})"));
  // ... unless told not to wait for it.
  ASSERT_EQ(settee_db_put(db_, "f", R"({"type":"task","n":8})", nullptr, nullptr, &e), SETTEE_OK);
  EXPECT_THAT(Query("by_type", R"({"reduce":false,"update":false})"), HasSubstr("\"total_rows\":5,"));
  EXPECT_THAT(Query("by_type", R"({"reduce":false,"stale":"ok"})"), HasSubstr("\"total_rows\":5,"));
  EXPECT_THAT(Query("by_type", R"({"reduce":false})"), HasSubstr("\"total_rows\":6,"));
}

TEST_P(CViews, ReducesGroupAsAsked) {
  if (!settee_has_js()) {
    EXPECT_THAT(Query("by_type", nullptr), testing::StartsWith("unsupported: "));
    return;
  }
  EXPECT_EQ(Query("by_type", nullptr), R"({"rows":[{"key":null,"value":7}]})");
  EXPECT_EQ(Query("by_type", R"({"group":true})"),
            R"({"rows":[{"key":["note",1],"value":1},{"key":["note",2],"value":2},)"
            R"({"key":["note",3],"value":3},{"key":["task",1],"value":1}]})");
  EXPECT_EQ(Query("by_type", R"({"group_level":1})"),
            R"({"rows":[{"key":["note"],"value":6},{"key":["task"],"value":1}]})");
  EXPECT_EQ(Query("by_type", R"({"group_level":1,"startkey":["task"]})"),
            R"({"rows":[{"key":["task"],"value":1}]})");
  // A JavaScript reduce (design documents are not mapped).
  EXPECT_EQ(Query("js_count", R"({"group":true})"),
            R"({"rows":[{"key":"note","value":3},{"key":"task","value":1}]})");
  EXPECT_EQ(Query("js_count", nullptr), R"({"rows":[{"key":null,"value":4}]})");
  EXPECT_EQ(Query("by_type", R"({"include_docs":true})"),
            "query_parse_error: `include_docs` is invalid for reduce");
}

TEST_P(CViews, DesignDocumentErrorsAreCodes) {
  if (!settee_has_js()) GTEST_SKIP() << "the JavaScript errors need the JS runtime";
  // A map that does not compile is refused when its design document is
  // written, as CouchDB does.
  Err e;
  EXPECT_EQ(settee_db_put(db_, nullptr, kBroken, nullptr, nullptr, &e), SETTEE_ERR_COMPILATION);
  EXPECT_THAT(e.message(), testing::StartsWith("Compilation of the map function in the 'v' view failed: "));
  EXPECT_THAT(Query("v", nullptr, "forever"), testing::StartsWith("timeout: "));
  // The store's threads serve on after both.
  EXPECT_EQ(Query("by_type", nullptr), R"({"rows":[{"key":null,"value":7}]})");
}

TEST_P(CViews, ValidateDocUpdateRunsForCApiWrites) {
  Err e;
  ASSERT_EQ(settee_db_put(db_, "_design/guard",
                          R"({"validate_doc_update":"function (doc) { if (doc.n < 0) throw({forbidden: 'n must not be negative'}); }"})",
                          nullptr, nullptr, &e),
            SETTEE_OK);
  settee_code c = settee_db_put(db_, "neg", R"({"n":-1})", nullptr, nullptr, &e);
  if (!settee_has_js()) {
    EXPECT_NE(c, SETTEE_OK);  // refused, never let through unchecked
    return;
  }
  EXPECT_EQ(c, SETTEE_ERR_FORBIDDEN);
  EXPECT_EQ(e.message(), "n must not be negative");
  EXPECT_EQ(settee_db_put(db_, "pos", R"({"n":1})", nullptr, nullptr, &e), SETTEE_OK) << e.message();
}

TEST_P(CViews, MangoIndexesAreViewsWithoutJavaScript) {
  Err e;
  ASSERT_EQ(settee_db_create_index(db_, R"({"index":{"fields":["n"]},"ddoc":"by-n","name":"n"})", nullptr, &e),
            SETTEE_OK)
      << e.message();
  EXPECT_EQ(Query("n", R"({"startkey":[2],"reduce":false})", "by-n"),
            R"({"total_rows":4,"offset":2,"rows":[{"id":"d","key":[2],"value":null},)"
            R"({"id":"a","key":[3],"value":null}]})");
}

TEST_P(CViews, QueryRejectsBadInput) {
  Err e;
  Str out;
  EXPECT_EQ(Query("by_type", "{not json"), "bad_request: invalid UTF-8 JSON: Missing a name for object member. at offset 1");
  EXPECT_EQ(Query("by_type", "[1]"), "bad_request: options_json must be a JSON object");
  // The options are read as a query string would give them, with CouchDB's reasons.
  EXPECT_EQ(Query("by_type", R"({"limit":"x"})"), "query_parse_error: Invalid value for integer: \"x\"");
  EXPECT_EQ(Query("by_type", R"({"limit":-1})"), "query_parse_error: Invalid value for positive integer: \"-1\"");
  EXPECT_EQ(Query("by_type", R"({"descending":"yes"})"), "query_parse_error: Invalid boolean parameter: \"yes\"");
  EXPECT_THAT(Query("by_type", R"({"keys":[1],"key":1})"), testing::StartsWith("query_parse_error: "));
  EXPECT_EQ(Query("by_type", "{}", "nope"), "not_found: missing");
  EXPECT_EQ(Query("by_type", "{}", "_design/"), "invalid_argument: ddoc is empty");
  EXPECT_EQ(Query("", "{}"), "invalid_argument: view is empty");
  EXPECT_EQ(settee_db_query(nullptr, "notes", "by_type", nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_query(db_, nullptr, "by_type", nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "ddoc is NULL");
  EXPECT_EQ(settee_db_query(db_, "notes", nullptr, nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_query(db_, "notes", "by_type", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "json_out is NULL");
  EXPECT_EQ(settee_db_query(db_, "notes\xff", "by_type", nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_query(db_, "notes", "by\xc3", nullptr, out.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_query(db_, "notes", "by_type", "{\"key\":\"\xe2\x82\"}", out.out(), &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "options_json is not valid UTF-8");
  EXPECT_EQ(out.p, nullptr);
  // Without an error to fill, the code alone.
  EXPECT_EQ(settee_db_query(db_, "nope", "v", nullptr, out.out(), nullptr), SETTEE_ERR_NOT_FOUND);
}

TEST_P(CViews, AClosedStoreAnswersClosed) {
  Err e;
  Str out;
  ASSERT_EQ(settee_store_close(store_, &e), SETTEE_OK);
  EXPECT_EQ(settee_db_query(db_, "notes", "by_type", nullptr, out.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(e.message(), "the store is closed");
}

INSTANTIATE_TEST_SUITE_P(Backends, CViews, testing::Values(SETTEE_BACKEND_MEMORY, SETTEE_BACKEND_LEVELDB),
                         [](const auto& info) {
                           return info.param == SETTEE_BACKEND_MEMORY ? "memory" : "leveldb";
                         });

}  // namespace
