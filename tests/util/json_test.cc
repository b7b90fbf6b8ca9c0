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

// Quote() is hand-written for speed; it must match rapidjson::Writer byte for
// byte, since both produce stored and served JSON.
TEST(Json, QuoteMatchesRapidJsonWriter) {
  std::string all;
  for (int c = 1; c < 128; ++c) all.push_back(static_cast<char>(c));
  for (std::string s : {std::string(), all, std::string("\0x", 2), std::string("caf\xc3\xa9 \xe2\x82\xac")}) {
    std::string expected;
    StringOutput os(&expected);
    Writer w(os);
    w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
    EXPECT_EQ(expected, Quote(s));
  }
}

TEST(Json, AppendStringArray) {
  std::string out;
  AppendStringArray(&out, {});
  AppendStringArray(&out, {"a", "b\""});
  EXPECT_EQ(R"([]["a","b\""])", out);
}

}  // namespace settee::json
