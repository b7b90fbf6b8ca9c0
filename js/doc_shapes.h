// Flat documents handed to JS as a shape and its values, so that JS builds
// the object with an object literal instead of V8's JSON parser.
//
// Why: v8::JSON::Parse (and JSON.parse) costs ~230 ns for any object, even
// '{"a":1}' (measured on V8 10.2 here, ~190 ns on node 20's V8), where an
// object literal of four members costs ~6 ns. A db.get of a small document
// spent about a third of its time there, an allDocs with include_docs ~80%.
// Most documents are flat (members whose values are strings, numbers,
// booleans or null) and share a few sequences of member names ("shapes"),
// so db.get and allDocs ask for a document as [shape, value...] and
// js/prelude/pouchdb.js builds it with one function per shape:
// `(v) => ({"_id": v[1], "_rev": v[2], "foo": v[3]})`. The object is the
// one JSON.parse would build: the same members in the same order with the
// same values.
//
// Anything else is declined (an empty handle): a nested object or array, a string
// or name with an escape (JSON.parse decodes those, lone surrogates
// included), a number out of a double's range (std::from_chars reads the
// others as V8 does, bit for bit: tests/js/doc_shapes_test.cc compares
// them), text JSON.parse refuses (a raw control character in a string, a
// number such as 01 or 1.: the store holds none, but a decline lets the
// parser report it), more than
// kMaxShapeMembers members, a name that an object literal treats differently
// from JSON.parse ("__proto__"), a name that is an integer (its member is
// an element, ordered first either way, but not worth the doubt), a name
// given twice, or more than kMaxShapes shapes on this thread. The caller
// then parses the text as before.
//
// Thread safety: the shape table is per thread (thread_local) and only
// grows, so a shape's index names the same names for every isolate the
// thread ever runs; a JS cache of shape functions stays valid for its
// isolate's life, as long as the isolate stays on its thread (settee's
// isolates each live on one thread). Call inside a HandleScope of the
// thread's isolate.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <v8-container.h>
#include <v8-isolate.h>
#include <v8-local-handle.h>

namespace settee::js {

inline constexpr int kMaxShapeMembers = 32;
inline constexpr int kMaxShapes = 1024;

// [shape index, value of member 0, value of member 1, ...] for the JSON
// text of a flat object (see above); an empty handle if it is declined.
// Throws nothing. `id` (optional), whose UTF-8 is `id_utf8`: the string
// the caller looked the document up by, given back as the value of a first
// member "_id" with that text instead of a new string.
v8::MaybeLocal<v8::Array> FlatDocValues(v8::Isolate* isolate, std::string_view json,
                                        v8::Local<v8::String> id = {}, std::string_view id_utf8 = {});

// FlatDocValues() of the document {"_id": id, "_rev": rev, ...members of
// `body`} (Database::GetWinner's parts) without that text being built:
// `id` is the JS string looked up (given back as the _id value when ASCII;
// may be empty), `id_utf8` its UTF-8, `body` an object's JSON text.
v8::MaybeLocal<v8::Array> FlatDocValuesOf(v8::Isolate* isolate, v8::Local<v8::String> id,
                                          std::string_view id_utf8, std::string_view rev,
                                          std::string_view body);

// The member names of shape `index` (from FlatDocValues on this thread), as
// JS strings; nullopt for an index this thread never gave out.
std::optional<v8::Local<v8::Array>> DocShapeNames(v8::Isolate* isolate, uint32_t index);

// How many shapes this thread's table remembers, taken and declined (at
// most kMaxShapes of each): for tests of its bound.
size_t DocShapeTableEntries();

}  // namespace settee::js
