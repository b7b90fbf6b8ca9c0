// JSON helpers over RapidJSON, shared by every module.
//
// Parsing is iterative and nesting depth is bounded, so hostile input cannot
// overflow the stack in the parser or in later recursive walks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
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

// Sends a number to a RapidJSON SAX handler, as RapidJSON would.
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

// True if `s` is well-formed UTF-8.
bool IsValidUtf8(std::string_view s);
// True if every byte of `s` is below 0x80 (checked a word at a time).
bool IsAscii(std::string_view s);

namespace internal {

// Between RapidJSON's reader and a handler: number text goes through
// ParseNumber, and strings RapidJSON 1.1 decoded from a lone surrogate
// escape (\udc00, which it lets through as the bytes of a surrogate code
// point) are refused.
template <typename Handler>
class CorrectedSax {
 public:
  explicit CorrectedSax(Handler& inner) : inner_(inner) {}
  const Status& status() const { return status_; }

  bool Null() { return inner_.Null(); }
  bool Bool(bool b) { return inner_.Bool(b); }
  bool Int(int i) { return inner_.Int(i); }
  bool Uint(unsigned u) { return inner_.Uint(u); }
  bool Int64(int64_t i) { return inner_.Int64(i); }
  bool Uint64(uint64_t u) { return inner_.Uint64(u); }
  bool Double(double d) { return inner_.Double(d); }
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    Number number;
    status_ = ParseNumber(std::string_view(s, n), &number);
    return status_.ok() && EmitNumber(number, inner_);
  }
  bool String(const char* s, rapidjson::SizeType n, bool copy) {
    return Utf8(s, n) && inner_.String(s, n, copy);
  }
  bool Key(const char* s, rapidjson::SizeType n, bool copy) {
    return Utf8(s, n) && inner_.Key(s, n, copy);
  }
  bool StartObject() { return inner_.StartObject(); }
  bool EndObject(rapidjson::SizeType n) { return inner_.EndObject(n); }
  bool StartArray() { return inner_.StartArray(); }
  bool EndArray(rapidjson::SizeType n) { return inner_.EndArray(n); }

 private:
  bool Utf8(const char* s, rapidjson::SizeType n) {
    if (IsValidUtf8(std::string_view(s, n))) return true;
    status_ = Status::BadRequest("invalid UTF-8 JSON: lone surrogate in a \\u escape");
    return false;
  }

  Handler& inner_;
  Status status_;
};

// "invalid UTF-8 JSON: <RapidJSON's message> at offset N".
Status ParseError(rapidjson::ParseResult result);

}  // namespace internal

// Runs RapidJSON's SAX reader (iterative: no recursion) over `text` into
// `handler`, with settee's corrections of RapidJSON 1.1: numbers reach the
// handler as ParseNumber reads them, lone surrogate escapes are refused, and
// a NUL byte does not end the input (RapidJSON takes it for the end and
// would drop what follows). Encoding is validated unless the text is ASCII.
// When the handler itself stops the parse, the result is a generic error:
// callers whose handlers keep their own Status should report that first.
template <typename Handler>
Status ParseSax(std::string_view text, Handler& handler) {
  // Per thread: its stack would otherwise be allocated for every parse.
  thread_local rapidjson::Reader reader;
  internal::CorrectedSax<Handler> corrected(handler);
  rapidjson::MemoryStream stream(text.data(), text.size());
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;
  rapidjson::ParseResult result =
      IsAscii(text)
          ? reader.Parse<kFlags>(stream, corrected)
          : reader.Parse<kFlags | rapidjson::kParseValidateEncodingFlag>(stream, corrected);
  if (!corrected.status().ok()) return corrected.status();
  if (!result.IsError() && stream.Tell() != text.size()) {
    result.Set(rapidjson::kParseErrorDocumentRootNotSingular, stream.Tell());
  }
  return result.IsError() ? internal::ParseError(result) : Status::OK();
}

// Compact serialization.
std::string Serialize(const Value& v);
void SerializeTo(const Value& v, std::string* out);


// Appends `s` as a quoted, escaped JSON string.
void AppendQuoted(std::string* out, std::string_view s);
// The index of the first byte of `s` that AppendQuoted escapes (s.size()
// if none, the common case: such a string is copied between its quotes).
size_t FirstEscape(std::string_view s);
std::string Quote(std::string_view s);
// Appends ["a","b",...].
void AppendStringArray(std::string* out, const std::vector<std::string>& items);

// JavaScript's truthiness of a JSON value, as a validate function's
// `if (x)` tests a member: null, false, 0 and "" are false; objects and
// arrays, even empty, are true.
inline bool JsTruthy(const Value& v) {
  if (v.IsNull()) return false;
  if (v.IsBool()) return v.GetBool();
  if (v.IsNumber()) return v.GetDouble() != 0;
  if (v.IsString()) return v.GetStringLength() != 0;
  return true;
}

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
