// `settee replicate` end to end: the real executable against a `settee
// serve` peer, pulling and pushing with a local store, resuming from its
// checkpoint, and its exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "replication/http_client.h"
#include "tests/replication/peer_process.h"
#include "tests/storage/store_test_util.h"
#include "util/json.h"

namespace settee::replication {
namespace {

struct Outcome {
  int code = -1;
  std::string output;  // stdout and stderr
};

Outcome Settee(const std::string& args) {
  Outcome o;
  FILE* p = popen((std::string(SETTEE_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (!p) return o;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) o.output.append(buf.data(), n);
  int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

class ReplicateCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = settee::testing::FreshTempDir("replicate-cli");
    // A port per test: ctest may run both at once.
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    int port = test.starts_with("Pulls") ? 16652 : 16653;
    peer_ = std::make_unique<PeerProcess>(SETTEE_BINARY, port, "");
    peer_->Start();
    HttpClient http({});
    ASSERT_EQ(http.Request("PUT", peer_->Root() + "src")->status, 201);
    std::string docs = R"({"docs":[)";
    for (int i = 0; i < 120; ++i) docs += (i ? "," : "") + std::string(R"({"n":1})");
    docs += "]}";
    ASSERT_EQ(http.Request("POST", peer_->Root() + "src/_bulk_docs", docs)->status, 201);
  }
  void TearDown() override {
    peer_.reset();
    std::filesystem::remove_all(data_);
  }
  int DocCount(const std::string& db) {
    HttpClient http({});
    auto r = http.Request("GET", peer_->Root() + db);
    json::Document d;
    if (!r.ok() || !json::Parse(r->body, &d).ok() || !d.HasMember("doc_count")) return -1;
    return d["doc_count"].GetInt();
  }

  std::string data_;
  std::unique_ptr<PeerProcess> peer_;
};

TEST_F(ReplicateCommandTest, PullsPushesResumesAndReportsProgress) {
  auto pull = Settee("replicate " + peer_->Root() + "src local --create-target --data " + data_);
  EXPECT_EQ(pull.code, 0) << pull.output;
  EXPECT_NE(pull.output.find("read 100, written 100"), std::string::npos) << pull.output;
  EXPECT_NE(pull.output.find("completed: 120 docs written, 0 failed"), std::string::npos)
      << pull.output;
  auto again = Settee("replicate " + peer_->Root() + "src local --data " + data_);
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_NE(again.output.find("completed: 0 docs written"), std::string::npos) << again.output;

  auto push = Settee("replicate local " + peer_->Root() + "back --create-target --quiet --data " +
                     data_);
  EXPECT_EQ(push.code, 0) << push.output;
  EXPECT_EQ(push.output, "");
  EXPECT_EQ(DocCount("back"), 120);
}

TEST_F(ReplicateCommandTest, ExitCodesForFailuresAndBadArguments) {
  auto missing = Settee("replicate nope local --data " + data_);
  EXPECT_EQ(missing.code, 1) << missing.output;
  EXPECT_NE(missing.output.find("replication failed: not_found"), std::string::npos)
      << missing.output;
  auto no_target = Settee("replicate " + peer_->Root() + "src " + peer_->Root() +
                          "absent --data " + data_);
  EXPECT_EQ(no_target.code, 1) << no_target.output;
  EXPECT_EQ(Settee("replicate Bad-Name x --data " + data_).code, 2);
  EXPECT_NE(Settee("replicate onlyone").code, 0);
}

}  // namespace
}  // namespace settee::replication
