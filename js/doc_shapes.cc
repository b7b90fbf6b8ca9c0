#include "js/doc_shapes.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <v8-primitive.h>

#include "util/json.h"
#include "util/json_scan.h"

namespace settee::js {

namespace {

struct ShapeTable {
  // A shape's names, each ended by '\0' (JSON text has no raw control
  // characters, so no name holds one) -> its index, or -1 if declined.
  std::unordered_map<std::string, int> index;
  std::vector<std::string> names;  // by index
  // Declined shapes remembered (at most kMaxShapes: past that a declined
  // shape is judged again each time rather than held for good, as a
  // thread may read documents of ever new integer names).
  int declined = 0;
  // The last shape looked up: a loop of gets mostly reads one shape.
  std::string last;
  int last_index = -1;
  std::string scratch;
};

thread_local ShapeTable table;

enum class Kind : uint8_t { kString, kAsciiString, kNumber, kTrue, kFalse, kNull };

// No member initializers: FlatDocValues' array of kMaxShapeMembers is left
// uninitialized (zeroing it was a quarter of the function's own time).
struct Member {
  const char* data;  // a string's bytes between the quotes, or a number's
  size_t size;
  Kind kind;
  std::string_view text() const { return std::string_view(data, size); }
};

bool Space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

void SkipSpace(std::string_view s, size_t* i) {
  while (*i < s.size() && Space(s[*i])) ++*i;
}

// ScanString finds the first stop byte of a word as its lowest set bit.
static_assert(std::endian::native == std::endian::little,
              "ScanString reads the text's first byte as the low byte of a memcpy'd word");

// A string whose opening quote is at s[*i] (*i < s.size()); false if it has
// an escape or a raw control character (or no end). *ascii: whether every
// byte is below 0x80. Eight bytes at a time: a byte loop cost ~120
// instructions per string of a small document, two memchr calls a string
// ~6% of a get.
bool ScanString(std::string_view s, size_t* i, std::string_view* out, bool* ascii) {
  const char* begin = s.data() + *i + 1;
  const size_t avail = s.size() - (*i + 1);
  uint64_t high = 0;
  size_t n = 0;
  for (;; n += 8) {
    if (n + 8 > avail) {
      for (;; ++n) {
        if (n == avail) return false;
        const unsigned char c = static_cast<unsigned char>(begin[n]);
        if (c == '"') break;
        if (c == '\\' || c < 0x20) return false;
        high |= c;
      }
      break;
    }
    uint64_t w;
    std::memcpy(&w, begin + n, 8);
    const uint64_t stop = json::scan::StringStops(w);
    if (stop != 0) {
      const int at = __builtin_ctzll(stop) / 8;
      if (begin[n + at] != '"') return false;
      if (at > 0) high |= w & (~0ULL >> (64 - 8 * at));
      n += at;
      break;
    }
    high |= w;
  }
  *ascii = (high & json::scan::kHighBits) == 0;
  *out = std::string_view(begin, n);
  *i += n + 2;
  return true;
}

bool Digit(std::string_view s, size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; }

// A number as JSON spells it, -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?,
// starting at s[*i]; false for anything else JSON.parse refuses (01, 1.,
// -.5), which std::from_chars would read.
bool ScanNumber(std::string_view s, size_t* i) {
  size_t j = *i;
  if (j < s.size() && s[j] == '-') ++j;
  if (!Digit(s, j)) return false;
  if (s[j++] != '0') {
    while (Digit(s, j)) ++j;
  }
  if (j < s.size() && s[j] == '.') {
    if (!Digit(s, ++j)) return false;
    while (Digit(s, j)) ++j;
  }
  if (j < s.size() && (s[j] == 'e' || s[j] == 'E')) {
    ++j;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    if (!Digit(s, j)) return false;
    while (Digit(s, j)) ++j;
  }
  *i = j;
  return true;
}

bool Word(std::string_view s, size_t* i, std::string_view word) {
  if (s.substr(*i, word.size()) != word) return false;
  *i += word.size();
  return true;
}

// The object's members, in order, appended to members[*count...] and their
// names to *joined; false if it is not flat (see the header).
bool ScanFlat(std::string_view s, Member* members, int* count, std::string* joined) {
  size_t i = 0;
  SkipSpace(s, &i);
  if (i >= s.size() || s[i] != '{') return false;
  ++i;
  SkipSpace(s, &i);
  int n = *count;
  if (i < s.size() && s[i] == '}') {
    ++i;
  } else {
    for (;;) {
      if (n == kMaxShapeMembers || i >= s.size() || s[i] != '"') return false;
      std::string_view name;
      bool ascii;
      if (!ScanString(s, &i, &name, &ascii)) return false;
      joined->append(name);
      joined->push_back('\0');
      SkipSpace(s, &i);
      if (i >= s.size() || s[i] != ':') return false;
      ++i;
      SkipSpace(s, &i);
      if (i >= s.size()) return false;
      Member& m = members[n++];
      const char c = s[i];
      if (c == '"') {
        std::string_view text;
        if (!ScanString(s, &i, &text, &ascii)) return false;
        m.data = text.data();
        m.size = text.size();
        m.kind = ascii ? Kind::kAsciiString : Kind::kString;
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        const size_t start = i;
        if (!ScanNumber(s, &i)) return false;
        m.data = s.data() + start;
        m.size = i - start;
        m.kind = Kind::kNumber;
      } else if (Word(s, &i, "true")) {
        m.kind = Kind::kTrue;
      } else if (Word(s, &i, "false")) {
        m.kind = Kind::kFalse;
      } else if (Word(s, &i, "null")) {
        m.kind = Kind::kNull;
      } else {
        return false;  // a nested object or array
      }
      SkipSpace(s, &i);
      if (i >= s.size()) return false;
      if (s[i] == '}') {
        ++i;
        break;
      }
      if (s[i] != ',') return false;
      ++i;
      SkipSpace(s, &i);
    }
  }
  SkipSpace(s, &i);
  if (i != s.size()) return false;
  *count = n;
  return true;
}

// Whether an object literal with these names builds what JSON.parse does.
bool LiteralSafe(const std::string& joined, int count) {
  std::vector<std::string_view> names;
  names.reserve(count);
  for (size_t at = 0; at < joined.size();) {
    const size_t end = joined.find('\0', at);
    names.emplace_back(joined.data() + at, end - at);
    at = end + 1;
  }
  for (std::string_view name : names) {
    if (name == "__proto__") return false;
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return false;
    }
  }
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) == names.end();
}

