// Views (storage/views.h) against CouchDB's answers, on both backends. The
// map and reduce functions are run by a small C++ stand-in for JavaScript
// (FakeFunctions below): the index machinery is what is tested here; the
// JavaScript implementation has its own tests (tests/js, tests/runtime).
#include "storage/views.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "settee/store.h"
#include "storage/database_impl.h"
#include "storage/memory_store.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee::views {
namespace {

using Backend = StoreOptions::Backend;

// Map "source" is a JSON spec: {"key": field | [fields], "value": field,
// "link": field, "twice": true}: emits the doc's fields (skipping docs
// without the key field). Reduce "sum" adds values (and counts rereduces).
class FakeFunctions : public ViewFunctions {
 public:
  std::atomic<int> map_calls{0};
  std::atomic<int> mapped_docs{0};
  std::atomic<int> rereduces{0};
  std::atomic<int> reduced_rows{0};  // values given to reduce (not rereduce) calls
  Status fail;  // returned by Map when set
  // MapShares: units (seqs) are delivered in shares of this many; with
  // fail_after_shares >= 0 it fails (a timeout) once that many were
  // delivered, as a pool whose later share runs over its time budget.
  size_t share_docs = 0;  // 0: one share
  int fail_after_shares = -1;
  // Called at the start of every Map(), before the documents are mapped.
  std::function<void()> on_map;

  Status Map(const MapCode& code, const std::vector<std::string>& docs, std::string* out) override {
    if (!fail.ok()) return fail;
    if (on_map) on_map();
    ++map_calls;
    mapped_docs += static_cast<int>(docs.size());
    json::Document result;
    result.SetArray();
    auto& a = result.GetAllocator();
    for (const std::string& text : docs) {
      json::Document doc;
      EXPECT_TRUE(json::Parse(text, &doc).ok());
      json::Value per(rapidjson::kArrayType);
      for (const std::string& src : code.maps) {
        json::Document spec;
        EXPECT_TRUE(json::Parse(src, &spec).ok()) << src;
        json::Value emits(rapidjson::kArrayType);
        json::Value key;
        bool ok = true;
        const json::Value& ks = spec["key"];
        if (ks.IsArray()) {
          key.SetArray();
          for (auto& f : ks.GetArray()) {
            auto it = doc.FindMember(f);
            if (it == doc.MemberEnd()) { ok = false; break; }
            key.PushBack(json::Value(it->value, a), a);
          }
        } else {
          auto it = doc.FindMember(ks);
          if (it == doc.MemberEnd()) ok = false; else key.CopyFrom(it->value, a);
        }
        if (ok) {
          json::Value value;
          if (spec.HasMember("value")) {
            auto it = doc.FindMember(spec["value"]);
            if (it != doc.MemberEnd()) value.CopyFrom(it->value, a);
          }
          if (spec.HasMember("link")) {
            value.SetObject();
            auto it = doc.FindMember(spec["link"]);
            if (it != doc.MemberEnd()) value.AddMember("_id", json::Value(it->value, a), a);
          }
          int times = spec.HasMember("twice") ? 2 : 1;
          for (int t = 0; t < times; ++t) {
            json::Value pair(rapidjson::kArrayType);
            pair.PushBack(json::Value(key, a), a);
            pair.PushBack(json::Value(value, a), a);
            emits.PushBack(pair, a);
          }
        }
        per.PushBack(emits, a);
      }
      result.PushBack(per, a);
    }
    *out = json::Serialize(result);
    return Status::OK();
  }

  Status MapShares(const MapCode& code, size_t n, const FetchFn& fetch, const ShareFn& each) override {
    if (share_docs == 0) return ViewFunctions::MapShares(code, n, fetch, each);
    int delivered = 0;
    for (size_t from = 0; from < n; from += share_docs) {
      if (delivered == fail_after_shares) return Status(Status::Code::kTimeout, "Script execution timed out");
      const size_t to = std::min(n, from + share_docs);
      std::vector<std::string> share;
      Status s = fetch(from, to, &share);
      if (!s.ok()) return s;
      std::string out = "[]";
      if (!share.empty()) s = Map(code, share, &out);
      if (!s.ok()) return s;
      s = each(from, to, out);
      if (!s.ok()) return s;
      ++delivered;
    }
    return Status::OK();
  }

  Status Reduce(const MapCode&, const std::string& source, std::string_view calls_json,
                std::string* out) override {
    EXPECT_EQ(source, "sum");
    json::Document calls;
    EXPECT_TRUE(json::Parse(calls_json, &calls).ok());
    std::string r = "[";
    for (auto& c : calls.GetArray()) {
      double sum = 0;
      if (c[2].GetBool()) {
        ++rereduces;
      } else {
        reduced_rows += static_cast<int>(c[1].Size());
      }
      for (auto& v : c[1].GetArray()) sum += v.IsNumber() ? v.GetDouble() : 0;
      if (r.size() > 1) r += ',';
      r += std::to_string(static_cast<int64_t>(sum));
    }
    *out = r + "]";
    return Status::OK();
  }
};

class ViewsTest : public ::testing::TestWithParam<Backend> {
 protected:
  ViewsTest() : store_(GetParam()) { Open(true); }

  void Open(bool create) {
    auto db = create ? store_->CreateDatabase("views") : store_->OpenDatabase("views");
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
  }

  std::string Put(const std::string& json) {
    auto r = db_->Put({}, json);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " " << json;
    return r.ok() ? r->rev : "";
  }

