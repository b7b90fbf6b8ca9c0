#include "storage/collation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <vector>

#include <unicode/ucol.h>
#include <unicode/ustring.h>
#include <unicode/uvernum.h>
#include <unicode/uversion.h>

namespace settee::collation {

namespace {

// Index-key tags. DO NOT CHANGE THESE VALUES: they are embedded in persisted
// index keys (docs/index_key_format.md). kEnd must stay below every tag so a
// shorter array/object sorts before a longer one with the same prefix.
enum Tag : uint8_t {
  kEnd = 0x00,
  kTooDeep = 0x01,
  kNull = 0x10,
  kFalse = 0x20,
  kTrue = 0x30,
  kNumber = 0x40,
  kString = 0x50,
  kArray = 0x60,
  kObject = 0x70,
};

int Sign(int v) { return (v > 0) - (v < 0); }

// ucol_clone() appeared in ICU 71 and deprecated ucol_safeClone().
UCollator* CloneCollator(const UCollator* c, UErrorCode* st) {
#if U_ICU_VERSION_MAJOR_NUM >= 71
  return ucol_clone(c, st);
#else
  return ucol_safeClone(c, nullptr, nullptr, st);
#endif
}

int TypeRank(const json::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType: return 1;
    case rapidjson::kFalseType: return 2;
    case rapidjson::kTrueType: return 3;
    case rapidjson::kNumberType: return 4;
    case rapidjson::kStringType: return 5;
    case rapidjson::kArrayType: return 6;
    case rapidjson::kObjectType: return 7;
  }
  return 0;
}

int CompareDoubles(double x, double y) {
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;  // includes -0 == 0
  // At least one NaN: NaN sorts after everything and equals itself.
  const bool xn = std::isnan(x), yn = std::isnan(y);
  return xn == yn ? 0 : (xn ? 1 : -1);
}

// ---------------------------------------------------------------------------
// Process-wide ICU state, built once (magic static) and immutable afterwards.

// The ASCII fast path. For the printable ASCII characters and the whitespace
// controls, ICU's root collation is: one primary weight per character (no
// contractions or expansions), the two cases of a letter share a primary,
// every character has the common secondary weight, and the only tertiary
// difference is lowercase < uppercase. A string comparison over such
// characters is then: compare the primary-rank sequences lexicographically
// (a prefix first); if they are equal, the first case difference decides.
// rank_[] is derived from ICU itself at start-up and self-checked; the test
// compares the fast path against ICU exhaustively on short strings.
struct Shared {
  UCollator* root = nullptr;
  bool ascii_enabled = false;
  uint8_t rank[256] = {};   // 0: not handled by the fast path (>= 0x80, ignorable)
  uint8_t upper[256] = {};  // 1 for 'A'..'Z'

  Shared() {
    UErrorCode st = U_ZERO_ERROR;
    root = ucol_open("", &st);
    if (U_FAILURE(st)) {
      if (root != nullptr) ucol_close(root);
      root = nullptr;
      return;
    }
    ascii_enabled = BuildAsciiTable();
  }
  ~Shared() {
    if (root != nullptr) ucol_close(root);
  }

