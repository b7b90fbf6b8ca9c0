// Attachments in the document database (storage/database_attachments.cc), on
// both backends: inline bodies, stubs, the read options, standalone puts and
// reads, replication writes, dedup and compaction.
#include <algorithm>

#include <gtest/gtest.h>

#include "settee/database.h"
#include "settee/store.h"
#include "storage/attachment_store.h"
#include "storage/database_impl.h"
#include "tests/storage/store_test_util.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {
namespace {

using Backend = StoreOptions::Backend;

std::string AllBytes(size_t repeat = 1) {
  std::string s;
  for (size_t r = 0; r < repeat; ++r) {
    for (int i = 0; i < 256; ++i) s.push_back(static_cast<char>(i));
  }
  return s;
}

using testing::Noise;

std::string Md5Digest(std::string_view data) { return "md5-" + Base64Encode(Md5Raw(data)); }

std::string Str(const json::Value& v, const char* member) {
  auto m = v.FindMember(member);
  return m != v.MemberEnd() && m->value.IsString() ? std::string(json::View(m->value)) : "";
}

class DatabaseAttachmentsTest : public ::testing::TestWithParam<Backend> {
 protected:
  DatabaseAttachmentsTest() : store_(GetParam()) {
    auto db = store_->CreateDatabase("test");
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    db_ = *db;
  }

  json::Document Doc(std::string_view id, const GetOptions& options = {}) {
    auto r = db_->Get(id, options);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    json::Document d;
    EXPECT_TRUE(json::Parse(r.ok() ? *r : "{}", &d).ok());
    return d;
  }
  std::string Put(std::string_view id, std::string_view json) {
    auto r = db_->Put(id, json);
    EXPECT_TRUE(r.ok()) << r.status().ToString() << " for " << json;
    return r.ok() ? r->rev : "";
  }
  std::string ReadAtt(std::string_view id, std::string_view name, std::string_view rev = {},
                      uint64_t offset = 0, uint64_t count = UINT64_MAX) {
    auto reader = db_->OpenAttachment(id, name, rev);
    EXPECT_TRUE(reader.ok()) << reader.status().ToString();
    if (!reader.ok()) return {};
    std::string out;
    EXPECT_TRUE((*reader)->Read(offset, count, [&](std::string_view p) {
      out.append(p);
      return true;
    }).ok());
    return out;
  }
  // Bytes of stored attachment bodies: the memory store's exact size of the
  // range, and for LevelDB (whose estimate counts only flushed file blocks)
  // the keys and values themselves.
  uint64_t AttachmentBytes() {
    auto* db = static_cast<DatabaseImpl*>(db_.get());
    if (GetParam() == Backend::kMemory) return db->attachment_store().ApproximateSize();
    keys::DatabaseKeys keys(db->db_id());
    KVIteratorOptions io;
    io.lower_bound = keys.KindPrefix(keys::kAttachmentKind);
    io.upper_bound = keys::PrefixEnd(io.lower_bound);
    auto it = db->kv()->NewIterator(io);
    uint64_t total = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) total += it->key().size() + it->value().size();
    return total;
  }

  testing::TempStore store_;
  std::shared_ptr<Database> db_;
};

TEST_P(DatabaseAttachmentsTest, InlineBodyRoundTripsEveryByteValue) {
  const std::string data = AllBytes(4);
  const std::string rev =
      Put("a", R"({"x":1,"_attachments":{"bin":{"content_type":"application/octet-stream","data":")" +
                   Base64Encode(data) + "\"}}}");
  json::Document stub = Doc("a");
  const json::Value& att = stub["_attachments"]["bin"];
  EXPECT_EQ(json::View(att["content_type"]), "application/octet-stream");
  EXPECT_EQ(json::View(att["digest"]), Md5Digest(data));
  EXPECT_EQ(att["length"].GetUint64(), data.size());
  EXPECT_EQ(att["revpos"].GetUint64(), 1u);
  EXPECT_TRUE(att["stub"].GetBool());
  EXPECT_FALSE(att.HasMember("data"));
  EXPECT_EQ(stub["x"].GetInt(), 1);

  GetOptions with;
  with.attachments = true;
  json::Document full = Doc("a", with);
  const json::Value& inline_att = full["_attachments"]["bin"];
  std::string decoded;
  ASSERT_TRUE(Base64Decode(json::View(inline_att["data"]), &decoded));
  EXPECT_EQ(decoded, data);
  EXPECT_FALSE(inline_att.HasMember("stub"));
  EXPECT_EQ(ReadAtt("a", "bin"), data);
  EXPECT_EQ(ReadAtt("a", "bin", rev), data);
}

