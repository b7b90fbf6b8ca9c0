// The document database (include/settee/database.h) against CouchDB's
// semantics, on both backends.
#include "settee/database.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "settee/kv.h"
#include "settee/store.h"
#include "storage/doc_record.h"
#include "storage/document.h"
#include "tests/storage/store_test_util.h"
#include "util/coding.h"
#include "util/json.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

json::Document ParseOk(const std::string& text) {
  json::Document d;
  Status s = json::Parse(text, &d);
  EXPECT_TRUE(s.ok()) << s.ToString() << " in " << text;
  return d;
}

bool IsRev(const std::string& rev, uint64_t gen) {
  std::string prefix = std::to_string(gen) + "-";
  if (rev.compare(0, prefix.size(), prefix) != 0) return false;
  std::string hash = rev.substr(prefix.size());
  return hash.size() == 32 && hash.find_first_not_of("0123456789abcdef") == std::string::npos;
}

class DatabaseTest : public ::testing::TestWithParam<Backend> {
 protected:
  DatabaseTest() : store_(GetParam()) {
    auto db = store_->CreateDatabase("test");
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
  }

  std::string PutOk(std::string_view json, std::string_view id = {}) {
    auto r = db_->Put(id, json);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << json;
    return r.ok() ? r->rev : "";
  }

  std::string GetOk(std::string_view id, const GetOptions& options = {}) {
    auto r = db_->Get(id, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << id;
    return r.ok() ? *r : "";
  }

  std::vector<ChangeRow> AllChanges(ChangesOptions options = {}, uint64_t* last = nullptr) {
    std::vector<ChangeRow> rows;
    uint64_t last_seq = 0;
    Status s = db_->Changes(options, [&](const ChangeRow& r) {
      rows.push_back(r);
      return true;
    }, &last_seq);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (last) *last = last_seq;
    return rows;
  }

  DocUpdateResult Replicate(std::string_view json) {
    std::vector<DocUpdateResult> results;
    Status s = db_->BulkDocs({json}, UpdateOptions{false}, &results);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(results[0].status.ok()) << results[0].status.ToString();
    return results[0];
  }

  testing::TempStore store_;
  std::shared_ptr<Database> db_;
};

TEST_P(DatabaseTest, PutThenGetReturnsBodyWithIdAndRev) {
  std::string rev = PutOk(R"({"_id":"a","x":1,"nested":{"y":[1,"two",null]}})");
  EXPECT_TRUE(IsRev(rev, 1)) << rev;
  EXPECT_EQ(R"({"_id":"a","_rev":")" + rev + R"(","x":1,"nested":{"y":[1,"two",null]}})",
            GetOk("a"));
}

// GetWinner gives Get()'s document in parts, into buffers reused across
// calls, with Get()'s errors.
TEST_P(DatabaseTest, GetWinnerGivesGetsDocumentInParts) {
  Database::WinnerBuffers buffers;
  std::string_view rev, body;
  std::string big = "{\"_id\":\"big\",\"s\":\"" + std::string(100000, 'x') + "\"}";  // stored compressed
  const std::pair<std::string, std::string> docs[] = {
      {"a", R"({"_id":"a","x":1,"nested":{"y":[1,"two",null]}})"}, {"e", R"({"_id":"e"})"}, {"big", big}};
  for (const auto& [id, json] : docs) {
    SCOPED_TRACE(id);
    std::string written = PutOk(json);
    ASSERT_TRUE(db_->GetWinner(id, &buffers, &rev, &body).ok());
    EXPECT_EQ(rev, written);
    std::string whole = "{\"_id\":\"" + id + "\",\"_rev\":\"" + std::string(rev) + "\"" +
                        (body.size() > 2 ? "," + std::string(body.substr(1)) : "}");
    EXPECT_EQ(whole, GetOk(id));
  }
  std::string rev1 = PutOk(R"({"_id":"d","v":1})");
  ASSERT_TRUE(db_->Delete("d", rev1).ok());
  Status s = db_->GetWinner("d", &buffers, &rev, &body);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ("deleted", s.reason());
  s = db_->GetWinner("nope", &buffers, &rev, &body);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ("missing", s.reason());
  PutOk(R"({"_id":"_local/l","v":1})");
  EXPECT_EQ(Status::Code::kInvalidOperation, db_->GetWinner("_local/l", &buffers, &rev, &body).code());
}

TEST_P(DatabaseTest, RevisionIdsAreDeterministicAndPinned) {
  // Golden values of settee's rev algorithm (storage/document.h): changing
  // them breaks idempotent retries against existing data.
  std::string rev1 = PutOk(R"({"_id":"a","x":1})");
  EXPECT_EQ("1-9a420fce145da1087e614bf9966ff744", rev1);  // xxhsum -H2 of "\n0\n{\"x\":1}"
  auto other = store_->CreateDatabase("other");
  ASSERT_TRUE(other.ok());
  // The id is not part of the hash.
  auto r = (*other)->Put("b", R"({"x":1})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(rev1, r->rev);
  std::string rev2 = PutOk(R"({"_id":"a","_rev":")" + rev1 + R"(","x":2})");
  EXPECT_EQ("2-2b0564b421d71b06c0bb29f06031db78", rev2);
}

TEST_P(DatabaseTest, UpdatesNeedTheCurrentLeafRev) {
  std::string rev1 = PutOk(R"({"_id":"a","v":1})");
  auto no_rev = db_->Put("a", R"({"v":2})");
  ASSERT_FALSE(no_rev.ok());
  EXPECT_EQ(Status::Code::kConflict, no_rev.status().code());
  EXPECT_EQ("Document update conflict.", no_rev.status().reason());

  std::string rev2 = PutOk(R"({"_id":"a","_rev":")" + rev1 + R"(","v":2})");
  EXPECT_TRUE(IsRev(rev2, 2));
  auto stale = db_->Put("a", R"({"_rev":")" + rev1 + R"(","v":3})");
  EXPECT_EQ(Status::Code::kConflict, stale.status().code());
  auto unknown = db_->Put("a", R"({"_rev":"2-00000000000000000000000000000000","v":3})");
  EXPECT_EQ(Status::Code::kConflict, unknown.status().code());
  // A new id with a rev is a conflict too.
  auto new_with_rev = db_->Put("fresh", R"({"_rev":"1-abc"})");
  EXPECT_EQ(Status::Code::kConflict, new_with_rev.status().code());
  EXPECT_EQ(2u, db_->UpdateSeq());
}

TEST_P(DatabaseTest, DeleteLeavesATombstone) {
  std::string rev1 = PutOk(R"({"_id":"a","v":1})");
  auto del = db_->Delete("a", rev1);
  ASSERT_TRUE(del.ok()) << del.status().ToString();
  EXPECT_EQ("a", del->id);
  EXPECT_TRUE(IsRev(del->rev, 2));
  auto get = db_->Get("a");
  ASSERT_FALSE(get.ok());
  EXPECT_TRUE(get.status().IsNotFound());
  EXPECT_EQ("deleted", get.status().reason());
  GetOptions at_rev;
  at_rev.rev = del->rev;
  EXPECT_EQ(R"({"_id":"a","_rev":")" + del->rev + R"(","_deleted":true})", GetOk("a", at_rev));

  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(0u, info->doc_count);
  EXPECT_EQ(1u, info->doc_del_count);

  auto missing = db_->Delete("nope", "1-abc");
  EXPECT_EQ("missing", missing.status().reason());
  EXPECT_TRUE(missing.status().IsNotFound());
  auto without_rev = db_->Delete("a", "");
  EXPECT_TRUE(without_rev.status().IsNotFound());
  std::string live_rev = PutOk(R"({"_id":"b"})");
  EXPECT_EQ(Status::Code::kConflict, db_->Delete("b", "").status().code());
  EXPECT_EQ(Status::Code::kBadRequest, db_->Delete("b", "garbage").status().code());
}

TEST_P(DatabaseTest, RecreatingADeletedDocExtendsItsBranch) {
  std::string rev1 = PutOk(R"({"_id":"a","v":1})");
  auto del = db_->Delete("a", rev1);
  ASSERT_TRUE(del.ok());
  std::string rev3 = PutOk(R"({"_id":"a","v":3})");
  EXPECT_TRUE(IsRev(rev3, 3)) << rev3;
  GetOptions revs;
  revs.revs = true;
  auto doc = ParseOk(GetOk("a", revs));
  EXPECT_EQ(3u, doc["_revisions"]["ids"].Size());
  EXPECT_EQ(3u, doc["_revisions"]["start"].GetUint64());
}

TEST_P(DatabaseTest, PostGeneratesUuidIds) {
  auto r = db_->Put({}, R"({"x":1})");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(32u, r->id.size());
  auto r2 = db_->Put({}, R"({"x":1})");
  ASSERT_TRUE(r2.ok());
  EXPECT_NE(r->id, r2->id);
}

TEST_P(DatabaseTest, BadInputGetsCouchDBErrorsAndWritesNothing) {
  struct Case {
    const char* json;
    const char* id;
    Status::Code code;
    const char* reason;  // prefix
  };
  const Case cases[] = {
      {"[1,2]", "", Status::Code::kBadRequest, "Document must be a JSON object"},
      {"\"str\"", "", Status::Code::kBadRequest, "Document must be a JSON object"},
      {"{\"a\":", "", Status::Code::kBadRequest, "invalid UTF-8 JSON"},
      {"{\"_id\":5}", "", Status::Code::kIllegalDocId, "Document id must be a string"},
      {"{\"_id\":null}", "", Status::Code::kIllegalDocId, "Document id must be a string"},
      {"{\"_id\":\"\"}", "", Status::Code::kIllegalDocId, "Document id must not be empty"},
      {"{\"_id\":\"_foo\"}", "", Status::Code::kIllegalDocId,
       "Only reserved document ids may start with underscore."},
      {"{}", "_design/", Status::Code::kIllegalDocId,
       "Only reserved document ids may start with underscore."},
      {"{\"_rev\":\"abc\"}", "x", Status::Code::kBadRequest, "Invalid rev format"},
      {"{\"_rev\":\"-1-abc\"}", "x", Status::Code::kBadRequest, "Invalid rev format"},
      {"{\"_rev\":7}", "x", Status::Code::kBadRequest, "Invalid rev format"},
      {"{\"_bogus\":1}", "x", Status::Code::kDocValidation, "Bad special document member: _bogus"},
      {"{\"_revisions\":{\"start\":1}}", "x", Status::Code::kBadRequest, "_revisions"},
  };
  for (const Case& c : cases) {
    auto r = db_->Put(c.id, c.json);
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_EQ(c.code, r.status().code()) << c.json << " -> " << r.status().ToString();
    EXPECT_EQ(0u, r.status().reason().rfind(c.reason, 0)) << r.status().reason();
  }
  std::string huge = "{\"big\":\"" + std::string(store_.options().max_document_size, 'x') + "\"}";
  EXPECT_EQ(Status::Code::kDocumentTooLarge, db_->Put("big", huge).status().code());
  EXPECT_EQ(0u, db_->UpdateSeq());
  EXPECT_EQ(0u, db_->Info()->doc_count);
}

TEST_P(DatabaseTest, IgnoredAndKeptSpecialMembers) {
  std::string rev =
      PutOk(R"({"_id":"a","_conflicts":["x"],"_local_seq":3,"_access":["u"],"_replication_id":"r","v":1})");
  EXPECT_EQ(R"({"_id":"a","_rev":")" + rev + R"(","_access":["u"],"_replication_id":"r","v":1})",
            GetOk("a"));
}

TEST_P(DatabaseTest, BulkDocsReportsPerDocumentResultsInOrder) {
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"a"})", R"({"_id":"b"})", R"({"_id":"a"})"}, {}, &results)
                  .ok());
  ASSERT_EQ(3u, results.size());
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_TRUE(results[1].status.ok());
  EXPECT_EQ("a", results[2].id);
  EXPECT_EQ(Status::Code::kConflict, results[2].status.code());
  EXPECT_EQ(2u, db_->UpdateSeq());

  // The same id twice in one batch: the second edit sees the first.
  std::string rev_a = results[0].rev;
  std::string second = R"({"_id":"a","_rev":")" + rev_a + R"(","v":2})";
  ASSERT_TRUE(db_->BulkDocs({second, R"({"_id":"d"})"}, {}, &results).ok());
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_TRUE(IsRev(results[0].rev, 2));
  auto rows = AllChanges();
  ASSERT_EQ(3u, rows.size());  // one row per doc, at its latest seq
  EXPECT_EQ("b", rows[0].id);
  EXPECT_EQ("a", rows[1].id);
  EXPECT_EQ("d", rows[2].id);
}