  bool BuildAsciiTable() {
    UErrorCode st = U_ZERO_ERROR;
    UCollator* primary = CloneCollator(root, &st);
    if (U_FAILURE(st) || primary == nullptr) return false;
    std::unique_ptr<UCollator, decltype(&ucol_close)> guard(primary, &ucol_close);
    ucol_setStrength(primary, UCOL_PRIMARY);

    std::vector<UChar> chars;
    for (UChar c = 0x09; c <= 0x0D; c++) chars.push_back(c);
    for (UChar c = 0x20; c <= 0x7E; c++) chars.push_back(c);
    // Characters ignorable at primary level (ICU gives them no weight) stay
    // out of the fast path: they break the one-character-one-weight model.
    std::erase_if(chars, [&](UChar c) {
      return ucol_strcoll(primary, &c, 1, nullptr, 0) == UCOL_EQUAL;
    });
    std::stable_sort(chars.begin(), chars.end(), [&](UChar x, UChar y) {
      return ucol_strcoll(primary, &x, 1, &y, 1) == UCOL_LESS;
    });
    int r = 0;
    for (size_t i = 0; i < chars.size(); i++) {
      const UChar c = chars[i];
      if (i == 0 || ucol_strcoll(primary, &chars[i - 1], 1, &c, 1) != UCOL_EQUAL) {
        r++;
      } else {
        // Same primary as the previous character: must be the case pair of
        // a letter, lowercase first, lowercase < uppercase at full strength.
        const UChar p = chars[i - 1];
        const bool pair = (p >= 'a' && p <= 'z' && c == p - 0x20) ||
                          (c >= 'a' && c <= 'z' && p == c - 0x20);
        if (!pair) return false;
        const UChar lower = std::max(p, c), up = std::min(p, c);
        if (ucol_strcoll(root, &lower, 1, &up, 1) != UCOL_LESS) return false;
      }
      if (r > 255) return false;
      rank[c] = static_cast<uint8_t>(r);
    }
    for (int c = 'A'; c <= 'Z'; c++) {
      if (rank[c] == 0 || rank[c] != rank[c + 0x20]) return false;
      upper[c] = 1;
    }
    return true;
  }
};

const Shared& GetShared() {
  static const Shared shared;
  return shared;
}

// One collator per thread: ICU does not allow one UCollator to be used by
// several threads at once. Cloning the root is cheap (shares the data).
struct ThreadCollator {
  UCollator* coll = nullptr;
  bool tried = false;
  ~ThreadCollator() {
    if (coll != nullptr) ucol_close(coll);
  }
};

UCollator* GetCollator() {
  thread_local ThreadCollator tc;
  if (!tc.tried) {
    tc.tried = true;
    const Shared& s = GetShared();
    if (s.root != nullptr) {
      UErrorCode st = U_ZERO_ERROR;
      tc.coll = CloneCollator(s.root, &st);
      if (U_FAILURE(st)) {
        if (tc.coll != nullptr) ucol_close(tc.coll);
        tc.coll = nullptr;
      }
    }
  }
  return tc.coll;
}

// Result of the ASCII fast path, or kNotAscii if a byte is outside it.
constexpr int kNotAscii = 2;

int AsciiCompare(const Shared& s, std::string_view a, std::string_view b) {
  const auto* pa = reinterpret_cast<const unsigned char*>(a.data());
  const auto* pb = reinterpret_cast<const unsigned char*>(b.data());
  const size_t n = std::min(a.size(), b.size());
  int result = 0;
  size_t i = 0;
  for (; i < n; i++) {
    const unsigned char ca = pa[i], cb = pb[i];
    if (ca == cb) {  // the common case: one lookup
      if (s.rank[ca] == 0) return kNotAscii;
      continue;
    }
    const uint8_t ra = s.rank[ca], rb = s.rank[cb];
    if (ra == 0 || rb == 0) return kNotAscii;
    if (ra != rb) {
      result = ra < rb ? -1 : 1;
      break;
    }
    if (result == 0) result = s.upper[ca] ? 1 : -1;  // first case difference
  }
  if (i == n && a.size() != b.size()) result = a.size() < b.size() ? -1 : 1;
  // Every remaining byte must be in the fast path too: an ignorable later in
  // the string would not change ICU's answer, but a non-ASCII one might
  // (e.g. a combining accent changes the secondary level).
  for (size_t j = i; j < a.size(); j++) {
    if (s.rank[pa[j]] == 0) return kNotAscii;
  }
  for (size_t j = i; j < b.size(); j++) {
    if (s.rank[pb[j]] == 0) return kNotAscii;
  }
  return result;
}

int IcuCompare(std::string_view a, std::string_view b) {
  if (a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0) return 0;
  UCollator* coll = GetCollator();
  if (coll != nullptr) {
    UErrorCode st = U_ZERO_ERROR;
    const UCollationResult r = ucol_strcollUTF8(coll, a.data(), static_cast<int32_t>(a.size()),
                                                b.data(), static_cast<int32_t>(b.size()), &st);
    if (U_SUCCESS(st) && r != UCOL_EQUAL) return r == UCOL_LESS ? -1 : 1;
  }
  return CompareRawStrings(a, b);
}

// ---------------------------------------------------------------------------
// Comparison.

template <bool kRaw>
int CompareImpl(const json::Value& a, const json::Value& b, int depth) {
  if (depth > kMaxDepth) return 0;
  const int ta = TypeRank(a), tb = TypeRank(b);
  if (ta != tb) return ta < tb ? -1 : 1;
  switch (a.GetType()) {
    case rapidjson::kNullType:
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return 0;
    case rapidjson::kNumberType:
      if (a.IsInt() && b.IsInt()) {  // exact and cheap; same as the double order
        const int x = a.GetInt(), y = b.GetInt();
        return (x > y) - (x < y);
      }
      return CompareDoubles(a.GetDouble(), b.GetDouble());
    case rapidjson::kStringType:
      return kRaw ? CompareRawStrings(json::View(a), json::View(b))
                  : CompareStrings(json::View(a), json::View(b));
    case rapidjson::kArrayType: {
      const auto na = a.Size(), nb = b.Size();
      const auto n = std::min(na, nb);
      for (rapidjson::SizeType i = 0; i < n; i++) {
        const int r = CompareImpl<kRaw>(a[i], b[i], depth + 1);
        if (r != 0) return r;
      }
      return (na > nb) - (na < nb);
    }
    case rapidjson::kObjectType: {
      auto ia = a.MemberBegin(), ib = b.MemberBegin();
      for (; ia != a.MemberEnd() && ib != b.MemberEnd(); ++ia, ++ib) {
        const std::string_view ka = json::View(ia->name), kb = json::View(ib->name);
        int r = kRaw ? CompareRawStrings(ka, kb) : CompareStrings(ka, kb);
        if (r != 0) return r;
        r = CompareImpl<kRaw>(ia->value, ib->value, depth + 1);
        if (r != 0) return r;
      }
      const bool ea = ia == a.MemberEnd(), eb = ib == b.MemberEnd();
      return ea == eb ? 0 : (ea ? -1 : 1);
    }
  }
  return 0;
}

// ---------------------------------------------------------------------------
// Encoding.

void AppendNumber(double d, std::string* out) {
  if (std::isnan(d)) {
    d = std::numeric_limits<double>::quiet_NaN();  // one NaN, after +Inf
    d = std::fabs(d);
  }
  if (d == 0) d = 0.0;  // -0 == 0
  uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  // Flip so that unsigned big-endian order is numeric order: negatives get
  // every bit inverted, non-negatives get the sign bit set.
  bits = (bits >> 63) ? ~bits : (bits | (uint64_t{1} << 63));
  char buf[8];
  for (int i = 0; i < 8; i++) buf[i] = static_cast<char>(bits >> (56 - 8 * i));
  out->append(buf, 8);
}

// Escapes 0x00 and 0x01 so 0x00 can terminate: order-preserving and
// prefix-free (0x00 -> 01 01, 0x01 -> 01 02, then a 00 terminator).
void AppendEscaped(std::string_view s, std::string* out) {
  size_t start = 0;
  for (size_t i = 0; i < s.size(); i++) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c > 0x01) continue;
    out->append(s.data() + start, i - start);
    out->push_back('\x01');
    out->push_back(c == 0 ? '\x01' : '\x02');
    start = i + 1;
  }
  out->append(s.data() + start, s.size() - start);
  out->push_back('\x00');
}