  // Query with options given as a JSON object.
  std::string Q(std::string_view ddoc, std::string_view view, const std::string& opts = "{}") {
    std::string out;
    Status s = QueryOpts(ddoc, view, opts, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  Status QueryOpts(std::string_view ddoc, std::string_view view, const std::string& opts,
                   std::string* out) {
    json::Document o;
    EXPECT_TRUE(json::Parse(opts, &o).ok()) << opts;
    auto q = ParseViewQuery(o);
    if (!q.ok()) return q.status();
    return Query(*store_.get(), *db_, &fns_, ddoc, view, *q, out);
  }

  // Only the rows' keys (and values), compactly, for comparison.
  static std::string Keys(const std::string& answer, bool values = false) {
    json::Document d;
    EXPECT_TRUE(json::Parse(answer, &d).ok()) << answer;
    std::string out;
    for (auto& r : d["rows"].GetArray()) {
      if (!out.empty()) out += ' ';
      out += json::Serialize(r["key"]);
      if (values) out += "=" + json::Serialize(r["value"]);
    }
    return out;
  }

  testing::TempStore store_;
  std::shared_ptr<Database> db_;
  FakeFunctions fns_;
};

TEST_P(ViewsTest, CollationOfMixedTypeKeys) {
  // CouchDB's documented order (ddocs/views/collation.rst).
  const char* keys[] = {R"({"a":1})", R"(["b"])", "[\"a\",1]", "[\"a\"]", "\"b\"", "\"B\"", "\"a\"",
                        "\"A\"", "\"aa\"", "2", "1.5", "-1", "true", "false", "null", R"({"a":0})"};
  int i = 0;
  for (const char* k : keys) Put(std::string(R"({"_id":"d)") + std::to_string(i++) + R"(","k":)" + k + "}");
  Put(R"({"_id":"_design/t","views":{"by_k":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "by_k")),
            R"(null false true -1 1.5 2 "a" "A" "aa" "b" "B" ["a"] ["a",1] ["b"] {"a":0} {"a":1})");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "by_k"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 16);
  EXPECT_EQ(d["offset"].GetInt(), 0);
}

TEST_P(ViewsTest, GroupLevelOnArrayKeys) {
  Put(R"({"date":[2024,1,1],"n":1})");
  Put(R"({"date":[2024,1,2],"n":2})");
  Put(R"({"date":[2024,2,1],"n":3})");
  Put(R"({"date":[2025,1,1],"n":4})");
  Put(R"({"date":[2025,1,1],"n":5})");
  Put(R"({"_id":"_design/t","views":{"sum":{"map":"{\"key\":\"date\",\"value\":\"n\"}","reduce":"_sum"},)"
      R"("count":{"map":"{\"key\":\"date\",\"value\":\"n\"}","reduce":"_count"}}})");
  EXPECT_EQ(Q("t", "sum"), R"({"rows":[{"key":null,"value":15}]})");
  EXPECT_EQ(Keys(Q("t", "sum", R"({"group_level":1})"), true), "[2024]=6 [2025]=9");
  EXPECT_EQ(Keys(Q("t", "sum", R"({"group_level":2})"), true), "[2024,1]=3 [2024,2]=3 [2025,1]=9");
  EXPECT_EQ(Keys(Q("t", "count", R"({"group":true})"), true),
            "[2024,1,1]=1 [2024,1,2]=1 [2024,2,1]=1 [2025,1,1]=2");
  EXPECT_EQ(Keys(Q("t", "count", R"({"group_level":1,"descending":true})"), true), "[2025]=2 [2024]=3");
  EXPECT_EQ(Keys(Q("t", "sum", R"({"group_level":1,"limit":1,"skip":1})"), true), "[2025]=9");
  // Both views share one index (identical maps).
  EXPECT_EQ(fns_.map_calls.load(), 1);
}

TEST_P(ViewsTest, BuiltinReduces) {
  for (int v : {4, 2, 9, -1}) Put(R"({"k":"x","v":)" + std::to_string(v) + "}");
  Put(R"({"k":"y","v":[1,2,3]})");
  Put(R"({"k":"y","v":[10,20]})");
  Put(R"({"_id":"_design/t","views":{)"
      R"("stats":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_stats"},)"
      R"("sum":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"  _sum "},)"
      R"("distinct":{"map":"{\"key\":\"v\"}","reduce":"_approx_count_distinct"}}})");
  EXPECT_EQ(Q("t", "stats", R"({"key":"x"})"),
            R"({"rows":[{"key":null,"value":{"sum":14,"count":4,"min":-1,"max":9,"sumsqr":102}}]})");
  EXPECT_EQ(Keys(Q("t", "sum", R"({"group":true})"), true), R"("x"=14 "y"=[11,22,3])");
  EXPECT_EQ(Keys(Q("t", "distinct"), true), "null=6");
  // A value _sum cannot add: CouchDB's builtin_sum_rows makes that group's
  // value the error (200, the other groups answered), and rereduces keep it.
  Put(R"({"k":"z","v":"text"})");
  const std::string err =
      R"({"error":"builtin_reduce_error","reason":"The _sum function requires that map values be )"
      R"(numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. )"
      R"(Objects can be arbitrarily nested, provided that the values for all fields are themselves )"
      R"(numbers, arrays of numbers, or objects.","caused_by":"text"})";
  EXPECT_EQ(Keys(Q("t", "sum", R"({"group":true})"), true), R"("x"=14 "y"=[11,22,3] "z"=)" + err);
  EXPECT_EQ(Q("t", "sum"), R"({"rows":[{"key":null,"value":)" + err + "}]}");
  std::string docs = "[";
  for (int i = 0; i < 300; ++i) docs += R"({"k":"zz","v":1},)";
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + R"({"k":"zz","v":[1,"x"]}])", {}, &results).ok());
  for (int round = 0; round < 2; ++round) {  // the second from cached blocks
    const std::string zz = Keys(Q("t", "sum", R"({"key":"zz","group":true})"), true);
    EXPECT_NE(zz.find(R"("zz"={"error":"builtin_reduce_error")"), std::string::npos) << zz;
    EXPECT_NE(zz.find(R"("caused_by":[1,"x"]})"), std::string::npos) << zz;
    EXPECT_NE(Q("t", "sum").find(R"("caused_by":"text")"), std::string::npos);
  }
}

// _stats of arrays of numbers is an array of stats objects, one per
// element, as CouchDB's builtin_stats zips them (couch_query_servers:
// stat_values, pack_stats); rereduced from the cached blocks too. A value
// of another shape than the group's first is its stats error.
TEST_P(ViewsTest, StatsOfArraysAreElementWise) {
  std::string docs = "[";
  for (int i = 0; i < 300; ++i) {
    if (i) docs += ',';
    docs += R"({"k":)" + std::to_string(i % 2) + R"(,"v":[)" + std::to_string(i) + ",2]}";
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  Put(R"({"_id":"_design/t","views":{"stats":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_stats"}}})");
  const std::string even =
      R"([{"sum":22350,"count":150,"min":0,"max":298,"sumsqr":4455100},)"
      R"({"sum":300,"count":150,"min":2,"max":2,"sumsqr":600}])";
  const std::string odd =
      R"([{"sum":22500,"count":150,"min":1,"max":299,"sumsqr":4499950},)"
      R"({"sum":300,"count":150,"min":2,"max":2,"sumsqr":600}])";
  EXPECT_EQ(Keys(Q("t", "stats", R"({"group":true})"), true), "0=" + even + " 1=" + odd);
  // Twice: the second answer comes from the cached block reductions.
  EXPECT_EQ(Keys(Q("t", "stats", R"({"group":true})"), true), "0=" + even + " 1=" + odd);
  EXPECT_EQ(Q("t", "stats"),
            R"({"rows":[{"key":null,"value":[{"sum":44850,"count":300,"min":0,"max":299,"sumsqr":8955050},)"
            R"({"sum":600,"count":300,"min":2,"max":2,"sumsqr":1200}]}]})");
  Put(R"({"k":0,"v":5})");
  std::string out;
  Status s = QueryOpts("t", "stats", R"({"group":true})", &out);
  EXPECT_NE(s.reason().find("builtin_reduce_error"), std::string::npos) << s.ToString();
}

