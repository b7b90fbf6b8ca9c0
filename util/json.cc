#include "util/json.h"

#include <array>
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

namespace {
// What follows the backslash for bytes JSON requires escaped (0: none). The
// same choices as rapidjson::Writer, so output from both is byte-identical.
constexpr std::array<char, 256> kEscapes = [] {
  std::array<char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 'u';
  t['\b'] = 'b';
  t['\t'] = 't';
  t['\n'] = 'n';
  t['\f'] = 'f';
  t['\r'] = 'r';
  t['"'] = '"';
  t['\\'] = '\\';
  return t;
}();
}  // namespace

void AppendQuoted(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const char e = kEscapes[c];
    if (e == 0) continue;
    out->append(s.data() + run, i - run);
    out->push_back('\\');
    out->push_back(e);
    if (e == 'u') {
      out->append("00", 2);
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 0xf]);
    }
    run = i + 1;
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
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
