#include "util/erlang_text.h"

#include <gtest/gtest.h>

namespace settee::erlang {
namespace {

// The expected texts are what io_lib:format("~p", [X]) gives in an Erlang
// shell for the same bytes.
TEST(ErlangText, ListOfPrintableBytesIsAQuotedString) {
  EXPECT_EQ(ListText("yes"), R"("yes")");
  EXPECT_EQ(ListText("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(ListText("a\nb\tc\x1b"), R"("a\nb\tc\e")");
  EXPECT_EQ(ListText("\xc3\xa9"), "\"\xc3\xa9\"");  // é: both bytes are printable Latin-1
}

TEST(ErlangText, EmptyListAndUnprintableBytes) {
  EXPECT_EQ(ListText(""), "[]");
  EXPECT_EQ(ListText("hi\x01"), "[104,105,1]");
  EXPECT_EQ(ListText("\xe2\x82\xac"), "[226,130,172]");  // €: 130 is no printable Latin-1
  EXPECT_EQ(ListText("\x7f"), "[127]");
}

TEST(ErlangText, Binaries) {
  EXPECT_EQ(BinaryText("10"), R"(<<"10">>)");
  EXPECT_EQ(BinaryText(""), "<<>>");
  EXPECT_EQ(BinaryText("\x01\x02"), "<<1,2>>");
}

// io_lib_format:fwrite_g: shortest digits, and an exponent only where it
// is shorter than the plain form.
TEST(ErlangText, Floats) {
  EXPECT_EQ(FloatText(1.5), "1.5");
  EXPECT_EQ(FloatText(-2.25), "-2.25");
  EXPECT_EQ(FloatText(0.0), "0.0");
  EXPECT_EQ(FloatText(0.1), "0.1");
  EXPECT_EQ(FloatText(2.0), "2.0");
  EXPECT_EQ(FloatText(100.0), "100.0");
  EXPECT_EQ(FloatText(1000.0), "1.0e3");
  EXPECT_EQ(FloatText(123456.0), "123456.0");
  EXPECT_EQ(FloatText(1234560.0), "1234560.0");
  EXPECT_EQ(FloatText(12345600.0), "1.23456e7");
  EXPECT_EQ(FloatText(1e20), "1.0e20");
  EXPECT_EQ(FloatText(0.001), "0.001");
  EXPECT_EQ(FloatText(0.0001), "0.0001");
  EXPECT_EQ(FloatText(0.00001), "1.0e-5");
  EXPECT_EQ(FloatText(0.000012), "1.2e-5");
}

// list_to_integer("...") in an Erlang shell: a sign, then digits only.
TEST(ErlangText, ListToIntegerTakesASignAndDigitsOnly) {
  bool negative = true;
  uint64_t n = 0;
  ASSERT_TRUE(ListToInteger("0042", &negative, &n));
  EXPECT_FALSE(negative);
  EXPECT_EQ(n, 42u);
  ASSERT_TRUE(ListToInteger("+7", &negative, &n));
  EXPECT_FALSE(negative);
  EXPECT_EQ(n, 7u);
  ASSERT_TRUE(ListToInteger("-0", &negative, &n));
  EXPECT_TRUE(negative);
  EXPECT_EQ(n, 0u);
  ASSERT_TRUE(ListToInteger("99999999999999999999999", &negative, &n));
  EXPECT_EQ(n, UINT64_MAX);  // past 64 bits: the largest
  for (const char* bad : {"", "-", "+", "1.0", "1e3", " 1", "1 ", "0x10", "--1", "12a"}) {
    EXPECT_FALSE(ListToInteger(bad, &negative, &n)) << bad;
  }
}

}  // namespace
}  // namespace settee::erlang