TEST_P(ViewsTest, JavaScriptReduceRereducesLargeGroups) {
  std::string docs = "[";
  for (int i = 0; i < 2500; ++i) {
    if (i) docs += ',';
    docs += R"({"g":)" + std::to_string(i % 2) + R"(,"v":1})";
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  Put(R"({"_id":"_design/t","views":{"r":{"map":"{\"key\":\"g\",\"value\":\"v\"}","reduce":"sum"}}})");
  EXPECT_EQ(Q("t", "r"), R"({"rows":[{"key":null,"value":2500}]})");
  EXPECT_GT(fns_.rereduces.load(), 0);
  EXPECT_EQ(Keys(Q("t", "r", R"({"group":true})"), true), "0=1250 1=1250");
  EXPECT_EQ(Keys(Q("t", "r", R"({"keys":[1],"group":true})"), true), "1=1250");
  std::string out;
  EXPECT_EQ(QueryOpts("t", "r", R"({"keys":[1]})", &out).code(), Status::Code::kQueryParseError);
}

TEST_P(ViewsTest, IncludeDocsWithLinkedDocs) {
  Put(R"({"_id":"alice","type":"person","name":"Alice"})");
  Put(R"({"_id":"post1","type":"post","author":"alice"})");
  Put(R"({"_id":"_design/t","views":{"authors":{"map":"{\"key\":\"author\",\"link\":\"author\"}"},)"
      R"("names":{"map":"{\"key\":\"name\"}","reduce":"_count"}}})");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "authors", R"({"include_docs":true})"), &d).ok());
  ASSERT_EQ(d["rows"].Size(), 1u);
  EXPECT_EQ(std::string(d["rows"][0]["id"].GetString()), "post1");
  EXPECT_EQ(std::string(d["rows"][0]["doc"]["_id"].GetString()), "alice");
  EXPECT_EQ(std::string(d["rows"][0]["doc"]["name"].GetString()), "Alice");
  std::string out;
  Status s = QueryOpts("t", "names", R"({"include_docs":true})", &out);
  EXPECT_EQ(s.code(), Status::Code::kQueryParseError);
  EXPECT_EQ(s.reason(), "`include_docs` is invalid for reduce");
  ASSERT_TRUE(json::Parse(Q("t", "names", R"({"include_docs":true,"reduce":false})"), &d).ok());
  EXPECT_EQ(std::string(d["rows"][0]["doc"]["_id"].GetString()), "alice");
}

TEST_P(ViewsTest, StaleOkReturnsTheOldIndex) {
  Put(R"({"_id":"a","k":1})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1");
  Put(R"({"_id":"b","k":2})");
  EXPECT_EQ(Keys(Q("t", "v", R"({"stale":"ok"})")), "1");
  EXPECT_EQ(Keys(Q("t", "v", R"({"update":false})")), "1");
  EXPECT_EQ(Keys(Q("t", "v", R"({"update":"lazy"})")), "1");  // updated after answering
  EXPECT_EQ(Keys(Q("t", "v", R"({"stale":"ok"})")), "1 2");
  Put(R"({"_id":"c","k":3})");
  EXPECT_EQ(Keys(Q("t", "v", R"({"update_seq":true})")), "1 2 3");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"update_seq":true})"), &d).ok());
  EXPECT_EQ(d["update_seq"].GetUint64(), db_->UpdateSeq());
}

TEST_P(ViewsTest, KeysWithDuplicatesAndMissing) {
  Put(R"({"_id":"a","k":"x"})");
  Put(R"({"_id":"b","k":"y"})");
  Put(R"({"_id":"c","k":"x"})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"keys":["y","x","nope","y"]})"), &d).ok());
  std::string ids;
  for (auto& r : d["rows"].GetArray()) ids += r["id"].GetString();
  EXPECT_EQ(ids, "bacb");
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"keys":["x"],"descending":true})"), &d).ok());
  EXPECT_EQ(std::string(d["rows"][0]["id"].GetString()), "c");
}

TEST_P(ViewsTest, DescendingWithStartAndEndKeys) {
  for (int i = 1; i <= 6; ++i) Put(R"({"_id":"d)" + std::to_string(i) + R"(","k":)" + std::to_string(i) + "}");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v", R"({"startkey":2,"endkey":4})")), "2 3 4");
  EXPECT_EQ(Keys(Q("t", "v", R"({"startkey":2,"endkey":4,"inclusive_end":false})")), "2 3");
  EXPECT_EQ(Keys(Q("t", "v", R"({"descending":true,"startkey":5,"endkey":2})")), "5 4 3 2");
  EXPECT_EQ(Keys(Q("t", "v", R"({"descending":true,"startkey":5,"endkey":2,"inclusive_end":false})")),
            "5 4 3");
  EXPECT_EQ(Keys(Q("t", "v", R"({"descending":true,"limit":2,"skip":1})")), "5 4");
  EXPECT_EQ(Keys(Q("t", "v", R"({"start_key":5,"end_key":6})")), "5 6");
  EXPECT_EQ(Keys(Q("t", "v", R"({"key":3})")), "3");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"descending":true,"startkey":5,"endkey":2})"), &d).ok());
  EXPECT_EQ(d["offset"].GetInt(), 1);
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"startkey":3})"), &d).ok());
  EXPECT_EQ(d["offset"].GetInt(), 2);
  std::string out;
  Status s = QueryOpts("t", "v", R"({"startkey":4,"endkey":2})", &out);
  EXPECT_EQ(s.code(), Status::Code::kQueryParseError);
  EXPECT_EQ(s.reason(),
            "No rows can match your key range, reverse your start_key and end_key or set "
            "descending=true");
  s = QueryOpts("t", "v", R"({"descending":true,"startkey":2,"endkey":4})", &out);
  EXPECT_EQ(s.code(), Status::Code::kQueryParseError);
}

