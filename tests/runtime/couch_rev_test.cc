#include "runtime/couch_rev.h"

#include <gtest/gtest.h>

#include <string>

namespace settee {
namespace {

using Kind = CouchRev::Kind;

TEST(CouchRevTest, RefusedAsParseRevRefusesThem) {
  for (const char* rev : {"", "abc", "-1-abc", "x-abc", "1x-abc", "+-abc", "+", " 1-a", "1.0-a"}) {
    EXPECT_EQ(ParseCouchRev(rev).kind, Kind::kMalformed) << rev;
  }
  // An id of 32 characters is decoded as hex.
  EXPECT_EQ(ParseCouchRev("1-" + std::string(32, 'z')).kind, Kind::kMalformed);
  EXPECT_EQ(ParseCouchRev("1-" + std::string(31, 'a') + "g").kind, Kind::kMalformed);
}

TEST(CouchRevTest, StorableRevsInTheEnginesSpelling) {
  const std::pair<std::string, std::string> cases[] = {
      {"1-abc", "1-abc"},
      {"+1-abc", "1-abc"},
      {"007-abc", "7-abc"},
      {"1-a-b", "1-a-b"},
      {"2-" + std::string(32, 'A'), "2-" + std::string(32, 'A')},
      {"3-+" + std::string(31, 'f'), "3-+" + std::string(31, 'f')},
      {"1-" + std::string(33, 'z'), "1-" + std::string(33, 'z')},
      {"18446744073709551615-a", "18446744073709551615-a"},
  };
  for (const auto& [rev, text] : cases) {
    CouchRev r = ParseCouchRev(rev);
    EXPECT_EQ(r.kind, Kind::kStorable) << rev;
    EXPECT_EQ(r.text, text) << rev;
  }
}

TEST(CouchRevTest, RevsNoStoredRevisionCanBe) {
  const std::pair<std::string, std::string> cases[] = {
      {"1-", "1-"},
      {"0-abc", "0-abc"},
      {"+00-abc", "0-abc"},
      {"18446744073709551616-a", "18446744073709551616-a"},
      {"0099999999999999999999999-a", "99999999999999999999999-a"},
  };
  for (const auto& [rev, text] : cases) {
    CouchRev r = ParseCouchRev(rev);
    EXPECT_EQ(r.kind, Kind::kNamesNothing) << rev;
    EXPECT_EQ(r.text, text) << rev;
  }
}

TEST(CouchRevTest, SameCouchRevComparesParsedTerms) {
  const std::string hex(32, 'a'), upper(32, 'A');
  EXPECT_TRUE(SameCouchRev(ParseCouchRev("1-" + hex), ParseCouchRev("+01-" + upper)));
  EXPECT_TRUE(SameCouchRev(ParseCouchRev("00-x"), ParseCouchRev("0-x")));
  // Only a 32-character id is a number.
  EXPECT_FALSE(SameCouchRev(ParseCouchRev("1-abc"), ParseCouchRev("1-ABC")));
  EXPECT_FALSE(SameCouchRev(ParseCouchRev("1-abc"), ParseCouchRev("2-abc")));
  EXPECT_FALSE(SameCouchRev(ParseCouchRev("1-a-b"), ParseCouchRev("1-a")));
}

// extract_header_rev: If-Match is parsed whenever it is sent, and must be the
// explicit revision when there is one.
TEST(CouchRevTest, ExtractHeaderRevSetsIfMatchAgainstTheExplicitRev) {
  std::optional<CouchRev> out;
  ASSERT_TRUE(ExtractHeaderRev(nullptr, nullptr, &out).ok());
  EXPECT_FALSE(out.has_value());
  const CouchRev explicit_rev = ParseCouchRev("2-abc");
  ASSERT_TRUE(ExtractHeaderRev(&explicit_rev, nullptr, &out).ok());
  EXPECT_EQ(out->text, "2-abc");
  for (const std::string header : {"2-abc", "\"2-abc\"", "\"\"02-abc\"\"", "\"+2-abc"}) {
    ASSERT_TRUE(ExtractHeaderRev(nullptr, &header, &out).ok()) << header;
    EXPECT_EQ(out->text, "2-abc") << header;
    ASSERT_TRUE(ExtractHeaderRev(&explicit_rev, &header, &out).ok()) << header;
    EXPECT_EQ(out->text, "2-abc") << header;
  }
  const std::string names_nothing = "\"0-a\"";
  ASSERT_TRUE(ExtractHeaderRev(nullptr, &names_nothing, &out).ok());
  EXPECT_EQ(out->kind, Kind::kNamesNothing);
  for (const std::string header : {"", "\"\"", "garbage", "W/\"2-abc\"", "-2-abc"}) {
    Status s = ExtractHeaderRev(&explicit_rev, &header, &out);
    EXPECT_EQ(s.reason(), "Invalid rev format") << header;
    EXPECT_EQ(ExtractHeaderRev(nullptr, &header, &out).reason(), "Invalid rev format") << header;
  }
  const std::string other = "\"3-abc\"";
  Status s = ExtractHeaderRev(&explicit_rev, &other, &out);
  EXPECT_EQ(s.code(), Status::Code::kBadRequest);
  EXPECT_EQ(s.reason(), "Document rev and etag have different values");
}

}  // namespace
}  // namespace settee