// A document that fails its checks refuses the whole batch, in each of the
// three ways in, as CouchDB's _bulk_docs and PouchDB's bulkDocs do; only
// what writing finds (conflicts) is per document.
TEST_P(DatabaseTest, BulkDocsRefusesTheWholeBatchForAnInvalidDocument) {
  struct Case {
    const char* bad;
    bool new_edits;
    Status::Code code;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"_id":"x","_zing":4})", true, Status::Code::kDocValidation,
       "Bad special document member: _zing"},
      {R"({"_id":"_foo"})", true, Status::Code::kIllegalDocId,
       "Only reserved document ids may start with underscore."},
      {R"({"_id":7})", true, Status::Code::kIllegalDocId, "Document id must be a string"},
      {R"({"_id":"x","_rev":"bad"})", true, Status::Code::kBadRequest, "Invalid rev format"},
      {"[]", true, Status::Code::kBadRequest, "Document must be a JSON object"},
      {R"({"_id":"x"})", false, Status::Code::kBadRequest,
       "When `new_edits: false`, the document needs `_rev` or `_revisions` specified"},
  };
  for (const Case& c : cases) {
    UpdateOptions opts;
    opts.new_edits = c.new_edits;
    const std::string good = c.new_edits ? R"({"_id":"good"})" : R"({"_id":"good","_rev":"1-abc"})";
    std::vector<DocUpdateResult> results;
    Status s = db_->BulkDocs({good, c.bad}, opts, &results);
    EXPECT_EQ(c.code, s.code()) << c.bad << " -> " << s.ToString();
    EXPECT_EQ(c.reason, s.reason()) << c.bad;
    EXPECT_TRUE(results.empty());
    s = db_->BulkDocsArray("[" + good + "," + c.bad + "]", opts, &results);
    EXPECT_EQ(c.code, s.code()) << c.bad << " -> " << s.ToString();
    auto body = db_->ParseBulkDocsBody(R"({"docs":[)" + good + "," + c.bad + "]}");
    // A document that is not an object fails the body's own parse already.
    s = body.ok() ? db_->BulkDocs(std::move(*body), opts, &results) : body.status();
    EXPECT_EQ(c.code, s.code()) << c.bad << " -> " << s.ToString();
  }
  EXPECT_EQ(0u, db_->UpdateSeq());
  EXPECT_EQ(0u, db_->Info()->doc_count);
}

TEST_P(DatabaseTest, ReplicatedConflictsPickTheWinnerByCouchDBRules) {
  Replicate(R"({"_id":"d","_rev":"1-aaaa","v":"a"})");
  Replicate(R"({"_id":"d","_rev":"1-bbbb","v":"b"})");
  // Highest hash wins among equal generations.
  auto doc = ParseOk(GetOk("d"));
  EXPECT_STREQ("1-bbbb", doc["_rev"].GetString());
  EXPECT_STREQ("b", doc["v"].GetString());
  GetOptions conflicts;
  conflicts.conflicts = true;
  doc = ParseOk(GetOk("d", conflicts));
  ASSERT_TRUE(doc.HasMember("_conflicts"));
  EXPECT_STREQ("1-aaaa", doc["_conflicts"][0].GetString());
  // The loser's body is still readable.
  GetOptions at;
  at.rev = "1-aaaa";
  EXPECT_STREQ("a", ParseOk(GetOk("d", at))["v"].GetString());

  // A longer branch wins over a higher hash.
  Replicate(R"({"_id":"d","_revisions":{"start":2,"ids":["cccc","aaaa"]},"v":"a2"})");
  EXPECT_STREQ("2-cccc", ParseOk(GetOk("d"))["_rev"].GetString());
  // Deleting the winner brings the live conflict back.
  auto del = db_->Delete("d", "2-cccc");
  ASSERT_TRUE(del.ok());
  doc = ParseOk(GetOk("d"));
  EXPECT_STREQ("1-bbbb", doc["_rev"].GetString());
  EXPECT_STREQ("b", doc["v"].GetString());
  GetOptions both;
  both.conflicts = true;
  both.deleted_conflicts = true;
  doc = ParseOk(GetOk("d", both));
  EXPECT_FALSE(doc.HasMember("_conflicts"));
  ASSERT_TRUE(doc.HasMember("_deleted_conflicts"));
  EXPECT_EQ(del->rev, doc["_deleted_conflicts"][0].GetString());
  EXPECT_EQ(1u, db_->Info()->doc_count);
}

TEST_P(DatabaseTest, LiveLeafBeatsDeletedLeafOfHigherGeneration) {
  Replicate(R"({"_id":"d","_revisions":{"start":3,"ids":["c","b","a"]},"_deleted":true})");
  Replicate(R"({"_id":"d","_revisions":{"start":2,"ids":["x","a"]},"v":1})");
  auto doc = ParseOk(GetOk("d"));
  EXPECT_STREQ("2-x", doc["_rev"].GetString());
  auto info = db_->Info();
  EXPECT_EQ(1u, info->doc_count);
  EXPECT_EQ(0u, info->doc_del_count);
}

TEST_P(DatabaseTest, ReplicatedWritesAreIdempotentAndKeepHistory) {
  const char* doc = R"({"_id":"r","_revisions":{"start":3,"ids":["ccc","bbb","aaa"]},"v":3})";
  Replicate(doc);
  uint64_t seq = db_->UpdateSeq();
  DocUpdateResult again = Replicate(doc);
  EXPECT_EQ("3-ccc", again.rev);
  EXPECT_EQ(seq, db_->UpdateSeq());
  GetOptions revs;
  revs.revs = true;
  revs.revs_info = true;
  auto got = ParseOk(GetOk("r", revs));
  EXPECT_EQ(3u, got["_revisions"]["start"].GetUint64());
  ASSERT_EQ(3u, got["_revisions"]["ids"].Size());
  EXPECT_STREQ("aaa", got["_revisions"]["ids"][2].GetString());
  EXPECT_STREQ("available", got["_revs_info"][0]["status"].GetString());
  EXPECT_STREQ("missing", got["_revs_info"][1]["status"].GetString());
  // Without _rev or _revisions a replicated write is rejected.
  std::vector<DocUpdateResult> results;
  EXPECT_EQ(Status::Code::kBadRequest,
            db_->BulkDocs({R"({"_id":"x"})"}, UpdateOptions{false}, &results).code());
}