TEST_P(ViewsTest, DocIdRangesAndTies) {
  for (const char* id : {"b", "a", "c"}) Put(std::string(R"({"_id":")") + id + R"(","k":1})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"startkey":1,"startkey_docid":"b"})"), &d).ok());
  ASSERT_EQ(d["rows"].Size(), 2u);
  EXPECT_EQ(std::string(d["rows"][0]["id"].GetString()), "b");
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"endkey":1,"endkey_docid":"b"})"), &d).ok());
  EXPECT_EQ(d["rows"].Size(), 2u);
}

TEST_P(ViewsTest, IncrementalUpdateAfterEditsDeletesAndConflicts) {
  std::string ra = Put(R"({"_id":"a","k":1})");
  std::string rb = Put(R"({"_id":"b","k":2})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\",\"twice\":true}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1 1 2 2");
  int mapped = fns_.mapped_docs.load();
  // An edit: only the edited doc is mapped again, its old rows go.
  ra = db_->Put("a", R"({"_rev":")" + ra + R"(","k":5})")->rev;
  EXPECT_EQ(Keys(Q("t", "v")), "2 2 5 5");
  EXPECT_EQ(fns_.mapped_docs.load(), mapped + 1);
  // A delete removes its rows.
  ASSERT_TRUE(db_->Delete("b", rb).ok());
  EXPECT_EQ(Keys(Q("t", "v")), "5 5");
  // A replicated conflicting branch that wins replaces the rows.
  UpdateOptions repl;
  repl.new_edits = false;
  ASSERT_TRUE(db_->Put("a", R"({"_id":"a","_rev":"9-ffffffffffffffffffffffffffffffff","k":7})", repl).ok());
  EXPECT_EQ(Keys(Q("t", "v")), "7 7");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 2);
  // A doc that stops emitting leaves the index.
  auto r = db_->Get("a");
  ASSERT_TRUE(json::Parse(*r, &d).ok());
  ASSERT_TRUE(db_->Put("a", std::string(R"({"_rev":")") + d["_rev"].GetString() + R"("})").ok());
  EXPECT_EQ(Keys(Q("t", "v")), "");
  ASSERT_TRUE(json::Parse(Q("t", "v"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 0);
}

// An update whose map fails after some shares were written (UpdateAt
// writes each share's rows on its own): the index keeps its seq, the next
// update redoes those documents from the back-index and recounts, also
// after a reopen.
TEST_P(ViewsTest, UpdateThatDiesMidRoundIsRedone) {
  std::string ra = Put(R"({"_id":"a","k":1})");
  Put(R"({"_id":"b","k":2})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\",\"twice\":true}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1 1 2 2");
  ASSERT_TRUE(db_->Put("a", R"({"_rev":")" + ra + R"(","k":10})").ok());
  Put(R"({"_id":"c","k":3})");
  Put(R"({"_id":"d","k":4})");
  fns_.share_docs = 1;
  fns_.fail_after_shares = 2;  // a's and c's rows written, d's not
  std::string out;
  EXPECT_EQ(QueryOpts("t", "v", "{}", &out).code(), Status::Code::kTimeout);
  fns_.fail_after_shares = -1;
  if (GetParam() == Backend::kLevelDB) {
    db_.reset();
    store_.Reopen();
    Open(false);
  }
  const std::string all = Q("t", "v");
  EXPECT_EQ(Keys(all), "2 2 3 3 4 4 10 10");
  json::Document d;
  ASSERT_TRUE(json::Parse(all, &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 8);
  // The dirty mark is gone: another edit counts from the recounted total.
  Put(R"({"_id":"e","k":5})");
  ASSERT_TRUE(json::Parse(Q("t", "v"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 10);
}

// An update of many shares, each reading its own seq range when it starts;
// documents edited meanwhile (in a share already read, or in one not yet
// read) end with their new rows only.
TEST_P(ViewsTest, EditsDuringAMultiShareUpdate) {
  const int n = 9000;  // 30 shares of 300 seqs
  std::string docs = "[";
  for (int i = 0; i < n; ++i) {
    docs += std::string(i ? "," : "") + R"({"_id":"d)" + std::to_string(10000 + i) + R"(","k":)" + std::to_string(i) + "}";
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}","reduce":"_count"}}})");
  fns_.share_docs = 300;
  int maps = 0;
  fns_.on_map = [&] {
    // While the second share maps: edit a doc of the first share, one of
    // a later one and one of the last, and delete one.
    if (++maps == 2) {
      for (int i : {5, 1000, 8500}) {
        ASSERT_TRUE(db_->Put("d" + std::to_string(10000 + i),
                             R"({"_rev":")" + results[i].rev + R"(","k":)" + std::to_string(-i) + "}").ok());
      }
      ASSERT_TRUE(db_->Delete("d10007", results[7].rev).ok());
    }
  };
  Q("t", "v");
  fns_.on_map = nullptr;
  // Up to date now (the edits may have come after the first update's read).
  EXPECT_EQ(Q("t", "v"), R"({"rows":[{"key":null,"value":8999}]})");
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false,"endkey":0})")), "-8500 -1000 -5 0");
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false,"startkey":4,"endkey":8})")), "4 6 8");
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false,"key":1000})")), "");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"reduce":false,"limit":0})"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 8999);
}

