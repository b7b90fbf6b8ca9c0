// Conversion between settee's JSON text and V8 values.
//
// JSON text -> V8 uses V8's own JSON parser (v8::JSON::Parse), which builds
// objects with fast hidden classes and beats a rapidjson-driven builder that
// has to go through the public object API for every member.
//
// V8 -> JSON text is a C++ walker rather than JSON.stringify because a
// database must refuse what JSON cannot represent instead of silently
// dropping it: functions, symbols, undefined, BigInt, cyclic structures,
// NaN/Infinity and nesting deeper than json::kMaxNestingDepth are errors
// naming the offending path ("value.a[2]: a function cannot be stored as
// JSON"). Otherwise the output is what JSON.stringify would produce
// (toJSON() is honoured, so Dates become ISO strings; -0 is written as 0),
// except that lone UTF-16 surrogates become U+FFFD so the text is valid
// UTF-8 for the storage layer.
//
// Thread safety: call only on the thread that owns the context's isolate,
// inside a HandleScope.
#pragma once

#include <string>
#include <string_view>

#include <v8-context.h>
#include <v8-local-handle.h>
#include <v8-value.h>

#include "settee/status.h"

namespace settee::js {

// Parses JSON text into a V8 value. Returns an empty MaybeLocal with a
// pending JS exception (SyntaxError) if `json` is not valid JSON.
v8::MaybeLocal<v8::Value> JsonToV8(v8::Local<v8::Context> context, std::string_view json);

// Appends the JSON text of `value` to *out. On error returns kBadRequest
// (unrepresentable value, with its path) or kInternal (a toJSON() or getter
// threw; the JS exception is then pending in the caller's TryCatch). *out may
// hold a partial result after an error.
Status V8ToJson(v8::Local<v8::Context> context, v8::Local<v8::Value> value, std::string* out);

// A V8 string as UTF-8 (lone surrogates become U+FFFD).
std::string ToUtf8(v8::Isolate* isolate, v8::Local<v8::Value> value);

// Replaces *out with `s` as UTF-8 (lone surrogates become U+FFFD), reusing
// its capacity. A one-byte string of ASCII (ids, revisions, JSON.stringify's
// text of most documents) is copied in one pass, where V8's UTF-8 writer
// takes two (one to size the result).
void StringToUtf8(v8::Isolate* isolate, v8::Local<v8::String> s, std::string* out);

// A new V8 string from UTF-8. Returns an empty string on invalid input that
// V8 cannot allocate (longer than v8::String::kMaxLength).
v8::Local<v8::String> ToV8String(v8::Isolate* isolate, std::string_view utf8);

// ToV8String() of text the caller gives up: big ASCII text (a task's
// argument: a share of documents for a map function) becomes an external
// string that owns the bytes and that V8 reads in place, instead of a copy
// in V8's heap (a fresh large-object page per call, zeroed by the kernel).
// The bytes are registered with V8 as external memory, and every 16 MB of
// them made on a thread asks the isolate for a full GC (moderate memory
// pressure), so that dead ones are freed before they pile up: V8 keeps
// external strings in its old generation and would otherwise see no reason
// for a full GC. Call on the isolate's thread, inside a HandleScope.
v8::Local<v8::String> ToV8StringOwned(v8::Isolate* isolate, std::string&& utf8);

// The bytes ToV8StringOwned's external strings hold in every isolate, dead
// or alive, until V8 frees them (for tests and diagnostics).
size_t OwnedStringBytes();

}  // namespace settee::js
