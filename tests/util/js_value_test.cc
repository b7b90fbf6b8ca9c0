#include "util/js_value.h"

#include <gtest/gtest.h>

namespace settee::json {
namespace {

Document Json(const char* text) {
  Document d;
  EXPECT_TRUE(Parse(text, &d).ok()) << text;
  return d;
}

// What node prints for String(JSON.parse(text)).
TEST(JsValue, StringIsWhatConcatenationMakes) {
  const std::pair<const char*, const char*> cases[] = {
      {R"("a:b")", "a:b"},
      {"null", "null"},
      {"true", "true"},
      {"false", "false"},
      {"0", "0"},
      {"-0", "0"},
      {"42", "42"},
      {"-7", "-7"},
      {"1.5", "1.5"},
      {"0.1", "0.1"},
      {"100.0", "100"},
      {"1e21", "1e+21"},
      {"123456789012345678901", "123456789012345680000"},
      {"9007199254740993", "9007199254740992"},
      {"0.000001", "0.000001"},
      {"0.0000001", "1e-7"},
      {"1.5e-7", "1.5e-7"},
      {"-2.5e30", "-2.5e+30"},
      {R"(["a"])", "a"},
      {R"([])", ""},
      {R"(["a","b"])", "a,b"},
      {R"([["a","b"],"c",null,1.5,true,{}])", "a,b,c,,1.5,true,[object Object]"},
      {R"([null])", ""},
      {R"({"a":1})", "[object Object]"},
  };
  for (const auto& [text, want] : cases) {
    EXPECT_EQ(JsString(Json(text)), want) << text;
  }
}

TEST(JsValue, StrictEqualityNeverHoldsForTwoObjects) {
  EXPECT_TRUE(JsStrictEquals(Json(R"("a")"), Json(R"("a")")));
  EXPECT_FALSE(JsStrictEquals(Json(R"("a")"), Json(R"(["a"])")));
  EXPECT_FALSE(JsStrictEquals(Json(R"(["a"])"), Json(R"(["a"])")));
  EXPECT_FALSE(JsStrictEquals(Json("{}"), Json("{}")));
  EXPECT_TRUE(JsStrictEquals(Json("5"), Json("5.0")));
  EXPECT_FALSE(JsStrictEquals(Json("5"), Json(R"("5")")));
  EXPECT_TRUE(JsStrictEquals(Json("true"), Json("true")));
  EXPECT_FALSE(JsStrictEquals(Json("1"), Json("true")));
  EXPECT_TRUE(JsStrictEquals(Json("null"), Json("null")));
}

TEST(JsValue, LooseEqualityOfAString) {
  EXPECT_TRUE(JsLooselyEqualsString("bob", Json(R"("bob")")));
  EXPECT_FALSE(JsLooselyEqualsString("bob", Json(R"("Bob")")));
  EXPECT_TRUE(JsLooselyEqualsString("bob", Json(R"(["bob"])")));
  EXPECT_TRUE(JsLooselyEqualsString("a,b", Json(R"(["a","b"])")));
  EXPECT_TRUE(JsLooselyEqualsString("[object Object]", Json("{}")));
  EXPECT_TRUE(JsLooselyEqualsString("5", Json("5")));
  EXPECT_TRUE(JsLooselyEqualsString(" 05 ", Json("5")));
  EXPECT_TRUE(JsLooselyEqualsString("", Json("0")));
  EXPECT_TRUE(JsLooselyEqualsString("1", Json("true")));
  EXPECT_TRUE(JsLooselyEqualsString("0", Json("false")));
  EXPECT_FALSE(JsLooselyEqualsString("true", Json("true")));
  EXPECT_FALSE(JsLooselyEqualsString("bob", Json("5")));
  EXPECT_FALSE(JsLooselyEqualsString("null", Json("null")));
}

}  // namespace
}  // namespace settee::json
