// The normal form CouchDB 3 hashes into a selector replication's id:
// mango_selector:normalize/1 (operators made explicit, field paths dotted,
// negations pushed down) and then couch_replicator_filters:ejsort/1 (every
// object's members sorted by name). Two ways of writing one selector, say
// {"a": {"b": 1}, "c": {"$gt": 2}} and {"$and": [{"a.b": {"$eq": 1}},
// {"c": {"$gt": 2}}]}, get one replication id, CouchDB's.
//
// This is CouchDB's exact rewriting, shape for shape, and no more: it is
// for the id only. Matching documents is storage/mango_selector.h's job.
//
// Pure function; thread-compatible.
#pragma once

#include <string_view>

#include "replication/erlang_term.h"
#include "settee/status.h"

namespace settee::replication {

// The EJSON term of the normalized, sorted selector in `selector_json`.
// kBadRequest where CouchDB's normalize/1 throws (an unknown operator, an
// operator with the wrong kind of argument, an empty field name, ...) or
// for text that is not JSON.
Result<ErlTerm> NormalSelectorTerm(std::string_view selector_json);

}  // namespace settee::replication
