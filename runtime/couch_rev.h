// A revision string as the HTTP API reads it: CouchDB 3's
// couch_doc:parse_rev, set against what the engine can hold.
//
// parse_rev splits at the first '-', reads what comes before it with
// list_to_integer (an optional sign, decimal digits, any size) and decodes an
// id of exactly 32 characters as hex (list_to_integer(Id, 16)); anything else
// is 400 "Invalid rev format". So it refuses what the engine's RevId::Parse
// takes ("1-" followed by 32 non-hex characters) and takes what the engine
// refuses: generation 0, one past 64 bits, or an empty id ("0-a", "1-",
// "99999999999999999999-a"). The engine keeps its own rule because the
// PouchDB API shares it (js/prelude/pouchdb.js applies PouchDB's first).
// CouchDB looks those last revisions up and finds nothing; the endpoints
// answer what a revision the document does not have gets there.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "settee/status.h"

namespace settee {

struct CouchRev {
  enum class Kind {
    kMalformed,     // parse_rev throws: 400 "Invalid rev format"
    kStorable,      // the engine can hold it; `text` is the engine's spelling
    kNamesNothing,  // parses, but no stored revision can be it
  };
  Kind kind = Kind::kMalformed;
  // kStorable: the generation without sign or leading zeros, '-', the id as
  // given ("+01-a" is "1-a"). kNamesNothing: the same, as rev_to_str prints
  // it for a _revs_diff or open_revs "missing" ("00-a" is "0-a").
  std::string text;
};

CouchRev ParseCouchRev(std::string_view rev);

// Whether two parsed revisions are the same term {Pos, RevId}: the same
// generation and id, a 32-character id being a number (its hex digits'
// case does not count).
bool SameCouchRev(const CouchRev& a, const CouchRev& b);

// CouchDB's extract_header_rev (chttpd_db): the revision a write names, from
// `explicit_rev` (the body's _rev, else ?rev=, parsed; null when the request
// gives neither) and the If-Match header's value (null when absent), whose
// quotes are stripped (all of them, at both ends) before it is parsed. A
// malformed If-Match is 400 "Invalid rev format"; one that is not the
// explicit revision is 400 "Document rev and etag have different values".
// *out is left empty when neither is given.
Status ExtractHeaderRev(const CouchRev* explicit_rev, const std::string* if_match,
                        std::optional<CouchRev>* out);

// The answer of a write with new_edits=false naming `rev`, a kNamesNothing
// revision: CouchDB would store it, settee cannot (its revision tree holds
// generations 1 to 2^64-1 and non-empty ids), so it refuses the request.
Status UnstorableRevError(std::string_view rev);

}  // namespace settee
