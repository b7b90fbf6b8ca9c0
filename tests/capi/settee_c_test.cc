// The C API (include/settee/settee.h, capi/settee_c.cc) through libsettee.so,
// as an application links it: every call, its results and its errors,
// including misuse (NULLs, closed handles, bad options, text that is not
// UTF-8, calls from inside callbacks). Store-level tests run on both backends.
#include "settee/settee.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/capi/capi_test_util.h"

namespace {

using settee_test::Err;
using settee_test::Str;
using testing::HasSubstr;
using testing::StartsWith;

std::string TempDir(const std::string& name) {
  std::string dir = testing::TempDir();
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir + "/settee_capi_" + name + "_" + std::to_string(getpid());
}

TEST(Errors, CodesHaveCouchDbNames) {
  EXPECT_STREQ(settee_code_name(SETTEE_OK), "ok");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_NOT_FOUND), "not_found");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_CONFLICT), "conflict");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_INTERNAL), "unknown_error");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_INVALID_ARGUMENT), "invalid_argument");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_CLOSED), "closed");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_UNSUPPORTED), "unsupported");
  EXPECT_STREQ(settee_code_name(SETTEE_ERR_INVALID_OPERATOR), "invalid_operator");
  EXPECT_STREQ(settee_code_name(12345), "unknown_code");
  // Every kind of the C++ API has a C code of its own.
  for (int code = SETTEE_OK; code <= SETTEE_ERR_REDUCE_OVERFLOW; ++code) {
    EXPECT_STRNE(settee_code_name(code), "unknown_code") << code;
  }
  EXPECT_STREQ(settee_version(), "0.1.0");
}

