// libFuzzer target: differential test of ParseIncomingDoc's two parsers.
//
// ParseIncomingDoc (storage/document.cc) parses plain documents with simdjson
// and falls back to the RapidJSON SAX path for everything else. The build
// generates a copy of document.cc in which the simdjson path never succeeds
// (tests/fuzz/make_reference_document.cmake), so RefParseIncomingDoc is the
// RapidJSON path alone. For every input both must agree exactly: status code
// and reason, id, _rev, _revisions, _deleted and body bytes (the body feeds
// the revision hash). On success the body must also be canonical: compact
// RapidJSON output (Serialize(Parse(body)) == body), and a fixed point of
// ParseIncomingDoc.
//
// When document.h has ParseIncomingDocArray, the input is also parsed as a
// document array and compared with the reference the same way.
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

[[noreturn]] void Fail(const char* what, std::string_view input, const std::string& a,
                       const std::string& b) {
  std::fprintf(stderr, "\n*** document_diff_fuzzer: %s\n  input (hex): %s\n  fast+slow: %s\n  slow only: %s\n",
               what, Hex(input).c_str(), a.c_str(), b.c_str());
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

bool Same(const Status& sa, const IncomingDoc& a, const Status& sb, const IncomingDoc& b) {
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

void CheckOne(std::string_view text, std::string_view id_override) {
  IncomingDoc a, b;
  Status sa = settee::ParseIncomingDoc(text, id_override, kMaxSize, &a);
  Status sb = settee::RefParseIncomingDoc(text, id_override, kMaxSize, &b);
  if (!Same(sa, a, sb, b)) Fail("fast path and RapidJSON path disagree", text, Describe(sa, a), Describe(sb, b));
  if (!sa.ok()) return;

  // The body is canonical compact RapidJSON output...
  settee::json::Document parsed;
  Status ps = settee::json::Parse(a.body, &parsed);
  if (!ps.ok() || !parsed.IsObject()) {
    Fail("stored body does not parse as a JSON object", text, Describe(sa, a), ps.ToString());
  }
  std::string again = settee::json::Serialize(parsed);
  if (again != a.body) Fail("stored body is not canonical", text, a.body, again);
  // ... and a fixed point of ParseIncomingDoc.
  IncomingDoc c;
  Status sc = settee::ParseIncomingDoc(a.body, {}, kMaxSize, &c);
  if (!sc.ok() || c.body != a.body || c.deleted || !c.id.empty() || c.rev || c.revisions) {
    Fail("stored body does not re-parse to itself", text, Describe(sa, a), Describe(sc, c));
  }
}

#ifdef SETTEE_FUZZ_HAVE_DOC_ARRAY
void CheckArray(std::string_view text) {
  std::vector<IncomingDoc> a, b;
  std::vector<Status> sa, sb;
  Status ta = settee::ParseIncomingDocArray(text, kMaxSize, &a, &sa);
  Status tb = settee::RefParseIncomingDocArray(text, kMaxSize, &b, &sb);
  if (!(ta == tb)) Fail("array: top-level status differs", text, ta.ToString(), tb.ToString());
  if (!ta.ok()) return;
  if (a.size() != b.size() || sa.size() != sb.size() || a.size() != sa.size()) {
    Fail("array: element counts differ", text, std::to_string(a.size()), std::to_string(b.size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Same(sa[i], a[i], sb[i], b[i])) {
      Fail(("array: element " + std::to_string(i) + " differs").c_str(), text,
           Describe(sa[i], a[i]), Describe(sb[i], b[i]));
    }
  }
}
#endif

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckOne(text, {});
  // The URL id replaces the body's: the same on both paths.
  CheckOne(text, "url-id");
#ifdef SETTEE_FUZZ_HAVE_DOC_ARRAY
  CheckArray(text);
  std::string wrapped;
  wrapped.reserve(size + 2);
  wrapped.append("[").append(text).append("]");
  CheckArray(wrapped);
#endif
  return 0;
}