TEST_P(DatabaseTest, LocalDocsHaveNoHistoryAndStayOutOfFeeds) {
  auto r1 = db_->Put("_local/cp", R"({"seq":1})");
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  EXPECT_EQ("0-1", r1->rev);
  auto r2 = db_->Put({}, R"({"_id":"_local/cp","_rev":"0-1","seq":2})");
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ("0-2", r2->rev);
  EXPECT_EQ(R"({"_id":"_local/cp","_rev":"0-2","seq":2})", GetOk("_local/cp"));
  EXPECT_EQ(0u, db_->UpdateSeq());
  EXPECT_TRUE(AllChanges().empty());
  AllDocsResult all;
  ASSERT_TRUE(db_->AllDocs({}, &all).ok());
  EXPECT_TRUE(all.rows.empty());
  AllDocsResult locals;
  ASSERT_TRUE(db_->LocalDocs({}, &locals).ok());
  ASSERT_EQ(1u, locals.rows.size());
  EXPECT_EQ("_local/cp", locals.rows[0].id);
  EXPECT_EQ("0-2", locals.rows[0].rev);
  auto del = db_->Delete("_local/cp", "0-2");
  ASSERT_TRUE(del.ok());
  EXPECT_EQ("_local/cp", del->id);
  EXPECT_EQ("0-0", del->rev);
  EXPECT_TRUE(db_->Get("_local/cp").status().IsNotFound());
  // CouchDB's reason on both backends (LevelDB's "NotFound: " leaked out).
  EXPECT_EQ("not_found: missing", db_->Delete("_local/cp", "0-2").status().ToString());
  EXPECT_EQ("not_found: missing", db_->Delete("_local/never", "").status().ToString());
  EXPECT_EQ(Status::Code::kBadRequest, db_->Put("_local/x", R"({"_rev":"1-abc"})").status().code());
}

