// AttachmentStore: bodies by digest in chunks, gzip, ranges, garbage collection.
#include "storage/attachment_store.h"

#include <gtest/gtest.h>

#include "storage/keys.h"
#include "storage/memory_store.h"
#include "util/digest.h"

namespace settee {
namespace {

std::string Bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  uint32_t x = seed;
  for (char& c : s) {
    x = x * 1664525u + 1013904223u;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

class AttachmentStoreTest : public ::testing::Test {
 protected:
  AttachmentStoreTest() : keys_(7), store_(&kv_, &keys_) {}

  void Put(const std::string& digest, const std::string& data, bool compress) {
    std::string gz;
    const bool gzip = compress && GzipCompress(data, &gz);
    ASSERT_TRUE(store_.Put(KVWriteOptions(), digest, gzip ? gz : data, gzip, data.size(),
                           Xxh128Hex(data)).ok());
  }
  std::string Range(const std::string& digest, uint64_t offset, uint64_t count,
                    size_t* max_piece = nullptr) {
    AttachmentBodyInfo info;
    EXPECT_TRUE(store_.Stat(KVReadOptions(), digest, &info).ok());
    std::string out;
    EXPECT_TRUE(store_.ReadDecoded(KVReadOptions(), digest, info, offset, count,
                                   [&](std::string_view piece) {
                                     if (max_piece) *max_piece = std::max(*max_piece, piece.size());
                                     out.append(piece);
                                     return true;
                                   }).ok());
    return out;
  }

  MemoryStore kv_;
  keys::DatabaseKeys keys_;
  AttachmentStore store_;
};

TEST_F(AttachmentStoreTest, ReadManyReadsBodiesInOrderThroughOneIterator) {
  const std::string big = Bytes(2 * AttachmentStore::kChunkBytes + 7, 3);
  std::string text;
  while (text.size() < 100000) text += "compressible text ";
  Put("md5-big", big, false);
  Put("md5-text", text, true);
  Put("md5-empty", "", false);
  struct Collect : AttachmentBodyVisitor {
    std::vector<std::string> got;
    std::vector<bool> gzip;
    Status Begin(size_t i, const AttachmentBodyInfo& info, bool* read) override {
      got.resize(i + 1);
      gzip.push_back(info.gzip);
      *read = i != 1;  // the second one: header only
      return Status::OK();
    }
    Status Piece(size_t i, std::string_view bytes) override {
      got[i].append(bytes);
      return Status::OK();
    }
    Status End(size_t) override { return Status::OK(); }
  } collect;
  ASSERT_TRUE(store_.ReadMany(KVReadOptions(), {"md5-text", "md5-big", "md5-big", "md5-empty"},
                              &collect).ok());
  ASSERT_EQ(collect.got.size(), 4u);
  EXPECT_EQ(collect.got[0], text);
  EXPECT_TRUE(collect.gzip[0]);
  EXPECT_EQ(collect.got[1], "");
  EXPECT_EQ(collect.got[2], big);
  EXPECT_EQ(collect.got[3], "");
  Collect missing;
  EXPECT_TRUE(store_.ReadMany(KVReadOptions(), {"md5-big", "md5-none"}, &missing).IsNotFound());
}

TEST_F(AttachmentStoreTest, ChunkedBodyReadsWholeAndInRanges) {
  const std::string data = Bytes(3 * AttachmentStore::kChunkBytes + 123, 1);
  Put("md5-a", data, false);
  AttachmentBodyInfo info;
  ASSERT_TRUE(store_.Stat(KVReadOptions(), "md5-a", &info).ok());
  EXPECT_FALSE(info.gzip);
  EXPECT_EQ(info.length, data.size());
  size_t max_piece = 0;
  EXPECT_EQ(Range("md5-a", 0, UINT64_MAX, &max_piece), data);
  EXPECT_LE(max_piece, AttachmentStore::kChunkBytes);
  const uint64_t off = AttachmentStore::kChunkBytes - 10;
  EXPECT_EQ(Range("md5-a", off, 100), data.substr(off, 100));
  EXPECT_EQ(Range("md5-a", data.size() - 5, 100), data.substr(data.size() - 5));
  EXPECT_EQ(Range("md5-a", data.size(), 10), "");
}

TEST_F(AttachmentStoreTest, GzipBodiesDecodeWholeAndInRanges) {
  std::string text;
  while (text.size() < 2 * AttachmentStore::kChunkBytes) text += "line " + std::to_string(text.size()) + "\n";
  Put("md5-t", text, true);
  AttachmentBodyInfo info;
  ASSERT_TRUE(store_.Stat(KVReadOptions(), "md5-t", &info).ok());
  EXPECT_TRUE(info.gzip);
  EXPECT_LT(info.encoded_length, text.size());
  EXPECT_EQ(Range("md5-t", 0, UINT64_MAX), text);
  EXPECT_EQ(Range("md5-t", 300000, 1000), text.substr(300000, 1000));
}

TEST_F(AttachmentStoreTest, EmptyBody) {
  Put("md5-e", "", false);
  EXPECT_EQ(Range("md5-e", 0, UINT64_MAX), "");
}

TEST_F(AttachmentStoreTest, SecondPutOfTheSameDigestStoresNothingAndRefusesOtherBytes) {
  const std::string data = Bytes(1000, 2);
  Put("md5-x", data, false);
  const uint64_t size = store_.ApproximateSize();
  Put("md5-x", data, false);
  EXPECT_EQ(store_.ApproximateSize(), size);
  const std::string other = Bytes(1000, 3);
  Status s = store_.Put(KVWriteOptions(), "md5-x", other, false, other.size(), Xxh128Hex(other));
  EXPECT_EQ(s.code(), Status::Code::kBadRequest);
  EXPECT_EQ(Range("md5-x", 0, UINT64_MAX), data);
}

TEST_F(AttachmentStoreTest, CollectGarbageKeepsLiveAndPendingBodies) {
  Put("md5-live", Bytes(AttachmentStore::kChunkBytes * 2, 4), false);
  Put("md5-pending", Bytes(10, 5), false);
  Put("md5-dead", Bytes(AttachmentStore::kChunkBytes * 2, 6), false);
  // A chunk without a header, as a crash mid-write leaves.
  ASSERT_TRUE(kv_.Put(KVWriteOptions(), keys_.AttachmentChunk("md5-torn", 0), "xx").ok());
  ASSERT_TRUE(store_.CollectGarbage(KVWriteOptions(), {"md5-live"}, {"md5-pending"}).ok());
  AttachmentBodyInfo info;
  EXPECT_TRUE(store_.Stat(KVReadOptions(), "md5-live", &info).ok());
  EXPECT_TRUE(store_.Stat(KVReadOptions(), "md5-pending", &info).ok());
  EXPECT_TRUE(store_.Stat(KVReadOptions(), "md5-dead", &info).IsNotFound());
  std::string v;
  EXPECT_TRUE(kv_.Get(KVReadOptions(), keys_.AttachmentChunk("md5-dead", 1), &v).IsNotFound());
  EXPECT_TRUE(kv_.Get(KVReadOptions(), keys_.AttachmentChunk("md5-torn", 0), &v).IsNotFound());
  EXPECT_EQ(Range("md5-live", 0, UINT64_MAX), Bytes(AttachmentStore::kChunkBytes * 2, 4));
}

TEST(CompressibleTypes, CouchDbDefaults) {
  EXPECT_TRUE(IsCompressibleType("text/plain"));
  EXPECT_TRUE(IsCompressibleType("Text/HTML; charset=utf-8"));
  EXPECT_TRUE(IsCompressibleType("application/json"));
  EXPECT_TRUE(IsCompressibleType("application/javascript"));
  EXPECT_TRUE(IsCompressibleType("application/xml"));
  EXPECT_FALSE(IsCompressibleType("application/octet-stream"));
  EXPECT_FALSE(IsCompressibleType("image/png"));
  EXPECT_FALSE(IsCompressibleType("text/"));
}

}  // namespace
}  // namespace settee
