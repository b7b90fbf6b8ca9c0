// validate_doc_update in the engine (storage/database_validate.cc), with a
// C++ ValidateFunctions standing in for JavaScript: which writes run the
// functions, with which arguments, and what a refusal does to each write
// path. The JavaScript side is tested over HTTP and in JS
// (tests/runtime/endpoints_validate_test.cc).
#include <mutex>

#include <gtest/gtest.h>

#include "settee/database.h"
#include "storage/document.h"
#include "storage/validate_functions.h"
#include "store_test_util.h"
#include "util/json.h"

namespace settee {
namespace {

using testing::BackendName;
using testing::TempStore;

// Interprets a validator's "source" as a rule:
//   "forbid-bad": refuses (forbidden) a newDoc with "bad":true;
//   "need-login": refuses (unauthorized) an anonymous userCtx without roles;
//   "no-compile": the run fails with kCompilationError.
// Compile() refuses a source containing "syntax error" and records every
// source it is given.
// Records every call's arguments.
class FakeFunctions final : public validation::ValidateFunctions {
 public:
  struct Seen {
    std::string new_doc, old_doc, user_ctx, sec_obj;
  };

  Status Validate(const validation::ValidatorSet& set,
                  const std::vector<validation::ValidateCall>& calls, std::string_view user_ctx,
                  std::string_view sec_obj, std::vector<Status>* results) override {
    std::lock_guard<std::mutex> lock(mu_);
    ++runs_;
    last_signature_ = set.signature;
    results->assign(calls.size(), Status::OK());
    for (size_t i = 0; i < calls.size(); ++i) {
      seen_.push_back({calls[i].new_doc, calls[i].old_doc, std::string(user_ctx), std::string(sec_obj)});
      json::Document doc, user;
      EXPECT_TRUE(json::Parse(calls[i].new_doc, &doc).ok()) << calls[i].new_doc;
      EXPECT_TRUE(json::Parse(user_ctx, &user).ok());
      for (const validation::Validator& v : set.validators) {
        if (v.source == "no-compile") return Status(Status::Code::kCompilationError, "nope");
        if (v.source == "forbid-bad" && doc.HasMember("bad") && doc["bad"].IsTrue()) {
          (*results)[i] = Status::Forbidden("bad doc (" + v.ddoc_id + ")");
          break;
        }
        if (v.source == "need-login" && user["name"].IsNull() &&
            user["roles"].GetArray().Empty()) {
          (*results)[i] = Status::Unauthorized("log in");
          break;
        }
      }
    }
    return Status::OK();
  }

  Status Compile(const std::vector<std::string>& sources, size_t* failed) override {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < sources.size(); ++i) {
      compiled_.push_back(sources[i]);
      if (sources[i].find("syntax error") != std::string::npos) {
        *failed = i;
        return Status(Status::Code::kCompilationError, "Expression does not eval to a function.");
      }
    }
    return Status::OK();
  }

  std::vector<Seen> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::vector<std::string> compiled() {
    std::lock_guard<std::mutex> lock(mu_);
    return compiled_;
  }
  int runs() {
    std::lock_guard<std::mutex> lock(mu_);
    return runs_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.clear();
    compiled_.clear();
    runs_ = 0;
  }

 private:
  std::mutex mu_;
  std::vector<Seen> seen_;
  std::vector<std::string> compiled_;
  int runs_ = 0;
  std::string last_signature_;
};

class DatabaseValidateTest : public ::testing::TestWithParam<StoreOptions::Backend> {
 protected:
  void SetUp() override {
    store_ = std::make_unique<TempStore>(GetParam());
    fns_ = std::make_shared<FakeFunctions>();
    validation::SetValidateFunctions(*store_->get(), fns_);
    db_ = (*store_)->CreateDatabase("db").value();
  }