// A local document's _revisions is read as CouchDB 3 reads it: the revision
// it names ({start: 0, ids: ["N"]}, what GET ?revs=true gives) stands for
// _rev; its shape is checked; any other start names no local revision.
TEST_P(DatabaseTest, LocalDocsTakeRevisionsAsCouchDBDoes) {
  auto r = db_->Put("_local/x", R"({"_revisions":{"start":0,"ids":["1"]},"v":1})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ("0-2", r->rev);
  EXPECT_EQ(R"({"_id":"_local/x","_rev":"0-2","v":1})", GetOk("_local/x"));
  // Empty history: a first revision, or the _rev beside it.
  r = db_->Put({}, R"({"_id":"_local/y","_revisions":{"start":0,"ids":[]}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ("0-1", r->rev);
  r = db_->Put({}, R"({"_id":"_local/y","_rev":"0-1","_revisions":{"start":0,"ids":[]}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ("0-2", r->rev);
  // _revisions wins over _rev, as in couch_doc:transfer_fields.
  r = db_->Put({}, R"({"_id":"_local/y","_rev":"0-9","_revisions":{"start":0,"ids":["4"]}})");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ("0-5", r->rev);
  struct Case {
    const char* revisions;
    Status::Code code;
    const char* reason;
  };
  const Case bad[] = {
      {R"({"ids":["1"]})", Status::Code::kDocValidation, "_revisions.start isn't an integer."},
      {R"({"start":"0","ids":["1"]})", Status::Code::kDocValidation,
       "_revisions.start isn't an integer."},
      {R"({"start":0})", Status::Code::kDocValidation, "_revisions.ids isn't a array."},
      {R"({"start":0,"ids":[1]})", Status::Code::kDocValidation, "RevId isn't a string"},
      {R"({"start":3,"ids":["aa","bb"]})", Status::Code::kBadRequest, "Invalid rev format"},
      {R"({"start":0,"ids":["x"]})", Status::Code::kBadRequest, "Invalid rev format"},
  };
  for (const Case& c : bad) {
    auto b = db_->Put("_local/z", std::string(R"({"_revisions":)") + c.revisions + "}");
    ASSERT_FALSE(b.ok()) << c.revisions;
    EXPECT_EQ(c.code, b.status().code()) << c.revisions << " -> " << b.status().ToString();
    EXPECT_EQ(c.reason, b.status().reason()) << c.revisions;
  }
  EXPECT_TRUE(db_->Get("_local/z").status().IsNotFound());
}

TEST_P(DatabaseTest, AllDocsHonoursRangeOptions) {
  for (const char* id : {"a", "b", "c", "d", "e"}) PutOk("{}", id);
  auto del = db_->Delete("c", ParseOk(GetOk("c"))["_rev"].GetString());
  ASSERT_TRUE(del.ok());
  auto ids = [&](const AllDocsOptions& o) {
    AllDocsResult r;
    Status s = db_->AllDocs(o, &r);
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::string out;
    for (auto& row : r.rows) out += row.id;
    return out;
  };
  AllDocsOptions o;
  EXPECT_EQ("abde", ids(o));
  o.start_key = "b";
  o.end_key = "d";
  EXPECT_EQ("bd", ids(o));
  o.inclusive_end = false;
  EXPECT_EQ("b", ids(o));
  o = {};
  o.descending = true;
  EXPECT_EQ("edba", ids(o));
  o.start_key = "d";
  o.end_key = "a";
  o.inclusive_end = false;
  EXPECT_EQ("db", ids(o));
  o = {};
  o.skip = 1;
  o.limit = 2;
  EXPECT_EQ("bd", ids(o));
  // An inverted range holds no rows, as CouchDB 3's _all_docs answers it
  // (the query_parse_error is for views only), on either side.
  o = {};
  o.start_key = "d";
  o.end_key = "a";
  AllDocsResult inverted;
  ASSERT_TRUE(db_->AllDocs(o, &inverted).ok());
  EXPECT_TRUE(inverted.rows.empty());
  EXPECT_EQ(4u, inverted.total_rows);
  o.descending = true;
  o.start_key = "a";
  o.end_key = "d";
  ASSERT_TRUE(db_->AllDocs(o, &inverted).ok());
  EXPECT_TRUE(inverted.rows.empty());

  o = {};
  o.keys = std::vector<AllDocsKey>{"e", "c", "zz", "a"};
  o.include_docs = true;
  AllDocsResult r;
  ASSERT_TRUE(db_->AllDocs(o, &r).ok());
  ASSERT_EQ(4u, r.rows.size());
  EXPECT_EQ("e", r.rows[0].id);
  EXPECT_TRUE(r.rows[1].deleted);
  EXPECT_EQ(del->rev, r.rows[1].rev);
  EXPECT_EQ("null", r.rows[1].doc);
  EXPECT_TRUE(r.rows[2].error.IsNotFound());
  EXPECT_STREQ("a", ParseOk(r.rows[3].doc)["_id"].GetString());
  EXPECT_EQ(4u, r.total_rows);
}

// A key that is not a string names no document, even one whose id is its
// JSON text, and its row keeps that text; a string key is always an id.
TEST_P(DatabaseTest, AllDocsKeysThatAreNotStringsNameNoDocument) {
  PutOk(R"({"_id":"1000"})");
  PutOk(R"({"_id":"null"})");
  AllDocsOptions o;
  o.keys = std::vector<AllDocsKey>{AllDocsKey::NotAString("1000"), "1000",
                                   AllDocsKey::NotAString("null"), "null"};
  AllDocsResult r;
  ASSERT_TRUE(db_->AllDocs(o, &r).ok());
  ASSERT_EQ(4u, r.rows.size());
  EXPECT_TRUE(r.rows[0].error.IsNotFound());
  EXPECT_EQ("1000", r.rows[0].key_json);
  EXPECT_EQ("", r.rows[0].id);
  EXPECT_TRUE(r.rows[1].error.ok());
  EXPECT_EQ("1000", r.rows[1].id);
  EXPECT_EQ("", r.rows[1].key_json);
  EXPECT_TRUE(r.rows[2].error.IsNotFound());
  EXPECT_EQ("null", r.rows[2].key_json);
  EXPECT_TRUE(r.rows[3].error.ok());
  // Reversed and skipped over the whole list, non-strings included.
  o.descending = true;
  o.skip = 1;
  o.limit = 2;
  ASSERT_TRUE(db_->AllDocs(o, &r).ok());
  ASSERT_EQ(2u, r.rows.size());
  EXPECT_EQ("null", r.rows[0].key_json);
  EXPECT_EQ("1000", r.rows[1].id);
}

TEST_P(DatabaseTest, ChangesShowEachDocOnceAtItsLatestSeq) {
  std::string a1 = PutOk(R"({"_id":"a"})");
  PutOk(R"({"_id":"b"})");
  PutOk(R"({"_id":"a","_rev":")" + a1 + R"("})");
  auto rows = AllChanges();
  ASSERT_EQ(2u, rows.size());
  EXPECT_EQ("b", rows[0].id);
  EXPECT_EQ(2u, rows[0].seq);
  EXPECT_EQ("a", rows[1].id);
  EXPECT_EQ(3u, rows[1].seq);

  ChangesOptions since;
  since.since = 2;
  uint64_t last = 0;
  rows = AllChanges(since, &last);
  ASSERT_EQ(1u, rows.size());
  EXPECT_EQ(3u, last);

  ChangesOptions limited;
  limited.limit = 1;
  rows = AllChanges(limited, &last);
  ASSERT_EQ(1u, rows.size());
  EXPECT_EQ(2u, last);

  ChangesOptions desc;
  desc.descending = true;
  rows = AllChanges(desc);
  ASSERT_EQ(2u, rows.size());
  EXPECT_EQ("a", rows[0].id);

  ChangesOptions docs;
  docs.include_docs = true;
  docs.doc_ids = std::vector<std::string>{"b"};
  rows = AllChanges(docs, &last);
  ASSERT_EQ(1u, rows.size());
  EXPECT_STREQ("b", ParseOk(rows[0].doc)["_id"].GetString());
  EXPECT_EQ(3u, last) << "a filtered feed still reports how far it read";

  // A deleted doc shows deleted, and style=all_docs lists every leaf.
  Replicate(R"({"_id":"b","_rev":"1-zzzz"})");
  ChangesOptions all;
  all.all_docs_style = true;
  rows = AllChanges(all);
  ASSERT_EQ(2u, rows.size());
  EXPECT_EQ("b", rows[1].id);
  EXPECT_EQ(2u, rows[1].revs.size());
  EXPECT_EQ("1-zzzz", rows[1].revs[0]);
}

// until: a seq range (since, until], as a view update's share reads it.
TEST_P(DatabaseTest, ChangesUntilBoundsTheSeqRange) {
  std::string a1 = PutOk(R"({"_id":"a"})");
  PutOk(R"({"_id":"b"})");
  PutOk(R"({"_id":"a","_rev":")" + a1 + R"("})");
  PutOk(R"({"_id":"c"})");
  ChangesOptions range;
  range.since = 1;
  range.until = 3;
  range.include_docs = true;
  uint64_t last = 0;
  auto rows = AllChanges(range, &last);
  ASSERT_EQ(2u, rows.size());
  EXPECT_EQ("b", rows[0].id);
  EXPECT_EQ("a", rows[1].id);
  EXPECT_STREQ("a", ParseOk(rows[1].doc)["_id"].GetString());
  EXPECT_EQ(3u, last) << "a feed cut short by until read up to it";
  // a's first change (seq 1) was superseded: nothing in (0, 1].
  range.since = 0;
  range.until = 1;
  EXPECT_TRUE(AllChanges(range, &last).empty());
  EXPECT_EQ(1u, last);
  range.since = 3;
  range.until = 3;
  EXPECT_TRUE(AllChanges(range, &last).empty());
  EXPECT_EQ(3u, last);
}

TEST_P(DatabaseTest, OpenRevsAndLatest) {
  std::string r1 = PutOk(R"({"_id":"d","v":1})");
  std::string r2 = PutOk(R"({"_id":"d","_rev":")" + r1 + R"(","v":2})");
  Replicate(R"({"_id":"d","_rev":"1-zzz","v":"z"})");
  std::vector<OpenRevResult> out;
  ASSERT_TRUE(db_->GetOpenRevs("d", {}, {}, &out).ok());
  ASSERT_EQ(2u, out.size());
  EXPECT_EQ(r2, out[0].rev);  // the winner first
  EXPECT_EQ("1-zzz", out[1].rev);
  GetOptions latest;
  latest.latest = true;
  ASSERT_TRUE(db_->GetOpenRevs("d", {r1, "9-nope"}, latest, &out).ok());
  ASSERT_EQ(2u, out.size());
  EXPECT_EQ(r2, out[0].rev);
  EXPECT_TRUE(out[0].found);
  EXPECT_EQ("9-nope", out[1].rev);
  EXPECT_FALSE(out[1].found);
  EXPECT_TRUE(db_->GetOpenRevs("missing", {}, {}, &out).IsNotFound());
}

TEST_P(DatabaseTest, RevsDiffFindsMissingRevsAndPossibleAncestors) {
  std::string r1 = PutOk(R"({"_id":"d"})");
  std::vector<RevsDiffResult> out;
  ASSERT_TRUE(db_->RevsDiff({{"d", {r1, "2-abc"}}, {"new", {"1-x"}}, {"d", {r1}}}, &out).ok());
  ASSERT_EQ(2u, out.size());
  EXPECT_EQ("d", out[0].id);
  EXPECT_EQ(std::vector<std::string>{"2-abc"}, out[0].missing);
  EXPECT_EQ(std::vector<std::string>{r1}, out[0].possible_ancestors);
  EXPECT_EQ("new", out[1].id);
  EXPECT_TRUE(out[1].possible_ancestors.empty());
  EXPECT_EQ(Status::Code::kBadRequest, db_->RevsDiff({{"d", {"junk"}}}, &out).code());
}

TEST_P(DatabaseTest, BulkGetReturnsDocsAndErrors) {
  std::string r1 = PutOk(R"({"_id":"d","v":1})");
  std::vector<BulkGetResult> out;
  BulkGetOptions options;
  options.revs = true;
  ASSERT_TRUE(db_->BulkGet({{"d", "", {}}, {"d", r1, {}}, {"d", "5-x", {}}, {"zz", "", {}}}, options, &out).ok());
  ASSERT_EQ(4u, out.size());
  EXPECT_EQ(r1, out[0].docs[0].rev);
  EXPECT_TRUE(ParseOk(out[0].docs[0].doc).HasMember("_revisions"));
  EXPECT_TRUE(out[1].docs[0].status.ok());
  EXPECT_TRUE(out[2].docs[0].status.IsNotFound());
  EXPECT_EQ("5-x", out[2].docs[0].rev);
  EXPECT_TRUE(out[3].docs[0].status.IsNotFound());

  // A missing document asked by rev names the rev; a deleted one is "deleted"
  // without a rev and its tombstone with one.
  auto del = db_->Delete("d", r1);
  ASSERT_TRUE(del.ok());
  ASSERT_TRUE(db_->BulkGet({{"zz", "1-a", {}}, {"d", "", {}}, {"d", del->rev, {}}}, options, &out).ok());
  ASSERT_EQ(3u, out.size());
  EXPECT_TRUE(out[0].docs[0].status.IsNotFound());
  EXPECT_EQ("1-a", out[0].docs[0].rev);
  EXPECT_EQ("deleted", out[1].docs[0].status.reason());
  ASSERT_TRUE(out[2].docs[0].status.ok());
  EXPECT_TRUE(ParseOk(out[2].docs[0].doc)["_deleted"].GetBool());
}

TEST_P(DatabaseTest, StemmingKeepsRevsLimitAncestors) {
  ASSERT_TRUE(db_->SetRevsLimit(3).ok());
  std::string rev = PutOk(R"({"_id":"s","v":0})");
  std::string first = rev;
  for (int i = 1; i < 6; ++i) {
    rev = PutOk(R"({"_id":"s","_rev":")" + rev + R"(","v":)" + std::to_string(i) + "}");
  }
  GetOptions revs;
  revs.revs = true;
  auto doc = ParseOk(GetOk("s", revs));
  EXPECT_EQ(6u, doc["_revisions"]["start"].GetUint64());
  EXPECT_EQ(3u, doc["_revisions"]["ids"].Size());
  GetOptions old;
  old.rev = first;
  EXPECT_TRUE(db_->Get("s", old).status().IsNotFound());
  EXPECT_EQ(3u, db_->RevsLimit());
  EXPECT_EQ(Status::Code::kBadRequest, db_->SetRevsLimit(0).code());
}

TEST_P(DatabaseTest, CompactionDropsNonLeafBodies) {
  std::string r1 = PutOk(R"({"_id":"c","v":1})");
  std::string r2 = PutOk(R"({"_id":"c","_rev":")" + r1 + R"(","v":2})");
  GetOptions old;
  old.rev = r1;
  EXPECT_EQ(1, ParseOk(GetOk("c", old))["v"].GetInt());
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_TRUE(db_->Get("c", old).status().IsNotFound());
  EXPECT_EQ(2, ParseOk(GetOk("c"))["v"].GetInt());
  GetOptions info;
  info.revs_info = true;
  auto doc = ParseOk(GetOk("c", info));
  EXPECT_STREQ("missing", doc["_revs_info"][1]["status"].GetString());
}

// CompactDocuments: only the named documents' non-leaf bodies go.
TEST_P(DatabaseTest, CompactDocumentsDropsOnlyTheirNonLeafBodies) {
  std::string a1 = PutOk(R"({"_id":"a","v":1})");
  PutOk(R"({"_id":"a","_rev":")" + a1 + R"(","v":2})");
  std::string b1 = PutOk(R"({"_id":"b","v":1})");
  PutOk(R"({"_id":"b","_rev":")" + b1 + R"(","v":2})");
  ASSERT_TRUE(db_->CompactDocuments({"a", "no-such-doc"}).ok());
  GetOptions old;
  old.rev = a1;
  EXPECT_TRUE(db_->Get("a", old).status().IsNotFound());
  EXPECT_EQ(2, ParseOk(GetOk("a"))["v"].GetInt());
  old.rev = b1;
  EXPECT_EQ(1, ParseOk(GetOk("b", old))["v"].GetInt());
  EXPECT_TRUE(db_->CompactDocuments({}).ok());
}

// Bodies from 16 KiB up are stored Snappy-compressed (storage/doc_record.h):
// every read path gives them back whole, and an update reads the old one.
TEST_P(DatabaseTest, BigBodiesReadBackWholeOnEveryPath) {
  std::string members;
  for (int i = 0; i < 3000; ++i) {
    members += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"" + std::to_string(i % 10) + "cool\"";
  }
  const std::string body = "{" + members + "}";
  ASSERT_GT(body.size(), 32u << 10);
  std::string r1 = PutOk(body, "big");
  auto expect_whole = [&](const std::string& json, const std::string& rev) {
    EXPECT_EQ(R"({"_id":"big","_rev":")" + rev + "\"," + members + "}", json);
  };
  expect_whole(GetOk("big"), r1);
  GetOptions with_revs;
  with_revs.revs = true;
  auto doc = ParseOk(GetOk("big", with_revs));
  EXPECT_STREQ("9cool", doc["k2999"].GetString());

  AllDocsOptions all;
  all.include_docs = true;
  AllDocsResult rows;
  ASSERT_TRUE(db_->AllDocs(all, &rows).ok());
  ASSERT_EQ(1u, rows.rows.size());
  expect_whole(rows.rows[0].doc, r1);
  all.include_docs = false;
  ASSERT_TRUE(db_->AllDocs(all, &rows).ok());
  EXPECT_EQ(r1, rows.rows[0].rev);

  ChangesOptions changes;
  changes.include_docs = true;
  auto feed = AllChanges(changes);
  ASSERT_EQ(1u, feed.size());
  expect_whole(feed[0].doc, r1);

  // The update reads the stored record back (its body moves aside to an
  // 'r' key as the parent's), and the old revision still reads whole.
  std::string r2 = PutOk(R"({"_rev":")" + r1 + "\"," + members + R"(,"more":1})", "big");
  EXPECT_EQ(1, ParseOk(GetOk("big"))["more"].GetInt());
  GetOptions old;
  old.rev = r1;
  expect_whole(GetOk("big", old), r1);
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(1, ParseOk(GetOk("big"))["more"].GetInt());
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_GT(info->sizes_external, body.size());  // counted uncompressed
  (void)r2;
}

// A bulkDocs body of documents split outside the parsers with their big
// bodies held compressed, as js/doc_split.h's BuildEncodedDocs hands them over.
BulkDocsBody HeldCompressed(const std::vector<std::pair<std::string, std::string>>& id_and_body,
                            bool deleted = false) {
  auto parsed = std::make_unique<BulkDocsBody::Parsed>();
  for (const auto& [id, body] : id_and_body) {
    IncomingDoc& doc = parsed->docs.emplace_back();
    doc.deleted = deleted;
    if (!HoldBodyCompressed(body, &doc)) doc.body = body;
    doc.id = id;
    EXPECT_TRUE(FinishSplitDoc(!id.empty(), std::nullopt, &doc).ok());
    parsed->statuses.emplace_back();
  }
  return BulkDocsBody(std::move(parsed));
}

TEST_P(DatabaseTest, BodiesHeldCompressedWriteAsTheirJson) {
  std::string members;
  for (int i = 0; i < 3000; ++i) {
    members += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\":\"" + std::to_string(i % 10) + "cool\"";
  }
  const std::string body = "{" + members + "}";
  {
    IncomingDoc probe;
    ASSERT_TRUE(HoldBodyCompressed(body, &probe));
    EXPECT_TRUE(probe.body.empty());
    EXPECT_EQ(body.size(), BodySize(probe));
    ASSERT_TRUE(ExpandBody(&probe).ok());
    EXPECT_EQ(body, probe.body);
    EXPECT_FALSE(HoldBodyCompressed(R"({"small":1})", &probe));
  }
  // The same JSON through the parsers, for the revision it must get.
  auto plain = store_->CreateDatabase("plain");
  ASSERT_TRUE(plain.ok());
  auto expected = (*plain)->Put("a", body);
  ASSERT_TRUE(expected.ok());

  // Two new documents and a second write of the first id in one batch: the
  // repeat conflicts with the document the batch just created.
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs(HeldCompressed({{"a", body}, {"b", body}, {"a", body}}), UpdateOptions{}, &results).ok());
  ASSERT_EQ(3u, results.size());
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_EQ(expected->rev, results[0].rev);
  EXPECT_TRUE(results[1].status.ok());
  EXPECT_EQ(Status::Code::kConflict, results[2].status.code());
  EXPECT_EQ(R"({"_id":"a","_rev":")" + expected->rev + "\"," + members + "}", GetOk("a"));
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(2u, info->doc_count);
  EXPECT_GE(info->sizes_external, 2 * body.size());

  // Recreating a deleted document extends its branch: the held body is
  // read back for the revision hash.
  auto gone = db_->Put("b", R"({"_rev":")" + results[1].rev + R"(","_deleted":true})");
  ASSERT_TRUE(gone.ok());
  ASSERT_TRUE(db_->BulkDocs(HeldCompressed({{"b", body}}), UpdateOptions{}, &results).ok());
  ASSERT_TRUE(results[0].status.ok()) << results[0].status.ToString();
  EXPECT_TRUE(IsRev(results[0].rev, 3)) << results[0].rev;
  EXPECT_EQ(R"({"_id":"b","_rev":")" + results[0].rev + "\"," + members + "}", GetOk("b"));

  // A generated id, and a body over the size limit counted uncompressed.
  ASSERT_TRUE(db_->BulkDocs(HeldCompressed({{"", body}}), UpdateOptions{}, &results).ok());
  ASSERT_TRUE(results[0].status.ok());
  EXPECT_EQ(3002u, ParseOk(GetOk(results[0].id)).MemberCount());
  const std::string huge = R"({"x":")" + std::string(store_.options().max_document_size, 'a') + R"("})";
  EXPECT_EQ(Status::Code::kDocumentTooLarge,
            db_->BulkDocs(HeldCompressed({{"huge", huge}}), UpdateOptions{}, &results).code());
}