TEST(Errors, ClearAndFreeTakeNull) {
  settee_error_clear(nullptr);
  settee_free(nullptr);
  settee_store_free(nullptr);
  settee_db_free(nullptr);
  settee_runtime_free(nullptr);
  settee_store_options_init(nullptr);
  settee_runtime_options_init(nullptr);
  settee_error e = SETTEE_ERROR_INIT;
  settee_store* s = nullptr;
  EXPECT_EQ(settee_store_open(nullptr, &s, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.code, SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(e.message, "options is NULL");
  settee_error_clear(&e);
  EXPECT_EQ(e.code, SETTEE_OK);
  EXPECT_EQ(e.message, nullptr);
}

TEST(Errors, AReusedErrorHoldsTheLatestOutcome) {
  settee_store_options o;
  settee_store_options_init(&o);
  o.backend = SETTEE_BACKEND_MEMORY;
  settee_error e = SETTEE_ERROR_INIT;
  settee_store* s = nullptr;
  EXPECT_EQ(settee_store_open(nullptr, &s, &e), SETTEE_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(settee_store_open(&o, &s, &e), SETTEE_OK);  // frees the old message
  EXPECT_EQ(e.code, SETTEE_OK);
  EXPECT_EQ(e.message, nullptr);
  settee_store_free(s);
}

//////// Opening stores

TEST(StoreOpen, RejectsBadOptions) {
  settee_store_options o;
  settee_store_options_init(&o);
  EXPECT_EQ(o.backend, SETTEE_BACKEND_LEVELDB);
  settee_store* s = reinterpret_cast<settee_store*>(0x1);
  Err e;
  EXPECT_EQ(settee_store_open(&o, &s, &e), SETTEE_ERR_INVALID_ARGUMENT);  // LevelDB without a path
  EXPECT_EQ(s, nullptr);
  EXPECT_THAT(e.message(), HasSubstr("path"));
  o.backend = static_cast<settee_backend>(7);
  EXPECT_EQ(settee_store_open(&o, &s, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "unknown backend");
  o.backend = SETTEE_BACKEND_MEMORY;
  EXPECT_EQ(settee_store_open(&o, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  o.backend = SETTEE_BACKEND_LEVELDB;
  o.path = "\xff\xfe";
  EXPECT_EQ(settee_store_open(&o, &s, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_THAT(e.message(), HasSubstr("UTF-8"));
  // Errors without an error struct still come back as codes.
  EXPECT_EQ(settee_store_open(&o, &s, nullptr), SETTEE_ERR_INVALID_ARGUMENT);
}

TEST(StoreOpen, UnusableDirectoryIsAnIoError) {
  settee_store_options o;
  settee_store_options_init(&o);
  o.path = "/proc/settee-cannot-be-here";
  settee_store* s = nullptr;
  Err e;
  EXPECT_EQ(settee_store_open(&o, &s, &e), SETTEE_ERR_IO) << e.message();
  EXPECT_EQ(s, nullptr);
}

TEST(StoreOpen, ALevelDbDirectoryOpensOnceAndKeepsItsData) {
  std::string dir = TempDir("reopen");
  settee_store_options o;
  settee_store_options_init(&o);
  o.path = dir.c_str();
  o.sync = 1;
  settee_store* a = nullptr;
  Err e;
  ASSERT_EQ(settee_store_open(&o, &a, &e), SETTEE_OK) << e.message();
  settee_store* b = nullptr;
  EXPECT_EQ(settee_store_open(&o, &b, &e), SETTEE_ERR_IO);  // LevelDB's lock
  settee_db* db = nullptr;
  ASSERT_EQ(settee_db_create(a, "kept", &db, &e), SETTEE_OK);
  ASSERT_EQ(settee_db_put(db, "d", "{\"v\":1}", nullptr, nullptr, &e), SETTEE_OK);
  settee_db_free(db);
  settee_store_free(a);

  ASSERT_EQ(settee_store_open(&o, &b, &e), SETTEE_OK) << e.message();
  ASSERT_EQ(settee_db_open(b, "kept", &db, &e), SETTEE_OK);
  Str doc;
  ASSERT_EQ(settee_db_get(db, "d", nullptr, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr("\"v\":1"));
  settee_db_free(db);
  settee_store_free(b);
  std::system(("rm -rf '" + dir + "'").c_str());
}

TEST(StoreOpen, OptionsReachTheStore) {
  settee_store_options o;
  settee_store_options_init(&o);
  o.backend = SETTEE_BACKEND_MEMORY;
  o.max_document_size = 64;
  settee_store* s = nullptr;
  Err e;
  ASSERT_EQ(settee_store_open(&o, &s, &e), SETTEE_OK);
  settee_db* db = nullptr;
  ASSERT_EQ(settee_db_create(s, "small", &db, &e), SETTEE_OK);
  std::string big = "{\"text\":\"" + std::string(100, 'x') + "\"}";
  EXPECT_EQ(settee_db_put(db, "big", big.c_str(), nullptr, nullptr, &e), SETTEE_ERR_DOCUMENT_TOO_LARGE);
  EXPECT_EQ(settee_db_put(db, "ok", "{}", nullptr, nullptr, &e), SETTEE_OK);
  settee_db_free(db);
  settee_store_free(s);
}

//////// Stores and databases on both backends

class CApi : public testing::TestWithParam<settee_backend> {
 protected:
  void SetUp() override {
    std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) if (c == '/') c = '_';
    dir_ = TempDir(name);
    settee_store_options o;
    settee_store_options_init(&o);
    o.backend = GetParam();
    o.path = dir_.c_str();
    Err e;
    ASSERT_EQ(settee_store_open(&o, &store_, &e), SETTEE_OK) << e.message();
    ASSERT_EQ(settee_db_create(store_, "db", &db_, &e), SETTEE_OK) << e.message();
  }
  void TearDown() override {
    settee_db_free(db_);
    settee_store_free(store_);
    if (GetParam() == SETTEE_BACKEND_LEVELDB) std::system(("rm -rf '" + dir_ + "'").c_str());
  }
  std::string Put(const char* id, const char* json) {
    Str rev;
    Err e;
    EXPECT_EQ(settee_db_put(db_, id, json, nullptr, rev.out(), &e), SETTEE_OK) << e.message();
    return rev.str();
  }

  std::string dir_;
  settee_store* store_ = nullptr;
  settee_db* db_ = nullptr;
};

TEST_P(CApi, DatabasesAreCreatedListedOpenedAndDestroyed) {
  Err e;
  EXPECT_EQ(settee_db_create(store_, "db", nullptr, &e), SETTEE_ERR_FILE_EXISTS);
  EXPECT_EQ(settee_db_create(store_, "Bad Name", nullptr, &e), SETTEE_ERR_ILLEGAL_DATABASE_NAME);
  EXPECT_EQ(settee_db_create(store_, "other", nullptr, &e), SETTEE_OK);  // no handle wanted
  Str list;
  ASSERT_EQ(settee_store_list_dbs(store_, list.out(), &e), SETTEE_OK);
  EXPECT_EQ(list.str(), "[\"db\",\"other\"]");
  settee_db* other = nullptr;
  ASSERT_EQ(settee_db_open(store_, "other", &other, &e), SETTEE_OK);
  ASSERT_EQ(settee_db_put(other, "x", "{}", nullptr, nullptr, &e), SETTEE_OK);
  EXPECT_EQ(settee_db_destroy(store_, "other", &e), SETTEE_OK);
  EXPECT_EQ(settee_db_put(other, "y", "{}", nullptr, nullptr, &e), SETTEE_ERR_NOT_FOUND);
  settee_db_free(other);
  EXPECT_EQ(settee_db_destroy(store_, "other", &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(settee_db_open(store_, "other", &other, &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(other, nullptr);
  ASSERT_EQ(settee_store_list_dbs(store_, list.out(), &e), SETTEE_OK);
  EXPECT_EQ(list.str(), "[\"db\"]");
}

TEST_P(CApi, StoreCallsRejectNullAndNonUtf8) {
  Err e;
  settee_db* d = nullptr;
  EXPECT_EQ(settee_db_create(nullptr, "x", &d, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_create(store_, nullptr, &d, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_create(store_, "caf\xc3", &d, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_open(store_, "db", nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_open(nullptr, "db", &d, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_destroy(nullptr, "db", &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_destroy(store_, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  Str s;
  EXPECT_EQ(settee_store_list_dbs(nullptr, s.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_store_list_dbs(store_, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_store_close(nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
}

TEST_P(CApi, PutGetDelete) {
  Err e;
  Str id, rev;
  ASSERT_EQ(settee_db_put(db_, "a", "{\"n\":1}", id.out(), rev.out(), &e), SETTEE_OK) << e.message();
  EXPECT_EQ(id.str(), "a");
  EXPECT_THAT(rev.str(), StartsWith("1-"));
  EXPECT_EQ(rev.str().size(), 34u);

  Str doc;
  ASSERT_EQ(settee_db_get(db_, "a", nullptr, doc.out(), &e), SETTEE_OK);
  EXPECT_EQ(doc.str(), "{\"_id\":\"a\",\"_rev\":\"" + rev.str() + "\",\"n\":1}");

  // An update must name the current revision.
  EXPECT_EQ(settee_db_put(db_, "a", "{\"n\":2}", nullptr, nullptr, &e), SETTEE_ERR_CONFLICT);
  EXPECT_EQ(e.message(), "Document update conflict.");
  std::string body = "{\"_rev\":\"" + rev.str() + "\",\"n\":2}";
  Str rev2;
  ASSERT_EQ(settee_db_put(db_, "a", body.c_str(), nullptr, rev2.out(), &e), SETTEE_OK);
  EXPECT_THAT(rev2.str(), StartsWith("2-"));

  // An older revision, and its history.
  settee_get_options g{};
  g.rev = rev.p;
  ASSERT_EQ(settee_db_get(db_, "a", &g, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr("\"n\":1"));
  g = {};
  g.revs = 1;
  ASSERT_EQ(settee_db_get(db_, "a", &g, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr("\"_revisions\":{\"start\":2"));

  // No id and no _id: a UUID.
  ASSERT_EQ(settee_db_put(db_, nullptr, "{\"x\":true}", id.out(), nullptr, &e), SETTEE_OK);
  EXPECT_EQ(id.str().size(), 32u);
  ASSERT_EQ(settee_db_put(db_, nullptr, "{\"_id\":\"named\"}", id.out(), nullptr, &e), SETTEE_OK);
  EXPECT_EQ(id.str(), "named");

  Str tomb;
  EXPECT_EQ(settee_db_delete(db_, "a", rev.p, tomb.out(), &e), SETTEE_ERR_CONFLICT);
  EXPECT_EQ(tomb.p, nullptr);
  ASSERT_EQ(settee_db_delete(db_, "a", rev2.p, tomb.out(), &e), SETTEE_OK);
  EXPECT_THAT(tomb.str(), StartsWith("3-"));
  EXPECT_EQ(settee_db_get(db_, "a", nullptr, doc.out(), &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(e.message(), "deleted");
  EXPECT_EQ(doc.p, nullptr);
  EXPECT_EQ(settee_db_get(db_, "nope", nullptr, doc.out(), &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(e.message(), "missing");
  EXPECT_EQ(settee_db_delete(db_, "nope", "1-00000000000000000000000000000000", nullptr, &e),
            SETTEE_ERR_NOT_FOUND);
}

TEST_P(CApi, DocumentCallsRejectBadInput) {
  Err e;
  Str s;
  EXPECT_EQ(settee_db_put(db_, "a", "not json", nullptr, nullptr, &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_put(db_, "a", "[1,2]", nullptr, nullptr, &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_put(db_, "a", "{\"t\":\"\xc3\x28\"}", nullptr, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put(db_, "\xe2\x82", "{}", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put(db_, "_bad", "{}", nullptr, nullptr, &e), SETTEE_ERR_ILLEGAL_DOCID);
  EXPECT_EQ(settee_db_put(db_, "a", "{\"_foo\":1}", nullptr, nullptr, &e), SETTEE_ERR_DOC_VALIDATION);
  EXPECT_EQ(settee_db_put(db_, "a", nullptr, nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put(nullptr, "a", "{}", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get(db_, nullptr, nullptr, s.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get(db_, "a", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  settee_get_options g{};
  g.rev = "\xff";
  EXPECT_EQ(settee_db_get(db_, "a", &g, s.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_delete(db_, "a", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_delete(db_, nullptr, "1-x", nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_info(nullptr, s.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_info(db_, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  // Nothing was written by any of them.
  ASSERT_EQ(settee_db_info(db_, s.out(), &e), SETTEE_OK);
  EXPECT_THAT(s.str(), HasSubstr("\"doc_count\":0"));
}

TEST_P(CApi, InfoIsCouchDbShaped) {
  Put("a", "{}");
  Put("b", "{}");
  Err e;
  Str info;
  ASSERT_EQ(settee_db_info(db_, info.out(), &e), SETTEE_OK);
  EXPECT_THAT(info.str(), StartsWith("{\"db_name\":\"db\",\"doc_count\":2,\"doc_del_count\":0,\"update_seq\":2,"));
  EXPECT_THAT(info.str(), HasSubstr("\"sizes\":{\"active\":"));
}

TEST_P(CApi, BulkDocsAnswersPerDocument) {
  Err e;
  Str res;
  ASSERT_EQ(settee_db_bulk_docs(db_, "[{\"_id\":\"a\",\"v\":1},{\"_id\":\"b\"},{\"_id\":\"a\"}]", 1,
                                res.out(), &e),
            SETTEE_OK)
      << e.message();
  EXPECT_THAT(res.str(), StartsWith("[{\"ok\":true,\"id\":\"a\",\"rev\":\"1-"));
  EXPECT_THAT(res.str(), HasSubstr("{\"id\":\"a\",\"error\":\"conflict\",\"reason\":\"Document update conflict.\"}]"));
  // Replicated revisions with new_edits = 0.
  ASSERT_EQ(settee_db_bulk_docs(db_, "[{\"_id\":\"r\",\"_rev\":\"3-abc\",\"x\":1}]", 0, res.out(), &e),
            SETTEE_OK);
  EXPECT_EQ(res.str(), "[{\"ok\":true,\"id\":\"r\",\"rev\":\"3-abc\"}]");
  Str doc;
  ASSERT_EQ(settee_db_get(db_, "r", nullptr, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr("\"_rev\":\"3-abc\""));
  // The results are optional.
  EXPECT_EQ(settee_db_bulk_docs(db_, "[{}]", 1, nullptr, &e), SETTEE_OK);

  EXPECT_EQ(settee_db_bulk_docs(db_, "{\"docs\":[]}", 1, res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(res.p, nullptr);
  EXPECT_EQ(settee_db_bulk_docs(db_, "[", 1, res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_bulk_docs(db_, nullptr, 1, res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_bulk_docs(db_, "[\"\xff\"]", 1, res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
}

TEST_P(CApi, AllDocsWithOptions) {
  std::string ra = Put("a", "{\"n\":1}");
  Put("b", "{\"n\":2}");
  Put("c", "{\"n\":3}");
  Err e;
  Str all;
  ASSERT_EQ(settee_db_all_docs(db_, nullptr, all.out(), &e), SETTEE_OK);
  EXPECT_THAT(all.str(), StartsWith("{\"total_rows\":3,\"offset\":0,\"rows\":[{\"id\":\"a\",\"key\":\"a\",\"value\":{\"rev\":\"" + ra + "\"}},"));

  settee_all_docs_options o{};
  o.descending = 1;
  o.limit = 1;
  o.skip = 1;
  o.include_docs = 1;
  ASSERT_EQ(settee_db_all_docs(db_, &o, all.out(), &e), SETTEE_OK);
  EXPECT_THAT(all.str(), StartsWith("{\"total_rows\":3,\"offset\":1,\"rows\":[{\"id\":\"b\","));
  EXPECT_THAT(all.str(), HasSubstr("\"doc\":{\"_id\":\"b\",\"_rev\":\"1-"));
  EXPECT_THAT(all.str(), HasSubstr("\"n\":2}}]}"));

  o = {};
  o.start_key = "a";
  o.end_key = "c";
  o.exclusive_end = 1;
  ASSERT_EQ(settee_db_all_docs(db_, &o, all.out(), &e), SETTEE_OK);
  EXPECT_THAT(all.str(), HasSubstr("\"id\":\"b\""));
  EXPECT_THAT(all.str(), testing::Not(HasSubstr("\"id\":\"c\"")));

  const char* keys[] = {"c", "zz"};
  o = {};
  o.keys = keys;
  o.n_keys = 2;
  ASSERT_EQ(settee_db_all_docs(db_, &o, all.out(), &e), SETTEE_OK);
  EXPECT_THAT(all.str(), HasSubstr("{\"id\":\"c\",\"key\":\"c\""));
  EXPECT_THAT(all.str(), HasSubstr("{\"key\":\"zz\",\"error\":\"not_found\"}"));

  o.keys = nullptr;
  EXPECT_EQ(settee_db_all_docs(db_, &o, all.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  const char* bad[] = {"\xff"};
  o.keys = bad;
  o.n_keys = 1;
  EXPECT_EQ(settee_db_all_docs(db_, &o, all.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_all_docs(db_, nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
}

struct Seen {
  std::vector<std::string> ids;
  std::vector<uint64_t> seqs;
  std::vector<std::string> docs;
  std::vector<int> deleted;
  std::vector<size_t> n_revs;
  size_t stop_after = SIZE_MAX;
};

int Collect(void* ctx, const settee_change* c) {
  auto* s = static_cast<Seen*>(ctx);
  s->ids.push_back(c->id);
  s->seqs.push_back(c->seq);
  s->docs.push_back(c->doc ? c->doc : "");
  s->deleted.push_back(c->deleted);
  s->n_revs.push_back(c->n_revs);
  if (c->n_revs > 0) {
    EXPECT_THAT(c->revs[0], testing::MatchesRegex("[0-9]+-[0-9a-f]+"));
  }
  return s->ids.size() < s->stop_after;
}

TEST_P(CApi, ChangesCallTheCallbackInOrder) {
  std::string ra = Put("a", "{}");
  Put("b", "{\"k\":1}");
  Err e;
  ASSERT_EQ(settee_db_delete(db_, "a", ra.c_str(), nullptr, &e), SETTEE_OK);
  Seen seen;
  uint64_t last = 0;
  ASSERT_EQ(settee_db_changes(db_, nullptr, Collect, &seen, &last, &e), SETTEE_OK);
  EXPECT_EQ(seen.ids, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(seen.seqs, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(seen.deleted, (std::vector<int>{0, 1}));
  EXPECT_EQ(seen.n_revs, (std::vector<size_t>{1, 1}));
  EXPECT_EQ(seen.docs, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(last, 3u);

  settee_changes_options o{};
  o.since = 2;
  o.include_docs = 1;
  seen = {};
  ASSERT_EQ(settee_db_changes(db_, &o, Collect, &seen, &last, &e), SETTEE_OK);
  EXPECT_EQ(seen.ids, (std::vector<std::string>{"a"}));
  EXPECT_THAT(seen.docs[0], HasSubstr("\"_deleted\":true"));

  o = {};
  o.descending = 1;
  o.limit = 1;
  seen = {};
  ASSERT_EQ(settee_db_changes(db_, &o, Collect, &seen, &last, &e), SETTEE_OK);
  EXPECT_EQ(seen.ids, (std::vector<std::string>{"a"}));

  // The callback stops the feed.
  seen = {};
  seen.stop_after = 1;
  ASSERT_EQ(settee_db_changes(db_, nullptr, Collect, &seen, &last, &e), SETTEE_OK);
  EXPECT_EQ(seen.ids.size(), 1u);
  EXPECT_EQ(last, 2u);

  EXPECT_EQ(settee_db_changes(db_, nullptr, nullptr, nullptr, &last, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_changes(nullptr, nullptr, Collect, &seen, &last, &e), SETTEE_ERR_INVALID_ARGUMENT);
}

struct Reentry {
  settee_store* store;
  settee_db* db;
  settee_code close_code = SETTEE_OK;
  settee_code get_code = SETTEE_ERR_INTERNAL;
  settee_code put_code = SETTEE_ERR_INTERNAL;
};

int CallBackIn(void* ctx, const settee_change* c) {
  auto* r = static_cast<Reentry*>(ctx);
  Err e;
  r->close_code = settee_store_close(r->store, &e);
  Str doc;
  r->get_code = settee_db_get(r->db, c->id, nullptr, doc.out(), &e);
  r->put_code = settee_db_put(r->db, "from-callback", "{}", nullptr, nullptr, &e);
  return 0;
}

TEST_P(CApi, ChangesCallbacksMayReadAndWriteButNotClose) {
  Put("a", "{}");
  Reentry r{store_, db_};
  Err e;
  ASSERT_EQ(settee_db_changes(db_, nullptr, CallBackIn, &r, nullptr, &e), SETTEE_OK);
  EXPECT_EQ(r.close_code, SETTEE_ERR_INVALID_OPERATION);
  EXPECT_EQ(r.get_code, SETTEE_OK);
  EXPECT_EQ(r.put_code, SETTEE_OK);
  Str doc;
  EXPECT_EQ(settee_db_get(db_, "from-callback", nullptr, doc.out(), &e), SETTEE_OK);
}

struct Listened {
  std::atomic<int> calls{0};
  std::atomic<uint64_t> last{0};
  settee_db* db = nullptr;
  std::atomic<int> reentry{SETTEE_OK};
};

void OnUpdate(void* ctx, uint64_t seq) {
  auto* l = static_cast<Listened*>(ctx);
  l->calls++;
  l->last = seq;
  if (l->db) {
    Str doc;
    l->reentry = settee_db_get(l->db, "x", nullptr, doc.out(), nullptr);
  }
}

TEST_P(CApi, ListenersHearEveryCommit) {
  Listened l;
  l.db = db_;
  uint64_t id = 0;
  Err e;
  ASSERT_EQ(settee_db_listen(db_, OnUpdate, &l, &id, &e), SETTEE_OK);
  Put("x", "{}");
  Put("y", "{}");
  EXPECT_EQ(l.calls.load(), 2);
  EXPECT_EQ(l.last.load(), 2u);
  // A listener runs under the database's lock: calling back in is refused.
  EXPECT_EQ(l.reentry.load(), SETTEE_ERR_INVALID_OPERATION);
  ASSERT_EQ(settee_db_unlisten(db_, id, &e), SETTEE_OK);
  Put("z", "{}");
  EXPECT_EQ(l.calls.load(), 2);
  EXPECT_EQ(settee_db_unlisten(db_, id, &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(settee_db_listen(db_, nullptr, &l, &id, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_listen(db_, OnUpdate, &l, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_unlisten(nullptr, id, &e), SETTEE_ERR_INVALID_ARGUMENT);
}

TEST_P(CApi, FreeingAHandleRemovesItsListeners) {
  Listened l;
  settee_db* second = nullptr;
  Err e;
  ASSERT_EQ(settee_db_open(store_, "db", &second, &e), SETTEE_OK);
  uint64_t id = 0;
  ASSERT_EQ(settee_db_listen(second, OnUpdate, &l, &id, &e), SETTEE_OK);
  Put("x", "{}");
  settee_db_free(second);
  Put("y", "{}");
  EXPECT_EQ(l.calls.load(), 1);
}

TEST_P(CApi, AClosedStoreClosesItsHandles) {
  Listened l;
  uint64_t id = 0;
  Err e;
  ASSERT_EQ(settee_db_listen(db_, OnUpdate, &l, &id, &e), SETTEE_OK);
  ASSERT_EQ(settee_store_close(store_, &e), SETTEE_OK);
  EXPECT_EQ(settee_store_close(store_, &e), SETTEE_OK);  // idempotent
  Str s;
  Seen seen;
  settee_db* d = nullptr;
  EXPECT_EQ(settee_db_put(db_, "a", "{}", nullptr, nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(e.message(), "the store is closed");
  EXPECT_EQ(settee_db_get(db_, "a", nullptr, s.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_delete(db_, "a", "1-a", nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_bulk_docs(db_, "[]", 1, s.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_all_docs(db_, nullptr, s.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_changes(db_, nullptr, Collect, &seen, nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_info(db_, s.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_listen(db_, OnUpdate, &l, &id, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_unlisten(db_, id, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_open(store_, "db", &d, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_create(store_, "new", &d, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_destroy(store_, "db", &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_store_list_dbs(store_, s.out(), &e), SETTEE_ERR_CLOSED);
  settee_runtime* rt = nullptr;
  EXPECT_EQ(settee_runtime_start(store_, nullptr, &rt, &e),
            settee_has_js() ? SETTEE_ERR_CLOSED : SETTEE_ERR_UNSUPPORTED);
  EXPECT_EQ(l.calls.load(), 0);
  // Handles are still freed by their owner (TearDown), in any order.
}

INSTANTIATE_TEST_SUITE_P(Backends, CApi, testing::Values(SETTEE_BACKEND_MEMORY, SETTEE_BACKEND_LEVELDB),
                         [](const auto& info) {
                           return info.param == SETTEE_BACKEND_MEMORY ? "memory" : "leveldb";
                         });

TEST(Handles, FreedInAnyOrder) {
  settee_store_options o;
  settee_store_options_init(&o);
  o.backend = SETTEE_BACKEND_MEMORY;
  settee_store* s = nullptr;
  Err e;
  ASSERT_EQ(settee_store_open(&o, &s, &e), SETTEE_OK);
  settee_db* db = nullptr;
  ASSERT_EQ(settee_db_create(s, "a", &db, &e), SETTEE_OK);
  settee_store_free(s);  // the store first: the database handle is closed, not dangling
  EXPECT_EQ(settee_db_put(db, "x", "{}", nullptr, nullptr, &e), SETTEE_ERR_CLOSED);
  settee_db_free(db);
}

}  // namespace