// The shape index of `joined`, adding it if new; -1 if declined.
int ShapeOf(const std::string& joined, int count) {
  ShapeTable& t = table;
  if (t.last_index >= 0 && joined == t.last) return t.last_index;
  auto it = t.index.find(joined);
  int index;
  if (it != t.index.end()) {
    index = it->second;
  } else {
    if (static_cast<int>(t.names.size()) >= kMaxShapes) return -1;
    if (!LiteralSafe(joined, count)) {
      if (t.declined < kMaxShapes) {
        ++t.declined;
        t.index.emplace(joined, -1);
      }
      return -1;
    }
    index = static_cast<int>(t.names.size());
    t.names.push_back(joined);
    t.index.emplace(joined, index);
  }
  if (index >= 0) {
    t.last = joined;
    t.last_index = index;
  }
  return index;
}

// The values array of members[0, count) named by `joined`; `first` (if not
// empty) is the value of member 0.
v8::MaybeLocal<v8::Array> ValuesOf(v8::Isolate* isolate, const Member* members, int count,
                                   const std::string& joined, v8::Local<v8::Value> first) {
  const int shape = ShapeOf(joined, count);
  if (shape < 0) return {};
  // Only the first count + 1 slots are written and read: an array of
  // Locals would be zeroed whole (v8::Local's constructor) on every call.
  union Slots {
    Slots() {}
    v8::Local<v8::Value> at[kMaxShapeMembers + 1];
  } slots;
  v8::Local<v8::Value>* values = slots.at;
  new (&values[0]) v8::Local<v8::Value>(v8::Integer::New(isolate, shape));
  int k = 0;
  if (!first.IsEmpty()) {
    new (&values[1]) v8::Local<v8::Value>(first);
    k = 1;
  }
  for (; k < count; ++k) {
    const Member& m = members[k];
    v8::Local<v8::Value>& v = *new (&values[k + 1]) v8::Local<v8::Value>();
    switch (m.kind) {
      case Kind::kAsciiString:
      case Kind::kString: {
        v8::Local<v8::String> str;
        const bool made =
            m.kind == Kind::kAsciiString
                ? v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(m.data),
                                             v8::NewStringType::kNormal, static_cast<int>(m.size))
                      .ToLocal(&str)
                : v8::String::NewFromUtf8(isolate, m.data, v8::NewStringType::kNormal,
                                          static_cast<int>(m.size))
                      .ToLocal(&str);
        if (!made) return {};  // longer than V8 allows: the parser reports it
        v = str;
        break;
      }
      case Kind::kNumber: {
        double d = 0;
        auto [end, ec] = std::from_chars(m.data, m.data + m.size, d);
        if (ec != std::errc() || end != m.data + m.size || !std::isfinite(d)) return {};
        v = v8::Number::New(isolate, d);
        break;
      }
      case Kind::kTrue:
        v = v8::True(isolate);
        break;
      case Kind::kFalse:
        v = v8::False(isolate);
        break;
      case Kind::kNull:
        v = v8::Null(isolate);
        break;
    }
  }
  return v8::Array::New(isolate, values, count + 1);
}

}  // namespace