TEST_P(DatabaseTest, ListenersAndWaitersSeeCommits) {
  std::atomic<uint64_t> seen{0};
  uint64_t id = db_->AddChangeListener([&](uint64_t seq) { seen = seq; });
  PutOk(R"({"_id":"a"})");
  EXPECT_EQ(1u, seen.load());
  db_->RemoveChangeListener(id);
  PutOk(R"({"_id":"b"})");
  EXPECT_EQ(1u, seen.load());

  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    auto r = db_->Put("c", "{}");
    EXPECT_TRUE(r.ok());
  });
  uint64_t seq = db_->WaitForChange(2, std::chrono::seconds(30));
  writer.join();
  EXPECT_EQ(3u, seq);
  // A wait with nothing new times out and returns the current seq.
  EXPECT_EQ(3u, db_->WaitForChange(3, std::chrono::milliseconds(10)));
}

TEST_P(DatabaseTest, SecurityObjectRoundTrips) {
  EXPECT_EQ("{}", db_->Security());
  ASSERT_TRUE(db_->SetSecurity(R"({"admins":{"names":["bob"]}, "members":{}})").ok());
  EXPECT_EQ(R"({"admins":{"names":["bob"]},"members":{}})", db_->Security());
  EXPECT_EQ(Status::Code::kBadRequest, db_->SetSecurity("[]").code());
}

TEST_P(DatabaseTest, ConcurrentWritersLoseNoUpdate) {
  PutOk(R"({"_id":"counter","n":0})");
  constexpr int kThreads = 8;
  constexpr int kIncrements = 50;
  std::vector<std::thread> threads;
  std::atomic<int> conflicts{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kIncrements;) {
        auto doc = db_->Get("counter");
        ASSERT_TRUE(doc.ok());
        json::Document d;
        ASSERT_TRUE(json::Parse(*doc, &d).ok());
        int n = d["n"].GetInt();
        std::string body = R"({"_rev":")" + std::string(d["_rev"].GetString()) +
                           R"(","n":)" + std::to_string(n + 1) + "}";
        auto r = db_->Put("counter", body);
        if (r.ok()) {
          ++i;
        } else {
          ASSERT_TRUE(r.status().IsConflict()) << r.status().ToString();
          ++conflicts;
        }
      }
    });
  }
  // Writers to another database proceed independently meanwhile.
  auto other = store_->CreateDatabase("other");
  ASSERT_TRUE(other.ok());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE((*other)->Put("d" + std::to_string(i), "{}").ok());
  for (auto& t : threads) t.join();
  auto doc = ParseOk(GetOk("counter"));
  EXPECT_EQ(kThreads * kIncrements, doc["n"].GetInt());
  EXPECT_TRUE(IsRev(doc["_rev"].GetString(), kThreads * kIncrements + 1));
  EXPECT_EQ(100u, (*other)->Info()->doc_count);
}