// How a pool cuts an update's work into shares (view_functions.h).
TEST(GuidedShareSizeTest, SharesShrinkWithinBoundsAndTileTheWork) {
  for (size_t threads : {1, 2, 4}) {
    for (size_t n : {0, 1, 255, 511, 512, 3000, 10000, 100000}) {
      std::vector<size_t> sizes;
      for (size_t left = n; left > 0;) {
        const size_t share = GuidedShareSize(left, threads, 256, 2048);
        ASSERT_GT(share, 0u);
        ASSERT_LE(share, left);
        sizes.push_back(share);
        left -= share;
      }
      for (size_t i = 0; i < sizes.size(); ++i) {
        // Only the last share is below the minimum (what was left), none
        // above the maximum, and none bigger than the one before it.
        if (i + 1 < sizes.size()) {
          EXPECT_GE(sizes[i], 256u) << n << " over " << threads;
        }
        EXPECT_LE(sizes[i], std::max<size_t>(2048, 2 * 256)) << n << " over " << threads;
        if (i > 0) {
          EXPECT_LE(sizes[i], sizes[i - 1] + 256) << n << " over " << threads;
        }
      }
      // Enough shares for every thread to take some, once there is work.
      if (n >= 256 * 2 * threads) {
        EXPECT_GE(sizes.size(), 2 * threads) << n << " over " << threads;
      }
    }
  }
  EXPECT_EQ(GuidedShareSize(10000, 2, 256, 2048), 2048u);
  EXPECT_EQ(GuidedShareSize(3000, 2, 256, 2048), 750u);
  EXPECT_EQ(GuidedShareSize(600, 2, 256, 2048), 256u);
  EXPECT_EQ(GuidedShareSize(400, 2, 256, 2048), 400u);
}

// An update cuts the changes since the index's seq into seq ranges, one per
// share, each read by its share: every changed document is read once, in
// the share whose range holds its latest seq, and deleted and design
// documents are read (their rows go) but not mapped.
TEST_P(ViewsTest, EachShareReadsItsOwnSeqRange) {
  for (int i = 0; i < 10; ++i) Put(R"({"_id":"d)" + std::to_string(i) + R"(","k":)" + std::to_string(i) + "}");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "0 1 2 3 4 5 6 7 8 9");
  // seqs 1-10: d0-d9, 11: the design doc. Now: 12 d3 deleted, 13 d10,
  // 14 d5 edited, 15 d11.
  json::Document d;
  auto rev_of = [&](const std::string& id) {
    auto r = db_->Get(id);
    EXPECT_TRUE(r.ok());
    EXPECT_TRUE(json::Parse(*r, &d).ok());
    return std::string(d["_rev"].GetString());
  };
  ASSERT_TRUE(db_->Delete("d3", rev_of("d3")).ok());
  Put(R"({"_id":"d10","k":10})");
  ASSERT_TRUE(db_->Put("d5", R"({"_rev":")" + rev_of("d5") + R"(","k":50})").ok());
  Put(R"({"_id":"d11","k":11})");
  fns_.share_docs = 2;
  const int before = fns_.mapped_docs.load();
  EXPECT_EQ(Keys(Q("t", "v")), "0 1 2 4 6 7 8 9 10 11 50");
  // Shares (11,13] (12,14]... : d10, d5 and d11 mapped once each; d3 read
  // but not mapped.
  EXPECT_EQ(fns_.mapped_docs.load() - before, 3);
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"limit":0})"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 11);
}

TEST_P(ViewsTest, SurvivesReopen) {
  Put(R"({"_id":"a","k":1})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1");
  int calls = fns_.map_calls.load();
  db_.reset();
  store_.Reopen();
  if (GetParam() == Backend::kMemory) return;  // nothing survives a memory store
  Open(false);
  EXPECT_EQ(Keys(Q("t", "v")), "1");
  EXPECT_EQ(fns_.map_calls.load(), calls);  // the index was kept, not rebuilt
  Put(R"({"_id":"b","k":2})");
  EXPECT_EQ(Keys(Q("t", "v")), "1 2");
}

TEST_P(ViewsTest, ErrorsLeaveTheIndexIntact) {
  Put(R"({"_id":"a","k":1})");
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"},"r":{"map":"{\"key\":\"k\"}","reduce":"_count"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1");
  Put(R"({"_id":"b","k":2})");
  fns_.fail = Status(Status::Code::kTimeout, "Script execution timed out");
  std::string out;
  EXPECT_EQ(QueryOpts("t", "v", "{}", &out).code(), Status::Code::kTimeout);
  EXPECT_EQ(Keys(Q("t", "v", R"({"stale":"ok"})")), "1");
  fns_.fail = Status::OK();
  EXPECT_EQ(Keys(Q("t", "v")), "1 2");
  EXPECT_EQ(QueryOpts("t", "nope", "{}", &out).reason(), "missing_named_view");
  EXPECT_EQ(QueryOpts("zz", "v", "{}", &out).code(), Status::Code::kNotFound);
  EXPECT_EQ(QueryOpts("t", "v", R"({"group":true})", &out).reason(),
            "Invalid use of grouping on a map view.");
  EXPECT_EQ(QueryOpts("t", "v", R"({"reduce":true})", &out).reason(),
            "Reduce is invalid for map-only views.");
  EXPECT_EQ(QueryOpts("t", "v", R"({"limit":"x"})", &out).code(), Status::Code::kQueryParseError);
  EXPECT_EQ(QueryOpts("t", "v", R"({"keys":3})", &out).code(), Status::Code::kQueryParseError);
  EXPECT_EQ(QueryOpts("t", "v", R"({"stale":"no"})", &out).code(), Status::Code::kQueryParseError);
  // A design document the index could not use is not stored at all.
  EXPECT_EQ(db_->Put({}, R"({"_id":"_design/bad","views":{"v":{"map":3}}})").status().code(),
            Status::Code::kInvalidDesignDoc);
  EXPECT_EQ(QueryOpts("bad", "v", "{}", &out).code(), Status::Code::kNotFound);
}

TEST_P(ViewsTest, CleanupRemovesUnusedIndexes) {
  Put(R"({"_id":"a","k":1})");
  std::string rev = Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "1");
  auto size_of_views = [&] {
    uint64_t n = 0;
    KVIteratorOptions io;
    auto it = static_cast<DatabaseImpl*>(db_.get())->kv()->NewIterator(io);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view k = it->key();
      if (k.size() > 9 && k[0] == 'D' && k[9] == 'v') ++n;
    }
    return n;
  };
  EXPECT_GT(size_of_views(), 0u);
  ASSERT_TRUE(Cleanup(*store_.get(), *db_).ok());
  EXPECT_GT(size_of_views(), 0u);  // still used
  // A second design doc with the same code shares the index.
  Put(R"({"_id":"_design/u","views":{"w":{"map":"{\"key\":\"k\"}"}}})");
  int calls = fns_.map_calls.load();
  EXPECT_EQ(Keys(Q("u", "w")), "1");
  EXPECT_EQ(fns_.map_calls.load(), calls);
  ASSERT_TRUE(db_->Put("_design/t", R"({"_rev":")" + rev + R"(","views":{"v":{"map":"{\"key\":\"_id\"}"}}})").ok());
  EXPECT_EQ(Keys(Q("t", "v")), R"("a")");  // new code, new index
  uint64_t before = size_of_views();
  auto u = db_->Get("_design/u");
  json::Document d;
  ASSERT_TRUE(json::Parse(*u, &d).ok());
  ASSERT_TRUE(db_->Delete("_design/u", d["_rev"].GetString()).ok());
  ASSERT_TRUE(Cleanup(*store_.get(), *db_).ok());
  EXPECT_LT(size_of_views(), before);
  EXPECT_EQ(Keys(Q("t", "v")), R"("a")");
}

