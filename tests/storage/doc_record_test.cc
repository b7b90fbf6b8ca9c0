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
  EXPECT_FALSE(view.body_compressed);
  EXPECT_EQ(R"({"v":2})", view.stored_body);
  std::string scratch;
  std::string_view body;
  ASSERT_TRUE(view.Body(&scratch, &body).ok());
  EXPECT_EQ(R"({"v":2})", body);
}

// A big JSON body of repeated members, as bulk-inserts-massive-docs writes.
std::string BigBody(size_t members) {
  std::string body = "{";
  for (size_t i = 0; i < members; ++i) {
    if (i) body += ',';
    body += "\"sovery" + std::to_string(i % 10) + "\":\"" + std::to_string(i % 10) + "cool\"";
  }
  return body + "}";
}

TEST(DocRecord, BigBodiesAreStoredCompressedAndRoundTrip) {
  DocRecord r = SampleRecord();
  r.winner_body = BigBody(4000);
  ASSERT_GE(r.winner_body.size(), kCompressBodyBytes);
  std::string bytes;
  EncodeDocRecord(r, &bytes);
  EXPECT_EQ(kDocRecordFormatSnappyBody, static_cast<uint8_t>(bytes[0]));
  EXPECT_LT(bytes.size(), r.winner_body.size() / 4);

  DocRecordView view;
  ASSERT_TRUE(DecodeDocRecordView(bytes, &view).ok());
  EXPECT_TRUE(view.body_compressed);
  EXPECT_EQ("2-bbbb", view.winner_rev);
  EXPECT_EQ(42u, view.seq);
  std::string scratch;
  std::string_view body;
  ASSERT_TRUE(view.Body(&scratch, &body).ok());
  EXPECT_EQ(r.winner_body, body);

  DocRecord back;
  ASSERT_TRUE(DecodeDocRecord(bytes, &back).ok());
  EXPECT_EQ(r.winner_body, back.winner_body);
  EXPECT_EQ(r.tree, back.tree);

  // Written again from the decoded record: the same bytes.
  std::string again;
  EncodeDocRecord(back, &again);
  EXPECT_EQ(bytes, again);
}

TEST(DocRecord, BodiesThatDoNotCompressOrAreSmallStayPlain) {
  DocRecord r = SampleRecord();
  std::mt19937 rng(3);
  std::string noise = "{\"x\":\"";
  while (noise.size() < 2 * kCompressBodyBytes) noise.push_back(static_cast<char>('a' + rng() % 26));
  noise += "\"}";
  r.winner_body = noise;
  std::string bytes;
  EncodeDocRecord(r, &bytes);
  DocRecordView view;
  ASSERT_TRUE(DecodeDocRecordView(bytes, &view).ok());
  // 26 letters carry under 5 bits a byte, which Snappy's byte-oriented
  // matching cannot use: it stays plain.
  EXPECT_FALSE(view.body_compressed);
  EXPECT_EQ(noise, view.stored_body);

  r.winner_body = BigBody(10);  // repetitive but under the threshold
  EncodeDocRecord(r, &bytes);
  EXPECT_EQ(kDocRecordFormat, static_cast<uint8_t>(bytes[0]));
}