TEST_P(DatabaseTest, GroupCommittedWritersAllLand) {
  // Many writers at once are committed in groups; each must still get its own
  // result and a distinct sequence.
  constexpr int kThreads = 8;
  constexpr int kDocs = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kDocs; ++i) {
        std::string id = "t" + std::to_string(t) + "-" + std::to_string(i);
        if (i % 10 == 0) {
          std::vector<DocUpdateResult> results;
          std::string a = R"({"_id":")" + id + R"("})";
          std::string b = R"({"_id":")" + id + R"("})";  // same id twice: conflicts
          ASSERT_TRUE(db_->BulkDocs({a, b}, {}, &results).ok());
          ASSERT_TRUE(results[0].status.ok());
          ASSERT_TRUE(results[1].status.IsConflict());
        } else {
          auto r = db_->Put(id, R"({"i":)" + std::to_string(i) + "}");
          ASSERT_TRUE(r.ok()) << r.status().ToString();
          ASSERT_EQ(id, r->id);
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(uint64_t{kThreads * kDocs}, db_->Info()->doc_count);
  EXPECT_EQ(uint64_t{kThreads * kDocs}, db_->UpdateSeq());
  std::set<uint64_t> seqs;
  for (const ChangeRow& row : AllChanges()) seqs.insert(row.seq);
  EXPECT_EQ(size_t{kThreads * kDocs}, seqs.size());
}

TEST_P(DatabaseTest, InfoCountsDocsAndSizes) {
  PutOk(R"({"_id":"a","text":"hello"})");
  PutOk(R"({"_id":"_design/d","views":{}})");
  ASSERT_TRUE(db_->Put("_local/x", "{}").ok());
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ("test", info->db_name);
  EXPECT_EQ(2u, info->doc_count);
  EXPECT_EQ(2u, info->update_seq);
  EXPECT_GT(info->sizes_external, 0u);
}

// Writes skip the existence lookup for ids past the largest stored one; ids
// on both sides of it, generated ids and a reopened store must all still see
// existing documents.
TEST_P(DatabaseTest, NewDocIdsAreCheckedOnBothSidesOfTheLargestId) {
  PutOk(R"({"_id":"m"})");
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"m"})", R"({"_id":"z"})", R"({"_id":"a"})"}, {},
                            &results).ok());
  EXPECT_TRUE(results[0].status.IsConflict()) << "m exists";
  EXPECT_TRUE(results[1].status.ok());
  EXPECT_TRUE(results[2].status.ok());
  // z is now the largest: writing it again without its rev conflicts, in a
  // batch and alone.
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"z"})", R"({"_id":"zz"})"}, {}, &results).ok());
  EXPECT_TRUE(results[0].status.IsConflict());
  EXPECT_TRUE(results[1].status.ok());
  EXPECT_TRUE(db_->Put("zz", "{}").status().IsConflict());
  // A generated id raises the bound too.
  ASSERT_TRUE(db_->BulkDocs({R"({"v":1})"}, {}, &results).ok());
  const std::string generated = results[0].id;
  EXPECT_TRUE(db_->Put(generated, "{}").status().IsConflict());
  if (GetParam() == Backend::kLevelDB) {  // the bound is re-read after reopening
    db_.reset();
    store_.Reopen();
    db_ = *store_->OpenDatabase("test");
    EXPECT_TRUE(db_->Put("zz", "{}").status().IsConflict());
    ASSERT_TRUE(db_->BulkDocs({R"({"_id":"zz"})", R"({"_id":"zzz"})"}, {}, &results).ok());
    EXPECT_TRUE(results[0].status.IsConflict());
    EXPECT_TRUE(results[1].status.ok());
  }
  EXPECT_EQ(GetParam() == Backend::kLevelDB ? 6u : 5u, db_->Info()->doc_count);
}

// CountChanges counts what Changes lists (each document once, at its latest
// seq) in a range, through superseded entries, shared blocks and
// compaction; and again from its memo when asked for what follows a batch.
TEST_P(DatabaseTest, CountChangesMatchesTheFeed) {
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"a"})", R"({"_id":"b"})", R"({"_id":"c"})",
                             R"({"_id":"d"})"},
                            {}, &results)
                  .ok());
  std::string b_rev = results[1].rev;
  PutOk(R"({"_id":"e"})");
  PutOk(R"({"_id":"b","_rev":")" + b_rev + R"("})");  // supersedes seq 2 in a shared block
  PutOk(R"({"_id":"f"})");
  auto feed = AllChanges();  // a c d e b f at 1 3 4 5 6 7
  ASSERT_EQ(6u, feed.size());
  auto expected = [&](uint64_t after, uint64_t upto) {
    uint64_t n = 0;
    for (const ChangeRow& r : feed) n += r.seq > after && r.seq <= upto;
    return n;
  };
  auto check_all = [&] {
    for (uint64_t after = 0; after <= 8; ++after) {
      for (uint64_t upto = after; upto <= 8; ++upto) {
        auto n = db_->CountChanges(after, upto);
        ASSERT_TRUE(n.ok()) << n.status().ToString();
        EXPECT_EQ(expected(after, upto), *n) << after << ".." << upto;
      }
      // The open-ended count, in ascending order as a replicator asks,
      // takes the memo after the first.
      auto n = db_->CountChanges(after, UINT64_MAX);
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(expected(after, UINT64_MAX), *n) << after;
    }
  };
  check_all();
  ASSERT_TRUE(db_->Compact().ok());
  check_all();
  // A new write changes the state: the memo is not used across it.
  ASSERT_EQ(3u, *db_->CountChanges(4, UINT64_MAX));
  PutOk(R"({"_id":"g"})");
  feed = AllChanges();
  EXPECT_EQ(4u, *db_->CountChanges(4, UINT64_MAX));
  EXPECT_EQ(3u, *db_->CountChanges(5, UINT64_MAX));
}

// A get of a malformed rev is a bad request whether or not the document
// exists, as in CouchDB; a well-formed rev that is not there is missing.
TEST_P(DatabaseTest, GetOfAMalformedRevIsABadRequest) {
  PutOk(R"({"_id":"a"})");
  for (const char* id : {"a", "nope"}) {
    GetOptions o;
    o.rev = "bad";
    auto got = db_->Get(id, o);
    EXPECT_EQ(Status::Code::kBadRequest, got.status().code()) << id;
    EXPECT_EQ("Invalid rev format", got.status().reason());
    o.rev = "1-abc";
    EXPECT_EQ(Status::Code::kNotFound, db_->Get(id, o).status().code()) << id;
  }
}

// open_revs names revisions; one that is not "N-hash" is a bad request,
// whether or not the document exists. _bulk_get answers a bad id or rev in
// its item, as CouchDB does, and serves the rest.
TEST_P(DatabaseTest, OpenRevsAndBulkGetCheckRevsAndIds) {
  std::string rev = PutOk(R"({"_id":"a"})");
  std::vector<OpenRevResult> out;
  for (const char* id : {"a", "nope"}) {
    for (const char* bad : {"abc", "-1-x", "1-", "x-1", ""}) {
      Status s = db_->GetOpenRevs(id, {rev, bad}, {}, &out);
      EXPECT_EQ(Status::Code::kBadRequest, s.code()) << id << " " << bad;
      EXPECT_EQ("Invalid rev format", s.reason());
    }
  }
  ASSERT_TRUE(db_->GetOpenRevs("a", {rev, "9-ff"}, {}, &out).ok());
  ASSERT_EQ(2u, out.size());
  EXPECT_FALSE(out[1].found);

  std::vector<BulkGetResult> got;
  ASSERT_TRUE(db_->BulkGet({{"_bad", "", {}}, {"a", "nonsense", {}}, {"a", rev, {}}, {"", "", {}}}, {}, &got).ok());
  ASSERT_EQ(4u, got.size());
  EXPECT_EQ(Status::Code::kIllegalDocId, got[0].docs[0].status.code());
  EXPECT_EQ(Status::Code::kBadRequest, got[1].docs[0].status.code());
  EXPECT_EQ("nonsense", got[1].docs[0].rev);
  EXPECT_TRUE(got[2].docs[0].status.ok());
  EXPECT_EQ(Status::Code::kIllegalDocId, got[3].docs[0].status.code());
}