// Cleanup frees a dead index's rows itself: no snapshot of its own is alive
// while it deletes them, so the memory store does not keep the deleted
// versions for the next writer (the next index update) to collect.
TEST_P(ViewsTest, CleanupFreesTheRowsAtOnce) {
  auto* mem = dynamic_cast<MemoryStore*>(static_cast<DatabaseImpl*>(db_.get())->kv());
  if (mem == nullptr) GTEST_SKIP() << "memory store only";
  std::string docs = "[";
  for (int i = 0; i < 12000; ++i) docs += std::string(i ? "," : "") + R"({"k":)" + std::to_string(i) + "}";
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  std::string rev = Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Q("t", "v", R"({"limit":0})"), R"({"total_rows":12000,"offset":0,"rows":[]})");
  ASSERT_TRUE(db_->Delete("_design/t", rev).ok());
  // The rows, the back-index entries and the header.
  const size_t index_keys = 2 * 12000 + 1;
  const size_t nodes = mem->TEST_NodeCount();
  ASSERT_TRUE(Cleanup(*store_.get(), *db_).ok());
  EXPECT_EQ(mem->TEST_NodeCount(), nodes - index_keys);
}

// Cleanup forgets a dead index's cached reductions. Were they kept, the
// same code indexed again later (a design doc put back) would find them: a
// block whose only rows belonged to a doc deleted meanwhile is never written
// by the rebuild, so nothing would mark its old count stale.
TEST_P(ViewsTest, CleanupForgetsTheIndexsCachedReductions) {
  const int n = 65;  // a full block of 64 rows and one of a single row
  std::string docs = "[";
  for (int i = 0; i < n; ++i) {
    docs += std::string(i ? "," : "") + R"({"_id":"d)" + std::to_string(100 + i) + R"(","k":)" +
            std::to_string(i) + "}";
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  std::string rev = Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}","reduce":"_count"}}})");
  EXPECT_EQ(Q("t", "v"), R"({"rows":[{"key":null,"value":65}]})");
  ASSERT_TRUE(db_->Delete("_design/t", rev).ok());
  ASSERT_TRUE(Cleanup(*store_.get(), *db_).ok());
  ASSERT_TRUE(db_->Delete("d164", results[n - 1].rev).ok());
  Put(R"({"_id":"_design/t2","views":{"v":{"map":"{\"key\":\"k\"}","reduce":"_count"}}})");
  EXPECT_EQ(Q("t2", "v"), R"({"rows":[{"key":null,"value":64}]})");
}

TEST_P(ViewsTest, TempQueryLeavesNothingBehind) {
  Put(R"({"_id":"a","k":2})");
  Put(R"({"_id":"b","k":1})");
  DesignDoc temp = TempDesignDoc("javascript", R"({"key":"k","value":"k"})", "_sum");
  json::Document o;
  o.SetObject();
  auto q = ParseViewQuery(o);
  std::string out;
  ASSERT_TRUE(TempQuery(*db_, &fns_, temp, *q, &out).ok());
  EXPECT_EQ(out, R"({"rows":[{"key":null,"value":3}]})");
  ASSERT_TRUE(json::Parse(R"({"reduce":false})", &o).ok());
  ASSERT_TRUE(TempQuery(*db_, &fns_, temp, *ParseViewQuery(o), &out).ok());
  EXPECT_EQ(Keys(out), "1 2");
  KVIteratorOptions io;
  auto it = static_cast<DatabaseImpl*>(db_.get())->kv()->NewIterator(io);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view k = it->key();
    EXPECT_FALSE(k.size() > 9 && k[0] == 'D' && k[9] == 'v');
  }
}

TEST_P(ViewsTest, ConcurrentQueriesShareOneUpdate) {
  std::string docs = "[";
  for (int i = 0; i < 3000; ++i) docs += std::string(i ? "," : "") + R"({"k":)" + std::to_string(i) + "}";
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}","reduce":"_count"}}})");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] { EXPECT_EQ(Q("t", "v"), R"({"rows":[{"key":null,"value":3000}]})"); });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(fns_.mapped_docs.load(), 3000);
}

