#include "runtime/couch_rev.h"

namespace settee {

namespace {

bool IsHexDigit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// list_to_integer(Id, 16): an optional sign, then one or more hex digits.
bool IsErlangHexInteger(std::string_view s) {
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (!IsHexDigit(c)) return false;
  }
  return true;
}

}  // namespace

CouchRev ParseCouchRev(std::string_view rev) {
  CouchRev out;
  const size_t dash = rev.find('-');
  if (dash == std::string_view::npos) return out;
  // list_to_integer(Pos): an optional sign ('-' cannot occur before the
  // first dash), then decimal digits; leading zeros are fine.
  std::string_view pos = rev.substr(0, dash);
  if (!pos.empty() && pos[0] == '+') pos.remove_prefix(1);
  if (pos.empty()) return out;
  for (char c : pos) {
    if (c < '0' || c > '9') return out;
  }
  const std::string_view id = rev.substr(dash + 1);
  if (id.size() == 32 && !IsErlangHexInteger(id)) return out;
  while (pos.size() > 1 && pos[0] == '0') pos.remove_prefix(1);
  bool fits = pos.size() < 20 || (pos.size() == 20 && pos <= "18446744073709551615");
  const bool storable = fits && pos != "0" && !id.empty();
  out.kind = storable ? CouchRev::Kind::kStorable : CouchRev::Kind::kNamesNothing;
  out.text.reserve(pos.size() + 1 + id.size());
  out.text.append(pos).push_back('-');
  out.text.append(id);
  return out;
}

Status UnstorableRevError(std::string_view rev) {
  return Status::BadRequest("settee cannot store revision " + std::string(rev) +
                            ": its generation must be from 1 to 18446744073709551615 and its id "
                            "non-empty");
}

}  // namespace settee