// BulkDocsArray takes the same documents as one JSON array text and must
// answer exactly as BulkDocs does, errors included.
TEST_P(DatabaseTest, BulkDocsArrayMatchesBulkDocs) {
  auto other = *store_->CreateDatabase("other");
  const std::vector<std::string> docs = {
      R"({"_id":"a","v":1,"nested":{"k":[1,2.5,"s\n"]}})",
      R"({"_id":"b","_deleted":false,"_conflicts":[],"_access":["x"]})",
      R"({"_id":"e","big":123456789012345678901234567890})",
      R"({"v":"generated id"})",
      R"({"_id":"a","v":"again, a conflict"})",
  };
  std::vector<std::string_view> views(docs.begin(), docs.end());
  std::string array = "[";
  for (size_t i = 0; i < docs.size(); ++i) array += (i ? "," : "") + docs[i];
  array += "]";
  std::vector<DocUpdateResult> expected, got;
  ASSERT_TRUE(db_->BulkDocs(views, {}, &expected).ok());
  ASSERT_TRUE(other->BulkDocsArray(array, {}, &got).ok());
  ASSERT_EQ(expected.size(), got.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(expected[i].status.code(), got[i].status.code()) << docs[i];
    EXPECT_EQ(expected[i].status.reason(), got[i].status.reason()) << docs[i];
    if (i != 3) {  // 3's id is generated
      EXPECT_EQ(expected[i].id, got[i].id) << docs[i];
    }
    EXPECT_EQ(expected[i].rev, got[i].rev) << docs[i];
  }
  EXPECT_EQ(GetOk("e"), std::string(*other->Get("e")));
  EXPECT_EQ(GetOk("a"), std::string(*other->Get("a")));
  // A document that fails its checks refuses either batch with one error.
  for (const char* bad : {R"({"_id":"_bad"})", R"({"_id":7})", R"({"_id":"c","_rev":"nonsense"})",
                          R"({"_id":"d","_unknown":1})"}) {
    Status a = db_->BulkDocs({docs[0], bad}, {}, &expected);
    Status b = other->BulkDocsArray("[" + docs[0] + "," + bad + "]", {}, &got);
    EXPECT_FALSE(a.ok()) << bad;
    EXPECT_EQ(a.code(), b.code()) << bad;
    EXPECT_EQ(a.reason(), b.reason()) << bad;
  }

  // Replicated histories (the RapidJSON path inside the array) too.
  std::string replicated = R"([{"_id":"r","_rev":"2-bb","_revisions":{"start":2,"ids":["bb","aa"]}}])";
  ASSERT_TRUE(other->BulkDocsArray(replicated, UpdateOptions{false}, &got).ok());
  ASSERT_TRUE(got[0].status.ok()) << got[0].status.ToString();
  GetOptions revs;
  revs.revs = true;
  EXPECT_NE(std::string::npos, std::string(*other->Get("r", revs)).find(R"("ids":["bb","aa"])"));

  // Not an array: nothing written.
  const uint64_t seq = other->UpdateSeq();
  EXPECT_EQ(Status::Code::kBadRequest, other->BulkDocsArray(R"({"docs":[]})", {}, &got).code());
  EXPECT_EQ(Status::Code::kBadRequest, other->BulkDocsArray("[{]", {}, &got).code());
  EXPECT_EQ(seq, other->UpdateSeq());
  ASSERT_TRUE(other->BulkDocsArray("[]", {}, &got).ok());
  EXPECT_TRUE(got.empty());
}

// A bulk write stores its changes as one block; a later change to one of its
// documents must hide only that document's old entry.
TEST_P(DatabaseTest, ChangesOfBatchesShowEachDocOnceAtItsLatestSeq) {
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"a"})", R"({"_id":"b"})", R"({"_id":"c"})"}, {},
                            &results).ok());
  const std::string b1 = results[1].rev;
  // b twice in one batch, plus a new doc: b keeps only its later change.
  std::string b2_json = R"({"_id":"b","_rev":")" + b1 + R"(","v":2})";
  ASSERT_TRUE(db_->BulkDocs({b2_json, R"({"_id":"d"})"}, {}, &results).ok());
  ASSERT_TRUE(results[0].status.ok());
  std::string b3_json = R"({"_id":"b","_rev":")" + results[0].rev + R"(","v":3})";
  ASSERT_TRUE(db_->BulkDocs({b3_json, R"({"_id":"e"})"}, {}, &results).ok());
  const std::string b3 = results[0].rev;
  PutOk(R"({"_id":"f"})");  // a batch of one
  auto rev_of = [&](std::string_view id) -> std::string {
    return ParseOk(GetOk(id))["_rev"].GetString();
  };
  ASSERT_TRUE(db_->Delete("d", rev_of("d")).ok());

  auto ids_and_seqs = [](const std::vector<ChangeRow>& rows) {
    std::vector<std::pair<std::string, uint64_t>> out;
    for (const ChangeRow& r : rows) out.emplace_back(r.id, r.seq);
    return out;
  };
  using Rows = std::vector<std::pair<std::string, uint64_t>>;
  const Rows expected{{"a", 1}, {"c", 3}, {"b", 6}, {"e", 7}, {"f", 8}, {"d", 9}};
  auto rows = AllChanges();
  EXPECT_EQ(expected, ids_and_seqs(rows));
  ASSERT_EQ(6u, rows.size());
  EXPECT_EQ(b3, rows[2].revs[0]);
  EXPECT_TRUE(rows[5].deleted);

  ChangesOptions desc;
  desc.descending = true;
  EXPECT_EQ(Rows(expected.rbegin(), expected.rend()), ids_and_seqs(AllChanges(desc)));

  // since inside a block, limits across blocks.
  ChangesOptions since;
  since.since = 2;
  EXPECT_EQ(Rows(expected.begin() + 1, expected.end()), ids_and_seqs(AllChanges(since)));
  since.limit = 2;
  uint64_t last = 0;
  EXPECT_EQ(Rows(expected.begin() + 1, expected.begin() + 3), ids_and_seqs(AllChanges(since, &last)));
  EXPECT_EQ(6u, last);

  // Compaction rewrites the blocks without the superseded entries: same feed.
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(expected, ids_and_seqs(AllChanges()));
  EXPECT_EQ(Rows(expected.rbegin(), expected.rend()), ids_and_seqs(AllChanges(desc)));
  // And writes after compaction still supersede correctly.
  std::string a_json = R"({"_id":"a","_rev":")" + rev_of("a") + R"(","v":2})";
  ASSERT_TRUE(db_->BulkDocs({a_json, R"({"_id":"g"})"}, {}, &results).ok());
  const Rows after{{"c", 3}, {"b", 6}, {"e", 7}, {"f", 8}, {"d", 9}, {"a", 10}, {"g", 11}};
  EXPECT_EQ(after, ids_and_seqs(AllChanges()));
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(after, ids_and_seqs(AllChanges()));
  // Reopened (LevelDB keeps the data), the feed reads the same.
  if (GetParam() == Backend::kLevelDB) {
    db_.reset();
    store_.Reopen();
    db_ = *store_->OpenDatabase("test");
    EXPECT_EQ(after, ids_and_seqs(AllChanges()));
  }
}

// A batch's counters ride in its last change block (docs/storage_format.md)
// instead of a key rewritten by every batch: a reopened database finds
// them in its newest block, whatever mix of creates, edits, deletions,
// conflicts, local documents and compaction came before.
TEST_P(DatabaseTest, CountersSurviveReopen) {
  if (GetParam() != Backend::kLevelDB) GTEST_SKIP() << "memory keeps nothing across a reopen";
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"a","v":1})", R"({"_id":"b","v":22})",
                             R"({"_id":"c","v":333})", R"({"_id":"_design/d"})"},
                            {}, &results).ok());
  const std::string b2 = PutOk(R"({"_id":"b","_rev":")" + results[1].rev + R"(","v":"longer"})");
  ASSERT_TRUE(db_->Delete("c", results[2].rev).ok());
  Replicate(R"({"_id":"a","_rev":"2-0123456789abcdef0123456789abcdef","_revisions":{"start":2,"ids":["0123456789abcdef0123456789abcdef",")" +
            results[0].rev.substr(2) + R"("]},"v":"conflict"})");
  PutOk(R"({"_id":"_local/x","v":1})");  // no seq, no counters change
  PutOk(R"({"v":"generated id"})");
  auto before = db_->Info();
  ASSERT_TRUE(before.ok());
  EXPECT_EQ(4u, before->doc_count);  // a, b, _design/d, the generated one
  EXPECT_EQ(1u, before->doc_del_count);
  auto check = [&](const char* when) {
    db_.reset();
    store_.Reopen();
    db_ = *store_->OpenDatabase("test");
    auto after = db_->Info();
    ASSERT_TRUE(after.ok()) << when;
    EXPECT_EQ(before->doc_count, after->doc_count) << when;
    EXPECT_EQ(before->doc_del_count, after->doc_del_count) << when;
    EXPECT_EQ(before->update_seq, after->update_seq) << when;
    EXPECT_EQ(before->sizes_external, after->sizes_external) << when;
    uint64_t last = 0;
    EXPECT_EQ(5u, AllChanges({}, &last).size()) << when;
    EXPECT_EQ(before->update_seq, last) << when;
  };
  check("reopened");
  ASSERT_TRUE(db_->Compact().ok());
  check("compacted and reopened");
  // The next seq continues from the recovered one.
  PutOk(R"({"_id":"e"})");
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(before->update_seq + 1, info->update_seq);
  EXPECT_EQ(before->doc_count + 1, info->doc_count);
}

