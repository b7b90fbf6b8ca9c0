// Binary document records and by-seq entries.
#include "storage/doc_record.h"

#include <gtest/gtest.h>

#include <random>

namespace settee {
namespace {

DocRecord SampleRecord() {
  DocRecord r;
  r.seq = 42;
  r.deleted = false;
  int root = r.tree.AddRevision(RevTree::kNone, RevId{1, "aaaa"}, false, false, 1);
  r.tree.AddRevision(root, RevId{2, "bbbb"}, false, true, 42);
  r.winner_rev = "2-bbbb";
  r.winner_body = R"({"v":2})";
  return r;
}

TEST(DocRecord, RoundTrips) {
  DocRecord r = SampleRecord();
  std::string bytes;
  EncodeDocRecord(r, &bytes);
  DocRecord back;
  ASSERT_TRUE(DecodeDocRecord(bytes, &back).ok());
  EXPECT_EQ(42u, back.seq);
  EXPECT_FALSE(back.deleted);
  EXPECT_EQ("2-bbbb", back.winner_rev);
  EXPECT_EQ(R"({"v":2})", back.winner_body);
  EXPECT_EQ(r.tree, back.tree);

  DocRecordView view;
  ASSERT_TRUE(DecodeDocRecordView(bytes, &view).ok());
  EXPECT_EQ("2-bbbb", view.winner_rev);
  EXPECT_EQ(R"({"v":2})", view.winner_body);
}

TEST(DocRecord, CorruptBytesAreRejectedNotCrashedOn) {
  std::string bytes;
  EncodeDocRecord(SampleRecord(), &bytes);
  for (size_t n = 0; n < bytes.size(); ++n) {
    DocRecord r;
    EXPECT_EQ(Status::Code::kCorruption, DecodeDocRecord(bytes.substr(0, n), &r).code()) << n;
  }
  std::mt19937 rng(7);
  for (int i = 0; i < 5000; ++i) {
    std::string junk = bytes;
    junk[rng() % junk.size()] = static_cast<char>(rng());
    DocRecord r;
    (void)DecodeDocRecord(junk, &r);  // must not crash; any status is fine
  }
  std::string wrong_format = bytes;
  wrong_format[0] = 9;
  DocRecord r;
  EXPECT_EQ(Status::Code::kCorruption, DecodeDocRecord(wrong_format, &r).code());
}

TEST(SeqEntry, RoundTripsAndRejectsTruncation) {
  std::string bytes;
  EncodeSeqEntry("doc\0id", true, "3-abc", &bytes);
  SeqEntryView v;
  ASSERT_TRUE(DecodeSeqEntry(bytes, &v).ok());
  EXPECT_EQ("doc", v.docid.substr(0, 3));
  EXPECT_TRUE(v.deleted);
  EXPECT_EQ("3-abc", v.rev);
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeSeqEntry(bytes.substr(0, n), &v).ok()) << n;
  }
}

}  // namespace
}  // namespace settee