v8::MaybeLocal<v8::Array> FlatDocValues(v8::Isolate* isolate, std::string_view json,
                                        v8::Local<v8::String> id, std::string_view id_utf8) {
  Member members[kMaxShapeMembers];
  int count = 0;
  std::string& joined = table.scratch;
  joined.clear();
  if (!ScanFlat(json, members, &count, &joined)) return {};
  // The _id the caller asked for is that string again: no copy.
  v8::Local<v8::Value> first;
  if (!id.IsEmpty() && count > 0 && joined.compare(0, 4, std::string_view("_id\0", 4)) == 0 &&
      members[0].kind == Kind::kAsciiString && members[0].text() == id_utf8) {
    first = id;
  }
  return ValuesOf(isolate, members, count, joined, first);
}

v8::MaybeLocal<v8::Array> FlatDocValuesOf(v8::Isolate* isolate, v8::Local<v8::String> id,
                                          std::string_view id_utf8, std::string_view rev,
                                          std::string_view body) {
  Member members[kMaxShapeMembers];
  const bool ascii_id = json::IsAscii(id_utf8);
  members[0] = Member{id_utf8.data(), id_utf8.size(), ascii_id ? Kind::kAsciiString : Kind::kString};
  members[1] = Member{rev.data(), rev.size(), json::IsAscii(rev) ? Kind::kAsciiString : Kind::kString};
  int count = 2;
  std::string& joined = table.scratch;
  joined.assign("_id\0_rev\0", 9);
  if (!ScanFlat(body, members, &count, &joined)) return {};
  // An ASCII id is the caller's string again (one with a lone surrogate was
  // stored and is given back as its UTF-8, U+FFFD for the surrogate).
  v8::Local<v8::Value> first;
  if (ascii_id && !id.IsEmpty()) first = id;
  return ValuesOf(isolate, members, count, joined, first);
}

std::optional<v8::Local<v8::Array>> DocShapeNames(v8::Isolate* isolate, uint32_t index) {
  const ShapeTable& t = table;
  if (index >= t.names.size()) return std::nullopt;
  const std::string& joined = t.names[index];
  std::vector<v8::Local<v8::Value>> names;
  for (size_t at = 0; at < joined.size();) {
    const size_t end = joined.find('\0', at);
    v8::Local<v8::String> name;
    if (!v8::String::NewFromUtf8(isolate, joined.data() + at, v8::NewStringType::kNormal,
                                 static_cast<int>(end - at))
             .ToLocal(&name)) {
      return std::nullopt;
    }
    names.push_back(name);
    at = end + 1;
  }
  return v8::Array::New(isolate, names.data(), names.size());
}

size_t DocShapeTableEntries() { return table.index.size(); }

}  // namespace settee::js