TEST_P(DatabaseAttachmentsTest, StubsAreKeptAcrossEditsAndMissingStubsAre412) {
  std::string rev1 = Put("d", R"({"_attachments":{"a.txt":{"content_type":"text/plain","data":"aGVsbG8="}}})");
  // An edit with the stub keeps it, revpos unchanged.
  std::string rev2 = Put("d", R"({"_rev":")" + rev1 +
                                  R"(","v":2,"_attachments":{"a.txt":{"stub":true},"b":{"data":"d29ybGQ="}}})");
  json::Document d = Doc("d");
  EXPECT_EQ(d["_attachments"]["a.txt"]["revpos"].GetUint64(), 1u);
  EXPECT_EQ(d["_attachments"]["b"]["revpos"].GetUint64(), 2u);
  EXPECT_EQ(json::View(d["_attachments"]["b"]["content_type"]), "application/octet-stream");
  EXPECT_EQ(ReadAtt("d", "a.txt"), "hello");
  EXPECT_EQ(ReadAtt("d", "b"), "world");
  // A stub the parent lacks.
  auto bad = db_->Put("d", R"({"_rev":")" + rev2 + R"(","_attachments":{"zzz":{"stub":true}}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kMissingStub);
  // A stub on a new document.
  bad = db_->Put("new", R"({"_attachments":{"a":{"stub":true}}})");
  EXPECT_EQ(bad.status().code(), Status::Code::kMissingStub);
  // An edit without _attachments drops them.
  Put("d", R"({"_rev":")" + rev2 + R"("})");
  EXPECT_FALSE(Doc("d").HasMember("_attachments"));
  EXPECT_EQ(db_->OpenAttachment("d", "a.txt").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(ReadAtt("d", "a.txt", rev1), "hello");  // the old revision still has it
}

TEST_P(DatabaseAttachmentsTest, BadInlineDataIsRejectedAndNothingWritten) {
  auto r = db_->Put("x", R"({"_attachments":{"a":{"data":"not base64!"}}})");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kBadRequest);
  EXPECT_EQ(r.status().reason(), "Invalid attachment data for a");
  r = db_->Put("x", R"({"_attachments":{"_a":{"data":"aGVsbG8="}}})");
  EXPECT_EQ(r.status().code(), Status::Code::kBadRequest);
  r = db_->Put("x", R"({"_attachments":{"a":{"content_type":"text/plain"}}})");
  EXPECT_EQ(r.status().code(), Status::Code::kBadRequest);
  r = db_->Put("x", R"({"_attachments":[]})");
  EXPECT_EQ(r.status().code(), Status::Code::kBadRequest);
  EXPECT_EQ(db_->Get("x").status().code(), Status::Code::kNotFound);
  EXPECT_EQ(AttachmentBytes(), 0u);
}

TEST_P(DatabaseAttachmentsTest, CompressibleTypesAreStoredGzipAndServedDecoded) {
  std::string text;
  while (text.size() < 20000) text += "the quick brown fox " + std::to_string(text.size()) + "\n";
  Put("t", R"({"_attachments":{"t.txt":{"content_type":"text/plain","data":")" +
               Base64Encode(text) + "\"}}}");
  GetOptions info;
  info.att_encoding_info = true;
  json::Document d = Doc("t", info);
  const json::Value& att = d["_attachments"]["t.txt"];
  EXPECT_EQ(json::View(att["encoding"]), "gzip");
  EXPECT_LT(att["encoded_length"].GetUint64(), text.size());
  EXPECT_EQ(att["length"].GetUint64(), text.size());
  EXPECT_EQ(json::View(att["digest"]), Md5Digest(text));
  EXPECT_FALSE(Doc("t")["_attachments"]["t.txt"].HasMember("encoding"));
  EXPECT_EQ(ReadAtt("t", "t.txt"), text);
  EXPECT_EQ(ReadAtt("t", "t.txt", {}, 5000, 100), text.substr(5000, 100));
  auto reader = db_->OpenAttachment("t", "t.txt");
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->info().gzip);
}

TEST_P(DatabaseAttachmentsTest, AttsSinceSendsOnlyNewerBodies) {
  std::string rev1 = Put("s", R"({"_attachments":{"old":{"data":"b2xk"}}})");
  std::string rev2 = Put("s", R"({"_rev":")" + rev1 +
                                  R"(","_attachments":{"old":{"stub":true},"new":{"data":"bmV3"}}})");
  GetOptions o;
  o.attachments = true;
  o.atts_since = {rev1, "9-unknown"};
  json::Document d = Doc("s", o);
  EXPECT_TRUE(d["_attachments"]["old"]["stub"].GetBool());
  EXPECT_EQ(json::View(d["_attachments"]["new"]["data"]), "bmV3");
  o.atts_since = {rev2};
  d = Doc("s", o);
  EXPECT_TRUE(d["_attachments"]["new"]["stub"].GetBool());
  o.atts_since = {};
  d = Doc("s", o);
  EXPECT_EQ(json::View(d["_attachments"]["old"]["data"]), "b2xk");
}

