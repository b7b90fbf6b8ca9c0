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

// CouchDB 3 appends [Code, QueryParams] for a design-document filter and
// [Selector] for a selector: the same term, hashed.
TEST(ReplicationIdTest, FiltersAppendCouchDbsTerms) {
  ErlTerm a = LocalEndpointTerm("a"), b = LocalEndpointTerm("b");
  ChangesFilterSpec user;
  user.filter = "app/f";
  user.query_params = R"({"k":"v","n":2})";
  ErlTerm params = ErlTerm::List();
  params.Add(ErlTerm::Tuple().Add(ErlTerm::Binary("k")).Add(ErlTerm::Binary("v")));
  params.Add(ErlTerm::Tuple().Add(ErlTerm::Binary("n")).Add(ErlTerm::Integer(2)));
  ErlTerm base = ErlTerm::List();
  base.Add(ErlTerm::Binary("u")).Add(a).Add(b).Add(ErlTerm::Binary("function(doc){return true}"))
      .Add(ErlTerm::Tuple().Add(params));
  EXPECT_EQ(ReplicationId("u", a, b, std::nullopt, std::nullopt, &user, "function(doc){return true}"),
            Md5Hex(ErlTerm::Encode(base)));
  // The code, not the filter's name, tells replications apart.
  EXPECT_NE(ReplicationId("u", a, b, std::nullopt, std::nullopt, &user, "function(doc){return false}"),
            ReplicationId("u", a, b, std::nullopt, std::nullopt, &user, "function(doc){return true}"));
  EXPECT_EQ(TrimFilterCode("  function(doc){return true}\n\t"), "function(doc){return true}");

  // A filter function given directly is hashed like a design document's
  // code: never the id of the same replication without it.
  ChangesFilterSpec function;
  function.function = "function(doc){return doc.keep}";
  const std::string unfiltered = ReplicationId("u", a, b, std::nullopt, std::nullopt);
  const std::string by_function =
      ReplicationId("u", a, b, std::nullopt, std::nullopt, &function, function.function);
  EXPECT_NE(by_function, unfiltered);
  function.query_params = R"({"k":1})";
  EXPECT_NE(ReplicationId("u", a, b, std::nullopt, std::nullopt, &function, function.function),
            by_function);

  ChangesFilterSpec selector;
  selector.selector = R"({"z":{"$gt":1.5},"a":[true,null]})";
  // CouchDB hashes the normal form, {"$and": [{"z": {"$gt": 1.5}},
  // {"a": {"$eq": [true, null]}}]}, as EJSON.
  auto op = [](const char* name, ErlTerm arg) {
    return ErlTerm::Tuple().Add(ErlTerm::List().Add(ErlTerm::Tuple().Add(ErlTerm::Binary(name)).Add(arg)));
  };
  ErlTerm arr = ErlTerm::List();
  arr.Add(ErlTerm::Atom("true")).Add(ErlTerm::Atom("null"));
  ErlTerm terms = ErlTerm::List();
  terms.Add(op("z", op("$gt", ErlTerm::Float(1.5))));
  terms.Add(op("a", op("$eq", arr)));
  ErlTerm members = ErlTerm::List();
  members.Add(ErlTerm::Tuple().Add(ErlTerm::Binary("$and")).Add(terms));
  ErlTerm base2 = ErlTerm::List();
  base2.Add(ErlTerm::Binary("u")).Add(a).Add(b).Add(ErlTerm::Tuple().Add(members));
  EXPECT_EQ(ReplicationId("u", a, b, std::nullopt, std::nullopt, &selector),
            Md5Hex(ErlTerm::Encode(base2)));
}

TEST(ReplicationIdTest, FloatsAreNewFloatExt) {
  std::string bytes = ErlTerm::Encode(ErlTerm::Float(1.5));
  EXPECT_EQ(bytes, std::string("\x83\x46\x3f\xf8\x00\x00\x00\x00\x00\x00", 10));
}

TEST(ReplicationIdTest, JobIdAppendsOptions) {
  EXPECT_EQ(JobId("abc", false, false), "abc");
  EXPECT_EQ(JobId("abc", true, false), "abc+continuous");
  EXPECT_EQ(JobId("abc", true, true), "abc+continuous+create_target");
}

}  // namespace
}  // namespace settee::replication
