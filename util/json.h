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
// invalid UTF-8 or nesting deeper than kMaxNestingDepth.
Status Parse(std::string_view text, Document* doc);

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