// Collects what GetWithAttachments() hands out.
struct CollectingSink : AttachmentBodySink {
  std::vector<AttachmentInfo> atts;
  std::vector<std::string> bodies;
  std::vector<size_t> order;  // the index of each piece's body
  Status Entries(const std::vector<AttachmentInfo>& a) override {
    atts = a;
    bodies.assign(a.size(), "");
    return Status::OK();
  }
  Status Piece(size_t i, std::string_view bytes) override {
    if (order.empty() || order.back() != i) order.push_back(i);
    bodies[i].append(bytes);
    return Status::OK();
  }
};

TEST_P(DatabaseAttachmentsTest, GetWithAttachmentsHandsOutEntriesAndDecodedBodies) {
  std::string text;
  while (text.size() < 30000) text += "line " + std::to_string(text.size()) + "\n";
  const std::string big = AllBytes(1200);  // over one 256 KiB chunk
  const std::string rev1 = Put("w", R"({"x":[1,2],"_attachments":{"t.txt":{"content_type":"text/plain","data":")" +
                                        Base64Encode(text) + R"("},"big":{"data":")" +
                                        Base64Encode(big) + R"("},"empty":{"data":""}}})");
  const std::string rev2 = Put("w", R"({"_rev":")" + rev1 +
                                        R"(","x":3,"_attachments":{"t.txt":{"stub":true},"big":{"stub":true},"empty":{"stub":true},"new":{"data":"bmV3"}}})");
  GetOptions o;
  o.attachments = true;
  o.att_encoding_info = true;
  CollectingSink sink;
  auto json = db_->GetWithAttachments("w", o, &sink);
  ASSERT_TRUE(json.ok()) << json.status().ToString();
  // The document without its _attachments member.
  json::Document d;
  ASSERT_TRUE(json::Parse(*json, &d).ok());
  EXPECT_FALSE(d.HasMember("_attachments"));
  EXPECT_EQ(json::View(d["_rev"]), rev2);
  EXPECT_EQ(d["x"].GetInt(), 3);
  ASSERT_EQ(sink.atts.size(), 4u);
  EXPECT_EQ(sink.atts[0].name, "t.txt");
  EXPECT_TRUE(sink.atts[0].gzip);
  EXPECT_LT(sink.atts[0].encoded_length, text.size());
  EXPECT_EQ(sink.atts[0].revpos, 1u);
  EXPECT_EQ(sink.atts[3].name, "new");
  EXPECT_EQ(sink.atts[3].revpos, 2u);
  EXPECT_EQ(sink.atts[1].digest, Md5Digest(big));
  for (const AttachmentInfo& a : sink.atts) EXPECT_TRUE(a.follows) << a.name;
  EXPECT_EQ(sink.bodies[0], text);  // decoded from gzip
  EXPECT_EQ(sink.bodies[1], big);
  EXPECT_EQ(sink.bodies[2], "");
  EXPECT_EQ(sink.bodies[3], "new");
  // Each body in one run, in the order of their keys (the digests).
  std::vector<size_t> key_order{0, 1, 3};
  std::sort(key_order.begin(), key_order.end(),
            [&](size_t a, size_t b) { return sink.atts[a].digest < sink.atts[b].digest; });
  EXPECT_EQ(sink.order, key_order);

  // atts_since: only the body added after rev1 follows; an old revision.
  o.atts_since = {rev1};
  CollectingSink since;
  ASSERT_TRUE(db_->GetWithAttachments("w", o, &since).ok());
  EXPECT_FALSE(since.atts[0].follows);
  EXPECT_TRUE(since.atts[3].follows);
  EXPECT_EQ(since.bodies[0], "");
  EXPECT_EQ(since.bodies[3], "new");
  o.atts_since.clear();
  o.rev = rev1;
  CollectingSink old;
  ASSERT_TRUE(db_->GetWithAttachments("w", o, &old).ok());
  ASSERT_EQ(old.atts.size(), 3u);
  EXPECT_EQ(old.bodies[1], big);

  // The same as Get() with inline data, whatever the options.
  GetOptions inline_opts;
  inline_opts.attachments = true;
  json::Document full = Doc("w", inline_opts);
  std::string decoded;
  ASSERT_TRUE(Base64Decode(json::View(full["_attachments"]["big"]["data"]), &decoded));
  EXPECT_EQ(decoded, big);
  ASSERT_TRUE(Base64Decode(json::View(full["_attachments"]["t.txt"]["data"]), &decoded));
  EXPECT_EQ(decoded, text);
  EXPECT_EQ(json::View(full["_attachments"]["empty"]["data"]), "");

  CollectingSink missing;
  EXPECT_TRUE(db_->GetWithAttachments("nope", inline_opts, &missing).status().IsNotFound());
}

