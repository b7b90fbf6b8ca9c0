#include "util/base64.h"

#include <openssl/evp.h>

#include <random>
#include <string>

#include <gtest/gtest.h>

namespace settee {
namespace {

// OpenSSL's encoder as the reference.
std::string Reference(const std::string& in) {
  std::string out(Base64Length(in.size()) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Encode(const std::string& in) {
  std::string out(Base64Length(in.size()), '\0');
  char* end = Base64EncodeTo(in, out.data());
  EXPECT_EQ(end, out.data() + out.size());
  return out;
}

std::string RandomBytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng());
  return s;
}

TEST(Base64Test, KnownVectors) {
  EXPECT_EQ(Encode(""), "");
  EXPECT_EQ(Encode("f"), "Zg==");
  EXPECT_EQ(Encode("fo"), "Zm8=");
  EXPECT_EQ(Encode("foo"), "Zm9v");
  EXPECT_EQ(Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, EveryLengthAndByteMatchesOpenSsl) {
  std::mt19937 rng(7);
  // Every length through several vector steps (24 bytes each) and their tails.
  for (size_t n = 0; n < 300; ++n) {
    const std::string in = RandomBytes(rng, n);
    ASSERT_EQ(Encode(in), Reference(in)) << "length " << n;
  }
  std::string all;
  for (int round = 0; round < 3; ++round) {
    for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  }
  EXPECT_EQ(Encode(all), Reference(all));
  const std::string big = RandomBytes(rng, 50000);
  EXPECT_EQ(Encode(big), Reference(big));
}

TEST(Base64Test, WriterMatchesWholeEncodingForAnySplit) {
  std::mt19937 rng(11);
  for (size_t n : {0, 1, 2, 3, 4, 5, 29, 100, 1000, 4099}) {
    const std::string in = RandomBytes(rng, n);
    const std::string want = Reference(in);
    for (size_t piece : {1, 2, 3, 4, 7, 24, 28, 1000}) {
      std::string out(Base64Length(n), '\0');
      Base64Writer w(out.data());
      for (size_t at = 0; at < n; at += piece) w.Add(std::string_view(in).substr(at, piece));
      EXPECT_EQ(w.Finish(), out.data() + out.size());
      EXPECT_EQ(out, want) << "length " << n << " pieces of " << piece;
    }
  }
}

}  // namespace
}  // namespace settee
