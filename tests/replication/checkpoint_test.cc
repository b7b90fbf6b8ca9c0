#include "replication/checkpoint.h"

#include <gtest/gtest.h>

#include "util/json.h"

namespace settee::replication {
namespace {

CheckpointEntry Entry(const char* session, const char* seq) {
  CheckpointEntry e;
  e.session_id = session;
  e.start_time = e.end_time = Rfc1123Now();
  e.start_last_seq = "0";
  e.recorded_seq = seq;
  e.docs_read = 3;
  return e;
}

std::string Doc(const CheckpointEntry& e, const std::string& old_history, std::string* history) {
  *history = PrependHistory(e, old_history);
  return BuildCheckpoint(e, *history);
}

TEST(CheckpointTest, DocumentHasCouchDbShape) {
  std::string history;
  std::string doc = Doc(Entry("s1", "7"), "[]", &history);
  json::Document d;
  ASSERT_TRUE(json::Parse(doc, &d).ok());
  EXPECT_STREQ(d["session_id"].GetString(), "s1");
  EXPECT_EQ(d["source_last_seq"].GetInt(), 7);
  EXPECT_EQ(d["replication_id_version"].GetInt(), 4);
  ASSERT_EQ(d["history"].Size(), 1u);
  const auto& h = d["history"][0];
  for (const char* key : {"session_id", "start_time", "end_time", "start_last_seq",
                          "end_last_seq", "recorded_seq", "missing_checked", "missing_found",
                          "docs_read", "docs_written", "doc_write_failures"}) {
    EXPECT_TRUE(h.HasMember(key)) << key;
  }
  EXPECT_EQ(h["docs_read"].GetInt(), 3);
}

TEST(CheckpointTest, HistoryIsNewestFirstAndCappedAt50) {
  std::string history = "[]";
  for (int i = 0; i < 60; ++i) {
    history = PrependHistory(Entry(("s" + std::to_string(i)).c_str(), "1"), history);
  }
  json::Document d;
  ASSERT_TRUE(json::Parse(history, &d).ok());
  ASSERT_EQ(d.Size(), 50u);
  EXPECT_STREQ(d[0]["session_id"].GetString(), "s59");
}

TEST(CheckpointTest, SameSessionOnBothSidesResumesFromSourceLastSeq) {
  std::string h1, h2, carried;
  std::string doc1 = Doc(Entry("s1", "5"), "[]", &h1);
  std::string doc2 = Doc(Entry("s2", "\"9-abc\""), h1, &h2);
  EXPECT_EQ(StartSeqFromCheckpoints(doc2, doc2, &carried), "\"9-abc\"");
  EXPECT_EQ(carried, h2);
}

TEST(CheckpointTest, DifferentTopSessionsUseNewestCommonHistoryEntry) {
  std::string h1, h2;
  std::string doc1 = Doc(Entry("s1", "5"), "[]", &h1);
  // The source got a later checkpoint the target never saw.
  std::string doc2 = Doc(Entry("s2", "9"), h1, &h2);
  std::string carried;
  EXPECT_EQ(StartSeqFromCheckpoints(doc2, doc1, &carried), "5");
  // And the other way round.
  EXPECT_EQ(StartSeqFromCheckpoints(doc1, doc2, &carried), "5");
}

TEST(CheckpointTest, NothingInCommonOrMissingStartsFromZero) {
  std::string h1, h2, carried;
  std::string a = Doc(Entry("s1", "5"), "[]", &h1);
  std::string b = Doc(Entry("s2", "6"), "[]", &h2);
  EXPECT_EQ(StartSeqFromCheckpoints(a, b, &carried), "0");
  EXPECT_EQ(StartSeqFromCheckpoints(a, std::nullopt, &carried), "0");
  EXPECT_EQ(StartSeqFromCheckpoints(std::nullopt, std::nullopt, &carried), "0");
  EXPECT_EQ(StartSeqFromCheckpoints(std::string("not json"), a, &carried), "0");
}

TEST(CheckpointTest, ReadsPouchDbCheckpoints) {
  std::string pouch =
      R"({"session_id":"p2","last_seq":12,"history":[{"last_seq":12,"session_id":"p2"},)"
      R"({"last_seq":4,"session_id":"p1"}],"replicator":"pouchdb","version":1})";
  std::string older =
      R"({"session_id":"p1","last_seq":4,"history":[{"last_seq":4,"session_id":"p1"}],"replicator":"pouchdb","version":1})";
  std::string carried;
  EXPECT_EQ(StartSeqFromCheckpoints(pouch, pouch, &carried), "12");
  EXPECT_EQ(StartSeqFromCheckpoints(pouch, older, &carried), "4");
}

}  // namespace
}  // namespace settee::replication