  std::string PutOk(std::string_view id, std::string_view json, const UpdateOptions& o = {}) {
    auto r = db_->Put(id, json, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->rev : "";
  }

  void AddValidator(std::string_view ddoc, std::string_view rule) {
    PutOk(ddoc, std::string("{\"validate_doc_update\":\"") + std::string(rule) + "\"}");
  }

  std::unique_ptr<TempStore> store_;
  std::shared_ptr<FakeFunctions> fns_;
  std::shared_ptr<Database> db_;
};

TEST_P(DatabaseValidateTest, NoValidatorNoCall) {
  PutOk("a", R"({"bad":true})");
  PutOk("_design/views", R"({"views":{}})");
  PutOk("b", R"({"bad":true})");
  EXPECT_EQ(fns_->runs(), 0);
}

TEST_P(DatabaseValidateTest, RefusesPutAndKeepsNothing) {
  AddValidator("_design/v", "forbid-bad");
  auto r = db_->Put("a", R"({"bad":true})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kForbidden);
  EXPECT_EQ(r.status().reason(), "bad doc (_design/v)");
  EXPECT_TRUE(db_->Get("a").status().IsNotFound());
  PutOk("b", R"({"bad":false})");
  EXPECT_EQ(fns_->runs(), 2);
}

// A big body held compressed (js/doc_split.h's bulkDocs path) reaches the
// function as its JSON.
TEST_P(DatabaseValidateTest, BodiesHeldCompressedAreValidatedAsJson) {
  AddValidator("_design/v", "forbid-bad");
  std::string body = R"({"bad":true,"pad":")" + std::string(64 << 10, 'x') + R"("})";
  auto parsed = std::make_unique<BulkDocsBody::Parsed>();
  IncomingDoc& doc = parsed->docs.emplace_back();
  ASSERT_TRUE(HoldBodyCompressed(body, &doc));
  doc.id = "big";
  ASSERT_TRUE(FinishSplitDoc(true, std::nullopt, &doc).ok());
  parsed->statuses.emplace_back();
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocs(BulkDocsBody(std::move(parsed)), UpdateOptions{}, &results).ok());
  ASSERT_EQ(1u, results.size());
  EXPECT_EQ(Status::Code::kForbidden, results[0].status.code());
  ASSERT_FALSE(fns_->seen().empty());
  EXPECT_EQ(fns_->seen().back().new_doc.size(), body.size() + std::string(R"("_id":"big",)").size());
}

TEST_P(DatabaseValidateTest, ArgumentsAreCouchDbs) {
  AddValidator("_design/v", "forbid-bad");
  ASSERT_TRUE(db_->SetSecurity(R"({"admins":{"names":["boss"],"roles":[]}})").ok());
  UserContext bob{"bob", {"writer"}};
  UpdateOptions o;
  o.user = &bob;
  std::string rev1 = PutOk("a", R"({"n":1})", o);
  std::string rev2 = PutOk("a", R"({"_rev":")" + rev1 + R"(","n":2})", o);
  auto seen = fns_->seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].old_doc, "null");
  EXPECT_EQ(seen[0].user_ctx, R"({"db":"db","name":"bob","roles":["writer"]})");
  EXPECT_EQ(seen[0].sec_obj, R"({"admins":{"names":["boss"],"roles":[]}})");
  json::Document n, old;
  ASSERT_TRUE(json::Parse(seen[1].new_doc, &n).ok());
  ASSERT_TRUE(json::Parse(seen[1].old_doc, &old).ok());
  EXPECT_EQ(json::View(n["_id"]), "a");
  EXPECT_EQ(json::View(n["_rev"]), rev1);
  EXPECT_EQ(n["n"].GetInt(), 2);
  EXPECT_EQ(n["_revisions"]["start"].GetInt(), 1);
  EXPECT_EQ(json::View(old["_rev"]), rev1);
  EXPECT_EQ(old["n"].GetInt(), 1);
  // No user: the embedding application, an admin to the functions.
  fns_->Clear();
  PutOk("c", "{}");
  EXPECT_EQ(fns_->seen().at(0).user_ctx, R"({"db":"db","name":null,"roles":["_admin"]})");
  (void)rev2;
}