TEST_P(DatabaseAttachmentsTest, StandalonePutReplaceDeleteAndConflicts) {
  const std::string data = AllBytes(2);
  auto r = db_->PutAttachment("doc", "dir/ünï.bin", "", "image/png", data);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string rev1 = r->rev;
  EXPECT_EQ(ReadAtt("doc", "dir/ünï.bin"), data);
  // A second put without a rev: the doc exists.
  EXPECT_EQ(db_->PutAttachment("doc", "b", "", "", "x").status().code(), Status::Code::kConflict);
  // A rev that does not exist, and a document that does not exist with a rev.
  EXPECT_EQ(db_->PutAttachment("doc", "b", "1-abc", "", "x").status().code(),
            Status::Code::kConflict);
  EXPECT_EQ(db_->PutAttachment("nodoc", "b", rev1, "", "x").status().code(),
            Status::Code::kConflict);
  r = db_->PutAttachment("doc", "b", rev1, "", "");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string rev2 = r->rev;
  EXPECT_EQ(ReadAtt("doc", "b"), "");
  // The old revision is no longer a leaf.
  EXPECT_EQ(db_->PutAttachment("doc", "c", rev1, "", "x").status().code(), Status::Code::kConflict);
  json::Document d = Doc("doc");
  EXPECT_EQ(d["_attachments"]["dir/ünï.bin"]["revpos"].GetUint64(), 1u);
  EXPECT_EQ(d["_attachments"]["b"]["revpos"].GetUint64(), 2u);
  EXPECT_EQ(json::View(d["_attachments"]["b"]["content_type"]), "application/octet-stream");

  EXPECT_EQ(db_->DeleteAttachment("doc", "nope", rev2).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(db_->DeleteAttachment("doc", "dir/ünï.bin", rev1).status().code(),
            Status::Code::kConflict);
  EXPECT_EQ(db_->DeleteAttachment("doc", "b", "").status().code(), Status::Code::kConflict);
  r = db_->DeleteAttachment("doc", "b", rev2);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  d = Doc("doc");
  EXPECT_FALSE(d["_attachments"].HasMember("b"));
  EXPECT_TRUE(d["_attachments"].HasMember("dir/ünï.bin"));
  EXPECT_EQ(ReadAtt("doc", "b", rev2), "");
  EXPECT_EQ(db_->OpenAttachment("doc", "b").status().reason(), "Document is missing attachment");
  EXPECT_EQ(db_->OpenAttachment("zz", "b").status().reason(), "missing");
  // _design documents take attachments too.
  ASSERT_TRUE(db_->PutAttachment("_design/app", "index.html", "", "text/html", "<p>hi</p>").ok());
  EXPECT_EQ(ReadAtt("_design/app", "index.html"), "<p>hi</p>");
}

TEST_P(DatabaseAttachmentsTest, TwoDocumentsWithTheSameBytesStoreOneBody) {
  const std::string data = Noise(200000, 1);
  ASSERT_TRUE(db_->PutAttachment("one", "a", "", "application/octet-stream", data).ok());
  const uint64_t after_one = AttachmentBytes();
  EXPECT_GE(after_one, data.size());
  ASSERT_TRUE(db_->PutAttachment("two", "b", "", "application/octet-stream", data).ok());
  EXPECT_EQ(AttachmentBytes(), after_one);
  EXPECT_EQ(ReadAtt("two", "b"), data);
}

TEST_P(DatabaseAttachmentsTest, CompactionFreesBodiesNoRevisionNames) {
  const std::string kept = Noise(50000, 2), dropped = Noise(60000, 3);
  auto r = db_->PutAttachment("c", "keep", "", "", kept);
  ASSERT_TRUE(r.ok());
  r = db_->PutAttachment("c", "drop", r->rev, "", dropped);
  ASSERT_TRUE(r.ok());
  r = db_->DeleteAttachment("c", "drop", r->rev);
  ASSERT_TRUE(r.ok());
  // Also a document deleted outright.
  auto g = db_->PutAttachment("gone", "x", "", "", Noise(70000, 4));
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(db_->Delete("gone", g->rev).ok());
  const uint64_t before = AttachmentBytes();
  EXPECT_GE(before, kept.size() + dropped.size() + 70000);
  ASSERT_TRUE(db_->Compact().ok());
  const uint64_t after = AttachmentBytes();
  EXPECT_GE(after, kept.size());
  EXPECT_LT(after, kept.size() + 10000);
  AttachmentBodyInfo info;
  auto& bodies = static_cast<DatabaseImpl*>(db_.get())->attachment_store();
  EXPECT_TRUE(bodies.Stat(KVReadOptions(), Md5Digest(dropped), &info).IsNotFound());
  EXPECT_TRUE(bodies.Stat(KVReadOptions(), Md5Digest(kept), &info).ok());
  EXPECT_EQ(ReadAtt("c", "keep"), kept);
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(AttachmentBytes(), after);
}

// Writes `data` through NewAttachmentWriter() in pieces of `piece` bytes.
Result<DocUpdateResult> StreamAtt(Database& db, std::string_view id, std::string_view name,
                                  std::string_view rev, std::string_view type,
                                  const std::string& data, size_t piece) {
  auto w = db.NewAttachmentWriter(id, name, rev, type);
  if (!w.ok()) return w.status();
  for (size_t off = 0; off < data.size(); off += piece) {
    Status s = (*w)->Write(std::string_view(data).substr(off, piece));
    if (!s.ok()) return s;
  }
  EXPECT_EQ((*w)->length(), data.size());
  return (*w)->Commit();
}

TEST_P(DatabaseAttachmentsTest, StreamedWriterPutsAttachmentsAsPutAttachmentDoes) {
  auto* impl = static_cast<DatabaseImpl*>(db_.get());
  const std::string big = Noise(3 * AttachmentStore::kChunkBytes + 17, 20);
  auto r = StreamAtt(*db_, "s", "big.bin", "", "", big, 65536);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAtt("s", "big.bin"), big);
  json::Document d = Doc("s");
  EXPECT_EQ(json::View(d["_attachments"]["big.bin"]["digest"]), Md5Digest(big));
  EXPECT_EQ(d["_attachments"]["big.bin"]["length"].GetUint64(), big.size());
  EXPECT_EQ(json::View(d["_attachments"]["big.bin"]["content_type"]), "application/octet-stream");
  // A text type is stored gzip and served decoded; inline reads see it too.
  std::string text;
  while (text.size() < 300000) text += "some text to compress ";
  r = StreamAtt(*db_, "s", "t.txt", r->rev, "text/plain", text, 1000);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto reader = db_->OpenAttachment("s", "t.txt");
  ASSERT_TRUE(reader.ok());
  EXPECT_TRUE((*reader)->info().gzip);
  EXPECT_EQ(ReadAtt("s", "t.txt"), text);
  GetOptions with_bodies;
  with_bodies.attachments = true;
  d = Doc("s", with_bodies);
  std::string decoded;
  ASSERT_TRUE(Base64Decode(json::View(d["_attachments"]["t.txt"]["data"]), &decoded));
  EXPECT_EQ(decoded, text);
  ASSERT_TRUE(Base64Decode(json::View(d["_attachments"]["big.bin"]["data"]), &decoded));
  EXPECT_EQ(decoded, big);
  // The same bytes again, as another document's: stored once.
  const uint64_t keys = impl->attachment_store().CountKeys();
  ASSERT_TRUE(StreamAtt(*db_, "s2", "copy", "", "", big, 100000).ok());
  EXPECT_EQ(impl->attachment_store().CountKeys(), keys);
  EXPECT_EQ(ReadAtt("s2", "copy"), big);
  // Compaction keeps what revisions name, then frees a body none names.
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(ReadAtt("s", "big.bin"), big);
  EXPECT_EQ(ReadAtt("s", "t.txt"), text);
  ASSERT_TRUE(db_->Delete("s2", Str(Doc("s2"), "_rev")).ok());
  r = db_->DeleteAttachment("s", "big.bin", Str(Doc("s"), "_rev"));
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(db_->Compact().ok());
  EXPECT_EQ(ReadAtt("s", "t.txt"), text);
  AttachmentBodyInfo info;
  EXPECT_TRUE(impl->attachment_store().Stat(KVReadOptions(), Md5Digest(big), &info).IsNotFound());
  EXPECT_LT(impl->attachment_store().CountKeys(), 4u);
}

