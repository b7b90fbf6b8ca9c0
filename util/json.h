// JSON helpers over RapidJSON, shared by every module.
//
// Parsing is iterative and nesting depth is bounded, so hostile input cannot
// overflow the stack in the parser or in later recursive walks.
#pragma once

#include <string>
#include <string_view>

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

// False if arrays/objects in `text` nest deeper than kMaxNestingDepth.
// Brackets inside strings do not count. One linear scan.
bool NestingWithinLimit(std::string_view text);

// Parses `text` into *doc. kBadRequest with a reason on malformed JSON,
// invalid UTF-8 or nesting deeper than kMaxNestingDepth.
Status Parse(std::string_view text, Document* doc);

// Compact serialization.
std::string Serialize(const Value& v);
void SerializeTo(const Value& v, std::string* out);

// Serialization with object members sorted by key (recursively): the same
// JSON value always gives the same bytes. Used for revision-id hashing.
std::string Canonical(const Value& v);

// A document whose value and parse-stack allocators both draw from a
// thread-local arena (see ScratchDocument()).
using ScratchDoc = rapidjson::GenericDocument<rapidjson::UTF8<>, rapidjson::MemoryPoolAllocator<>,
                                              rapidjson::MemoryPoolAllocator<>>;

// A document for short-lived parses on hot paths: parsing into it allocates
// nothing in the common case. It is cleared by, and only valid until, the
// next call on the same thread.
ScratchDoc& ScratchDocument();

// Parse() into a scratch document.
Status Parse(std::string_view text, ScratchDoc* doc);

// Appends `s` as a quoted, escaped JSON string.
void AppendQuoted(std::string* out, std::string_view s);
std::string Quote(std::string_view s);

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

// Writes v to w with object members sorted by key (see Canonical()).
void WriteCanonical(const Value& v, Writer& w);

}  // namespace settee::json
