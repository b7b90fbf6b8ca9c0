#include "util/js_value.h"

#include <cmath>
#include <cstdlib>

#include "util/decimal_digits.h"

namespace settee::json {

namespace {

// Number.prototype.toString(10) (ECMA-262 Number::toString).
std::string NumberText(const Value& v) {
  // Past 2^53 JavaScript holds the nearest double: written as one.
  constexpr int64_t kExact = int64_t{1} << 53;
  if (v.IsInt64() && v.GetInt64() < kExact && v.GetInt64() > -kExact) return std::to_string(v.GetInt64());
  const double d = v.GetDouble();
  if (d == 0) return "0";
  // The value is 0.<digits> times ten to the n (the spec's k digits, n).
  const auto [negative, digits, n] = ShortestDecimalDigits(d);
  const int k = static_cast<int>(digits.size());
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(n - k, '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, n) + "." + digits.substr(n);
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(-n, '0') + digits;
  } else {
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += n - 1 >= 0 ? "e+" + std::to_string(n - 1) : "e" + std::to_string(n - 1);
  }
  return negative ? "-" + out : out;
}

// Number(s) for the decimal literals a user name may hold; NaN for
// anything else (hex, "Infinity": no name compares equal to them here).
double StringToNumber(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  if (s.empty()) return 0;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return NAN;
  }
  std::string text(s);
  char* end = nullptr;
  double d = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() ? d : NAN;
}

}  // namespace

std::string JsString(const Value& v) {
  if (v.IsString()) return std::string(View(v));
  if (v.IsNull()) return "null";
  if (v.IsBool()) return v.GetBool() ? "true" : "false";
  if (v.IsNumber()) return NumberText(v);
  if (v.IsArray()) {
    std::string out;
    bool first = true;
    for (const auto& e : v.GetArray()) {
      if (!first) out += ',';
      first = false;
      if (!e.IsNull()) out += JsString(e);
    }
    return out;
  }
  return "[object Object]";
}

bool JsStrictEquals(const Value& a, const Value& b) {
  if (a.IsString() && b.IsString()) return View(a) == View(b);
  if (a.IsNumber() && b.IsNumber()) return a.GetDouble() == b.GetDouble();
  if (a.IsBool() && b.IsBool()) return a.GetBool() == b.GetBool();
  return a.IsNull() && b.IsNull();
}

bool JsLooselyEqualsString(std::string_view s, const Value& v) {
  if (v.IsString()) return View(v) == s;
  if (v.IsNumber()) return StringToNumber(s) == v.GetDouble();
  if (v.IsBool()) return StringToNumber(s) == (v.GetBool() ? 1.0 : 0.0);
  if (v.IsArray() || v.IsObject()) return JsString(v) == s;
  return false;
}

}  // namespace settee::json
