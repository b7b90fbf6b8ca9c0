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

}  // namespace
}  // namespace settee
