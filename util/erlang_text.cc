#include "util/erlang_text.h"

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

}  // namespace settee::erlang