TEST_P(DatabaseAttachmentsTest, StreamedWriterChecksBeforeTheBodyAndLeavesNothingWhenDropped) {
  auto* impl = static_cast<DatabaseImpl*>(db_.get());
  const std::string rev = Put("d", R"({"a":1})");
  EXPECT_EQ(db_->NewAttachmentWriter("d", "x", "", "").status().code(), Status::Code::kConflict);
  EXPECT_EQ(db_->NewAttachmentWriter("d", "x", "1-abc", "").status().code(),
            Status::Code::kConflict);
  EXPECT_EQ(db_->NewAttachmentWriter("nodoc", "x", rev, "").status().code(),
            Status::Code::kConflict);
  EXPECT_EQ(db_->NewAttachmentWriter("d", "_x", rev, "").status().code(),
            Status::Code::kBadRequest);
  EXPECT_EQ(db_->NewAttachmentWriter("_local/d", "x", "", "").status().code(),
            Status::Code::kBadRequest);
  {
    auto w = db_->NewAttachmentWriter("d", "x", rev, "");
    ASSERT_TRUE(w.ok()) << w.status().ToString();
    ASSERT_TRUE((*w)->Write(Noise((AttachmentStore::kChunksPerBatch + 1) *
                                  AttachmentStore::kChunkBytes, 21)).ok());
    EXPECT_GT(impl->attachment_store().CountKeys(), 0u);
  }  // dropped: an upload cut short
  EXPECT_EQ(impl->attachment_store().CountKeys(), 0u);
  EXPECT_EQ(Str(Doc("d"), "_rev"), rev);
  // The document changed while the body was being written: 409 at commit.
  auto w = db_->NewAttachmentWriter("d", "x", rev, "");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Write("late").ok());
  ASSERT_TRUE(db_->Put("d", R"({"_rev":")" + rev + R"(","a":2})").ok());
  EXPECT_EQ((*w)->Commit().status().code(), Status::Code::kConflict);
  EXPECT_FALSE(Doc("d").HasMember("_attachments"));
}