TEST(DocRecord, CorruptCompressedBodiesAreRejected) {
  DocRecord r = SampleRecord();
  r.winner_body = BigBody(4000);
  std::string bytes;
  EncodeDocRecord(r, &bytes);
  DocRecordView view;
  ASSERT_TRUE(DecodeDocRecordView(bytes, &view).ok());
  // Snappy's bytes cut short within the record: the header still decodes
  // (readers of the header alone never look at the body) but the body does not.
  std::string cut(bytes);
  const size_t at = view.stored_body.data() - bytes.data();
  cut[at + view.stored_body.size() / 2] ^= 0x55;
  cut[at + view.stored_body.size() / 2 + 1] ^= 0x55;
  for (size_t i = 0; i < view.stored_body.size(); i += 97) cut[at + i] = static_cast<char>(0xff);
  DocRecordView bad;
  ASSERT_TRUE(DecodeDocRecordView(cut, &bad).ok());
  std::string scratch;
  std::string_view body;
  EXPECT_EQ(Status::Code::kCorruption, bad.Body(&scratch, &body).code());
  DocRecord back;
  EXPECT_EQ(Status::Code::kCorruption, DecodeDocRecord(cut, &back).code());
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

TEST(ChangeBlock, SingleEntryKeepsTheLegacyEncoding) {
  ChangeBlockBuilder builder;
  builder.Add(7, std::string_view("doc\0id", 6), true, "3-abc");
  std::string bytes = builder.Finish();
  EXPECT_EQ(0u, builder.count());
  // lenpref docid | flags | lenpref rev, as stores before change blocks wrote.
  EXPECT_EQ(std::string("\x06" "doc\0id" "\x01" "\x05" "3-abc", 14), bytes);
  std::vector<ChangeEntry> entries;
  ASSERT_TRUE(DecodeChangeBlock(7, bytes, &entries).ok());
  ASSERT_EQ(1u, entries.size());
  EXPECT_EQ(7u, entries[0].seq);
  EXPECT_EQ(std::string_view("doc\0id", 6), entries[0].docid);
  EXPECT_TRUE(entries[0].deleted);
  EXPECT_EQ("3-abc", entries[0].rev);
}

TEST(ChangeBlock, ManyEntriesRoundTripInSeqOrder) {
  ChangeBlockBuilder builder;
  builder.Add(10, "a", false, "1-aa");
  builder.Add(12, "b", true, "2-bb");
  builder.Add(300, "c", false, "1-cc");
  EXPECT_EQ(300u, builder.last_seq());
  std::string bytes = builder.Finish();
  std::vector<ChangeEntry> entries;
  ASSERT_TRUE(DecodeChangeBlock(300, bytes, &entries).ok());
  ASSERT_EQ(3u, entries.size());
  EXPECT_EQ(10u, entries[0].seq);
  EXPECT_EQ("a", entries[0].docid);
  EXPECT_FALSE(entries[0].deleted);
  EXPECT_EQ(12u, entries[1].seq);
  EXPECT_TRUE(entries[1].deleted);
  EXPECT_EQ("2-bb", entries[1].rev);
  EXPECT_EQ(300u, entries[2].seq);
  EXPECT_EQ("c", entries[2].docid);
}

// A batch's last block carries the database's counters (in place of a
// counters key rewritten by every batch): one entry or many, the entries
// decode as before and the counters come back from the head alone.
TEST(ChangeBlock, CountedBlocksCarryTheCounters) {
  const BlockCounters counters{300, 7, 123456};
  for (int n : {1, 3}) {
    ChangeBlockBuilder builder;
    std::vector<std::string> ids;  // the builder keeps views of them
    for (int i = 0; i < n; ++i) ids.push_back("doc" + std::to_string(i));
    for (int i = 0; i < n; ++i) builder.Add(40 + i, ids[i], i == 0, "1-ab");
    std::string bytes = builder.Finish(&counters);
    BlockCounters read;
    bool found = false;
    ASSERT_TRUE(ChangeBlockCountersOf(bytes, &read, &found).ok());
    ASSERT_TRUE(found) << n;
    EXPECT_EQ(counters, read);
    const uint64_t key_seq = 40 + n - 1;
    std::vector<ChangeEntry> entries;
    ASSERT_TRUE(DecodeChangeBlock(key_seq, bytes, &entries).ok()) << n;
    ASSERT_EQ(static_cast<size_t>(n), entries.size());
    EXPECT_EQ(40u, entries[0].seq);
    EXPECT_EQ("doc0", entries[0].docid);
    EXPECT_TRUE(entries[0].deleted);
    EXPECT_EQ(key_seq, entries.back().seq);
    uint64_t count = 0, first = 0;
    ASSERT_TRUE(ChangeBlockSpan(key_seq, bytes, &count, &first).ok());
    EXPECT_EQ(static_cast<uint64_t>(n), count);
    EXPECT_EQ(40u, first);
    // Cut anywhere in the counters or entries: corrupt, never a crash.
    for (size_t cut = 1; cut < bytes.size(); ++cut) {
      EXPECT_FALSE(DecodeChangeBlock(key_seq, bytes.substr(0, cut), &entries).ok()) << cut;
    }
  }
}

// Blocks of the encodings without counters say so.
TEST(ChangeBlock, UncountedBlocksHaveNoCounters) {
  for (int n : {1, 2}) {
    ChangeBlockBuilder builder;
    builder.Add(1, "a", false, "1-a");
    if (n == 2) builder.Add(2, "b", false, "1-b");
    std::string bytes = builder.Finish();
    BlockCounters read;
    bool found = true;
    ASSERT_TRUE(ChangeBlockCountersOf(bytes, &read, &found).ok());
    EXPECT_FALSE(found) << n;
  }
  BlockCounters read;
  bool found;
  EXPECT_FALSE(ChangeBlockCountersOf("", &read, &found).ok());
  EXPECT_FALSE(ChangeBlockCountersOf(std::string("\0\0\x80", 3), &read, &found).ok());
}

// A seq range keeps only its entries (an index update reads a big block a
// share at a time); the legacy single entry too.
TEST(ChangeBlock, DecodesASeqRange) {
  ChangeBlockBuilder builder;
  std::vector<std::string> ids;  // the builder keeps views of them
  for (uint64_t seq = 1; seq <= 100; ++seq) ids.push_back("d" + std::to_string(seq));
  for (uint64_t seq = 1; seq <= 100; ++seq) builder.Add(seq, ids[seq - 1], false, "1-a");
  std::string bytes = builder.Finish();
  std::vector<ChangeEntry> entries;
  ASSERT_TRUE(DecodeChangeBlock(100, bytes, &entries, 41, 60).ok());
  ASSERT_EQ(20u, entries.size());
  EXPECT_EQ(41u, entries.front().seq);
  EXPECT_EQ("d41", entries.front().docid);
  EXPECT_EQ(60u, entries.back().seq);
  ASSERT_TRUE(DecodeChangeBlock(100, bytes, &entries, 95, 1000).ok());
  EXPECT_EQ(6u, entries.size());
  ASSERT_TRUE(DecodeChangeBlock(100, bytes, &entries, 101, 1000).ok());
  EXPECT_TRUE(entries.empty());
  ASSERT_TRUE(DecodeChangeBlock(100, bytes, &entries, 0, 0).ok());
  EXPECT_TRUE(entries.empty());
  ChangeBlockBuilder one;
  one.Add(7, "x", false, "1-a");
  std::string single = one.Finish();
  ASSERT_TRUE(DecodeChangeBlock(7, single, &entries, 8, 9).ok());
  EXPECT_TRUE(entries.empty());
  ASSERT_TRUE(DecodeChangeBlock(7, single, &entries, 7, 7).ok());
  EXPECT_EQ(1u, entries.size());
}

TEST(ChangeBlock, RejectsTruncationAndInconsistentSeqs) {
  ChangeBlockBuilder builder;
  builder.Add(5, "x", false, "1-a");
  builder.Add(6, "y", false, "1-b");
  std::string bytes = builder.Finish();
  std::vector<ChangeEntry> entries;
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(DecodeChangeBlock(6, bytes.substr(0, n), &entries).ok()) << n;
  }
  // Seqs are stored relative to the key's: under key 1 the first would be 0.
  EXPECT_FALSE(DecodeChangeBlock(1, bytes, &entries).ok());
  EXPECT_FALSE(DecodeChangeBlock(6, bytes + "z", &entries).ok());
  std::mt19937 rng(11);
  for (int i = 0; i < 2000; ++i) {
    std::string junk = bytes;
    junk[rng() % junk.size()] = static_cast<char>(rng());
    (void)DecodeChangeBlock(6, junk, &entries);  // must not crash
  }
}

}  // namespace
}  // namespace settee