TEST_P(DatabaseValidateTest, DeleteSeesDeletedNewDocAndOldDoc) {
  AddValidator("_design/v", "need-login");
  std::string rev = PutOk("a", "{\"x\":1}");
  UserContext anon;
  UpdateOptions o;
  o.user = &anon;
  auto r = db_->Delete("a", rev, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kUnauthorized);
  auto seen = fns_->seen();
  json::Document n, old;
  ASSERT_TRUE(json::Parse(seen.back().new_doc, &n).ok());
  ASSERT_TRUE(json::Parse(seen.back().old_doc, &old).ok());
  EXPECT_TRUE(n["_deleted"].IsTrue());
  EXPECT_EQ(old["x"].GetInt(), 1);
  EXPECT_TRUE(db_->Get("a").ok());
  EXPECT_TRUE(db_->Delete("a", rev).ok());  // an admin may
}

TEST_P(DatabaseValidateTest, BulkDocsRefusesPerDocument) {
  AddValidator("_design/v", "forbid-bad");
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"a"},{"_id":"b","bad":true},{"bad":true},{"_id":"c"}])",
                                 {}, &results)
                  .ok());
  ASSERT_EQ(results.size(), 4u);
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_EQ(results[1].id, "b");
  EXPECT_EQ(results[1].status.code(), Status::Code::kForbidden);
  EXPECT_EQ(results[2].status.code(), Status::Code::kForbidden);
  EXPECT_FALSE(results[2].id.empty());  // the generated id the function saw
  EXPECT_TRUE(results[3].status.ok());
  EXPECT_EQ(fns_->runs(), 1);  // one run for the batch
  EXPECT_TRUE(db_->Get("a").ok());
  EXPECT_TRUE(db_->Get("b").status().IsNotFound());
  EXPECT_TRUE(db_->Get("c").ok());
}

TEST_P(DatabaseValidateTest, ReplicatedWritesAreValidated) {
  AddValidator("_design/v", "forbid-bad");
  std::string rev1 = PutOk("a", R"({"n":1})");
  std::string hash1 = rev1.substr(2);
  UpdateOptions repl;
  repl.new_edits = false;
  std::vector<DocUpdateResult> results;
  std::string docs = R"([{"_id":"a","_rev":"2-aa","bad":true,"_revisions":{"start":2,"ids":["aa",")" +
                     hash1 + R"("]}},{"_id":"b","_rev":"1-bb","n":1}])";
  ASSERT_TRUE(db_->BulkDocsArray(docs, repl, &results).ok());
  EXPECT_EQ(results[0].status.code(), Status::Code::kForbidden);
  EXPECT_EQ(results[0].rev, "2-aa");
  EXPECT_TRUE(results[1].status.ok());
  auto seen = fns_->seen();
  json::Document old;
  ASSERT_TRUE(json::Parse(seen.back().old_doc == "null" ? seen[seen.size() - 2].old_doc : seen.back().old_doc, &old).ok());
  EXPECT_EQ(json::View(old["_rev"]), rev1);  // the nearest stored ancestor
  auto a = db_->Get("a");
  ASSERT_TRUE(a.ok());
  EXPECT_NE(a->find(rev1), std::string::npos);
  // Sending a stored revision again is no write: not validated.
  fns_->Clear();
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"b","_rev":"1-bb","n":1,"bad":true}])", repl, &results).ok());
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_EQ(fns_->runs(), 0);
}

TEST_P(DatabaseValidateTest, DesignAndLocalDocsAreNotValidated) {
  AddValidator("_design/v", "forbid-bad");
  PutOk("_design/w", R"({"bad":true})");
  PutOk("_local/x", R"({"bad":true})");
  EXPECT_EQ(fns_->runs(), 0);
}

