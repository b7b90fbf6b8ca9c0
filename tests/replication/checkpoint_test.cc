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

TEST(CheckpointTest, AnAttemptKeepsItsLastTwoEntriesInFrontOfTheEarlierHistory) {
  std::string earlier = "[]";
  for (int i = 0; i < 60; ++i) {
    earlier = PrependHistory(Entry(("old" + std::to_string(i)).c_str(), "1"), earlier);
  }
  CheckpointHistory attempt(earlier);
  std::string history;
  for (int i = 0; i < 5; ++i) {
    history = attempt.Add(Entry(("new" + std::to_string(i)).c_str(), std::to_string(10 + i).c_str()));
  }
  json::Document d;
  ASSERT_TRUE(json::Parse(history, &d).ok());
  ASSERT_EQ(d.Size(), 50u);
  EXPECT_STREQ(d[0]["session_id"].GetString(), "new4");
  EXPECT_EQ(d[0]["recorded_seq"].GetInt(), 14);
  EXPECT_STREQ(d[1]["session_id"].GetString(), "new3");
  EXPECT_STREQ(d[2]["session_id"].GetString(), "old59");
  EXPECT_STREQ(d[49]["session_id"].GetString(), "old12");
}

TEST(CheckpointTest, ASideThatMissedTheNewestCheckpointResumesFromThePrevious) {
  // The target got the attempt's third checkpoint, then the replicator
  // died before writing it to the source.
  CheckpointHistory attempt("[]");
  std::string h1 = attempt.Add(Entry("s1", "10"));
  std::string h2 = attempt.Add(Entry("s2", "20"));
  std::string h3 = attempt.Add(Entry("s3", "30"));
  std::string source = BuildCheckpoint(Entry("s2", "20"), h2);
  std::string target = BuildCheckpoint(Entry("s3", "30"), h3);
  std::string carried;
  EXPECT_EQ(StartSeqFromCheckpoints(source, target, &carried), "20");
  // A target restored from a backup of an older checkpoint of the same
  // attempt never matches a newer session: resume from further back.
  std::string restored = BuildCheckpoint(Entry("s1", "10"), h1);
  EXPECT_EQ(StartSeqFromCheckpoints(BuildCheckpoint(Entry("s3", "30"), h3), restored, &carried),
            "0");
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