// Reduces answered from cached block reductions (view_reduce_cache.h) equal
// the reduce of every row, for random ranges and group levels, across
// incremental updates (edits, deletions, new docs) that invalidate blocks.
TEST_P(ViewsTest, CachedBlockReductionsEqualFullReduce) {
  std::mt19937 rng(42);
  struct Doc {
    std::string rev;
    std::vector<int> key;
    int value = 0;
    bool live = false;
  };
  const int n = 3000;  // about a dozen blocks
  std::vector<Doc> docs(n);
  auto doc_json = [&](int i) {
    const Doc& d = docs[i];
    std::string j = R"({"_id":"d)" + std::to_string(100000 + i) + R"(",)";
    if (!d.rev.empty()) j += R"("_rev":")" + d.rev + R"(",)";
    j += R"("k":[)" + std::to_string(d.key[0]) + "," + std::to_string(d.key[1]) + "," +
         std::to_string(d.key[2]) + R"(],"v":)" + std::to_string(d.value) + "}";
    return j;
  };
  auto randomize = [&](int i) {
    docs[i].key = {static_cast<int>(rng() % 5), static_cast<int>(rng() % 7), static_cast<int>(rng() % 50)};
    docs[i].value = static_cast<int>(rng() % 1000) - 300;
  };
  std::string batch = "[";
  for (int i = 0; i < n; ++i) {
    randomize(i);
    docs[i].live = true;
    if (i) batch += ',';
    batch += doc_json(i);
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(batch + "]", {}, &results).ok());
  for (int i = 0; i < n; ++i) docs[i].rev = results[i].rev;
  Put(R"({"_id":"_design/t","views":{)"
      R"("sum":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_sum"},)"
      R"("count":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_count"},)"
      R"("stats":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_stats"},)"
      R"("js":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"sum"},)"
      R"("distinct":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_approx_count_distinct"}}})");
  auto key_text = [](const std::vector<int>& k) {
    std::string t = "[";
    for (size_t i = 0; i < k.size(); ++i) t += (i ? "," : "") + std::to_string(k[i]);
    return t + "]";
  };
  // The expected answer, reducing every live row in range by hand.
  auto expect = [&](const std::vector<int>& lo, const std::vector<int>& hi, int level,
                    const std::string& kind) {
    std::map<std::vector<int>, std::vector<int>> groups;
    std::map<std::vector<int>, std::set<std::vector<int>>> distinct_keys;
    for (const Doc& d : docs) {
      if (!d.live || d.key < lo || d.key > hi) continue;
      std::vector<int> g(d.key.begin(), d.key.begin() + std::min<size_t>(level, 3));
      groups[g].push_back(d.value);
      distinct_keys[g].insert(d.key);
    }
    std::string out;
    for (auto& [g, vals] : groups) {
      if (!out.empty()) out += ' ';
      out += level == 0 ? "null" : key_text(g);
      out += '=';
      long sum = 0, sumsqr = 0;
      int mn = vals[0], mx = vals[0];
      for (int v : vals) {
        sum += v;
        sumsqr += static_cast<long>(v) * v;
        mn = std::min(mn, v);
        mx = std::max(mx, v);
      }
      if (kind == "sum" || kind == "js") out += std::to_string(sum);
      if (kind == "distinct") out += std::to_string(distinct_keys[g].size());
      if (kind == "count") out += std::to_string(vals.size());
      if (kind == "stats") {
        out += R"({"sum":)" + std::to_string(sum) + R"(,"count":)" + std::to_string(vals.size()) +
               R"(,"min":)" + std::to_string(mn) + R"(,"max":)" + std::to_string(mx) +
               R"(,"sumsqr":)" + std::to_string(sumsqr) + "}";
      }
    }
    return out;
  };
  auto random_key = [&]() {
    std::vector<int> k{static_cast<int>(rng() % 6) - 1, static_cast<int>(rng() % 8), static_cast<int>(rng() % 52)};
    return k;
  };
  for (int round = 0; round < 4; ++round) {
    for (int qn = 0; qn < 30; ++qn) {
      std::vector<int> lo = random_key(), hi = random_key();
      if (hi < lo) std::swap(lo, hi);
      if (qn % 5 == 0) {
        lo = {-1, 0, 0};
        hi = {9, 9, 99};
      }
      const int level = static_cast<int>(rng() % 4);  // 0: no grouping; 3: exact keys
      const std::string kind = std::vector<std::string>{"sum", "count", "stats", "js", "distinct"}[qn % 5];
      std::string opts = R"({"startkey":)" + key_text(lo) + R"(,"endkey":)" + key_text(hi);
      if (level > 0) opts += R"(,"group_level":)" + std::to_string(level);
      opts += "}";
      EXPECT_EQ(Keys(Q("t", kind, opts), true), expect(lo, hi, level, kind))
          << "round " << round << " query " << opts << " on " << kind;
      // Descending (no limit: from the cached blocks too): the same groups
      // in reverse.
      std::string down = R"({"descending":true,"startkey":)" + key_text(hi) + R"(,"endkey":)" + key_text(lo);
      if (level > 0) down += R"(,"group_level":)" + std::to_string(level);
      down += "}";
      std::vector<std::string> want;
      std::istringstream words(expect(lo, hi, level, kind));
      for (std::string w; words >> w;) want.insert(want.begin(), w);
      std::string reversed;
      for (const std::string& w : want) reversed += (reversed.empty() ? "" : " ") + w;
      EXPECT_EQ(Keys(Q("t", kind, down), true), reversed) << "round " << round << " query " << down;
      // With a limit, both ways (descending walks the blocks from the top,
      // keeping the parts it read whole).
      const size_t limit = 1 + rng() % 4;
      auto first_words = [&](const std::string& text) {
        std::istringstream in(text);
        std::string out;
        size_t n = 0;
        for (std::string w; n < limit && in >> w; ++n) out += (out.empty() ? "" : " ") + w;
        return out;
      };
      const std::string lim = R"(,"limit":)" + std::to_string(limit) + "}";
      const std::string up_limited = opts.substr(0, opts.size() - 1) + lim;
      const std::string down_limited = down.substr(0, down.size() - 1) + lim;
      EXPECT_EQ(Keys(Q("t", kind, up_limited), true), first_words(expect(lo, hi, level, kind)))
          << "round " << round << " query " << up_limited;
      EXPECT_EQ(Keys(Q("t", kind, down_limited), true), first_words(reversed))
          << "round " << round << " query " << down_limited;
      // A map query's offset (the rows before its range, either way),
      // counted from the cached blocks too.
      int below = 0, above = 0;
      for (const Doc& d : docs) {
        if (!d.live) continue;
        if (d.key < lo) ++below;
        if (d.key > hi) ++above;
      }
      json::Document m;
      ASSERT_TRUE(json::Parse(Q("t", kind, R"({"reduce":false,"limit":1,"startkey":)" + key_text(lo) + "}"), &m).ok());
      EXPECT_EQ(m["offset"].GetInt(), below) << "round " << round << " from " << key_text(lo);
      ASSERT_TRUE(json::Parse(Q("t", kind, R"({"reduce":false,"limit":1,"descending":true,"startkey":)" +
                                               key_text(hi) + "}"), &m).ok());
      EXPECT_EQ(m["offset"].GetInt(), above) << "round " << round << " down from " << key_text(hi);
    }
    // Edit, delete and add some documents, then query again.
    for (int e = 0; e < 60; ++e) {
      int i = static_cast<int>(rng() % n);
      if (docs[i].live && rng() % 4 == 0) {
        ASSERT_TRUE(db_->Delete("d" + std::to_string(100000 + i), docs[i].rev).ok());
        docs[i].live = false;
        docs[i].rev.clear();  // recreated below as a new document
        continue;
      }
      randomize(i);
      if (!docs[i].live) {
        // A deleted doc comes back without a rev.
        auto r = db_->Put({}, doc_json(i));
        ASSERT_TRUE(r.ok()) << r.status().ToString();
        docs[i].rev = r->rev;
        docs[i].live = true;
        continue;
      }
      auto r = db_->Put({}, doc_json(i));
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      docs[i].rev = r->rev;
    }
  }
  // A JavaScript reduce over the whole index, again: the second reduces only
  // the rows of blocks that span two groups (a few), rereducing the other
  // blocks' values.
  const std::string all = R"({"group_level":1})";
  const std::string js_answer = Q("t", "js", all);
  EXPECT_EQ(Keys(js_answer, true), expect({-1, 0, 0}, {9, 9, 99}, 1, "js"));
  const int rows_before = fns_.reduced_rows.load();
  EXPECT_EQ(Q("t", "js", all), js_answer);
  EXPECT_LT(fns_.reduced_rows.load() - rows_before, n / 4);
  // stale=ok after edits answers from the old index, cache or not.
  const std::string before = Q("t", "sum");
  auto r = db_->Put({}, R"({"_id":"late","k":[0,0,0],"v":1000000})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(Q("t", "sum", R"({"stale":"ok"})"), before);
  EXPECT_NE(Q("t", "sum"), before);
}