TEST_P(DatabaseAttachmentsTest, ReplicatedWritesKeepDigestsRevposAndResolveStubs) {
  const std::string data = AllBytes();
  UpdateOptions replicated;
  replicated.new_edits = false;
  auto r = db_->Put("rep", R"({"_rev":"1-aaa","_attachments":{"a":{"content_type":"x/y","revpos":1,"digest":"md5-peerdigest","data":")" +
                               Base64Encode(data) + "\"}}}",
                    replicated);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  r = db_->Put("rep", R"({"_revisions":{"start":2,"ids":["bbb","aaa"]},"_attachments":{"a":{"stub":true,"revpos":1,"digest":"md5-peerdigest"}}})",
               replicated);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  json::Document d = Doc("rep");
  EXPECT_EQ(json::View(d["_rev"]), "2-bbb");
  EXPECT_EQ(json::View(d["_attachments"]["a"]["digest"]), "md5-peerdigest");
  EXPECT_EQ(d["_attachments"]["a"]["revpos"].GetUint64(), 1u);
  EXPECT_EQ(ReadAtt("rep", "a"), data);
  // A stub whose ancestor this database lacks.
  r = db_->Put("rep2", R"({"_revisions":{"start":2,"ids":["ccc","ddd"]},"_attachments":{"a":{"stub":true}}})",
               replicated);
  EXPECT_EQ(r.status().code(), Status::Code::kMissingStub);
}

TEST_P(DatabaseAttachmentsTest, BulkDocsBulkGetAndOpenRevsCarryAttachments) {
  const std::string data = AllBytes(3);
  std::vector<DocUpdateResult> results;
  const std::string b64 = Base64Encode(data);
  // Bad data in one document refuses the whole batch, as any document that
  // does not parse does: nothing is written.
  Status bad = db_->BulkDocsArray(R"([{"_id":"b1","_attachments":{"x":{"data":")" + b64 +
                                      R"("}}},{"_id":"b2","_attachments":{"x":{"data":"%%%"}}}])",
                                  UpdateOptions(), &results);
  EXPECT_EQ(bad.code(), Status::Code::kBadRequest);
  EXPECT_EQ(bad.reason(), "Invalid attachment data for x");
  EXPECT_EQ(db_->Get("b1").status().code(), Status::Code::kNotFound);
  ASSERT_TRUE(db_->BulkDocsArray(R"([{"_id":"b1","_attachments":{"x":{"data":")" + b64 +
                                     R"("}}},{"_id":"b3"}])",
                                 UpdateOptions(), &results)
                  .ok());
  ASSERT_EQ(results.size(), 2u);
  EXPECT_TRUE(results[0].status.ok());
  EXPECT_TRUE(results[1].status.ok());
  std::vector<BulkGetResult> got;
  BulkGetOptions bo;
  bo.attachments = true;
  ASSERT_TRUE(db_->BulkGet({{"b1", "", {}}}, bo, &got).ok());
  ASSERT_EQ(got.size(), 1u);
  json::Document d;
  ASSERT_TRUE(json::Parse(got[0].docs[0].doc, &d).ok());
  std::string decoded;
  ASSERT_TRUE(Base64Decode(json::View(d["_attachments"]["x"]["data"]), &decoded));
  EXPECT_EQ(decoded, data);
  std::vector<OpenRevResult> revs;
  GetOptions go;
  go.attachments = true;
  ASSERT_TRUE(db_->GetOpenRevs("b1", {}, go, &revs).ok());
  ASSERT_EQ(revs.size(), 1u);
  EXPECT_NE(revs[0].doc.find(b64), std::string::npos);
}

