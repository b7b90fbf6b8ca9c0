// Mango (storage/mango.h, mango_selector.h): the operator table against
// CouchDB's semantics, and _index/_find/_explain on both backends.
#include "storage/mango.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "settee/store.h"
#include "storage/mango_selector.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee::mango {
namespace {

using Backend = StoreOptions::Backend;

bool Match(const std::string& selector, const std::string& doc) {
  json::Document s, d;
  EXPECT_TRUE(json::Parse(selector, &s).ok()) << selector;
  EXPECT_TRUE(json::Parse(doc, &d).ok()) << doc;
  auto sel = Selector::Parse(s);
  EXPECT_TRUE(sel.ok()) << sel.status().ToString() << " " << selector;
  return sel.ok() && sel->Matches(d);
}

Status ParseError(const std::string& selector) {
  json::Document s;
  EXPECT_TRUE(json::Parse(selector, &s).ok());
  auto sel = Selector::Parse(s);
  return sel.ok() ? Status::OK() : sel.status();
}

TEST(MangoSelector, OperatorTable) {
  const std::string doc =
      R"({"_id":"B","n":5,"s":"hello","b":true,"nil":null,"a":[1,2,3],"o":{"x":{"y":1},"k":"v"},)"
      R"("e":[{"v":1},{"v":7}],"dot.ted":1})";
  struct Case {
    const char* selector;
    bool match;
  } cases[] = {
      {R"({"n":5})", true},
      {R"({"n":{"$eq":5}})", true},
      {R"({"n":{"$ne":5}})", false},
      {R"({"missing":{"$ne":5}})", false},  // a missing field matches nothing but $exists:false
      {R"({"n":{"$gt":4,"$lt":6}})", true},
      {R"({"n":{"$gte":5}})", true},
      {R"({"n":{"$lte":4}})", false},
      {R"({"s":{"$gt":5}})", true},  // collation: strings after numbers
      {R"({"n":{"$in":[1,5]}})", true},
      {R"({"a":{"$in":[3,9]}})", true},  // an array matches by element
      {R"({"n":{"$nin":[1,5]}})", false},
      {R"({"n":{"$exists":true}})", true},
      {R"({"missing":{"$exists":false}})", true},
      {R"({"nil":{"$exists":true}})", true},
      {R"({"nil":{"$type":"null"}})", true},
      {R"({"b":{"$type":"boolean"}})", true},
      {R"({"o":{"$type":"object"}})", true},
      {R"({"a":{"$type":"number"}})", false},
      {R"({"$and":[{"n":5},{"s":"hello"}]})", true},
      {R"({"$or":[{"n":1},{"s":"hello"}]})", true},
      {R"({"$nor":[{"n":1},{"s":"x"}]})", true},
      {R"({"$not":{"n":5}})", false},
      {R"({"missing":{"$not":{"$eq":1}}})", true},  // CouchDB moves $not above the field
      {R"({"a":{"$all":[1,3]}})", true},
      {R"({"a":{"$all":[1,4]}})", false},
      {R"({"a":{"$elemMatch":{"$gt":2}}})", true},
      {R"({"e":{"$elemMatch":{"v":{"$gt":5}}}})", true},
      {R"({"a":{"$allMatch":{"$gt":0}}})", true},
      {R"({"a":{"$allMatch":{"$gt":1}}})", false},
      {R"({"o":{"$keyMapMatch":{"$eq":"k"}}})", true},
      {R"({"a":{"$size":3}})", true},
      {R"({"a":{"$size":2}})", false},
      {R"({"n":{"$mod":[2,1]}})", true},
      {R"({"n":{"$mod":[5,1]}})", false},
      {R"({"s":{"$regex":"^h.l+o$"}})", true},
      {R"({"n":{"$regex":"5"}})", false},
      {R"({"s":{"$beginsWith":"he"}})", true},
      {R"({"o.x.y":1})", true},
      {R"({"o":{"x":{"y":1}}})", true},
      {R"({"dot\\.ted":1})", true},
      {R"({"_id":{"$gt":"A"}})", true},
      {R"({"_id":{"$lt":"a"}})", true},  // _id by code point: "B" < "a"
      {R"({"a":[1,2,3]})", true},
      {R"({"a.1":2})", true},  // a name of digits indexes an array, as in CouchDB
      // binary_to_integer's forms: a sign, leading zeros; negatives match nothing
      {R"({"a.+1":2})", true},
      {R"({"a.01":2})", true},
      {R"({"a.00000000000000001":2})", true},
      {R"({"a.000":1})", true},
      {R"({"a.-1":{"$exists":true}})", false},
      {R"({"a.-0":1})", true},
      {R"({"a.+":{"$exists":true}})", false},
      {R"({"a.99999999999":{"$exists":true}})", false},
      {R"({"a.3":{"$exists":true}})", false},
      {R"({"e.1.v":7})", true},
      {R"({"a.x":{"$exists":true}})", false},
  };
  for (const Case& c : cases) EXPECT_EQ(Match(c.selector, doc), c.match) << c.selector;
}

// $regex takes PCRE's syntax (CouchDB matches with Erlang's re), and
// neither a long string nor a runaway pattern takes the process down: with
// std::regex, ^(a|b)*c on a long string recursed once per character until
// the stack overflowed (a crashed server on POST /db/_find).
TEST(MangoSelector, RegexIsPcreLikeAndBounded) {
  EXPECT_TRUE(Match(R"({"s":{"$regex":"(?i)^HEL"}})", R"({"s":"hello"})"));
  EXPECT_TRUE(Match(R"({"s":{"$regex":"^\\w+\\s\\d{2}$"}})", R"({"s":"abc 42"})"));
  EXPECT_TRUE(Match(R"({"s":{"$regex":"(?<=a)b"}})", R"({"s":"ab"})"));
  EXPECT_TRUE(Match(R"({"s":{"$regex":"^é.$"}})", R"({"s":"éa"})"));
  std::string ab;
  for (int i = 0; i < 500000; ++i) ab += "ab";
  const std::string long_doc = R"({"s":")" + ab + R"("})";
  EXPECT_FALSE(Match(R"({"s":{"$regex":"^(a|b)*c"}})", long_doc));
  EXPECT_TRUE(Match(R"({"s":{"$regex":"ab$"}})", long_doc));
  // Exponential backtracking gives up (no match) instead of hanging.
  EXPECT_FALSE(Match(R"({"s":{"$regex":"^(a+)+$"}})", R"({"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"})"));
}

// Arithmetic at the edges of the integer ranges: INT64_MIN % -1 trapped
// (SIGFPE killed the server on POST /db/_find), and a $size past 2^32
// wrapped to a small count.
TEST(MangoSelector, ModAndSizeAtTheEdges) {
  EXPECT_TRUE(Match(R"({"n":{"$mod":[-1,0]}})", R"({"n":-9223372036854775808})"));
  EXPECT_FALSE(Match(R"({"n":{"$mod":[-1,1]}})", R"({"n":-9223372036854775808})"));
  EXPECT_TRUE(Match(R"({"n":{"$mod":[-9223372036854775808,-1]}})", R"({"n":-1})"));
  EXPECT_TRUE(Match(R"({"n":{"$mod":[3,-1]}})", R"({"n":-7})"));  // rem takes the dividend's sign
  EXPECT_FALSE(Match(R"({"a":{"$size":1e300}})", R"({"a":[]})"));
  EXPECT_FALSE(Match(R"({"a":{"$size":4294967296}})", R"({"a":[]})"));
  EXPECT_TRUE(Match(R"({"a":{"$size":0}})", R"({"a":[]})"));
}

TEST(MangoSelector, BadSelectorsGetCouchErrors) {
  EXPECT_EQ(ParseError(R"({"n":{"$foo":1}})").code(), Status::Code::kInvalidOperator);
  EXPECT_EQ(ParseError(R"({"n":{"$foo":1}})").reason(), "Invalid operator: $foo");
  EXPECT_EQ(ParseError(R"({"n":{"$in":3}})").code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseError(R"({"n":{"$mod":[0,1]}})").code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseError(R"({"n":{"$regex":"("}})").code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseError(R"({"$and":{"n":1}})").code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseError(R"({"n":{"$type":"date"}})").code(), Status::Code::kBadRequest);
  EXPECT_EQ(ParseError(R"({"n":{"$exists":1}})").code(), Status::Code::kBadRequest);
}

class MangoTest : public ::testing::TestWithParam<Backend> {
 protected:
  MangoTest() : store_(GetParam()) {
    db_ = *store_->CreateDatabase("mango");
    std::string docs = "[";
    for (int i = 0; i < 200; ++i) {
      if (i) docs += ',';
      docs += R"({"_id":"p)" + std::to_string(1000 + i) + R"(","age":)" + std::to_string(i % 50) +
              R"(,"team":")" + (i % 2 ? "red" : "blue") + R"(","score":)" + std::to_string(i) + "}";
    }
    std::vector<DocUpdateResult> results;
    EXPECT_TRUE(db_->BulkDocsArray(docs + "]", {}, &results).ok());
  }
  std::string Do(Status (*fn)(Store&, Database&, std::string_view, std::string*), const std::string& body) {
    std::string out;
    Status s = fn(*store_.get(), *db_, body, &out);
    EXPECT_TRUE(s.ok()) << s.ToString() << " " << body;
    return out;
  }
  json::Document FindJ(const std::string& body) {
    json::Document d;
    EXPECT_TRUE(json::Parse(Do(Find, body), &d).ok());
    return d;
  }
  std::string Create(const std::string& body) {
    std::string out;
    Status s = CreateIndex(*store_.get(), *db_, body, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  testing::TempStore store_;
  std::shared_ptr<Database> db_;
};

TEST_P(MangoTest, FindWithAndWithoutIndex) {
  const std::string q = R"({"selector":{"age":{"$gte":10,"$lt":12},"team":"red"},"fields":["_id","age"],"limit":100})";
  json::Document scan = FindJ(q);
  EXPECT_STREQ(scan["warning"].GetString(), "No matching index found, create an index to optimize query time.");
  EXPECT_EQ(scan["docs"].Size(), 4u);  // ages 10 and 11, red: scores 11, 61, 111, 161
  EXPECT_EQ(Create(R"({"index":{"fields":["age"]},"name":"age","ddoc":"idx"})"),
            R"({"result":"created","id":"_design/idx","name":"age"})");
  EXPECT_EQ(Create(R"({"index":{"fields":["age"]},"name":"age","ddoc":"idx"})"),
            R"({"result":"exists","id":"_design/idx","name":"age"})");
  json::Document indexed = FindJ(q.substr(0, q.size() - 1) + R"(,"execution_stats":true})");
  EXPECT_FALSE(indexed.HasMember("warning"));
  EXPECT_EQ(indexed["docs"].Size(), 4u);
  EXPECT_EQ(indexed["execution_stats"]["total_keys_examined"].GetInt(), 8);  // only the range
  // Sort by an indexed field, descending, with skip/limit and bookmark.
  json::Document sorted = FindJ(R"({"selector":{"age":{"$gt":45}},"sort":[{"age":"desc"}],"limit":3,"fields":["age"]})");
  EXPECT_EQ(json::Serialize(sorted["docs"]), R"([{"age":49},{"age":49},{"age":49}])");
  json::Document next = FindJ(std::string(R"({"selector":{"age":{"$gt":45}},"sort":[{"age":"desc"}],"limit":3,"fields":["age"],"bookmark":")") +
                              sorted["bookmark"].GetString() + "\"}");
  EXPECT_EQ(json::Serialize(next["docs"]), R"([{"age":49},{"age":48},{"age":48}])");
  // Two-field index: equality on the first, range on the second.
  Create(R"({"index":{"fields":["team","score"]},"name":"ts","ddoc":"idx2"})");
  json::Document two = FindJ(R"({"selector":{"team":"blue","score":{"$lt":10}},"fields":["score"],"execution_stats":true})");
  EXPECT_EQ(json::Serialize(two["docs"]), R"([{"score":0},{"score":2},{"score":4},{"score":6},{"score":8}])");
  EXPECT_EQ(two["execution_stats"]["total_keys_examined"].GetInt(), 5);
  std::string explain = Do(Explain, R"({"selector":{"team":"blue","score":{"$lt":10}}})");
  EXPECT_NE(explain.find(R"("name":"ts")"), std::string::npos) << explain;
  EXPECT_NE(explain.find(R"("start_key":["blue"],"end_key":["blue",10])"), std::string::npos) << explain;
  // The index follows writes.
  ASSERT_TRUE(db_->Put("late", R"({"age":11,"team":"red"})").ok());
  EXPECT_EQ(FindJ(q)["docs"].Size(), 5u);
}

// A bookmark names the last row of its page, so rows written before that
// position between two pages neither repeat nor hide rows (a skip count
// would repeat one per insert), with an index and on the _all_docs scan.
TEST_P(MangoTest, BookmarkIsAPositionNotACount) {
  Create(R"({"index":{"fields":["age"]},"name":"age","ddoc":"idx"})");
  for (const char* where : {R"("age":{"$gte":46})", R"("score":{"$gte":0})"}) {
    const std::string q = std::string(R"({"selector":{)") + where + R"(},"limit":5,"fields":["_id"])";
    std::vector<std::string> seen;
    std::string bookmark;
    int inserted = 0;
    for (int page = 0; page < 100; ++page) {
      json::Document d = FindJ(q + (bookmark.empty() ? "" : R"(,"bookmark":")" + bookmark + "\"") + "}");
      if (d["docs"].Size() == 0) break;
      for (auto& doc : d["docs"].GetArray()) seen.emplace_back(doc["_id"].GetString());
      bookmark = d["bookmark"].GetString();
      // A document sorting before everything read so far.
      ASSERT_TRUE(db_->Put("a" + std::to_string(100 + inserted++), R"({"age":46,"score":0})").ok());
    }
    std::vector<std::string> sorted = seen;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end()) << where << ": a row came twice";
    // Every original match was read: ages 46..49 are 16 docs; every score is 200.
    size_t originals = 0;
    for (const std::string& id : seen) originals += id[0] == 'p';
    EXPECT_EQ(originals, std::string(where).find("age") != std::string::npos ? 16u : 200u) << where;
    // Start over for the next case without the inserted documents.
    for (int i = 0; i < inserted; ++i) {
      std::string id = "a" + std::to_string(100 + i);
      json::Document d;
      ASSERT_TRUE(json::Parse(db_->Get(id).value(), &d).ok());
      ASSERT_TRUE(db_->Delete(id, d["_rev"].GetString()).ok());
    }
  }
  std::string out;
  EXPECT_EQ(Find(*store_.get(), *db_, R"({"selector":{},"bookmark":"e30="})", &out).code(),
            Status::Code::kBadRequest);  // {} names no position
}

TEST_P(MangoTest, SortWithoutIndexAndOtherErrors) {
  std::string out;
  Status s = Find(*store_.get(), *db_, R"({"selector":{"age":1},"sort":["age"]})", &out);
  EXPECT_EQ(s.code(), Status::Code::kNoUsableIndex);
  EXPECT_EQ(s.reason(), "No index exists for this sort, try indexing by the sort fields.");
  EXPECT_EQ(Find(*store_.get(), *db_, R"({"fields":["a"]})", &out).code(), Status::Code::kBadRequest);
  EXPECT_EQ(Find(*store_.get(), *db_, R"({"selector":{"a":{"$bad":1}}})", &out).code(), Status::Code::kInvalidOperator);
  EXPECT_EQ(Find(*store_.get(), *db_, R"({"selector":{},"limit":-1})", &out).code(), Status::Code::kBadRequest);
  EXPECT_EQ(CreateIndex(*store_.get(), *db_, R"({"index":{"fields":[]}})", &out).code(), Status::Code::kBadRequest);
  EXPECT_EQ(CreateIndex(*store_.get(), *db_, R"({"nope":1})", &out).code(), Status::Code::kBadRequest);
  EXPECT_EQ(DeleteIndex(*db_, "nope", "x", &out).code(), Status::Code::kNotFound);
  // An index whose columns the selector does not all require is usable
  // when the missing ones are sort fields (CouchDB's is_usable).
  Create(R"({"index":{"fields":["team","score"]},"name":"ts","ddoc":"ts"})");
  ASSERT_TRUE(Find(*store_.get(), *db_,
                   R"({"selector":{"team":"blue"},"sort":["team","score"],"limit":2,"fields":["score"]})", &out)
                  .ok());
  EXPECT_NE(out.find(R"("docs":[{"score":0},{"score":2}])"), std::string::npos) << out;
  // Sorting by _id needs no index; limit defaults to 25.
  json::Document d;
  ASSERT_TRUE(Find(*store_.get(), *db_, R"({"selector":{"score":{"$gte":0}},"sort":[{"_id":"desc"}]})", &out).ok());
  ASSERT_TRUE(json::Parse(out, &d).ok());
  EXPECT_EQ(d["docs"].Size(), 25u);
  EXPECT_STREQ(d["docs"][0]["_id"].GetString(), "p1199");
}

TEST_P(MangoTest, IndexesListDeletePartialAndUseIndex) {
  Create(R"({"index":{"fields":["score"],"partial_filter_selector":{"team":"red"}},"ddoc":"p","name":"red"})");
  Create(R"({"index":{"fields":[{"age":"asc"}]}})");
  std::string out;
  ASSERT_TRUE(ListIndexes(*db_, &out).ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(out, &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 3);
  EXPECT_STREQ(d["indexes"][0]["name"].GetString(), "_all_docs");
  EXPECT_EQ(json::Serialize(d["indexes"][1]["def"]),
            R"({"fields":[{"age":"asc"}]})");
  EXPECT_EQ(json::Serialize(d["indexes"][2]["def"]),
            R"({"fields":[{"score":"asc"}],"partial_filter_selector":{"team":"red"}})");
  // A partial index is used only when asked for, and then holds only its docs.
  json::Document plain = FindJ(R"({"selector":{"score":{"$lt":4}},"fields":["score"]})");
  EXPECT_EQ(plain["docs"].Size(), 4u);
  json::Document partial = FindJ(R"({"selector":{"score":{"$lt":4}},"fields":["score"],"use_index":["p","red"]})");
  EXPECT_EQ(json::Serialize(partial["docs"]), R"([{"score":1},{"score":3}])");
  json::Document unusable = FindJ(R"({"selector":{"team":"red"},"use_index":"p","limit":1})");
  EXPECT_NE(std::string(unusable["warning"].GetString()).find("was not used"), std::string::npos);
  ASSERT_TRUE(DeleteIndex(*db_, "_design/p", "red", &out).ok());
  EXPECT_EQ(out, R"({"ok":true})");
  EXPECT_TRUE(db_->Get("_design/p").status().IsNotFound());
  ASSERT_TRUE(ListIndexes(*db_, &out).ok());
  ASSERT_TRUE(json::Parse(out, &d).ok());
  EXPECT_EQ(d["total_rows"].GetInt(), 2);
}

// mango_opts:validate_use_index and validate_bookmark: "ddoc/name" names an
// index (the string splits at its first "/"), null and [] ask for none, and
// a null or "" bookmark is the first page, as "nil" is.
TEST_P(MangoTest, UseIndexAndBookmarkAsCouchDBReadsThem) {
  Create(R"({"index":{"fields":["score"],"partial_filter_selector":{"team":"red"}},"ddoc":"p","name":"red"})");
  const std::string q = R"({"selector":{"score":{"$lt":4}},"fields":["score"],"use_index":)";
  for (const char* u : {R"("p/red")", R"(["p","red"])", R"(["_design/p","red"])", R"("_design/p")", R"("p")"}) {
    json::Document d = FindJ(q + u + "}");
    EXPECT_EQ(json::Serialize(d["docs"]), R"([{"score":1},{"score":3}])") << u;
    EXPECT_FALSE(d.HasMember("warning")) << u;
  }
  // binary:split makes "_design/p/red" the design document "p/red": none.
  json::Document none = FindJ(q + R"("_design/p/red"})");
  EXPECT_EQ(none["docs"].Size(), 4u);
  EXPECT_NE(std::string(none["warning"].GetString()).find("was not used"), std::string::npos);
  for (const char* u : {"null", "[]"}) {
    json::Document d = FindJ(q + u + "}");
    EXPECT_EQ(d["docs"].Size(), 4u) << u;  // the partial index is not used
  }
  for (const char* b : {"null", R"("")", R"("nil")"}) {
    json::Document d = FindJ(R"({"selector":{"score":{"$lt":4}},"fields":["score"],"bookmark":)" + std::string(b) + "}");
    EXPECT_EQ(d["docs"].Size(), 4u) << b;
  }
}

// A Mango index built before a purge drops the purged documents' rows on
// its next use, as CouchDB's mango indexes follow purges.
TEST_P(MangoTest, IndexedFindAfterPurge) {
  Create(R"({"index":{"fields":["age"]},"name":"by-age"})");
  const std::string q = R"({"selector":{"age":{"$gte":49}},"fields":["_id"],"use_index":"by-age"})";
  json::Document before = FindJ(q);
  ASSERT_EQ(before["docs"].Size(), 4u);  // p1049, p1099, p1149, p1199
  auto doc = db_->Get("p1049");
  ASSERT_TRUE(doc.ok());
  json::Document d;
  ASSERT_TRUE(json::Parse(*doc, &d).ok());
  std::vector<PurgeResult> out;
  ASSERT_TRUE(db_->Purge({{"p1049", {d["_rev"].GetString()}}}, &out).ok());
  json::Document after = FindJ(q);
  ASSERT_EQ(after["docs"].Size(), 3u);
  for (auto& row : after["docs"].GetArray()) EXPECT_STRNE(row["_id"].GetString(), "p1049");
}

INSTANTIATE_TEST_SUITE_P(Backends, MangoTest, ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

}  // namespace
}  // namespace settee::mango
