// libFuzzer target: differential test of ParseIncomingDoc's two parsers.
//
// ParseIncomingDoc (storage/document.cc) parses plain documents with simdjson
// and falls back to the RapidJSON SAX path for everything else. The build
// generates a copy of document.cc in which the simdjson path never succeeds
// (tests/fuzz/make_reference_document.cmake), so RefParseIncomingDoc is the
// RapidJSON path alone. For every input both must agree exactly: status code
// and reason, id, _rev, _revisions, _deleted and body bytes (the body feeds
// the revision hash) -- except, by design, on whether a number past
// RapidJSON's exponent limit is accepted (HasExponentPastRapidJsonLimit). On
// success the body must also be canonical: compact RapidJSON output
// (Serialize(Parse(body)) == body), and a fixed point of ParseIncomingDoc.
//
// When document.h has ParseIncomingDocArray, the input is also parsed as a
// document array and compared with the reference the same way, and a
// document the one-document path accepts must come out the same as the only
// element of an array.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "storage/document.h"
#include "util/json.h"

namespace settee {
// Defined in the generated reference copy of storage/document.cc.
Status RefParseIncomingDoc(std::string_view json, std::string_view id_override, size_t max_size,
                           IncomingDoc* out);
#ifdef SETTEE_FUZZ_HAVE_DOC_ARRAY
Status RefParseIncomingDocArray(std::string_view json, size_t max_size,
                                std::vector<IncomingDoc>* out, std::vector<Status>* statuses);
#endif
}  // namespace settee

namespace {

using settee::IncomingDoc;
using settee::Status;

constexpr size_t kMaxSize = 1 << 20;

std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

// `a` is what ParseIncomingDoc (or ParseIncomingDocArray) gave, `b` what it
// is held against: by default the reference, the RapidJSON path alone.
[[noreturn]] void Fail(const char* what, std::string_view input, const std::string& a,
                       const std::string& b, const char* b_label = "slow only") {
  std::fprintf(stderr, "\n*** document_diff_fuzzer: %s\n  input (hex): %s\n  fast+slow: %s\n  %s: %s\n",
               what, Hex(input).c_str(), a.c_str(), b_label, b.c_str());
  std::abort();
}

std::string Describe(const Status& s, const IncomingDoc& d) {
  std::string out = s.ToString();
  if (!s.ok()) return out;
  out += " id=" + settee::json::Quote(d.id) + " rev_text=" + settee::json::Quote(d.rev_text);
  out += " rev=" + (d.rev ? d.rev->ToString() : std::string("none"));
  out += d.deleted ? " deleted" : " live";
  if (d.revisions) {
    out += " revisions=" + std::to_string(d.revisions->start) + ":";
    settee::json::AppendStringArray(&out, d.revisions->ids);
  }
  out += " body=" + d.body + " body_hex=" + Hex(d.body);
  return out;
}

// The differences between the paths that are there by design (see
// tests/storage/document_test.cc): RapidJSON's reader refuses, before settee
// sees its text, a number whose positive decimal exponent is more than 308
// plus its count of fraction digits ("0e1000", "0.001e310", "-0.0e+400"),
// and one whose integer part passes ~1.8e308 (over 307 digits) even if its
// exponent brings it back; simdjson reads both when the value is in range
// (0.0, 1e307). For an input holding such a number the paths may differ in
// whether, and why, they reject it; whatever both accept must still be the
// same.
//
// The reader stops counting fraction digits after 17 significant ones, so
// its limit can be lower than the one here, but only for numbers with a
// nonzero digit, which are then too big for a double on both paths.
//
// Only number tokens outside strings count: "0e1000" as a string is data.
// The scan need not follow JSON exactly, as only input that simdjson
// accepts can be accepted by one path and not the other.
bool HasExponentPastRapidJsonLimit(std::string_view text) {
  auto digit = [&](size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;  // an escaped quote does not end the string
      else if (c == '"') in_string = false;
      ++i;
      continue;
    }
    if (c == '"') {
      in_string = true;
      ++i;
      continue;
    }
    if (c != '-' && !digit(i)) {
      ++i;
      continue;
    }
    if (c == '-') ++i;
    int64_t integer_digits = 0;
    for (; digit(i); ++i) ++integer_digits;
    if (integer_digits > 307) return true;
    int64_t fraction_digits = 0;
    if (i < text.size() && text[i] == '.') {
      for (++i; digit(i); ++i) ++fraction_digits;
    }
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
      ++i;
      bool negative = false;
      if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
      int64_t exponent = 0;
      for (; digit(i); ++i) {
        // Saturates: anything past the limit is past it.
        if (exponent <= 308 + fraction_digits) exponent = exponent * 10 + (text[i] - '0');
      }
      if (!negative && exponent > 308 + fraction_digits) return true;
    }
  }
  return false;
}