TEST_P(DatabaseAttachmentsTest, MultipartBodiesFillFollowsEntries) {
  const std::string a = AllBytes(), b = "second";
  auto r = db_->PutWithBodies("mp", R"({"_attachments":{"a":{"follows":true,"length":256,"content_type":"application/octet-stream"},"b":{"follows":true,"digest":")" +
                                        Md5Digest(b) + R"("}}})",
                              {a, b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAtt("mp", "a"), a);
  EXPECT_EQ(ReadAtt("mp", "b"), b);
  EXPECT_EQ(db_->PutWithBodies("mp2", R"({"_attachments":{"a":{"follows":true}}})", {}).status().code(),
            Status::Code::kBadRequest);
  EXPECT_EQ(db_->PutWithBodies("mp2", R"({"_attachments":{"a":{"follows":true,"digest":"md5-AAAAAAAAAAAAAAAAAAAAAA=="}}})", {"x"})
                .status()
                .code(),
            Status::Code::kBadRequest);
  // A part shorter or longer than its entry's length.
  EXPECT_EQ(db_->PutWithBodies("mp2", R"({"_attachments":{"a":{"follows":true,"length":5}}})", {"abc"})
                .status()
                .code(),
            Status::Code::kBadRequest);
  EXPECT_EQ(db_->Get("mp2").status().code(), Status::Code::kNotFound);
}

TEST_P(DatabaseAttachmentsTest, DocBodiesWriterStreamsBodiesInPieces) {
  const std::string a = Noise(600000, 7), text(300000, 't');
  std::string gz;
  ASSERT_TRUE(GzipCompress(text, &gz));
  UpdateOptions replicated;
  replicated.new_edits = false;
  auto w = db_->NewDocBodiesWriter(
      "s", R"({"_rev":"1-abc","_revisions":{"start":1,"ids":["abc"]},"_attachments":{)"
           R"("a":{"follows":true,"length":600000,"content_type":"application/octet-stream","revpos":1},)"
           R"("t":{"follows":true,"length":300000,"encoding":"gzip","content_type":"text/plain",)"
           R"("digest":"md5-peersOwnDigestOfTheGzip==","revpos":1}}})",
      replicated);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  for (const std::string* body : {&a, static_cast<const std::string*>(&gz)}) {
    ASSERT_TRUE((*w)->BeginBody().ok());
    for (size_t at = 0; at < body->size(); at += 7777) {
      ASSERT_TRUE((*w)->Write(std::string_view(*body).substr(at, 7777)).ok());
    }
    ASSERT_TRUE((*w)->EndBody().ok());
  }
  EXPECT_EQ((*w)->BeginBody().code(), Status::Code::kBadRequest);  // no third entry
  auto r = (*w)->Commit();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(ReadAtt("s", "a"), a);
  EXPECT_EQ(ReadAtt("s", "t"), text);
  json::Document d = Doc("s");
  EXPECT_EQ(Str(d["_attachments"]["a"], "digest"), Md5Digest(a));
  // A replicated body keeps the digest its peer gave it.
  EXPECT_EQ(Str(d["_attachments"]["t"], "digest"), "md5-peersOwnDigestOfTheGzip==");
}

