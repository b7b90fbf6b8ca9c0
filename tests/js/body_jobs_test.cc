// Big bodies compressed and hashed on V8's worker threads (js/body_jobs.h):
// each job leaves its document as HoldBodyCompressed (or a plain copy) would
// in line, whichever thread ran it; dropped jobs never run.
#include "js/body_jobs.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "js/v8_init.h"
#include "storage/document.h"

namespace settee::js {
namespace {

class BodyJobsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { InitializeV8(); }

  // A JSON body of about `members` * 20 bytes; `varied` ones do not compress.
  static std::string Body(int members, bool varied, int seed) {
    std::string s = "{";
    uint64_t x = 88172645463325252ull + seed;
    for (int i = 0; i < members; ++i) {
      if (i) s += ',';
      s += "\"m" + std::to_string(i) + "\":\"";
      for (int k = 0; k < 12; ++k) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s += varied ? static_cast<char>('a' + x % 26) : 'x';
      }
      s += '"';
    }
    return s + "}";
  }

  // What the job must leave: the in-line treatment of the same body.
  static void ExpectSameAsInLine(const std::string& body, const IncomingDoc& got) {
    IncomingDoc want;
    want.deleted = got.deleted;
    if (!HoldBodyCompressed(body, &want)) want.body = body;
    EXPECT_EQ(got.body, want.body);
    EXPECT_EQ(got.snappy_body, want.snappy_body);
    EXPECT_EQ(got.body_size, want.body_size);
    EXPECT_EQ(got.first_rev_hash, want.first_rev_hash);
    IncomingDoc expanded = got;
    ASSERT_TRUE(ExpandBody(&expanded).ok());
    EXPECT_EQ(expanded.body, body);
  }
};

TEST_F(BodyJobsTest, JobsLeaveWhatTheInLineTreatmentLeaves) {
  BodyJobs jobs;
  // Several parts in turn, as dbBulkDocsEncoded hands them: compressible
  // and incompressible bodies, deleted or not.
  for (int part = 0; part < 6; ++part) {
    auto bodies = std::make_shared<std::vector<std::string>>();
    std::vector<IncomingDoc> docs(5);
    for (int i = 0; i < 5; ++i) {
      bodies->push_back(Body(2000 + 300 * i, (i + part) % 3 == 0, part * 10 + i));
      ASSERT_GE(bodies->back().size(), BodyJobs::MinBodyBytes());
      docs[i].deleted = i == 4;
      jobs.Add(&docs[i], (*bodies)[i]);
    }
    jobs.Start(bodies);
    jobs.Wait();
    for (int i = 0; i < 5; ++i) ExpectSameAsInLine((*bodies)[i], docs[i]);
  }
}

TEST_F(BodyJobsTest, WaitRunsJobsNeverStartedAndDropForgetsThem) {
  const std::string body = Body(3000, false, 1);
  IncomingDoc waited;
  {
    BodyJobs jobs;
    jobs.Add(&waited, body);
    jobs.Wait();
    jobs.Wait();  // nothing left: a no-op
  }
  ExpectSameAsInLine(body, waited);
  IncomingDoc dropped;
  BodyJobs jobs;
  jobs.Add(&dropped, body);
  jobs.Drop();
  jobs.Start(nullptr);
  jobs.Wait();
  EXPECT_TRUE(dropped.body.empty());
  EXPECT_TRUE(dropped.snappy_body.empty());
}

TEST_F(BodyJobsTest, DestructionWaitsForStartedJobsAndLetsTheBytesGo) {
  const std::string text = Body(20000, true, 7);
  auto body = std::make_shared<std::string>(text);
  std::weak_ptr<std::string> seen = body;
  IncomingDoc doc;
  {
    BodyJobs jobs;
    jobs.Add(&doc, *body);
    jobs.Start(std::move(body));
  }
  EXPECT_TRUE(seen.expired());  // the owner let go of the bytes
  ExpectSameAsInLine(text, doc);
}

}  // namespace
}  // namespace settee::js
