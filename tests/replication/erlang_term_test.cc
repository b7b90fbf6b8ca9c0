#include "replication/erlang_term.h"

#include <gtest/gtest.h>

namespace settee::replication {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

TEST(ErlTermTest, ListOfOneBinary) {
  // term_to_binary([<<"a">>]) in an Erlang shell.
  ErlTerm list = ErlTerm::List();
  list.Add(ErlTerm::Binary("a"));
  EXPECT_EQ(ErlTerm::Encode(list), Bytes({131, 108, 0, 0, 0, 1, 109, 0, 0, 0, 1, 97, 106}));
}

TEST(ErlTermTest, EmptyListAndStringAreNil) {
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::List()), Bytes({131, 106}));
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::String("")), Bytes({131, 106}));
}

TEST(ErlTermTest, RemoteEndpointTuple) {
  // term_to_binary({remote, undefined, "h", default, "/", [], undefined}).
  ErlTerm t = ErlTerm::Tuple();
  t.Add(ErlTerm::Atom("remote"))
      .Add(ErlTerm::Atom("undefined"))
      .Add(ErlTerm::String("h"))
      .Add(ErlTerm::Atom("default"))
      .Add(ErlTerm::String("/"))
      .Add(ErlTerm::Nil())
      .Add(ErlTerm::Atom("undefined"));
  std::string expected = Bytes({131, 104, 7, 100, 0, 6}) + "remote" + Bytes({100, 0, 9}) +
                         "undefined" + Bytes({107, 0, 1}) + "h" + Bytes({100, 0, 7}) +
                         "default" + Bytes({107, 0, 1}) + "/" + Bytes({106, 100, 0, 9}) +
                         "undefined";
  EXPECT_EQ(ErlTerm::Encode(t), expected);
}

TEST(ErlTermTest, Integers) {
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::Integer(7)), Bytes({131, 97, 7}));
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::Integer(5985)), Bytes({131, 98, 0, 0, 0x17, 0x61}));
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::Integer(-1)), Bytes({131, 98, 0xff, 0xff, 0xff, 0xff}));
  // 2^32: SMALL_BIG_EXT, 5 digits, positive, little-endian.
  EXPECT_EQ(ErlTerm::Encode(ErlTerm::Integer(int64_t{1} << 32)),
            Bytes({131, 110, 5, 0, 0, 0, 0, 0, 1}));
}

TEST(ErlTermTest, NestedListInList) {
  ErlTerm inner = ErlTerm::List();
  inner.Add(ErlTerm::Integer(1));
  ErlTerm outer = ErlTerm::List();
  outer.Add(inner);
  EXPECT_EQ(ErlTerm::Encode(outer),
            Bytes({131, 108, 0, 0, 0, 1, 108, 0, 0, 0, 1, 97, 1, 106, 106}));
}

}  // namespace
}  // namespace settee::replication