TEST_P(DatabaseAttachmentsTest, DocBodiesWriterLeavesNothingUnlessCommitted) {
  auto* impl = static_cast<DatabaseImpl*>(db_.get());
  // Past one batch of chunks (kChunksPerBatch), so that some reach the store.
  const std::string a = Noise(5u << 20, 3);
  const std::string json = R"({"_attachments":{"a":{"follows":true,"length":5242880},"b":{"follows":true}}})";
  const uint64_t keys = impl->attachment_store().CountKeys();
  {  // Cut short inside a body.
    auto w = db_->NewDocBodiesWriter("cut", json);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->BeginBody().ok());
    ASSERT_TRUE((*w)->Write(std::string_view(a).substr(0, 4800000)).ok());
    EXPECT_GT(impl->attachment_store().CountKeys(), keys);  // chunks went out as they came
  }
  EXPECT_EQ(impl->attachment_store().CountKeys(), keys);
  {  // Every body ended, never committed.
    auto w = db_->NewDocBodiesWriter("cut", json);
    ASSERT_TRUE(w.ok());
    for (std::string_view body : {std::string_view(a), std::string_view("b")}) {
      ASSERT_TRUE((*w)->BeginBody().ok());
      ASSERT_TRUE((*w)->Write(body).ok());
      ASSERT_TRUE((*w)->EndBody().ok());
    }
  }
  EXPECT_EQ(impl->attachment_store().CountKeys(), keys);
  {  // A body missing at the commit.
    auto w = db_->NewDocBodiesWriter("cut", json);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->BeginBody().ok());
    ASSERT_TRUE((*w)->Write(a).ok());
    ASSERT_TRUE((*w)->EndBody().ok());
    EXPECT_EQ((*w)->Commit().status().code(), Status::Code::kBadRequest);
  }
  EXPECT_EQ(impl->attachment_store().CountKeys(), keys);
  {  // A gzip entry whose body is not gzip.
    auto w = db_->NewDocBodiesWriter("cut", R"({"_attachments":{"g":{"follows":true,"encoding":"gzip"}}})");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->BeginBody().ok());
    Status s = (*w)->Write("not gzip at all");
    if (s.ok()) s = (*w)->EndBody();
    EXPECT_EQ(s.code(), Status::Code::kBadRequest);
  }
  EXPECT_EQ(impl->attachment_store().CountKeys(), keys);
  EXPECT_EQ(db_->Get("cut").status().code(), Status::Code::kNotFound);
  // Bad JSON fails before any body is read.
  EXPECT_EQ(db_->NewDocBodiesWriter("cut", "{").status().code(), Status::Code::kBadRequest);
}

// A gzip "follows" body is bounded by what it decodes to, not by the bytes
// sent (a request limit): 4 MiB of zeros in ~4 KiB of gzip against a 1 MiB
// max_attachment_size is attachment_too_large, with nothing stored.
TEST_P(DatabaseAttachmentsTest, GzipBodiesAreBoundedByTheirDecodedSize) {
  testing::TempStore small(GetParam());
  small.options().max_attachment_size = 1u << 20;
  small.Reopen();
  auto db = small->CreateDatabase("bomb");
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  std::string gz;
  ASSERT_TRUE(GzipCompress(std::string(4u << 20, '\0'), &gz));
  ASSERT_LT(gz.size(), 64u << 10);
  auto w = (*db)->NewDocBodiesWriter("z", R"({"_attachments":{"z":{"follows":true,"encoding":"gzip"}}})");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_TRUE((*w)->BeginBody().ok());
  Status s = (*w)->Write(gz);
  if (s.ok()) s = (*w)->EndBody();
  EXPECT_EQ(s.code(), Status::Code::kAttachmentTooLarge) << s.ToString();
  EXPECT_EQ(s.reason(), "z");
  w->reset();
  EXPECT_EQ((*db)->Get("z").status().code(), Status::Code::kNotFound);
  // Under the limit the same route stores it.
  ASSERT_TRUE(GzipCompress(std::string(1000, 'x'), &gz));
  w = (*db)->NewDocBodiesWriter("ok", R"({"_attachments":{"x":{"follows":true,"encoding":"gzip"}}})");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->BeginBody().ok());
  ASSERT_TRUE((*w)->Write(gz).ok());
  ASSERT_TRUE((*w)->EndBody().ok());
  EXPECT_TRUE((*w)->Commit().ok());
}

TEST_P(DatabaseAttachmentsTest, LargeBodyIsReadInChunks) {
  // 64 MiB on the memory backend; LevelDB gets 16 MiB to keep the suite fast.
  const size_t size = GetParam() == Backend::kMemory ? (64u << 20) : (16u << 20);
  std::string data(size, '\0');
  for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>((i * 7919) >> 3);
  ASSERT_TRUE(db_->PutAttachment("big", "blob", "", "application/octet-stream", data).ok());
  auto reader = db_->OpenAttachment("big", "blob");
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->info().length, size);
  size_t offset = 0, max_piece = 0;
  bool same = true;
  ASSERT_TRUE((*reader)->Read(0, UINT64_MAX, [&](std::string_view p) {
    max_piece = std::max(max_piece, p.size());
    same = same && std::string_view(data).substr(offset, p.size()) == p;
    offset += p.size();
    return true;
  }).ok());
  EXPECT_TRUE(same);
  EXPECT_EQ(offset, size);
  EXPECT_LE(max_piece, AttachmentStore::kChunkBytes);
  EXPECT_EQ((*reader)->info().digest, Md5Digest(data));
}

INSTANTIATE_TEST_SUITE_P(Backends, DatabaseAttachmentsTest,
                         ::testing::Values(Backend::kMemory, Backend::kLevelDB),
                         testing::BackendName);

}  // namespace
}  // namespace settee
