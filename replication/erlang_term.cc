#include "replication/erlang_term.h"

#include <cstring>

namespace settee::replication {

namespace {

// Tags from erts/emulator/beam/external.h.
constexpr char kVersion = static_cast<char>(131);
constexpr char kSmallInteger = 97, kInteger = 98, kAtom = 100, kSmallTuple = 104,
               kLargeTuple = 105, kNil = 106, kString = 107, kList = 108, kBinary = 109,
               kSmallBig = 110;

void PutBE(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

ErlTerm ErlTerm::Atom(std::string_view name) {
  ErlTerm t;
  t.bytes_.push_back(kAtom);
  PutBE(&t.bytes_, name.size(), 2);
  t.bytes_ += name;
  return t;
}

ErlTerm ErlTerm::Binary(std::string_view bytes) {
  ErlTerm t;
  t.bytes_.push_back(kBinary);
  PutBE(&t.bytes_, bytes.size(), 4);
  t.bytes_ += bytes;
  return t;
}

ErlTerm ErlTerm::String(std::string_view chars) {
  if (chars.empty()) return Nil();
  ErlTerm t;
  if (chars.size() < 65536) {
    t.bytes_.push_back(kString);
    PutBE(&t.bytes_, chars.size(), 2);
    t.bytes_ += chars;
    return t;
  }
  // Longer strings are proper lists of small integers.
  t.bytes_.push_back(kList);
  PutBE(&t.bytes_, chars.size(), 4);
  for (unsigned char c : chars) {
    t.bytes_.push_back(kSmallInteger);
    t.bytes_.push_back(static_cast<char>(c));
  }
  t.bytes_.push_back(kNil);
  return t;
}

ErlTerm ErlTerm::Integer(int64_t value) {
  ErlTerm t;
  if (value >= 0 && value <= 255) {
    t.bytes_.push_back(kSmallInteger);
    t.bytes_.push_back(static_cast<char>(value));
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    t.bytes_.push_back(kInteger);
    PutBE(&t.bytes_, static_cast<uint32_t>(static_cast<int32_t>(value)), 4);
  } else {
    // SMALL_BIG_EXT: digit count, sign, little-endian magnitude.
    uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
    std::string digits;
    while (magnitude) {
      digits.push_back(static_cast<char>(magnitude & 0xff));
      magnitude >>= 8;
    }
    t.bytes_.push_back(kSmallBig);
    t.bytes_.push_back(static_cast<char>(digits.size()));
    t.bytes_.push_back(value < 0 ? 1 : 0);
    t.bytes_ += digits;
  }
  return t;
}

ErlTerm ErlTerm::Float(double value) {
  // NEW_FLOAT_EXT: the IEEE 754 bits, big-endian.
  ErlTerm t;
  t.bytes_.push_back(static_cast<char>(70));
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  PutBE(&t.bytes_, bits, 8);
  return t;
}

ErlTerm ErlTerm::Nil() {
  ErlTerm t;
  t.bytes_.push_back(kNil);
  return t;
}

ErlTerm ErlTerm::Tuple() {
  ErlTerm t;
  t.kind_ = Kind::kTuple;
  return t;
}

ErlTerm ErlTerm::List() {
  ErlTerm t;
  t.kind_ = Kind::kList;
  return t;
}

ErlTerm& ErlTerm::Add(const ErlTerm& element) {
  ++arity_;
  if (element.kind_ == Kind::kScalar) bytes_ += element.bytes_;
  else bytes_ += Encode(element).substr(1);
  return *this;
}

std::string ErlTerm::Encode(const ErlTerm& term) {
  std::string out(1, kVersion);
  switch (term.kind_) {
    case Kind::kScalar:
      out += term.bytes_;
      break;
    case Kind::kTuple:
      if (term.arity_ < 256) {
        out.push_back(kSmallTuple);
        out.push_back(static_cast<char>(term.arity_));
      } else {
        out.push_back(kLargeTuple);
        PutBE(&out, term.arity_, 4);
      }
      out += term.bytes_;
      break;
    case Kind::kList:
      if (term.arity_ == 0) {
        out.push_back(kNil);
        break;
      }
      out.push_back(kList);
      PutBE(&out, term.arity_, 4);
      out += term.bytes_;
      out.push_back(kNil);
      break;
  }
  return out;
}

}  // namespace settee::replication
