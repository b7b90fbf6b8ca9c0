// The C API's attachment and Mango calls (capi/settee_c_attachments.cc)
// through libsettee.so: results, errors and misuse (NULLs, closed handles,
// text that is not UTF-8, JSON that is not JSON), on both backends.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "settee/settee.h"
#include "tests/capi/capi_test_util.h"

namespace {

using settee_test::Err;
using settee_test::Str;
using testing::HasSubstr;
using testing::StartsWith;

// Bytes settee_db_get_attachment gave, freed as a C caller must.
struct Bytes {
  void* p = nullptr;
  size_t size = 0;
  ~Bytes() { settee_free(p); }
  void** out() {
    settee_free(p);
    p = nullptr;
    return &p;
  }
  std::string str() const { return p ? std::string(static_cast<const char*>(p), size) : "<null>"; }
};

class CAttachments : public testing::TestWithParam<settee_backend> {
 protected:
  void SetUp() override {
    settee_store_options o;
    settee_store_options_init(&o);
    o.backend = GetParam();
    dir_ = testing::TempDir() + "/settee_capi_att_" + std::to_string(getpid());
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

  std::string dir_;
  settee_store* store_ = nullptr;
  settee_db* db_ = nullptr;
};

TEST_P(CAttachments, PutGetReplaceDelete) {
  Err e;
  Str rev1;
  // Every byte value, NULs included: attachments are bytes, not text.
  std::string body;
  for (int i = 0; i < 256; ++i) body += static_cast<char>(i);
  ASSERT_EQ(settee_db_put_attachment(db_, "doc", "all.bin", nullptr, "application/x-test", body.data(),
                                     body.size(), rev1.out(), &e),
            SETTEE_OK)
      << e.message();
  EXPECT_THAT(rev1.str(), StartsWith("1-"));

  Bytes got;
  Str type;
  ASSERT_EQ(settee_db_get_attachment(db_, "doc", "all.bin", nullptr, got.out(), &got.size, type.out(), &e),
            SETTEE_OK);
  EXPECT_EQ(got.str(), body);
  EXPECT_EQ(type.str(), "application/x-test");
  Str doc;
  ASSERT_EQ(settee_db_get(db_, "doc", nullptr, doc.out(), &e), SETTEE_OK);
  EXPECT_THAT(doc.str(), HasSubstr("\"all.bin\":{\"content_type\":\"application/x-test\""));
  EXPECT_THAT(doc.str(), HasSubstr("\"length\":256"));

  // Replacing needs the current revision; an empty body and no type are fine.
  EXPECT_EQ(settee_db_put_attachment(db_, "doc", "all.bin", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_CONFLICT);
  Str rev2;
  ASSERT_EQ(settee_db_put_attachment(db_, "doc", "all.bin", rev1.p, nullptr, nullptr, 0, rev2.out(), &e),
            SETTEE_OK)
      << e.message();
  EXPECT_THAT(rev2.str(), StartsWith("2-"));
  ASSERT_EQ(settee_db_get_attachment(db_, "doc", "all.bin", nullptr, got.out(), &got.size, type.out(), &e),
            SETTEE_OK);
  EXPECT_NE(got.p, nullptr);  // an empty body is still a pointer to free
  EXPECT_EQ(got.size, 0u);
  EXPECT_EQ(type.str(), "application/octet-stream");
  // The older revision still has the older body.
  ASSERT_EQ(settee_db_get_attachment(db_, "doc", "all.bin", rev1.p, got.out(), &got.size, nullptr, &e),
            SETTEE_OK);
  EXPECT_EQ(got.str(), body);

  Str rev3;
  EXPECT_EQ(settee_db_delete_attachment(db_, "doc", "all.bin", rev1.p, rev3.out(), &e), SETTEE_ERR_CONFLICT);
  EXPECT_EQ(rev3.p, nullptr);
  ASSERT_EQ(settee_db_delete_attachment(db_, "doc", "all.bin", rev2.p, rev3.out(), &e), SETTEE_OK);
  EXPECT_THAT(rev3.str(), StartsWith("3-"));
  EXPECT_EQ(settee_db_get_attachment(db_, "doc", "all.bin", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(got.p, nullptr);
  EXPECT_EQ(got.size, 0u);
  EXPECT_EQ(settee_db_delete_attachment(db_, "doc", "all.bin", rev3.p, nullptr, &e), SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(settee_db_get_attachment(db_, "nodoc", "a", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_NOT_FOUND);
  EXPECT_EQ(e.message(), "missing");
}

TEST_P(CAttachments, LargeBodiesRoundTrip) {
  // Larger than one stored chunk (256 KiB), compressible: stored gzip'd in
  // chunks, read back decoded.
  std::string body;
  while (body.size() < 700 * 1024) body += "settee attachment " + std::to_string(body.size()) + "\n";
  Err e;
  ASSERT_EQ(settee_db_put_attachment(db_, "big", "log.txt", nullptr, "text/plain", body.data(), body.size(),
                                     nullptr, &e),
            SETTEE_OK);
  Bytes got;
  ASSERT_EQ(settee_db_get_attachment(db_, "big", "log.txt", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_OK);
  EXPECT_EQ(got.size, body.size());
  EXPECT_TRUE(got.str() == body);
}

TEST_P(CAttachments, AttachmentCallsRejectBadInput) {
  Err e;
  Bytes got;
  Str rev;
  EXPECT_EQ(settee_db_put_attachment(nullptr, "d", "a", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, nullptr, "a", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", nullptr, nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a\xff", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "name is not valid UTF-8");
  EXPECT_EQ(settee_db_put_attachment(db_, "d\xc3", "a", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", "\xe2\x82", nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", nullptr, "text/\xff", "x", 1, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", nullptr, nullptr, nullptr, 5, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(e.message(), "data is NULL");
  EXPECT_EQ(settee_db_put_attachment(db_, "_bad", "a", nullptr, nullptr, "x", 1, nullptr, &e),
            SETTEE_ERR_ILLEGAL_DOCID);
  // A rev that does not parse is the request's fault, as in CouchDB.
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", "not-a-rev", nullptr, "x", 1, rev.out(), &e),
            SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(rev.p, nullptr);
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", "1-abc", nullptr, "x", 1, rev.out(), &e),
            SETTEE_ERR_CONFLICT);
  EXPECT_EQ(rev.p, nullptr);

  EXPECT_EQ(settee_db_get_attachment(nullptr, "d", "a", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get_attachment(db_, "d", "a", nullptr, nullptr, &got.size, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get_attachment(db_, "d", "a", nullptr, got.out(), nullptr, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get_attachment(db_, "d", "\xff", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_get_attachment(db_, "d", "a", "\xff", got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_delete_attachment(nullptr, "d", "a", "1-a", nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_delete_attachment(db_, "d", "a", nullptr, nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_delete_attachment(db_, "d", nullptr, "1-a", nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  // Nothing was written by any of them.
  Str info;
  ASSERT_EQ(settee_db_info(db_, info.out(), &e), SETTEE_OK);
  EXPECT_THAT(info.str(), HasSubstr("\"doc_count\":0"));
}

TEST_P(CAttachments, FindWithAndWithoutAnIndex) {
  Err e;
  Str res;
  ASSERT_EQ(settee_db_bulk_docs(db_,
                                R"([{"_id":"a","type":"note","n":3},{"_id":"b","type":"task","n":1},)"
                                R"({"_id":"c","type":"note","n":1},{"_id":"d","type":"note","n":2}])",
                                1, nullptr, &e),
            SETTEE_OK);
  // No index: CouchDB's _all_docs scan, with its warning.
  ASSERT_EQ(settee_db_find(db_, R"({"selector":{"type":"note"},"fields":["_id"]})", res.out(), &e), SETTEE_OK)
      << e.message();
  EXPECT_THAT(res.str(), HasSubstr(R"("docs":[{"_id":"a"},{"_id":"c"},{"_id":"d"}])"));
  EXPECT_THAT(res.str(), HasSubstr("\"warning\":\"No matching index found"));
  // A sort needs an index.
  const char* sorted = R"({"selector":{"type":"note","n":{"$gt":0}},"sort":["type","n"],"fields":["_id","n"]})";
  EXPECT_EQ(settee_db_find(db_, sorted, res.out(), &e), SETTEE_ERR_NO_USABLE_INDEX);
  EXPECT_EQ(res.p, nullptr);

  ASSERT_EQ(settee_db_create_index(db_, R"({"index":{"fields":["type","n"]},"name":"by-type"})", res.out(), &e),
            SETTEE_OK)
      << e.message();
  EXPECT_THAT(res.str(), HasSubstr("\"result\":\"created\""));
  ASSERT_EQ(settee_db_create_index(db_, R"({"index":{"fields":["type","n"]},"name":"by-type"})", nullptr, &e),
            SETTEE_OK);
  ASSERT_EQ(settee_db_find(db_, sorted, res.out(), &e), SETTEE_OK) << e.message();
  EXPECT_THAT(res.str(), HasSubstr(R"("docs":[{"_id":"c","n":1},{"_id":"d","n":2},{"_id":"a","n":3}])"));
  EXPECT_THAT(res.str(), testing::Not(HasSubstr("warning")));
}

TEST_P(CAttachments, MangoCallsRejectBadInput) {
  Err e;
  Str res;
  EXPECT_EQ(settee_db_find(db_, "{not json", res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_find(db_, "[1]", res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_find(db_, R"({"selector":{"n":{"$nope":1}}})", res.out(), &e), SETTEE_ERR_INVALID_OPERATOR);
  EXPECT_EQ(settee_db_find(db_, "{\"selector\":{\"t\":\"\xc3\x28\"}}", res.out(), &e),
            SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_find(db_, nullptr, res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_find(db_, "{\"selector\":{}}", nullptr, &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_find(nullptr, "{\"selector\":{}}", res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_create_index(db_, "{", res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_create_index(db_, R"({"index":{}})", res.out(), &e), SETTEE_ERR_BAD_REQUEST);
  EXPECT_EQ(settee_db_create_index(db_, nullptr, res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_create_index(nullptr, "{}", res.out(), &e), SETTEE_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(settee_db_create_index(db_, "{\"index\":{\"fields\":[\"\xff\"]}}", res.out(), &e),
            SETTEE_ERR_INVALID_ARGUMENT);
}

TEST_P(CAttachments, AClosedStoreAnswersClosed) {
  Err e;
  ASSERT_EQ(settee_store_close(store_, &e), SETTEE_OK);
  Bytes got;
  Str res;
  EXPECT_EQ(settee_db_put_attachment(db_, "d", "a", nullptr, nullptr, "x", 1, nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(e.message(), "the store is closed");
  EXPECT_EQ(settee_db_get_attachment(db_, "d", "a", nullptr, got.out(), &got.size, nullptr, &e),
            SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_delete_attachment(db_, "d", "a", "1-a", nullptr, &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_find(db_, "{\"selector\":{}}", res.out(), &e), SETTEE_ERR_CLOSED);
  EXPECT_EQ(settee_db_create_index(db_, R"({"index":{"fields":["n"]}})", res.out(), &e), SETTEE_ERR_CLOSED);
}

INSTANTIATE_TEST_SUITE_P(Backends, CAttachments, testing::Values(SETTEE_BACKEND_MEMORY, SETTEE_BACKEND_LEVELDB),
                         [](const auto& info) {
                           return info.param == SETTEE_BACKEND_MEMORY ? "memory" : "leveldb";
                         });

}  // namespace
