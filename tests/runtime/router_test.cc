// Router: pattern matching, specificity, method pooling and 405s.
#include "runtime/router.h"

#include <gtest/gtest.h>

namespace settee {
namespace {

RouteHandler Tag(int* hit, int value) {
  return [hit, value](RequestContext&) {
    *hit = value;
    return Status::OK();
  };
}

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> s;
  EXPECT_TRUE(SplitPath(path, &s));
  return s;
}

TEST(RouterTest, SplitPathDecodesSegmentsAndDropsEmptyOnes) {
  EXPECT_EQ(Split("/"), std::vector<std::string>{});
  EXPECT_EQ(Split("/db/"), std::vector<std::string>{"db"});
  EXPECT_EQ(Split("//db//doc"), (std::vector<std::string>{"db", "doc"}));
  EXPECT_EQ(Split("/a%2Fb/c%20d"), (std::vector<std::string>{"a/b", "c d"}));
  std::vector<std::string> s;
  EXPECT_FALSE(SplitPath("/bad%zz", &s));
  EXPECT_FALSE(SplitPath("/bad%2", &s));
}

TEST(RouterTest, LiteralBeatsParamBeatsRest) {
  Router r;
  int hit = 0;
  r.Add("GET", "/{db}/{*path}", Tag(&hit, 1));
  r.Add("GET", "/{db}/{docid}", Tag(&hit, 2));
  r.Add("GET", "/{db}/_all_docs", Tag(&hit, 3));
  r.Add("GET", "/{db}/_design/{name}", Tag(&hit, 4));
  Router::Match m;
  ASSERT_EQ(r.Find("GET", Split("/db/_all_docs"), &m), Router::Outcome::kFound);
  EXPECT_EQ(m.params, std::vector<std::string>{"db"});
  ASSERT_EQ(r.Find("GET", Split("/db/doc"), &m), Router::Outcome::kFound);
  EXPECT_EQ(m.params, (std::vector<std::string>{"db", "doc"}));
  ASSERT_EQ(r.Find("GET", Split("/db/_design/app"), &m), Router::Outcome::kFound);
  EXPECT_EQ(m.params, (std::vector<std::string>{"db", "app"}));
  ASSERT_EQ(r.Find("GET", Split("/db/doc/att/with/slashes"), &m), Router::Outcome::kFound);
  EXPECT_EQ(m.params, (std::vector<std::string>{"db", "doc/att/with/slashes"}));
  EXPECT_EQ(r.Find("GET", Split("/db"), &m), Router::Outcome::kNotFound);
}

TEST(RouterTest, SamePatternPoolsMethodsAndReports405) {
  Router r;
  int hit = 0;
  r.Add("GET,HEAD", "/{db}", Tag(&hit, 1));
  r.Add("PUT", "/{db}", Tag(&hit, 2));
  r.Add("GET", "/_all_dbs", Tag(&hit, 3));
  Router::Match m;
  ASSERT_EQ(r.Find("PUT", Split("/x"), &m), Router::Outcome::kFound);
  RequestContext* none = nullptr;
  (void)none;
  EXPECT_EQ(r.Find("POST", Split("/x"), &m), Router::Outcome::kMethodNotAllowed);
  EXPECT_EQ(m.allowed, "GET,HEAD,PUT");
  // The literal route decides for /_all_dbs even though /{db} has PUT.
  EXPECT_EQ(r.Find("PUT", Split("/_all_dbs"), &m), Router::Outcome::kMethodNotAllowed);
  EXPECT_EQ(m.allowed, "GET");
}

TEST(RouterTest, RootAndExactLength) {
  Router r;
  int hit = 0;
  r.Add("GET", "/", Tag(&hit, 1));
  r.Add("GET", "/_up", Tag(&hit, 2));
  Router::Match m;
  EXPECT_EQ(r.Find("GET", Split("/"), &m), Router::Outcome::kFound);
  EXPECT_EQ(r.Find("GET", Split("/_up"), &m), Router::Outcome::kFound);
  EXPECT_EQ(r.Find("GET", Split("/_up/more"), &m), Router::Outcome::kNotFound);
}

}  // namespace
}  // namespace settee
