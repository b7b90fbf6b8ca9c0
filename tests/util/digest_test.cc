#include "util/digest.h"

#include <gtest/gtest.h>

#include <set>

namespace settee {

TEST(Digest, Md5MatchesKnownVectors) {
  EXPECT_EQ("d41d8cd98f00b204e9800998ecf8427e", Md5Hex(""));
  EXPECT_EQ("9e107d9d372bb6826bd81d3542a419d6",
            Md5Hex("The quick brown fox jumps over the lazy dog"));
  Md5 inc;
  inc.Update("The quick brown fox ");
  inc.Update("jumps over the lazy dog");
  EXPECT_EQ("9e107d9d372bb6826bd81d3542a419d6", inc.FinishHex());
}

// Known answers from the reference implementation's CLI (`xxhsum -H2`).
TEST(Digest, Xxh128MatchesXxhsum) {
  EXPECT_EQ("99aa06d3014798d86001c324468d497f", Xxh128Hex(""));
  EXPECT_EQ("ddd650205ca3e7fa24a1cc2e3a8a7651",
            Xxh128Hex("The quick brown fox jumps over the lazy dog"));
  Xxh128 inc;
  inc.Update("The quick brown fox ");
  inc.Update("jumps over the lazy dog");
  EXPECT_EQ("ddd650205ca3e7fa24a1cc2e3a8a7651", inc.FinishHex());
  inc.Reset();
  EXPECT_EQ("99aa06d3014798d86001c324468d497f", inc.FinishHex());
}

TEST(Digest, Base64RoundTrips) {
  EXPECT_EQ("aGVsbG8=", Base64Encode("hello"));
  std::string out;
  ASSERT_TRUE(Base64Decode("aGVsbG8=", &out));
  EXPECT_EQ("hello", out);
  ASSERT_TRUE(Base64Decode("", &out));
  EXPECT_EQ("", out);
  EXPECT_FALSE(Base64Decode("aGVsbG8", &out));
  EXPECT_FALSE(Base64Decode("a*VsbG8=", &out));
  // Line breaks and spaces are skipped (the copy without them is made only then).
  ASSERT_TRUE(Base64Decode("aGVs\r\nbG8 =", &out));
  EXPECT_EQ("hello", out);
  EXPECT_FALSE(Base64Decode("aGVs\nbG8", &out));
}

TEST(Digest, RandomUuidsAre32HexAndDistinct) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = RandomUuidHex();
    ASSERT_EQ(32u, u.size());
    ASSERT_EQ(std::string::npos, u.find_first_not_of("0123456789abcdef"));
    seen.insert(u);
  }
  EXPECT_EQ(1000u, seen.size());
}

TEST(Digest, SequentialUuidsAreUniqueAscendingHex) {
  std::set<std::string> seen;
  std::string previous;
  int ascending = 0;
  constexpr int kCount = 20000;  // enough to wrap the 6-hex counter at least once
  for (int i = 0; i < kCount; ++i) {
    std::string u = SequentialUuidHex();
    ASSERT_EQ(32u, u.size());
    ASSERT_EQ(std::string::npos, u.find_first_not_of("0123456789abcdef"));
    if (u > previous) ++ascending;
    previous = u;
    seen.insert(u);
  }
  EXPECT_EQ(size_t{kCount}, seen.size());
  // Only a prefix change (when the counter wraps) may step backwards.
  EXPECT_GT(ascending, kCount - 10);
}

}  // namespace settee
