// The shortest decimal digits that read back as a double, and where its
// decimal point goes: what number printers build their text from (Erlang's
// float_to_list/io_lib_format fwrite_g, util/erlang_text.h; JavaScript's
// Number.prototype.toString, util/js_value.h).
//
// Thread safety: pure function.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

namespace settee {

// A nonzero finite value as (-)0.<digits> times ten to the `point`:
// 1234.5 is {false, "12345", 4}, 0.001 is {false, "1", -2}.
struct DecimalDigits {
  bool negative = false;
  std::string digits;  // no leading or trailing zeros
  int point = 0;
};

inline DecimalDigits ShortestDecimalDigits(double value) {
  char buf[64];
  char* end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific).ptr;
  std::string_view sci(buf, static_cast<size_t>(end - buf));  // d.ddde+X
  DecimalDigits out;
  out.negative = sci.front() == '-';
  if (out.negative) sci.remove_prefix(1);
  const size_t e = sci.find('e');
  for (char c : sci.substr(0, e)) {
    if (c != '.') out.digits.push_back(c);
  }
  int exponent = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  out.point = exponent + 1;
  return out;
}

}  // namespace settee
