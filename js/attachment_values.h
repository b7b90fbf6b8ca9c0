// V8 values of attachment bodies read from the engine: a document read with
// attachments (db.get(id, {attachments: true[, binary: true]})) becomes a JS
// object whose _attachments entries carry their bodies, built from the
// stored chunks without a JSON or base64 round trip through C++ strings.
//
// Binary bodies are Uint8Arrays (the prelude makes them Buffers) over one
// ArrayBuffer per read, as Node's pooled Buffers share theirs. Base64 bodies
// are external one-byte strings encoded straight into one block per read.
// Those blocks come from a small process-wide pool: reading a document with
// 100 bodies of 50 KB allocates no fresh pages (each fresh page is a fault,
// and each glibc release of one a TLB shootdown on every core).
//
// Thread safety: call on the isolate's thread, inside a HandleScope. The pool
// is thread-safe (V8 may free a backing store on a background thread).
#pragma once

#include <string_view>

#include <v8-local-handle.h>
#include <v8-value.h>

#include "settee/database.h"

namespace settee::js {

// Document `docid` read with `options` (attachments, atts_since,
// att_encoding_info, rev, ...), its inline bodies as Uint8Arrays when
// `binary`, else as base64 strings. An empty handle with *error set on a
// database error, or with a JS exception pending if V8 could not allocate.
v8::MaybeLocal<v8::Value> GetDocWithAttachments(v8::Isolate* isolate, Database& db,
                                                std::string_view docid, const GetOptions& options,
                                                bool binary, Status* error);

}  // namespace settee::js
