// AttachmentStore: bodies by digest in chunks, gzip, ranges, garbage collection.
#include "storage/attachment_store.h"

#include <map>

#include <gtest/gtest.h>

#include "storage/keys.h"
#include "storage/memory_store.h"
#include "tests/storage/store_test_util.h"
#include "util/digest.h"

namespace settee {
namespace {


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
  const std::string big = testing::Noise(2 * AttachmentStore::kChunkBytes + 7, 3);
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

// A MemoryStore whose iterators count their seeks.
class SeekCountingStore final : public KVStore {
 public:
  Status Get(const KVReadOptions& o, std::string_view k, std::string* v) override {
    return kv_.Get(o, k, v);
  }
  Status Write(const KVWriteOptions& o, const KVWriteBatch& b) override { return kv_.Write(o, b); }
  std::unique_ptr<KVIterator> NewIterator(const KVIteratorOptions& o) override {
    return std::make_unique<Iter>(kv_.NewIterator(o), &seeks);
  }
  std::shared_ptr<const KVSnapshot> GetSnapshot() override { return kv_.GetSnapshot(); }
  uint64_t ApproximateSize(std::string_view b, std::string_view e) override {
    return kv_.ApproximateSize(b, e);
  }
  void CompactRange(std::string_view b, std::string_view e) override { kv_.CompactRange(b, e); }
  std::string_view BackendName() const override { return "counting"; }

  int seeks = 0;

 private:
  class Iter final : public KVIterator {
   public:
    Iter(std::unique_ptr<KVIterator> it, int* seeks) : it_(std::move(it)), seeks_(seeks) {}
    bool Valid() const override { return it_->Valid(); }
    void SeekToFirst() override { ++*seeks_, it_->SeekToFirst(); }
    void SeekToLast() override { ++*seeks_, it_->SeekToLast(); }
    void Seek(std::string_view t) override { ++*seeks_, it_->Seek(t); }
    void SeekForPrev(std::string_view t) override { ++*seeks_, it_->SeekForPrev(t); }
    void Next() override { it_->Next(); }
    void Prev() override { it_->Prev(); }
    std::string_view key() const override { return it_->key(); }
    std::string_view value() const override { return it_->value(); }
    Status status() const override { return it_->status(); }

