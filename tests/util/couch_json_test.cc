// CouchDB's JSON shapes for Database results (golden strings).
#include "util/couch_json.h"

#include <gtest/gtest.h>

namespace settee::couch_json {
namespace {

// The caller closes the object, after members of its own if it has any.
TEST(CouchJson, OpenDocJson) {
  std::string out;
  OpenDocJson(&out, "a\"b", "1-x", false, R"({"v":1,"w":[2]})");
  EXPECT_EQ(R"({"_id":"a\"b","_rev":"1-x","v":1,"w":[2])", out);
  out.clear();
  OpenDocJson(&out, "d", "2-y", true, "{}");
  EXPECT_EQ(R"({"_id":"d","_rev":"2-y","_deleted":true)", out);
}

TEST(CouchJson, UpdateResults) {
  std::string out;
  AppendUpdateResult(&out, DocUpdateResult{"a", "1-x", Status::OK()}, false);
  EXPECT_EQ(R"({"ok":true,"id":"a","rev":"1-x"})", out);
  out.clear();
  AppendUpdateResult(&out, DocUpdateResult{"b", "2-y", Status::Conflict()}, false);
  EXPECT_EQ(R"({"id":"b","error":"conflict","reason":"Document update conflict."})", out);
  out.clear();
  AppendUpdateResult(&out, DocUpdateResult{"b", "2-y", Status::Forbidden("no")}, true);
  EXPECT_EQ(R"({"id":"b","rev":"2-y","error":"forbidden","reason":"no"})", out);
}

TEST(CouchJson, AllDocsRows) {
  std::string out;
  AllDocsRow live;
  live.id = "a\"b";
  live.rev = "1-x";
  AppendAllDocsRow(&out, live);
  EXPECT_EQ(R"({"id":"a\"b","key":"a\"b","value":{"rev":"1-x"}})", out);

  out.clear();
  AllDocsRow deleted;
  deleted.id = "d";
  deleted.rev = "2-y";
  deleted.deleted = true;
  deleted.doc = "null";
  AppendAllDocsRow(&out, deleted);
  EXPECT_EQ(R"({"id":"d","key":"d","value":{"rev":"2-y","deleted":true},"doc":null})", out);

  out.clear();
  AllDocsRow missing;
  missing.id = "zz";
  missing.error = Status::NotFound("not_found");
  AppendAllDocsRow(&out, missing);
  EXPECT_EQ(R"({"key":"zz","error":"not_found"})", out);

  // A string key stays a string, whatever its text looks like.
  for (const char* text : {"[1,2]", "1000", "-1", "true", "null", "{}"}) {
    out.clear();
    missing.id = text;
    AppendAllDocsRow(&out, missing);
    EXPECT_EQ(std::string(R"({"key":")") + text + R"(","error":"not_found"})", out);
  }

  out.clear();
  AllDocsRow not_a_string;  // a key that was not a string: its JSON as sent
  not_a_string.key_json = "[1,2]";
  not_a_string.error = Status::NotFound("not_found");
  AppendAllDocsRow(&out, not_a_string);
  EXPECT_EQ(R"({"key":[1,2],"error":"not_found"})", out);
}

TEST(CouchJson, ChangeRows) {
  std::string out;
  ChangeRow row;
  row.seq = 7;
  row.id = "a";
  row.revs = {"2-b", "2-a"};
  row.deleted = true;
  AppendChangeRow(&out, row);
  EXPECT_EQ(R"({"seq":7,"id":"a","changes":[{"rev":"2-b"},{"rev":"2-a"}],"deleted":true})", out);
  out.clear();
  row.deleted = false;
  row.revs = {"1-x"};
  row.doc = R"({"_id":"a","_rev":"1-x"})";
  AppendChangeRow(&out, row);
  EXPECT_EQ(R"({"seq":7,"id":"a","changes":[{"rev":"1-x"}],"doc":{"_id":"a","_rev":"1-x"}})", out);
}

TEST(CouchJson, OpenRevsBulkGetAndRevsDiff) {
  std::string out;
  AppendOpenRev(&out, OpenRevResult{"1-a", true, R"({"_id":"d","_rev":"1-a"})"});
  AppendOpenRev(&out, OpenRevResult{"9-z", false, ""});
  EXPECT_EQ(R"({"ok":{"_id":"d","_rev":"1-a"}}{"missing":"9-z"})", out);

  out.clear();
  BulkGetResult r;
  r.id = "d";
  r.docs.push_back(BulkGetItem{"1-a", Status::OK(), R"({"_id":"d"})"});
  r.docs.push_back(BulkGetItem{"2-b", Status::NotFound("missing"), ""});
  AppendBulkGetResult(&out, r);
  EXPECT_EQ(R"({"id":"d","docs":[{"ok":{"_id":"d"}},)"
            R"({"error":{"id":"d","rev":"2-b","error":"not_found","reason":"missing"}}]})",
            out);

  out.clear();
  AppendRevsDiff(&out, {RevsDiffResult{"a", {"2-x"}, {"1-y"}}, RevsDiffResult{"b", {}, {}},
                        RevsDiffResult{"c", {"1-q", "1-r"}, {}}});
  EXPECT_EQ(R"({"a":{"missing":["2-x"],"possible_ancestors":["1-y"]},"c":{"missing":["1-q","1-r"]}})",
            out);
}

}  // namespace
}  // namespace settee::couch_json
