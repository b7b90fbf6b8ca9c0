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

bool SameCouchRev(const CouchRev& a, const CouchRev& b) {
  if (a.text.size() != b.text.size()) return false;
  const size_t dash = a.text.find('-');
  if (dash != b.text.find('-') || a.text.compare(0, dash, b.text, 0, dash) != 0) return false;
  const bool number = a.text.size() - dash - 1 == 32;
  for (size_t i = dash + 1; i < a.text.size(); ++i) {
    char x = a.text[i], y = b.text[i];
    if (number) {
      if (x >= 'A' && x <= 'F') x = static_cast<char>(x - 'A' + 'a');
      if (y >= 'A' && y <= 'F') y = static_cast<char>(y - 'A' + 'a');
    }
    if (x != y) return false;
  }
  return true;
}

Status ExtractHeaderRev(const CouchRev* explicit_rev, const std::string* if_match,
                        std::optional<CouchRev>* out) {
  out->reset();
  if (if_match == nullptr) {
    if (explicit_rev != nullptr) *out = *explicit_rev;
    return Status::OK();
  }
  // string:strip(Value, both, $")
  std::string_view v(*if_match);
  while (!v.empty() && v.front() == '"') v.remove_prefix(1);
  while (!v.empty() && v.back() == '"') v.remove_suffix(1);
  CouchRev etag = ParseCouchRev(v);
  if (etag.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
  if (explicit_rev != nullptr && !SameCouchRev(*explicit_rev, etag)) {
    return Status::BadRequest("Document rev and etag have different values");
  }
  *out = explicit_rev != nullptr ? *explicit_rev : std::move(etag);
  return Status::OK();
}

Status UnstorableRevError(std::string_view rev) {
  return Status::BadRequest("settee cannot store revision " + std::string(rev) +
                            ": its generation must be from 1 to 18446744073709551615 and its id "
                            "non-empty");
}

}  // namespace settee