// A database written before counted change blocks has current counters in
// its counters key and blocks that carry none: it opens with them, and
// once written again its newest block's counters win over the stale key.
TEST_P(DatabaseTest, OpensADatabaseFromBeforeCountedBlocks) {
  if (GetParam() != Backend::kLevelDB) GTEST_SKIP() << "needs a database on disk to rewrite";
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs({R"({"_id":"a"})", R"({"_id":"b"})"}, {}, &results).ok());
  ASSERT_TRUE(db_->Delete("a", results[0].rev).ok());
  PutOk(R"({"_id":"c","v":"body"})");
  auto before = db_->Info();
  ASSERT_TRUE(before.ok());
  db_.reset();
  store_.Close();
  std::string db_dir;  // the database's own LevelDB, the only one under dbs/
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(store_.options().path) / "dbs")) {
    db_dir = e.path().string();
  }
  // Rewritten as a store before counted blocks left it: blocks without
  // counters, the counters key current (or, to check that a newer block
  // must carry them, left behind).
  auto rewrite = [&](bool counters_key_current) {
    std::unique_ptr<KVStore> kv;
    ASSERT_TRUE(OpenLevelDBStore(db_dir, LevelDBOptions{}, &kv).ok());
    KVWriteBatch batch;
    std::string counters_key;
    auto it = kv->NewIterator({});
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string k(it->key());
      if (k.size() == 10 && k[9] == 'i') counters_key = k;
      if (k.size() != 18 || k[9] != 's') continue;
      std::vector<ChangeEntry> entries;
      ASSERT_TRUE(DecodeChangeBlock(coding::DecodeFixed64BE(std::string_view(k).substr(10)),
                                    it->value(), &entries).ok());
      ChangeBlockBuilder legacy;
      for (const ChangeEntry& e : entries) legacy.Add(e.seq, e.docid, e.deleted, e.rev);
      batch.Put(k, legacy.Finish());
    }
    ASSERT_FALSE(counters_key.empty());
    std::string c;
    for (uint64_t v : {before->update_seq, before->doc_count, before->doc_del_count,
                       before->sizes_external}) {
      coding::PutVarint64(&c, counters_key_current ? v : 0);
    }
    batch.Put(counters_key, c);
    ASSERT_TRUE(kv->Write({}, batch).ok());
  };
  auto open_info = [&]() -> Result<DatabaseInfo> {
    store_.Reopen();
    auto db = store_->OpenDatabase("test");
    if (!db.ok()) return db.status();
    db_ = *db;
    return db_->Info();
  };
  rewrite(true);
  auto info = open_info();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(before->update_seq, info->update_seq);
  EXPECT_EQ(before->doc_count, info->doc_count);
  EXPECT_EQ(before->doc_del_count, info->doc_del_count);
  EXPECT_EQ(before->sizes_external, info->sizes_external);
  // Written again: the newest block is counted, the key stays behind.
  PutOk(R"({"_id":"d"})");
  db_.reset();
  info = open_info();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(before->update_seq + 1, info->update_seq);
  EXPECT_EQ(before->doc_count + 1, info->doc_count);
  EXPECT_EQ(before->doc_del_count, info->doc_del_count);
  // Blocks newer than the counters key that carry none: refused, not
  // opened with wrong counters.
  db_.reset();
  store_.Close();
  rewrite(false);
  info = open_info();
  EXPECT_FALSE(info.ok());
  db_.reset();
}

// Change blocks as the KV store holds them: a store on a memory KV the test
// can see into, with one database.
class ChangeBlockCompaction : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    options.kv_factory = [this] {
      std::unique_ptr<KVStore> kv = NewMemoryStore();
      kv_ = kv.get();
      return kv;
    };
    auto store = Store::Open(options);
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto db = store_->CreateDatabase("c");
    ASSERT_TRUE(db.ok());
    db_ = std::move(*db);
  }

  // Keys of one kind ('o' markers, 's' blocks) of the only database.
  int count(char kind) const {
    int n = 0;
    auto it = kv_->NewIterator({});
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view k = it->key();
      if (k.size() > 9 && k[0] == 'D' && k[9] == kind) ++n;
    }
    return n;
  }

  KVStore* kv_ = nullptr;  // owned by store_
  std::unique_ptr<Store> store_;
  std::shared_ptr<Database> db_;
};

// What compaction leaves in the KV store: no obsolete markers, and blocks
// holding only live changes.
TEST_F(ChangeBlockCompaction, DropsMarkersAndSupersededEntries) {
  Database* db = db_.get();
  std::vector<DocUpdateResult> results;
  std::vector<std::string> docs;
  for (int i = 0; i < 10; ++i) docs.push_back(R"({"_id":"d)" + std::to_string(i) + R"("})");
  std::vector<std::string_view> views(docs.begin(), docs.end());
  ASSERT_TRUE(db->BulkDocs(views, {}, &results).ok());
  for (int i = 0; i < 3; ++i) {  // supersede three changes of the shared block
    auto r = db->Put("d" + std::to_string(i),
                     R"({"_rev":")" + results[i].rev + R"(","v":1})");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  EXPECT_EQ(3, count('o'));
  EXPECT_EQ(4, count('s'));  // the bulk block and three single ones
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(0, count('o'));
  EXPECT_EQ(4, count('s'));
  uint64_t last = 0;
  int rows = 0;
  ASSERT_TRUE(db->Changes({}, [&](const ChangeRow&) { return ++rows, true; }, &last).ok());
  EXPECT_EQ(10, rows);
  EXPECT_EQ(13u, last);
}

// A write batch stores no counters key of its own: its last block carries
// the counters (a key rewritten by every put was a third of a small put's
// memtable entries on LevelDB, and of its flushing and compaction).
TEST_F(ChangeBlockCompaction, BatchesCarryTheCountersInTheirLastBlock) {
  auto value_of = [&](char kind, std::string* key) {
    auto it = kv_->NewIterator({});
    std::string value;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view k = it->key();
      if (k.size() > 9 && k[0] == 'D' && k[9] == kind) *key = k, value = it->value();
    }
    return value;  // the last key of the kind
  };
  std::string key;
  const std::string initial = value_of('i', &key);
  std::vector<DocUpdateResult> results;
  std::vector<std::string> docs;
  for (int i = 0; i < 200; ++i) docs.push_back(R"({"_id":"d)" + std::to_string(1000 + i) + R"(","v":1})");
  std::vector<std::string_view> views(docs.begin(), docs.end());
  ASSERT_TRUE(db_->BulkDocs(views, {}, &results).ok());
  ASSERT_TRUE(db_->Delete("d1003", results[3].rev).ok());
  ASSERT_TRUE(db_->Put("solo", R"({"v":"x"})").ok());
  EXPECT_EQ(initial, value_of('i', &key)) << "the counters key is not rewritten";
  const std::string newest = value_of('s', &key);
  EXPECT_EQ(202u, coding::DecodeFixed64BE(std::string_view(key).substr(10)));
  BlockCounters counters;
  bool found = false;
  ASSERT_TRUE(ChangeBlockCountersOf(newest, &counters, &found).ok());
  ASSERT_TRUE(found);
  auto info = db_->Info();
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(200u, info->doc_count);
  EXPECT_EQ(info->doc_count, counters.doc_count);
  EXPECT_EQ(1u, counters.doc_del_count);
  EXPECT_EQ(info->sizes_external, counters.external_size);
  // Of a bulk write's blocks only the last carries them.
  int counted = 0;
  auto it = kv_->NewIterator({});
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view k = it->key();
    if (k.size() <= 9 || k[9] != 's') continue;
    ASSERT_TRUE(ChangeBlockCountersOf(it->value(), &counters, &found).ok());
    counted += found;
  }
  EXPECT_EQ(3, counted);  // the bulk write's last of two, the delete's, the put's
}

// A big write batch is stored as blocks of at most kChangeBlockEntries
// changes; feeds read across them, from any seq, and compaction rewrites
// them like any other blocks.
TEST_F(ChangeBlockCompaction, BigBatchesAreSplitIntoBlocks) {
  Database* db = db_.get();
  std::vector<DocUpdateResult> results;
  std::vector<std::string> docs;
  for (int i = 0; i < 300; ++i) docs.push_back(R"({"_id":"d)" + std::to_string(1000 + i) + R"("})");
  std::vector<std::string_view> views(docs.begin(), docs.end());
  ASSERT_TRUE(db->BulkDocs(views, {}, &results).ok());
  EXPECT_EQ(3, count('s'));  // 128 + 128 + 44
  auto ids_since = [&](uint64_t since, uint64_t until) {
    ChangesOptions co;
    co.since = since;
    co.until = until;
    std::vector<std::string> ids;
    uint64_t last = 0;
    EXPECT_TRUE(db->Changes(co, [&](const ChangeRow& r) { return ids.push_back(r.id), true; }, &last).ok());
    return ids;
  };
  auto all = ids_since(0, UINT64_MAX);
  ASSERT_EQ(300u, all.size());
  EXPECT_EQ("d1000", all.front());
  EXPECT_EQ("d1299", all.back());
  auto middle = ids_since(120, 140);  // across the first two blocks
  ASSERT_EQ(20u, middle.size());
  EXPECT_EQ("d1120", middle.front());
  EXPECT_EQ("d1139", middle.back());
  // Supersede a change of the first block and one of the last.
  for (int i : {5, 290}) {
    ASSERT_TRUE(db->Put(docs[i].substr(8, 5), R"({"_rev":")" + results[i].rev + R"(","v":1})").ok());
  }
  EXPECT_EQ(2, count('o'));
  all = ids_since(0, UINT64_MAX);
  ASSERT_EQ(300u, all.size());
  EXPECT_EQ("d1005", all[298]);
  EXPECT_EQ("d1290", all[299]);
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(0, count('o'));
  EXPECT_EQ(5, count('s'));  // the three rewritten, two single ones
  EXPECT_EQ(all, ids_since(0, UINT64_MAX));
}

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseTest,
                         ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

}  // namespace
}  // namespace settee
