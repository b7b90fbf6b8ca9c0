// JSON helpers over RapidJSON, shared by every module.
//
// Parsing is iterative and nesting depth is bounded, so hostile input cannot
// overflow the stack in the parser or in later recursive walks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "settee/status.h"

namespace settee::json {

using Value = rapidjson::Value;
using Document = rapidjson::Document;
using Allocator = rapidjson::Document::AllocatorType;

// Deeper documents are rejected with kBadRequest.
constexpr int kMaxNestingDepth = 512;

// Parses `text` into *doc. kBadRequest with a reason on malformed JSON,
// invalid UTF-8 (a lone surrogate escape included), a number too big for a
// double, or nesting deeper than `max_depth`.
Status Parse(std::string_view text, Document* doc, int max_depth = kMaxNestingDepth);

// A JSON number as settee reads it. RapidJSON 1.1's own full-precision
// conversion is wrong, and has undefined behaviour, for some inputs (a zero
// significand with a large exponent, values below the smallest subnormal,
// long significands near the range limits), so parsers here take number
// text (kParseNumbersAsStringsFlag) and convert it with this: integers that
// fit 64 bits stay integers, classified as RapidJSON does (Int, Uint,
// Int64, Uint64); everything else is the correctly rounded double
// (std::from_chars), underflow giving a signed zero, as simdjson does.
struct Number {
  enum class Kind { kInt, kUint, kInt64, kUint64, kDouble };
  Kind kind = Kind::kDouble;
  int64_t i = 0;   // kInt, kInt64
  uint64_t u = 0;  // kUint, kUint64
  double d = 0;    // kDouble
};
// `text` is a number the JSON grammar accepts. kBadRequest if it is too big
// for a double.
Status ParseNumber(std::string_view text, Number* out);

// Sends number text to a RapidJSON SAX handler as ParseNumber reads it.
template <typename Handler>
bool EmitNumber(const Number& n, Handler& handler) {
  switch (n.kind) {
    case Number::Kind::kInt: return handler.Int(static_cast<int>(n.i));
    case Number::Kind::kUint: return handler.Uint(static_cast<unsigned>(n.u));
    case Number::Kind::kInt64: return handler.Int64(n.i);
    case Number::Kind::kUint64: return handler.Uint64(n.u);
    case Number::Kind::kDouble: return handler.Double(n.d);
  }
  return false;
}

// True if `s` is well-formed UTF-8. A parser's strings fail this only when
// a lone surrogate escape (\udc00) was decoded, which RapidJSON 1.1 lets
// through as the bytes of a surrogate code point.
bool IsValidUtf8(std::string_view s);

// Compact serialization.
std::string Serialize(const Value& v);
void SerializeTo(const Value& v, std::string* out);


// Appends `s` as a quoted, escaped JSON string.
void AppendQuoted(std::string* out, std::string_view s);
std::string Quote(std::string_view s);
// Appends ["a","b",...].
void AppendStringArray(std::string* out, const std::vector<std::string>& items);

inline std::string_view View(const Value& v) {
  return std::string_view(v.GetString(), v.GetStringLength());
}

inline Value StringValue(std::string_view s, Allocator& a) {
  return Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), a);
}

// A RapidJSON output stream appending to a std::string.
class StringOutput {
 public:
  using Ch = char;
  explicit StringOutput(std::string* s) : s_(s) {}
  void Put(char c) { s_->push_back(c); }
  void Flush() {}

 private:
  std::string* s_;
};

using Writer = rapidjson::Writer<StringOutput>;

}  // namespace settee::json
