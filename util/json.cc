#include "util/json.h"

#include <vector>

#include <rapidjson/error/en.h>

namespace settee::json {

namespace {

// False if arrays/objects nest deeper than kMaxNestingDepth. Brackets inside
// strings do not count. Runs before the parser: a rejected input costs one
// linear scan.
bool NestingWithinLimit(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

Status Parse(std::string_view text, Document* doc) {
  if (!NestingWithinLimit(text)) {
    return Status::BadRequest("JSON nesting is deeper than " + std::to_string(kMaxNestingDepth));
  }
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  doc->Parse<kFlags>(text.data(), text.size());
  if (doc->HasParseError()) {
    return Status::BadRequest(std::string("invalid UTF-8 JSON: ") +
                              rapidjson::GetParseError_En(doc->GetParseError()) + " at offset " +
                              std::to_string(doc->GetErrorOffset()));
  }
  return Status::OK();
}

void SerializeTo(const Value& v, std::string* out) {
  StringOutput os(out);
  Writer w(os);
  v.Accept(w);
}

std::string Serialize(const Value& v) {
  std::string out;
  SerializeTo(v, &out);
  return out;
}

void AppendQuoted(std::string* out, std::string_view s) {
  StringOutput os(out);
  Writer w(os);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

void AppendStringArray(std::string* out, const std::vector<std::string>& items) {
  out->push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out->push_back(',');
    AppendQuoted(out, items[i]);
  }
  out->push_back(']');
}

std::string Quote(std::string_view s) {
  std::string out;
  AppendQuoted(&out, s);
  return out;
}

}  // namespace settee::json
