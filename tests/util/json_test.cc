#include "util/json.h"

#include <cstring>

#include <gtest/gtest.h>

#include "util/json_scan.h"

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

// Numbers RapidJSON 1.1's full-precision conversion got wrong (found by
// tests/fuzz): each is now the correctly rounded value, or an error when too
// big for a double.
TEST(Json, NumbersAreCorrectlyRounded) {
  struct Case {
    const char* in;
    const char* out;  // nullptr: rejected
  } cases[] = {
      {"0e1000", nullptr},  // RapidJSON's reader refuses exponents past 308 outright
      {"0e90", "0.0"},
      {"-0e100", "-0.0"},
      {"0.0e100", "0.0"},
      {"1e-325", "0.0"},
      {"-7e-325", "-0.0"},
      {"5e-324", "5e-324"},
      {"1e308", "1e308"},
      {"0.1", "0.1"},
      {"123456789012345678901234567890", "1.2345678901234568e29"},
      {"-98765432109876543210", "-98765432109876540000.0"},
      {"18446744073709551615", "18446744073709551615"},
      {"-9223372036854775808", "-9223372036854775808"},
      {"-0", "0"},
      {"1e309", nullptr},
      {"12345678901234567890e300", nullptr},
      {"-1.5e400", nullptr},
  };
  for (const Case& c : cases) {
    Document d;
    std::string text = std::string("[") + c.in + "]";
    Status s = Parse(text, &d);
    if (c.out == nullptr) {
      EXPECT_EQ(Status::Code::kBadRequest, s.code()) << c.in;
      continue;
    }
    ASSERT_TRUE(s.ok()) << c.in << ": " << s.ToString();
    EXPECT_EQ(std::string("[") + c.out + "]", Serialize(d)) << c.in;
  }
  Document d;
  ASSERT_TRUE(Parse("[1,-1,4294967295,-2147483648,-2147483649]", &d).ok());
  EXPECT_TRUE(d[0].IsInt());
  EXPECT_TRUE(d[1].IsInt());
  EXPECT_TRUE(d[2].IsUint() && !d[2].IsInt());
  EXPECT_TRUE(d[3].IsInt());
  EXPECT_TRUE(d[4].IsInt64() && !d[4].IsInt());
}

TEST(Json, RejectsLoneSurrogatesAndBadUtf8) {
  Document d;
  EXPECT_EQ(Status::Code::kBadRequest, Parse(R"(["\udc00"])", &d).code());
  EXPECT_EQ(Status::Code::kBadRequest, Parse(R"({"\udc00":1})", &d).code());
  EXPECT_EQ(Status::Code::kBadRequest, Parse(R"(["\ud800"])", &d).code());
  ASSERT_TRUE(Parse(R"(["\ud83d\ude00"])", &d).ok());
  EXPECT_EQ("[\"\xf0\x9f\x98\x80\"]", Serialize(d));
  EXPECT_TRUE(IsValidUtf8("plain \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("\xed\xb0\x80"));  // a surrogate code point
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));       // overlong
  EXPECT_FALSE(IsValidUtf8("\xe2\x82"));       // truncated
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));  // past U+10FFFF
}

// Found by tests/fuzz: RapidJSON stops at a NUL byte as if the input ended.
TEST(Json, RejectsContentAfterANulByte) {
  Document d;
  EXPECT_EQ(Status::Code::kBadRequest, Parse(std::string("{\"a\":1}\0{{{", 10), &d).code());
  EXPECT_EQ(Status::Code::kBadRequest, Parse(std::string("{}\0", 3), &d).code());
  EXPECT_EQ(Status::Code::kBadRequest, Parse(std::string("[\"a\0b\"]", 7), &d).code());
  EXPECT_TRUE(Parse("{} \n", &d).ok());
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

// Every byte value at every position of strings around the 8-byte word the
// escape scan steps by: the fast path for clean strings and the escaping
// path agree with rapidjson::Writer, and appending keeps what was there.
TEST(Json, QuoteMatchesRapidJsonWriterAtEveryPosition) {
  for (size_t len : {1, 7, 8, 9, 16, 17}) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int c = 0; c < 256; ++c) {
        std::string s(len, 'a');
        s[pos] = static_cast<char>(c);
        std::string expected = "x";
        StringOutput os(&expected);
        Writer w(os);
        w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
        std::string out = "x";
        AppendQuoted(&out, s);
        ASSERT_EQ(expected, out) << len << " " << pos << " " << c;
      }
    }
  }
}

// The lowest mark is the first stop byte of the word (bytes 0..7 of the text
// on this little-endian machine); a word without one is not marked at all.
TEST(Json, StringStopsMarksTheFirstStopByte) {
  auto word = [](const char* text) {
    uint64_t w;
    std::memcpy(&w, text, 8);
    return w;
  };
  EXPECT_EQ(0u, scan::StringStops(word("abc~\x7f\x80\xff ")));
  const char* stops[] = {"\"", "\\", "\x1f", "\x01"};
  for (const char* stop : stops) {
    for (int at = 0; at < 8; ++at) {
      char text[8];
      std::memset(text, 'a', 8);
      text[at] = *stop;
      if (at < 7) text[7] = '"';  // a later stop byte leaves the first one lowest
      const uint64_t marks = scan::StringStops(word(text));
      ASSERT_NE(0u, marks) << at;
      EXPECT_EQ(at, __builtin_ctzll(marks) / 8) << at;
    }
  }
}

TEST(Json, AppendStringArray) {
  std::string out;
  AppendStringArray(&out, {});
  AppendStringArray(&out, {"a", "b\""});
  EXPECT_EQ(R"([]["a","b\""])", out);
}

}  // namespace settee::json
