// CouchDB view collation: a total order over JSON values, and a byte
// encoding of it for keys in an ordered (memcmp) key-value store.
//
// Order (PROTOCOL.md §14, CouchDB ddocs/views/collation.rst):
//   null < false < true < numbers < strings < arrays < objects
// - Numbers compare numerically as IEEE doubles: -0 == 0, and integers beyond
//   2^53 that round to the same double are equal. NaN (never produced by
//   json::Parse) sorts after +Infinity and equals itself.
// - Strings (Compare) use ICU's root-locale UCA collator at its default
//   (tertiary) strength, as CouchDB's couch_ejson_compare NIF does
//   (ucol_open("") + ucol_strcollIter): "a" < "A" < "aa" < "b"; symbols
//   before digits before letters; control characters are ignorable.
//   CouchDB stops there, so strings ICU calls equal (NFC vs NFD forms,
//   "a" vs "a\u0000") are equal keys in CouchDB: their view rows interleave
//   by doc id and reduce groups them together. Settee adds a final tie-break
//   by Unicode code point (UTF-8 bytes) so that distinct strings never
//   compare equal; this only reorders keys that CouchDB considers equal.
// - Strings (CompareRaw) compare by code point only. NOTE: CouchDB's real
//   "raw" view collation is Erlang term order, which also reorders the types
//   (numbers < false < null < true < objects < arrays < strings). The raw
//   functions here keep the JSON type order above and only change strings,
//   which is exact for string-only keys such as _all_docs doc ids.
// - Arrays compare element by element; a prefix sorts first.
// - Objects compare member by member in member order (key by string
//   collation, then value); a prefix sorts first. Member order matters:
//   {"b":2,"a":1} > {"b":2} and != {"a":1,"b":2}.
// - Values nested deeper than kMaxDepth are not looked at: any two of them
//   compare equal (json::Parse already rejects such documents).
//
// Thread safety: every function here may be called concurrently from any
// number of threads without external synchronization. Each thread lazily
// clones the root collator into a thread_local (ICU collators are not safe
// for concurrent use of one instance).
//
// Stability: EncodeIndexKey output depends on the ICU/UCA version (the
// sort-key bytes). An index built with one ICU major version must be rebuilt
// when IcuCollatorVersion() changes. See docs/index_key_format.md.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "util/json.h"

namespace settee::collation {

// Nesting depth beyond which values are treated as equal (see above).
constexpr int kMaxDepth = json::kMaxNestingDepth;

// CouchDB view collation of a and b: negative if a < b, 0 if equal,
// positive if a > b. Never fails; any rapidjson value is accepted.
int Compare(const json::Value& a, const json::Value& b);

// The same order with strings compared by code point only.
int CompareRaw(const json::Value& a, const json::Value& b);

// ICU root collation of two UTF-8 strings, then the code point tie-break.
// Ill-formed UTF-8 is collated as U+FFFD by ICU and still tie-broken by
// bytes, so the result is a total order over all byte strings.
int CompareStrings(std::string_view a, std::string_view b);

// Code point order of two UTF-8 strings (bytewise).
int CompareRawStrings(std::string_view a, std::string_view b);

// Appends to *out bytes whose memcmp order equals Compare() order:
//   memcmp(EncodeIndexKey(a), EncodeIndexKey(b)) has the sign of Compare(a,b).
// The encoding is prefix-free: for Compare(k1,k2) != 0, Encode(k1)+X and
// Encode(k2)+Y compare as k1 vs k2 for any suffixes X, Y (e.g. a doc id), and
// for Compare(k1,k2) == 0 the encodings are byte-identical. Not decodable
// (strings are ICU sort keys); store the original key beside it.
void AppendIndexKey(const json::Value& v, std::string* out);
std::string EncodeIndexKey(const json::Value& v);

// The same contract for CompareRaw() order. Decodable in principle, but no
// decoder is provided.
void AppendRawIndexKey(const json::Value& v, std::string* out);
std::string EncodeRawIndexKey(const json::Value& v);

// ICU's collator version for the root locale as "a.b.c.d": record it with a
// persisted index and rebuild the index when it changes.
std::string IcuCollatorVersion();

// Test hook: whether the ASCII fast path (an exact emulation of ICU's root
// order on printable ASCII, derived from and checked against ICU at first
// use) is active. It is disabled if the self-check at start-up fails.
bool TEST_AsciiFastPathEnabled();
// Test hook: CompareStrings() forced through ICU, never the fast path.
int TEST_CompareStringsIcuOnly(std::string_view a, std::string_view b);

}  // namespace settee::collation
