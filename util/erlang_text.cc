#include "util/erlang_text.h"

#include <string>

#include "util/decimal_digits.h"

namespace settee::erlang {

namespace {

// io_lib:printable_latin1_list's rule, which ~p uses under the default
// printable range (latin1).
bool Printable(unsigned char c) {
  return (c >= 32 && c <= 126) || c >= 160 || c == '\n' || c == '\r' || c == '\t' || c == '\v' || c == '\b' ||
         c == '\f' || c == 27;
}

// The string between the quotes, as io_lib:write_string escapes it.
std::string Quoted(std::string_view bytes) {
  std::string out = "\"";
  for (unsigned char c : bytes) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\v': out += "\\v"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case 27: out += "\\e"; break;
      default: out.push_back(static_cast<char>(c));
    }
  }
  out += "\"";
  return out;
}

std::string Numbers(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) {
    if (!out.empty()) out.push_back(',');
    out += std::to_string(c);
  }
  return out;
}

bool AllPrintable(std::string_view bytes) {
  for (unsigned char c : bytes) {
    if (!Printable(c)) return false;
  }
  return true;
}

}  // namespace

std::string ListText(std::string_view bytes) {
  if (bytes.empty()) return "[]";
  return AllPrintable(bytes) ? Quoted(bytes) : "[" + Numbers(bytes) + "]";
}

std::string BinaryText(std::string_view bytes) {
  if (bytes.empty()) return "<<>>";
  return "<<" + (AllPrintable(bytes) ? Quoted(bytes) : Numbers(bytes)) + ">>";
}

bool ListToInteger(std::string_view text, bool* negative, uint64_t* magnitude) {
  *negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) text.remove_prefix(1);
  if (text.empty()) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    value = value > (UINT64_MAX - d) / 10 ? UINT64_MAX : value * 10 + d;
  }
  *magnitude = value;
  return true;
}

std::string FloatText(double value) {
  if (value == 0) return "0.0";
  // fwrite_g's Place: the value is 0.<digits> times ten to the Place.
  const auto [negative, digits, place] = ShortestDecimalDigits(value);
  const int len = static_cast<int>(digits.size());
  auto with_exponent = [&] {
    std::string out = digits.substr(0, 1) + "." + (len == 1 ? std::string("0") : digits.substr(1));
    return out + "e" + std::to_string(place - 1);
  };
  std::string out;
  if (place == 0) {
    out = "0." + digits;
  } else if (place > 0 && place < len) {
    out = digits.substr(0, place) + "." + digits.substr(place);
  } else {
    // insert_decimal: the exponent form unless the plain one is no longer.
    const int exp_cost = static_cast<int>(std::to_string(place - 1).size()) + 1 + (len == 1 ? 2 : 1);
    if (place < 0) {
      out = 2 - place <= exp_cost ? "0." + std::string(-place, '0') + digits : with_exponent();
    } else {
      out = place - len + 2 <= exp_cost ? digits + std::string(place - len, '0') + ".0" : with_exponent();
    }
  }
  return negative ? "-" + out : out;
}

}  // namespace settee::erlang