// A limited grouped reduce stops inside a block: the parts it read whole
// are kept, the rest of the block stays unknown, so later reduces over it
// (ungrouped, other ranges, the other way) still count every row.
TEST_P(ViewsTest, LimitedReducesKeepWhatTheyRead) {
  std::string docs = "[";
  for (int i = 0; i < 1000; ++i) {
    docs += std::string(i ? "," : "") + R"({"k":[)" + std::to_string(i / 100) + "," + std::to_string(i) +
            R"(],"v":1})";
  }
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  Put(R"({"_id":"_design/t","views":{)"
      R"("sum":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_sum"},)"
      R"("js":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"sum"},)"
      R"("distinct":{"map":"{\"key\":\"k\",\"value\":\"v\"}","reduce":"_approx_count_distinct"}}})");
  for (const char* view : {"sum", "js", "distinct"}) {
    EXPECT_EQ(Keys(Q("t", view, R"({"group_level":1,"limit":2})"), true), "[0]=100 [1]=100") << view;
    EXPECT_EQ(Keys(Q("t", view, R"({"group_level":1,"limit":2,"descending":true})"), true), "[9]=100 [8]=100") << view;
    EXPECT_EQ(Keys(Q("t", view), true), "null=1000") << view;
    EXPECT_EQ(Keys(Q("t", view, R"({"startkey":[2,250],"endkey":[7,777],"descending":false})"), true), "null=528") << view;
    EXPECT_EQ(Keys(Q("t", view, R"({"startkey":[7,777],"endkey":[2,250],"descending":true,"limit":5})"), true),
              "null=528") << view;
    EXPECT_EQ(Keys(Q("t", view, R"({"group_level":1,"startkey":[3],"limit":3})"), true), "[3]=100 [4]=100 [5]=100") << view;
    EXPECT_EQ(Keys(Q("t", view), true), "null=1000") << view;
  }
}

// An index built before a purge follows it on its next update (CouchDB's
// indexes follow purge requests by purge seq): a fully purged document's
// rows go, a partly purged one is mapped again from its new winner, a
// reduce sees the change, and the index's purge_seq is kept across a reopen.
TEST_P(ViewsTest, IndexFollowsPurges) {
  std::string ra = Put(R"({"_id":"a","k":1,"n":1})");
  Put(R"({"_id":"b","k":2,"n":2})");
  UpdateOptions repl;
  repl.new_edits = false;
  const std::string h1(32, '1'), h2(32, '2');
  ASSERT_TRUE(db_->Put("c", R"({"_id":"c","_rev":"1-)" + h1 + R"(","k":3,"n":3})", repl).ok());
  ASSERT_TRUE(db_->Put("c", R"({"_id":"c","_rev":"1-)" + h2 + R"(","k":4,"n":4})", repl).ok());
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\",\"value\":\"n\"}","reduce":"sum"}}})");
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false})")), "1 2 4");
  EXPECT_EQ(Keys(Q("t", "v"), true), "null=7");
  std::vector<PurgeResult> out;
  ASSERT_TRUE(db_->Purge({{"a", {ra}}, {"c", {"1-" + h2}}}, &out).ok());
  // Stale reads still see the old rows; the next update drops them.
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false,"update":false})")), "1 2 4");
  const int mapped = fns_.mapped_docs.load();
  EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false})")), "2 3");
  EXPECT_EQ(fns_.mapped_docs.load(), mapped + 1);  // only c, from its new winner
  EXPECT_EQ(Keys(Q("t", "v"), true), "null=5");
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v", R"({"reduce":false})"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 2);
  std::string info;
  ASSERT_TRUE(Info(*store_.get(), *db_, "t", &info).ok());
  EXPECT_NE(info.find(R"("purge_seq":2)"), std::string::npos) << info;
  if (GetParam() == Backend::kLevelDB) {
    db_.reset();
    store_.Reopen();
    Open(false);
    const int before = fns_.mapped_docs.load();
    EXPECT_EQ(Keys(Q("t", "v", R"({"reduce":false})")), "2 3");
    EXPECT_EQ(fns_.mapped_docs.load(), before);  // nothing left to do
  }
}

// An index further behind than the purge infos compaction kept cannot tell
// which documents went: it rebuilds, and its rows are right.
TEST_P(ViewsTest, IndexBehindTrimmedPurgeInfosRebuilds) {
  std::vector<std::string> revs;
  for (int i = 0; i < 5; ++i) {
    revs.push_back(Put(R"({"_id":"d)" + std::to_string(i) + R"(","k":)" + std::to_string(i) + "}"));
  }
  Put(R"({"_id":"_design/t","views":{"v":{"map":"{\"key\":\"k\"}"}}})");
  EXPECT_EQ(Keys(Q("t", "v")), "0 1 2 3 4");
  ASSERT_TRUE(db_->SetPurgedInfosLimit(1).ok());
  std::vector<PurgeResult> out;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(db_->Purge({{"d" + std::to_string(i), {revs[i]}}}, &out).ok());
  }
  ASSERT_TRUE(db_->Compact().ok());
  const int mapped = fns_.mapped_docs.load();
  EXPECT_EQ(Keys(Q("t", "v")), "3 4");
  EXPECT_EQ(fns_.mapped_docs.load(), mapped + 2);  // mapped again from scratch
  json::Document d;
  ASSERT_TRUE(json::Parse(Q("t", "v"), &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 2);
}

INSTANTIATE_TEST_SUITE_P(Backends, ViewsTest, ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

}  // namespace
}  // namespace settee::views
