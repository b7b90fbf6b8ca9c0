#include "util/json.h"

#include <array>
#include <charconv>
#include <climits>
#include <cstring>
#include <vector>

#include <rapidjson/error/en.h>

#include "util/json_scan.h"

namespace settee::json {

namespace {

// False if arrays/objects nest deeper than kMaxNestingDepth. Brackets inside
// strings do not count. Runs before the parser: a rejected input costs one
// linear scan.
bool NestingWithinLimit(std::string_view text, int max_depth) {
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
      if (++depth > max_depth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

}  // namespace

Status Parse(std::string_view text, Document* doc, int max_depth) {
  if (!NestingWithinLimit(text, max_depth)) {
    return Status::BadRequest("JSON nesting is deeper than " + std::to_string(max_depth));
  }
  Status s;
  auto generate = [&](Document& handler) {
    s = ParseSax(text, handler);
    return s.ok();
  };
  doc->Populate(generate);
  if (!s.ok()) doc->SetNull();
  return s;
}

namespace internal {
Status ParseError(rapidjson::ParseResult result) {
  return Status::BadRequest(std::string("invalid UTF-8 JSON: ") +
                            rapidjson::GetParseError_En(result.Code()) + " at offset " +
                            std::to_string(result.Offset()));
}
}  // namespace internal

bool IsAscii(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size();
  uint64_t any = 0;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    any |= word;
  }
  for (; n > 0; ++p, --n) any |= static_cast<unsigned char>(*p);
  return (any & scan::kHighBits) == 0;
}

Status ParseNumber(std::string_view text, Number* out) {
  const char* begin = text.data();
  const char* end = begin + text.size();
  const bool negative = !text.empty() && text[0] == '-';
  if (text.find_first_of(".eE") == std::string_view::npos) {
    if (negative) {
      int64_t v;
      if (std::from_chars(begin, end, v).ec == std::errc()) {
        out->kind = v >= INT_MIN ? Number::Kind::kInt : Number::Kind::kInt64;
        out->i = v;
        return Status::OK();
      }
    } else {
      uint64_t v;
      if (std::from_chars(begin, end, v).ec == std::errc()) {
        out->kind = v <= UINT_MAX ? Number::Kind::kUint : Number::Kind::kUint64;
        out->u = v;
        return Status::OK();
      }
    }
    // Past 64 bits: a double, as RapidJSON and simdjson make it.
  }
  out->kind = Number::Kind::kDouble;
  auto [ptr, ec] = std::from_chars(begin, end, out->d);
  if (ec == std::errc() && ptr == end) return Status::OK();
  if (ec != std::errc::result_out_of_range) {
    return Status::BadRequest("invalid number: " + std::string(text));
  }
  // Out of range one way or the other: the decimal exponent of the first
  // significant digit tells which.
  int64_t magnitude = 0;
  bool seen_point = false, seen_digit = false;
  const char* p = begin + (negative ? 1 : 0);
  for (; p < end && *p != 'e' && *p != 'E'; ++p) {
    if (*p == '.') {
      seen_point = true;
    } else if (!seen_digit && *p == '0') {
      if (seen_point) --magnitude;
    } else {
      seen_digit = true;
      if (!seen_point) ++magnitude;
    }
  }
  int64_t exponent = 0;
  if (p < end) {
    ++p;
    bool minus = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) ++p;
    for (; p < end && exponent < 100000; ++p) exponent = exponent * 10 + (*p - '0');
    if (minus) exponent = -exponent;
  }
  if (magnitude + exponent > 0) {
    return Status::BadRequest("Number too big to be stored in double: " + std::string(text));
  }
  out->d = negative ? -0.0 : 0.0;
  return Status::OK();
}

bool IsValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const auto* end = p + s.size();
  while (p < end) {
    const unsigned c = *p;
    if (c < 0x80) {
      ++p;
      continue;
    }
    size_t n;
    unsigned cp;
    if (c >= 0xc2 && c <= 0xdf) {
      n = 1;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (static_cast<size_t>(end - p) <= n) return false;
    for (size_t k = 1; k <= n; ++k) {
      if ((p[k] & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (p[k] & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF.
    if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    p += n + 1;
  }
  return true;
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

// Eight bytes at a time: most strings need no escape at all.
size_t FirstEscape(std::string_view s) {
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t x;
    std::memcpy(&x, s.data() + i, 8);
    if (scan::StringStops(x) != 0) break;
  }
  for (; i < s.size(); ++i) {
    if (kEscapes[static_cast<unsigned char>(s[i])] != 0) return i;
  }
  return s.size();
}

void AppendQuoted(std::string* out, std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const size_t clean = FirstEscape(s);
  if (clean == s.size()) {
    const size_t at = out->size();
    out->resize(at + s.size() + 2);
    char* p = out->data() + at;
    *p = '"';
    if (!s.empty()) std::memcpy(p + 1, s.data(), s.size());
    p[s.size() + 1] = '"';
    return;
  }
  out->reserve(out->size() + s.size() + 2);
  out->push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = clean; i < s.size(); ++i) {
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
