#include "replication/selector_normal_form.h"

#include <gtest/gtest.h>

#include "replication/replication_id.h"

namespace settee::replication {
namespace {

// The term for `normal`, CouchDB's normal form written out by hand from
// mango_selector.erl's rules (members already in ejsort's order).
std::string Term(const char* normal) {
  auto t = EjsonTerm(normal, /*sort_keys=*/false);
  EXPECT_TRUE(t.ok()) << normal;
  return t.ok() ? t->bytes() : "";
}

std::string Normal(const char* selector) {
  auto t = NormalSelectorTerm(selector);
  EXPECT_TRUE(t.ok()) << selector << ": " << t.status().ToString();
  return t.ok() ? t->bytes() : "";
}

TEST(SelectorNormalFormTest, ImplicitOperatorsBecomeExplicit) {
  EXPECT_EQ(Normal(R"({"a":1})"), Term(R"({"a":{"$eq":1}})"));
  // An implicit $and keeps the order the members were given in.
  EXPECT_EQ(Normal(R"({"z":{"$gt":1.5},"a":[true,null]})"),
            Term(R"({"$and":[{"z":{"$gt":1.5}},{"a":{"$eq":[true,null]}}]})"));
  EXPECT_EQ(Normal(R"({"$text":"hello"})"), Term(R"({"$default":{"$text":"hello"}})"));
  EXPECT_EQ(Normal("{}"), Term("{}"));
}

TEST(SelectorNormalFormTest, FieldNamesAreDottedThroughBooleanOperators) {
  EXPECT_EQ(Normal(R"({"a":{"b":{"$gt":10}}})"), Term(R"({"a.b":{"$gt":10}})"));
  EXPECT_EQ(Normal(R"({"foo":{"$and":[{"$gt":5},{"$lt":10}]}})"),
            Term(R"({"$and":[{"foo":{"$gt":5}},{"foo":{"$lt":10}}]})"));
  // Below $elemMatch the paths start again, from "" (mango_selector's own
  // comment shows this very term).
  EXPECT_EQ(Normal(R"({"tags":{"$elemMatch":{"$gte":80,"$lt":85}}})"),
            Term(R"({"tags":{"$elemMatch":{"$and":[{"":{"$gte":80}},{"":{"$lt":85}}]}}})"));
}

TEST(SelectorNormalFormTest, NegationsArePushedDown) {
  EXPECT_EQ(Normal(R"({"$not":{"foo":{"$gt":10}}})"), Term(R"({"foo":{"$lte":10}})"));
  EXPECT_EQ(Normal(R"({"$not":{"$and":[{"foo":{"$gt":10}},{"foo":{"$lt":5}}]}})"),
            Term(R"({"$or":[{"foo":{"$lte":10}},{"foo":{"$gte":5}}]})"));
  EXPECT_EQ(Normal(R"({"$nor":[{"a":1},{"b":{"$exists":true}}]})"),
            Term(R"({"$and":[{"a":{"$ne":1}},{"b":{"$exists":false}}]})"));
  // A $not under a field is hoisted by norm_fields, then negated.
  EXPECT_EQ(Normal(R"({"a":{"$not":{"$eq":1}}})"), Term(R"({"a":{"$ne":1}})"));
  // What cannot be negated keeps its $not.
  EXPECT_EQ(Normal(R"({"$not":{"a":{"$size":2}}})"), Term(R"({"a":{"$not":{"$size":2}}})"));
  EXPECT_EQ(Normal(R"({"$not":{"$not":{"a":{"$in":[1]}}}})"), Term(R"({"a":{"$in":[1]}})"));
}

TEST(SelectorNormalFormTest, EveryObjectIsSortedArgumentsIncluded) {
  EXPECT_EQ(Normal(R"({"b":{"$in":[{"y":1,"x":2}]}})"), Term(R"({"b":{"$in":[{"x":2,"y":1}]}})"));
  EXPECT_EQ(Normal(R"({"a":{"$eq":{"z":1,"y":{"d":1,"c":2}}}})"),
            Term(R"({"a":{"$eq":{"y":{"c":2,"d":1},"z":1}}})"));
}

TEST(SelectorNormalFormTest, WhatCouchDbRefusesIsBadRequest) {
  for (const char* bad : {R"({"a":{"$foo":1}})", R"({"a":{"$in":1}})", R"({"$and":{}})",
                          R"({"a":{"$mod":[2.5,1]}})", R"({"a":{"$size":-1}})",
                          R"({"":1})", R"({"a":{"$where":"x"}})", "[1]", "{"}) {
    auto t = NormalSelectorTerm(bad);
    EXPECT_FALSE(t.ok()) << bad;
  }
}

TEST(SelectorNormalFormTest, EveryWayOfWritingASelectorGetsOneReplicationId) {
  ErlTerm a = LocalEndpointTerm("a"), b = LocalEndpointTerm("b");
  auto id = [&](const char* selector) {
    ChangesFilterSpec spec;
    spec.selector = selector;
    return ReplicationId("u", a, b, std::nullopt, std::nullopt, &spec);
  };
  std::string normal = id(R"({"$and":[{"a.b":{"$eq":1}},{"c":{"$gt":2}}]})");
  EXPECT_EQ(id(R"({"a":{"b":1},"c":{"$gt":2}})"), normal);
  EXPECT_EQ(id(R"({"a.b":1,"c":{"$not":{"$lte":2}}})"), normal);
  EXPECT_NE(id(R"({"c":{"$gt":2},"a":{"b":1}})"), normal);  // $and keeps its order
  EXPECT_NE(id(R"({"a":{"b":2},"c":{"$gt":2}})"), normal);
}

}  // namespace
}  // namespace settee::replication