// Appends ICU's sort key of s, including its 0x00 terminator (the only zero
// byte in a sort key). Nothing but the terminator when ICU is unavailable,
// which matches IcuCompare() falling back to the raw order.
void AppendSortKey(std::string_view s, std::string* out) {
  UCollator* coll = GetCollator();
  if (coll == nullptr) {
    out->push_back('\x00');
    return;
  }
  // UTF-8 -> UTF-16 (never longer in code units than the UTF-8 bytes), on
  // the stack for short strings. Ill-formed input becomes U+FFFD, as in
  // ucol_strcollUTF8.
  UChar stack[256];
  std::unique_ptr<UChar[]> heap;
  UChar* u16 = stack;
  int32_t cap = static_cast<int32_t>(std::size(stack));
  if (s.size() > std::size(stack)) {
    cap = static_cast<int32_t>(s.size());
    heap.reset(new UChar[cap]);
    u16 = heap.get();
  }
  int32_t len = 0;
  UErrorCode st = U_ZERO_ERROR;
  u_strFromUTF8WithSub(u16, cap, &len, s.data(), static_cast<int32_t>(s.size()), 0xFFFD, nullptr,
                       &st);
  if (U_FAILURE(st)) {
    out->push_back('\x00');
    return;
  }
  const size_t base = out->size();
  size_t room = 2 * s.size() + 32;
  for (;;) {
    out->resize(base + room);
    const int32_t need = ucol_getSortKey(coll, u16, len, reinterpret_cast<uint8_t*>(&(*out)[base]),
                                         static_cast<int32_t>(room));
    if (need <= 0) {  // internal error: behave like "no ICU" for this string
      out->resize(base);
      out->push_back('\x00');
      return;
    }
    if (static_cast<size_t>(need) <= room) {
      out->resize(base + need);
      return;
    }
    room = static_cast<size_t>(need);
  }
}

