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

}  // namespace
}  // namespace settee::erlang
