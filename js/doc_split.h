// Documents from V8 objects straight into the storage engine's split form
// (storage/document.h's IncomingDoc), without JSON text in between.
//
// The other way a JS document reaches the engine is JSON.stringify and a
// split or parse of its text (js/prelude/pouchdb.js). For big documents that
// costs more than the walk itself: V8's stringifier builds its result as a
// tree of heap strings that scavenges copy and a flatten copies again, and
// the prelude's plainJson check walks the document once more. SplitPlainDocs
// walks the objects once, with the special members (_id, _rev, _deleted)
// taken out at the top level and the body written straight into a reused
// buffer, byte for byte what the parsers would have written for
// JSON.stringify's text (so a document's revision id does not depend on the
// path it took).
//
// It takes only plain JSON: objects and arrays whose prototype is
// Object.prototype / Array.prototype (neither carrying a toJSON), strings
// without lone surrogates, finite numbers, booleans and null, nesting at most
// 500 deep, no cycles, and at the top level no special member other than a
// string _id, a string _rev, a boolean _deleted and the ones the engine
// drops or keeps. For anything else it answers kNotPlain, having written
// nothing, and the caller takes the JSON-text path, which gives such
// documents their exact treatment (toJSON, errors naming the bad value,
// _attachments, ...).
//
// Thread safety: call only on the thread that owns the context's isolate,
// inside a HandleScope.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include <v8-container.h>
#include <v8-context.h>
#include <v8-local-handle.h>
#include <v8-value.h>

#include "settee/status.h"
#include "storage/document.h"

namespace settee::js {

class BodyJobs;  // js/body_jobs.h

enum class SplitOutcome {
  kDone,      // *docs and *statuses hold one entry per element
  kNotPlain,  // some element is not plain JSON (see above); outputs cleared
  kThrew,     // a getter threw: its exception is pending; outputs cleared
};

// Splits every element of `array` (each must be an object, else kNotPlain).
// statuses[i] is what the engine's parser would report for element i's id
// and _rev (FinishSplitDoc); the size limit is applied when it is written.
SplitOutcome SplitPlainDocs(v8::Local<v8::Context> context, v8::Local<v8::Array> array,
                            std::vector<IncomingDoc>* docs, std::vector<Status>* statuses);

// Completes the documents js/prelude/doc_encode.js encoded (the same
// documents SplitPlainDocs takes, walked in JS): `bytes` holds the bodies,
// meta[3i], meta[3i+1] and meta[3i+2] document i's body start, end and flags
// (bit 0: _deleted), strs[2i] and strs[2i+1] its _id and _rev (undefined
// when it has none), and `nums` the values of the bodies' 0x01 bytes, in
// order, printed here as the parsers print numbers. The documents are
// appended to *docs and *statuses (a batch comes in parts, each encoded
// into the same buffer in turn). kNotPlain (outputs cleared, the earlier
// parts' documents too) for an _id or _rev with a lone surrogate or input
// that does not add up.
//
// With `defer`, the big bodies of new documents without numbers are left to
// it (js/body_jobs.h) instead of compressed and hashed here: they point into
// `bytes` and into *docs until the caller has had them run (BodyJobs::Start,
// Wait). REQUIRES: no job of `defer` is running (*docs may be resized).
SplitOutcome BuildEncodedDocs(v8::Local<v8::Context> context, std::string_view bytes,
                              std::span<const int32_t> meta, v8::Local<v8::Array> strs,
                              std::span<const double> nums, uint32_t count,
                              std::vector<IncomingDoc>* docs, std::vector<Status>* statuses,
                              BodyJobs* defer = nullptr);

}  // namespace settee::js