template <bool kRaw>
void AppendString(std::string_view s, std::string* out) {
  out->push_back(static_cast<char>(kString));
  if (!kRaw) AppendSortKey(s, out);
  AppendEscaped(s, out);  // the code point tie-break (or, raw, the whole key)
}

template <bool kRaw>
void AppendImpl(const json::Value& v, int depth, std::string* out) {
  if (depth > kMaxDepth) {
    out->push_back(static_cast<char>(kTooDeep));
    return;
  }
  switch (v.GetType()) {
    case rapidjson::kNullType: out->push_back(static_cast<char>(kNull)); return;
    case rapidjson::kFalseType: out->push_back(static_cast<char>(kFalse)); return;
    case rapidjson::kTrueType: out->push_back(static_cast<char>(kTrue)); return;
    case rapidjson::kNumberType:
      out->push_back(static_cast<char>(kNumber));
      AppendNumber(v.GetDouble(), out);
      return;
    case rapidjson::kStringType: AppendString<kRaw>(json::View(v), out); return;
    case rapidjson::kArrayType:
      out->push_back(static_cast<char>(kArray));
      for (const auto& e : v.GetArray()) AppendImpl<kRaw>(e, depth + 1, out);
      out->push_back(static_cast<char>(kEnd));
      return;
    case rapidjson::kObjectType:
      out->push_back(static_cast<char>(kObject));
      for (const auto& m : v.GetObject()) {
        AppendString<kRaw>(json::View(m.name), out);
        AppendImpl<kRaw>(m.value, depth + 1, out);
      }
      out->push_back(static_cast<char>(kEnd));
      return;
  }
}

}  // namespace

int Compare(const json::Value& a, const json::Value& b) { return CompareImpl<false>(a, b, 0); }

int CompareRaw(const json::Value& a, const json::Value& b) { return CompareImpl<true>(a, b, 0); }

int CompareStrings(std::string_view a, std::string_view b) {
  const Shared& s = GetShared();
  if (s.ascii_enabled) {
    const int r = AsciiCompare(s, a, b);
    if (r != kNotAscii) return r != 0 ? r : CompareRawStrings(a, b);
  }
  return IcuCompare(a, b);
}

int CompareRawStrings(std::string_view a, std::string_view b) {
  // UTF-8 byte order is code point order.
  return Sign(a.compare(b));
}

void AppendIndexKey(const json::Value& v, std::string* out) { AppendImpl<false>(v, 0, out); }

std::string EncodeIndexKey(const json::Value& v) {
  std::string out;
  AppendImpl<false>(v, 0, &out);
  return out;
}

void AppendRawIndexKey(const json::Value& v, std::string* out) { AppendImpl<true>(v, 0, out); }

std::string EncodeRawIndexKey(const json::Value& v) {
  std::string out;
  AppendImpl<true>(v, 0, &out);
  return out;
}

std::string IcuCollatorVersion() {
  UCollator* coll = GetCollator();
  if (coll == nullptr) return "none";
  UVersionInfo info;
  ucol_getVersion(coll, info);
  char buf[U_MAX_VERSION_STRING_LENGTH];
  u_versionToString(info, buf);
  return buf;
}

bool TEST_AsciiFastPathEnabled() { return GetShared().ascii_enabled; }

int TEST_CompareStringsIcuOnly(std::string_view a, std::string_view b) { return IcuCompare(a, b); }

}  // namespace settee::collation