TEST_P(DatabaseValidateTest, EditingDesignDocsChangesTheValidators) {
  AddValidator("_design/a", "forbid-bad");
  AddValidator("_design/b", "need-login");
  UserContext anon;
  UpdateOptions o;
  o.user = &anon;
  EXPECT_EQ(db_->Put("x", "{}", o).status().code(), Status::Code::kUnauthorized);
  EXPECT_EQ(db_->Put("x", R"({"bad":true})", o).status().code(), Status::Code::kForbidden);
  std::string rev = db_->Get("_design/b").value();
  json::Document d;
  ASSERT_TRUE(json::Parse(rev, &d).ok());
  ASSERT_TRUE(db_->Delete("_design/b", json::View(d["_rev"])).ok());
  EXPECT_TRUE(db_->Put("x", "{}", o).ok());
  // A replicated design document counts too.
  UpdateOptions repl;
  repl.new_edits = false;
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"_design/c","_rev":"1-cc","validate_doc_update":"need-login"}])",
                                 repl, &results)
                  .ok());
  EXPECT_EQ(db_->Put("y", "{}", o).status().code(), Status::Code::kUnauthorized);
}

TEST_P(DatabaseValidateTest, AttachmentWritesAreValidated) {
  AddValidator("_design/v", "need-login");
  UserContext anon;
  UpdateOptions o;
  o.user = &anon;
  auto r = db_->PutAttachment("a", "f.txt", "", "text/plain", "hello", o);
  EXPECT_EQ(r.status().code(), Status::Code::kUnauthorized);
  std::string rev = db_->PutAttachment("a", "f.txt", "", "text/plain", "hello").value().rev;
  EXPECT_EQ(db_->DeleteAttachment("a", "f.txt", rev, o).status().code(),
            Status::Code::kUnauthorized);
  auto seen = fns_->seen();
  EXPECT_NE(seen.back().new_doc.find("\"_attachments\":{}"), std::string::npos) << seen.back().new_doc;
  EXPECT_NE(seen.back().old_doc.find("f.txt"), std::string::npos);
}

TEST_P(DatabaseValidateTest, FunctionsThatCannotRunRefuseTheWrite) {
  AddValidator("_design/v", "no-compile");
  std::vector<DocUpdateResult> results;
  Status s = db_->BulkDocsArray(R"([{"_id":"a"}])", {}, &results);
  EXPECT_EQ(s.code(), Status::Code::kCompilationError);
  EXPECT_TRUE(db_->Get("a").status().IsNotFound());
  // With nothing installed to run them, writes are refused, not let through.
  validation::SetValidateFunctions(*store_->get(), nullptr);
  EXPECT_EQ(db_->Put("b", "{}").status().code(), Status::Code::kInternal);
}

TEST_P(DatabaseValidateTest, ConflictsStayConflicts) {
  AddValidator("_design/v", "forbid-bad");
  PutOk("a", "{}");
  fns_->Clear();
  EXPECT_EQ(db_->Put("a", R"({"bad":true})").status().code(), Status::Code::kConflict);
  EXPECT_EQ(db_->Put("a", R"({"_rev":"1-00000000000000000000000000000000","bad":true})").status().code(),
            Status::Code::kConflict);
  EXPECT_EQ(fns_->runs(), 0);
}

// An edit whose parent is stored but not a leaf is CouchDB's 409: the
// conflict check comes before validate_doc_update, which would refuse it.
TEST_P(DatabaseValidateTest, NonLeafEditIsAConflictNotARefusal) {
  AddValidator("_design/v", "forbid-bad");
  const std::string r1 = PutOk("a", "{}");
  const std::string r2 = PutOk("a", R"({"_rev":")" + r1 + R"("})");
  fns_->Clear();
  EXPECT_EQ(db_->Put("a", R"({"_rev":")" + r1 + R"(","bad":true})").status().code(),
            Status::Code::kConflict);
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"a","_rev":")" + r1 + R"(","bad":true}])", {}, &results).ok());
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].status.code(), Status::Code::kConflict);
  EXPECT_EQ(fns_->runs(), 0);
  // An edit of the leaf still runs the function.
  EXPECT_EQ(db_->Put("a", R"({"_rev":")" + r2 + R"(","bad":true})").status().code(),
            Status::Code::kForbidden);
  EXPECT_EQ(fns_->runs(), 1);
  // So does an edit of a conflicting (non-winning) leaf.
  UpdateOptions repl;
  repl.new_edits = false;
  PutOk("a", R"({"_id":"a","_rev":"2-00000000000000000000000000000000"})", repl);
  EXPECT_EQ(db_->Put("a", R"({"_rev":"2-00000000000000000000000000000000","bad":true})").status().code(),
            Status::Code::kForbidden);
}