// `status_may_differ`: the input has a number past RapidJSON's exponent
// limit (HasExponentPastRapidJsonLimit), so a rejection on either side is
// not compared; two acceptances are.
bool Same(const Status& sa, const IncomingDoc& a, const Status& sb, const IncomingDoc& b,
          bool status_may_differ) {
  if (status_may_differ && (!sa.ok() || !sb.ok())) return true;
  if (!(sa == sb)) return false;
  if (!sa.ok()) return true;  // outputs are unspecified on error
  if (a.id != b.id || a.rev_text != b.rev_text || a.deleted != b.deleted || a.body != b.body) {
    return false;
  }
  if (a.rev.has_value() != b.rev.has_value() || (a.rev && !(*a.rev == *b.rev))) return false;
  if (a.revisions.has_value() != b.revisions.has_value()) return false;
  if (a.revisions &&
      (a.revisions->start != b.revisions->start || a.revisions->ids != b.revisions->ids)) {
    return false;
  }
  return true;
}

void CheckOne(std::string_view text, std::string_view id_override, bool status_may_differ) {
  IncomingDoc a, b;
  Status sa = settee::ParseIncomingDoc(text, id_override, kMaxSize, &a);
  Status sb = settee::RefParseIncomingDoc(text, id_override, kMaxSize, &b);
  if (!Same(sa, a, sb, b, status_may_differ)) {
    Fail("fast path and RapidJSON path disagree", text, Describe(sa, a), Describe(sb, b));
  }
  if (!sa.ok()) return;

  // The body is canonical compact RapidJSON output...
  settee::json::Document parsed;
  Status ps = settee::json::Parse(a.body, &parsed);
  if (!ps.ok() || !parsed.IsObject()) {
    Fail("stored body does not parse as a JSON object", text, Describe(sa, a), ps.ToString(),
         "json::Parse(body)");
  }
  std::string again = settee::json::Serialize(parsed);
  if (again != a.body) Fail("stored body is not canonical", text, a.body, again, "reserialized");
  // ... and a fixed point of ParseIncomingDoc.
  IncomingDoc c;
  Status sc = settee::ParseIncomingDoc(a.body, {}, kMaxSize, &c);
  if (!sc.ok() || c.body != a.body || c.deleted || !c.id.empty() || c.rev || c.revisions) {
    Fail("stored body does not re-parse to itself", text, Describe(sa, a), Describe(sc, c),
         "body re-parsed");
  }
}

#ifdef SETTEE_FUZZ_HAVE_DOC_ARRAY
void CheckArray(std::string_view text, bool status_may_differ) {
  std::vector<IncomingDoc> a, b;
  std::vector<Status> sa, sb;
  Status ta = settee::ParseIncomingDocArray(text, kMaxSize, &a, &sa);
  Status tb = settee::RefParseIncomingDocArray(text, kMaxSize, &b, &sb);
  // The fast path splits the array with simdjson, the reference with
  // RapidJSON: past the exponent limit, the reference may reject it whole.
  if (status_may_differ && (!ta.ok() || !tb.ok())) return;
  if (!(ta == tb)) Fail("array: top-level status differs", text, ta.ToString(), tb.ToString());
  if (!ta.ok()) return;
  if (a.size() != b.size() || sa.size() != sb.size() || a.size() != sa.size()) {
    Fail("array: element counts differ", text, std::to_string(a.size()), std::to_string(b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Same(sa[i], a[i], sb[i], b[i], status_may_differ)) {
      Fail(("array: element " + std::to_string(i) + " differs").c_str(), text,
           Describe(sa[i], a[i]), Describe(sb[i], b[i]));
    }
  }
}

// A document the one-document path accepts is accepted the same as the only
// element of a docs array (a _bulk_docs body), though the array is one
// level deeper and may be split by the other parser: a batch must not fail
// where its documents one by one would not.
void CheckWrapped(std::string_view text, std::string_view wrapped, bool status_may_differ) {
  IncomingDoc single;
  if (!settee::ParseIncomingDoc(text, {}, kMaxSize, &single).ok()) return;
  std::vector<IncomingDoc> docs;
  std::vector<Status> statuses;
  Status s = settee::ParseIncomingDocArray(wrapped, kMaxSize, &docs, &statuses);
  if (!s.ok() || docs.size() != 1 || statuses.size() != 1 || !statuses[0].ok()) {
    // A document one level short of the depth limit is too deep for
    // simdjson once wrapped, and RapidJSON may then refuse a number that
    // simdjson took.
    if (status_may_differ) return;
    Fail("array: rejects its only document", wrapped,
         s.ToString() + ", " + std::to_string(docs.size()) + " document(s), first " +
             (statuses.empty() ? std::string("none") : statuses[0].ToString()),
         Describe(Status::OK(), single), "alone");
  }
  if (!Same(statuses[0], docs[0], Status::OK(), single, false)) {
    Fail("array: its only document differs", wrapped, Describe(statuses[0], docs[0]),
         Describe(Status::OK(), single), "alone");
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  const bool status_may_differ = HasExponentPastRapidJsonLimit(text);
  CheckOne(text, {}, status_may_differ);
  // The URL id replaces the body's: the same on both paths.
  CheckOne(text, "url-id", status_may_differ);
#ifdef SETTEE_FUZZ_HAVE_DOC_ARRAY
  CheckArray(text, status_may_differ);
  std::string wrapped;
  wrapped.reserve(size + 2);
  wrapped.append("[").append(text).append("]");
  CheckArray(wrapped, status_may_differ);
  CheckWrapped(text, wrapped, status_may_differ);
#endif
  return 0;
}
