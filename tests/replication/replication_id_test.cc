#include "replication/replication_id.h"

#include <gtest/gtest.h>

#include "util/digest.h"

namespace settee::replication {
namespace {

Url U(const char* text) {
  auto u = ParseUrl(text);
  EXPECT_TRUE(u.ok()) << text;
  return *u;
}

TEST(ReplicationIdTest, IsMd5OfTheTermCouchDbHashes) {
  ErlTerm src = LocalEndpointTerm("a");
  ErlTerm tgt = RemoteEndpointTerm(U("http://host/b"));
  ErlTerm base = ErlTerm::List();
  base.Add(ErlTerm::Binary("uuid")).Add(src).Add(tgt);
  EXPECT_EQ(ReplicationId("uuid", src, tgt, std::nullopt, std::nullopt),
            Md5Hex(ErlTerm::Encode(base)));
}

TEST(ReplicationIdTest, CredentialsAndDefaultPortsDoNotChangeTheId) {
  ErlTerm src = LocalEndpointTerm("a");
  auto id = [&](const char* url) {
    return ReplicationId("u", src, RemoteEndpointTerm(U(url)), std::nullopt, std::nullopt);
  };
  EXPECT_EQ(id("http://bob:one@host/db"), id("http://bob:two@host/db"));
  EXPECT_EQ(id("http://host:5984/db"), id("http://host/db/"));
  EXPECT_EQ(id("https://host:443/db"), id("https://host/db"));
  EXPECT_NE(id("http://bob@host/db"), id("http://alice@host/db"));
  EXPECT_NE(id("http://host:5985/db"), id("http://host/db"));
  EXPECT_NE(id("http://host/db1"), id("http://host/db2"));
}

TEST(ReplicationIdTest, DocIdsAreASortedSetAndChangeTheId) {
  ErlTerm a = LocalEndpointTerm("a"), b = LocalEndpointTerm("b");
  std::string plain = ReplicationId("u", a, b, std::nullopt, std::nullopt);
  std::string ids1 = ReplicationId("u", a, b, std::vector<std::string>{"x", "y"}, std::nullopt);
  std::string ids2 =
      ReplicationId("u", a, b, std::vector<std::string>{"y", "x", "x"}, std::nullopt);
  EXPECT_EQ(ids1, ids2);
  EXPECT_NE(plain, ids1);
  EXPECT_NE(plain, ReplicationId("u", a, b, std::nullopt, std::string("5")));
  EXPECT_NE(plain, ReplicationId("v", a, b, std::nullopt, std::nullopt));
  EXPECT_NE(plain, ReplicationId("u", b, a, std::nullopt, std::nullopt));
  EXPECT_EQ(plain.size(), 32u);
}

TEST(ReplicationIdTest, JobIdAppendsOptions) {
  EXPECT_EQ(JobId("abc", false, false), "abc");
  EXPECT_EQ(JobId("abc", true, false), "abc+continuous");
  EXPECT_EQ(JobId("abc", true, true), "abc+continuous+create_target");
}

}  // namespace
}  // namespace settee::replication