// Design documents are checked as CouchDB checks them before it stores
// one (storage/design_doc_check.h): field types, and their map and reduce
// functions compiled, for interactive and replicated writes alike; a
// deletion is not checked.
TEST_P(DatabaseValidateTest, DesignDocumentsAreCheckedBeforeTheyAreStored) {
  auto put = db_->Put("_design/a", R"({"views":{"v":{"map":3}}})");
  EXPECT_EQ(put.status().code(), Status::Code::kInvalidDesignDoc);
  EXPECT_EQ(put.status().reason(), "`views.v.map` field must have string type");
  put = db_->Put("_design/a", R"({"views":{"v":{"map":"function (doc) { syntax error }"}}})");
  EXPECT_EQ(put.status().code(), Status::Code::kCompilationError);
  EXPECT_EQ(put.status().reason(),
            "Compilation of the map function in the 'v' view failed: Expression does not eval to a function.");
  put = db_->Put("_design/a", R"({"views":{"v":{"map":"function (doc) {}","reduce":"syntax error"}}})");
  EXPECT_EQ(put.status().reason(),
            "Compilation of the reduce function in the 'v' view failed: Expression does not eval to a function.");
  EXPECT_FALSE(db_->Get("_design/a").ok());  // nothing was stored

  // Built-in reduces and Mango's object maps are not compiled.
  fns_->Clear();
  std::string rev = PutOk("_design/a", R"({"views":{"v":{"map":"function (doc) {}","reduce":"_count"}}})");
  EXPECT_EQ(fns_->compiled(), std::vector<std::string>{"function (doc) {}"});
  PutOk("_design/m", R"({"language":"query","views":{"v":{"map":{"fields":{"a":"asc"}},"reduce":"_count"}}})");
  EXPECT_EQ(fns_->compiled().size(), 1u);

  // In a batch, the bad design document alone is refused.
  std::vector<DocUpdateResult> results;
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"x"},{"_id":"_design/b","views":{"v":{"reduce":"_sum"}}}])", {},
                                 &results).ok());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_EQ(results[1].id, "_design/b");
  EXPECT_EQ(results[1].status.code(), Status::Code::kInvalidDesignDoc);
  EXPECT_EQ(results[1].status.reason(), "View `v` must contain map function");

  // A replicated one is refused too, its revision named.
  UpdateOptions replicated;
  replicated.new_edits = false;
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"_design/c","_rev":"1-abc","validate_doc_update":5}])", replicated,
                                 &results).ok());
  EXPECT_EQ(results[0].rev, "1-abc");
  EXPECT_EQ(results[0].status.reason(), "`validate_doc_update` field must have string type");

  // Deleting a design document checks nothing.
  EXPECT_TRUE(db_->Delete("_design/a", rev).ok());
}

// Without a JavaScript runtime the fields are still checked; nothing can
// compile the functions, and nothing will run them.
TEST_P(DatabaseValidateTest, WithoutARuntimeOnlyTheFieldsAreChecked) {
  validation::SetValidateFunctions(*store_->get(), nullptr);
  EXPECT_EQ(db_->Put("_design/a", R"({"language":null})").status().code(), Status::Code::kInvalidDesignDoc);
  PutOk("_design/a", R"({"views":{"v":{"map":"function (doc) { syntax error }"}}})");
}

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseValidateTest,
                         ::testing::Values(StoreOptions::Backend::kMemory,
                                           StoreOptions::Backend::kLevelDB),
                         BackendName);

}  // namespace
}  // namespace settee
