#include "util/json.h"

#include <gtest/gtest.h>

namespace settee::json {

TEST(Json, ParsesAndSerializesCompactly) {
  Document d;
  ASSERT_TRUE(Parse(R"( {"a" : [1, 2.5, "x\u00e9"], "b": null} )", &d).ok());
  EXPECT_EQ(R"({"a":[1,2.5,"xé"],"b":null})", Serialize(d));
}

TEST(Json, RejectsMalformedInput) {
  Document d;
  for (const char* bad : {"", "{", "{\"a\":}", "[1,]", "{} x", "\"\xff\"", "nul"}) {
    Status s = Parse(bad, &d);
    EXPECT_EQ(Status::Code::kBadRequest, s.code()) << bad;
  }
}

TEST(Json, RejectsNestingBeyondLimit) {
  std::string deep(kMaxNestingDepth + 1, '[');
  deep += std::string(kMaxNestingDepth + 1, ']');
  Document d;
  EXPECT_EQ(Status::Code::kBadRequest, Parse(deep, &d).code());
  std::string ok(kMaxNestingDepth, '[');
  ok += std::string(kMaxNestingDepth, ']');
  EXPECT_TRUE(Parse(ok, &d).ok());
  // Brackets inside strings do not count.
  std::string in_string = "\"" + std::string(2000, '[') + "\"";
  EXPECT_TRUE(Parse(in_string, &d).ok());
}

TEST(Json, QuoteEscapes) {
  EXPECT_EQ(R"("a\"b\\c\n")", Quote("a\"b\\c\n"));
}

TEST(Json, AppendStringArray) {
  std::string out;
  AppendStringArray(&out, {});
  AppendStringArray(&out, {"a", "b\""});
  EXPECT_EQ(R"([]["a","b\""])", out);
}

}  // namespace settee::json