   private:
    std::unique_ptr<KVIterator> it_;
    int* seeks_;
  };
  MemoryStore kv_;
};

// Records the order bodies arrive in and their bytes.
struct OrderCollect : AttachmentBodyVisitor {
  std::vector<size_t> order;
  std::map<size_t, std::string> got;
  Status Begin(size_t i, const AttachmentBodyInfo&, bool* read) override {
    order.push_back(i);
    *read = true;
    return Status::OK();
  }
  Status Piece(size_t i, std::string_view bytes) override {
    if (order.empty() || order.back() != i) return Status::Internal("pieces out of their body");
    got[i].append(bytes);
    return Status::OK();
  }
  Status End(size_t) override { return Status::OK(); }
};

TEST(AttachmentStoreKeyOrderTest, ReadsInKeyOrderSteppingBetweenAdjacentBodies) {
  SeekCountingStore kv;
  keys::DatabaseKeys keys(7);
  AttachmentStore store(&kv, &keys);
  auto put = [&](const std::string& digest, const std::string& data) {
    ASSERT_TRUE(store.Put(KVWriteOptions(), digest, data, false, data.size(), Xxh128Hex(data)).ok());
  };
  const std::string two_chunks = testing::Noise(AttachmentStore::kChunkBytes + 5, 4);
  put("md5-a", "body a");
  put("md5-b", two_chunks);
  put("md5-c", "");
  put("md5-d", "body d");
  // Asked out of order, with a repeat: visited in key order, the repeat
  // read again; one seek for the first body, steps for the rest.
  OrderCollect c;
  ASSERT_TRUE(store.ReadMany(KVReadOptions(), {"md5-d", "md5-b", "md5-a", "md5-c", "md5-b"}, &c,
                             AttachmentStore::BodyOrder::kKeyOrder).ok());
  EXPECT_EQ(c.order, (std::vector<size_t>{2, 1, 4, 3, 0}));
  EXPECT_EQ(c.got[2], "body a");
  EXPECT_EQ(c.got[1], two_chunks);
  EXPECT_EQ(c.got[4], two_chunks);
  EXPECT_EQ(c.got[3], "");
  EXPECT_EQ(c.got[0], "body d");
  EXPECT_EQ(kv.seeks, 2);  // md5-a, and md5-b again

  // A body between two asked for: the step lands on it, and the reads seek
  // from then on.
  kv.seeks = 0;
  OrderCollect gap;
  ASSERT_TRUE(store.ReadMany(KVReadOptions(), {"md5-a", "md5-c", "md5-d"}, &gap,
                             AttachmentStore::BodyOrder::kKeyOrder).ok());
  EXPECT_EQ(gap.order, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(gap.got[1], "");
  EXPECT_EQ(gap.got[2], "body d");
  EXPECT_EQ(kv.seeks, 3);

  // A missing body is kNotFound whether a step or a seek finds it gone.
  OrderCollect missing;
  EXPECT_TRUE(store.ReadMany(KVReadOptions(), {"md5-a", "md5-aa"}, &missing,
                             AttachmentStore::BodyOrder::kKeyOrder).IsNotFound());
  EXPECT_TRUE(store.ReadMany(KVReadOptions(), {"md5-d", "md5-e"}, &missing,
                             AttachmentStore::BodyOrder::kKeyOrder).IsNotFound());
  EXPECT_TRUE(store.ReadMany(KVReadOptions(), {"md5-0"}, &missing,
                             AttachmentStore::BodyOrder::kKeyOrder).IsNotFound());
}

TEST_F(AttachmentStoreTest, ChunkedBodyReadsWholeAndInRanges) {
  const std::string data = testing::Noise(3 * AttachmentStore::kChunkBytes + 123, 1);
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

// Decodes `gz` fed `piece` bytes at a time; false when the inflater refuses.
bool Inflate(std::string_view gz, size_t piece, std::string* out, bool* done) {
  GzipInflater inflater;
  bool stopped = false;
  for (size_t at = 0; at < gz.size(); at += piece) {
    if (!inflater.Feed(gz.substr(at, piece), [&](std::string_view d) {
          out->append(d);
          return true;
        }, &stopped)) {
      return false;
    }
  }
  *done = inflater.done();
  return true;
}

// As gzip -d and node: members one after another (`cat a.gz b.gz`) decode to
// both contents, whatever the pieces they arrive in; bytes after the last
// member that do not start another are ignored; a second member cut short is
// not done.
TEST(GzipInflater, DecodesEveryMemberOfAMultiMemberStream) {
  const std::string a = testing::Noise(100000, 7);
  const std::string b(70000, 'b');
  std::string ga, gb;
  ASSERT_TRUE(GzipCompress(a, &ga));
  ASSERT_TRUE(GzipCompress(b, &gb));
  const std::string both = ga + gb;
  for (size_t piece : {size_t{1}, size_t{7}, ga.size(), both.size()}) {
    std::string out;
    bool done = false;
    ASSERT_TRUE(Inflate(both, piece, &out, &done)) << piece;
    EXPECT_TRUE(done) << piece;
    EXPECT_EQ(out.size(), a.size() + b.size()) << piece;
    EXPECT_TRUE(out == a + b) << piece;
  }
  std::string out;
  bool done = false;
  ASSERT_TRUE(Inflate(ga + std::string(10, '\0'), 4096, &out, &done));
  EXPECT_TRUE(done);
  EXPECT_TRUE(out == a);
  out.clear();
  ASSERT_TRUE(Inflate(ga + gb.substr(0, gb.size() / 2), 4096, &out, &done));
  EXPECT_FALSE(done);
}

TEST_F(AttachmentStoreTest, EmptyBody) {
  Put("md5-e", "", false);
  EXPECT_EQ(Range("md5-e", 0, UINT64_MAX), "");
}

TEST_F(AttachmentStoreTest, SecondPutOfTheSameDigestStoresNothingAndRefusesOtherBytes) {
  const std::string data = testing::Noise(1000, 2);
  Put("md5-x", data, false);
  const uint64_t size = store_.ApproximateSize();
  Put("md5-x", data, false);
  EXPECT_EQ(store_.ApproximateSize(), size);
  const std::string other = testing::Noise(1000, 3);
  Status s = store_.Put(KVWriteOptions(), "md5-x", other, false, other.size(), Xxh128Hex(other));
  EXPECT_EQ(s.code(), Status::Code::kBadRequest);
  EXPECT_EQ(Range("md5-x", 0, UINT64_MAX), data);
}

TEST_F(AttachmentStoreTest, CollectGarbageKeepsLiveAndPendingBodies) {
  Put("md5-live", testing::Noise(AttachmentStore::kChunkBytes * 2, 4), false);
  Put("md5-pending", testing::Noise(10, 5), false);
  Put("md5-dead", testing::Noise(AttachmentStore::kChunkBytes * 2, 6), false);
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
  EXPECT_EQ(Range("md5-live", 0, UINT64_MAX), testing::Noise(AttachmentStore::kChunkBytes * 2, 4));
}

// Writes `data` through an AttachmentBodyWriter in pieces of `piece` bytes.
std::string Stream(AttachmentStore* store, const std::string& name, const std::string& data,
                   bool gzip, size_t piece) {
  AttachmentBodyWriter w(store, KVWriteOptions(), name, gzip);
  for (size_t off = 0; off < data.size(); off += piece) {
    EXPECT_TRUE(w.Write(std::string_view(data).substr(off, piece)).ok());
  }
  std::string digest;
  uint64_t length = 0;
  EXPECT_TRUE(w.Close(&digest, &length).ok());
  EXPECT_EQ(length, data.size());
  EXPECT_TRUE(w.Finish().ok());
  return digest;
}

TEST_F(AttachmentStoreTest, StreamedBodiesAreChunkedUnderTheirNameAndReadBack) {
  const std::string big = testing::Noise(2 * AttachmentStore::kChunkBytes + 12345, 8);
  const std::string digest = Stream(&store_, "~a", big, false, 70001);
  EXPECT_EQ(digest, "md5-" + Base64Encode(Md5Raw(big)));
  AttachmentBodyInfo info;
  ASSERT_TRUE(store_.Stat(KVReadOptions(), digest, &info).ok());
  EXPECT_EQ(info.chunk_name, "~a");
  EXPECT_FALSE(info.gzip);
  EXPECT_EQ(info.length, big.size());
  EXPECT_EQ(info.content_hash, Xxh128Hex(big));
  // Three chunks under "~a" and the header under the digest.
  EXPECT_EQ(store_.CountKeys(), 4u);
  EXPECT_EQ(Range(digest, 0, UINT64_MAX), big);
  EXPECT_EQ(Range(digest, AttachmentStore::kChunkBytes - 3, 10),
            big.substr(AttachmentStore::kChunkBytes - 3, 10));
  std::string all;
  ASSERT_TRUE(store_.ReadAll(KVReadOptions(), digest, &all).ok());
  EXPECT_EQ(all, big);

  // gzip, compressed as it came; ReadMany over a plain and a streamed body.
  std::string text;
  while (text.size() < 3 * AttachmentStore::kChunkBytes) text += "streamed compressible text ";
  const std::string gz_digest = Stream(&store_, "~b", text, true, 4096);
  ASSERT_TRUE(store_.Stat(KVReadOptions(), gz_digest, &info).ok());
  EXPECT_TRUE(info.gzip);
  EXPECT_LT(info.encoded_length, text.size() / 10);
  EXPECT_EQ(Range(gz_digest, 100, 1000), text.substr(100, 1000));
  Put("md5-plain", "plain", false);
  struct Collect : AttachmentBodyVisitor {
    std::vector<std::string> got;
    Status Begin(size_t, const AttachmentBodyInfo&, bool* read) override {
      got.emplace_back();
      *read = true;
      return Status::OK();
    }
    Status Piece(size_t i, std::string_view b) override {
      got[i].append(b);
      return Status::OK();
    }
    Status End(size_t) override { return Status::OK(); }
  } collect;
  ASSERT_TRUE(store_.ReadMany(KVReadOptions(), {gz_digest, "md5-plain", digest}, &collect).ok());
  ASSERT_EQ(collect.got.size(), 3u);
  EXPECT_EQ(collect.got[0], text);
  EXPECT_EQ(collect.got[1], "plain");
  EXPECT_EQ(collect.got[2], big);
}

TEST_F(AttachmentStoreTest, StreamedBodyAlreadyStoredKeepsOneCopy) {
  const std::string data = testing::Noise(AttachmentStore::kChunkBytes + 10, 9);
  const std::string digest = "md5-" + Base64Encode(Md5Raw(data));
  Put(digest, data, false);
  const uint64_t keys = store_.CountKeys();
  EXPECT_EQ(Stream(&store_, "~c", data, false, 1000), digest);
  EXPECT_EQ(store_.CountKeys(), keys);
  AttachmentBodyInfo info;
  ASSERT_TRUE(store_.Stat(KVReadOptions(), digest, &info).ok());
  EXPECT_TRUE(info.chunk_name.empty());
  EXPECT_EQ(Range(digest, 0, UINT64_MAX), data);
  // Empty bodies too, and they stay identity even for a compressible type.
  const std::string empty = Stream(&store_, "~d", "", true, 1);
  ASSERT_TRUE(store_.Stat(KVReadOptions(), empty, &info).ok());
  EXPECT_FALSE(info.gzip);
  EXPECT_EQ(info.length, 0u);
  EXPECT_EQ(Range(empty, 0, UINT64_MAX), "");
}

TEST_F(AttachmentStoreTest, AnUnfinishedStreamedBodyLeavesNoKeys) {
  const std::string data = testing::Noise((AttachmentStore::kChunksPerBatch + 1) *
                                     AttachmentStore::kChunkBytes, 10);
  {
    AttachmentBodyWriter w(&store_, KVWriteOptions(), "~e", false);
    ASSERT_TRUE(w.Write(data).ok());
    // Written as they came, a batch of chunks at a time.
    EXPECT_EQ(store_.CountKeys(), AttachmentStore::kChunksPerBatch);
  }
  EXPECT_EQ(store_.CountKeys(), 0u);
  {
    // Closed (every chunk written) but never finished: no header either.
    AttachmentBodyWriter w(&store_, KVWriteOptions(), "~f", true);
    ASSERT_TRUE(w.Write(data).ok());
    std::string digest;
    uint64_t length;
    ASSERT_TRUE(w.Close(&digest, &length).ok());
  }
  EXPECT_EQ(store_.CountKeys(), 0u);
}

TEST_F(AttachmentStoreTest, CollectGarbageKeepsTheChunksOfKeptStreamedBodies) {
  const std::string live = testing::Noise(AttachmentStore::kChunkBytes + 1, 11);
  const std::string dead = testing::Noise(AttachmentStore::kChunkBytes + 2, 12);
  const std::string live_digest = Stream(&store_, "~live", live, false, 100000);
  const std::string dead_digest = Stream(&store_, "~dead", dead, false, 100000);
  // Chunks of an upload in progress (pinned by name) and of a crashed one.
  ASSERT_TRUE(kv_.Put(KVWriteOptions(), keys_.AttachmentChunk("~busy", 0), "b").ok());
  ASSERT_TRUE(kv_.Put(KVWriteOptions(), keys_.AttachmentChunk("~crashed", 0), "c").ok());
  ASSERT_TRUE(store_.CollectGarbage(KVWriteOptions(), {live_digest}, {"~busy"}).ok());
  EXPECT_EQ(Range(live_digest, 0, UINT64_MAX), live);
  AttachmentBodyInfo info;
  EXPECT_TRUE(store_.Stat(KVReadOptions(), dead_digest, &info).IsNotFound());
  std::string v;
  EXPECT_TRUE(kv_.Get(KVReadOptions(), keys_.AttachmentChunk("~dead", 0), &v).IsNotFound());
  EXPECT_TRUE(kv_.Get(KVReadOptions(), keys_.AttachmentChunk("~crashed", 0), &v).IsNotFound());
  EXPECT_TRUE(kv_.Get(KVReadOptions(), keys_.AttachmentChunk("~busy", 0), &v).ok());
  // Live header + 2 chunks, and the busy chunk.
  EXPECT_EQ(store_.CountKeys(), 4u);
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
