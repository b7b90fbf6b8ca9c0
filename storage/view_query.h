// ViewQuery: the options of a view query (CouchDB's couch_mrview query
// args), parsed from a JSON object whose members are the options as JSON
// values: PouchDB's query() options as they are, or the query string of
// GET /db/_design/d/_view/v turned into one (runtime/) with the body's
// "keys" added.
//
// Thread safety: a plain value.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "settee/status.h"
#include "util/json.h"

namespace settee::views {

enum class UpdateMode { kTrue, kFalse, kLazy };

// A database's rewrite of every document a reader opens (CouchDB's
// after_doc_read hook, which its couch_db:open_doc runs): called with the
// id and the document's JSON as read, before anything else sees it.
using AfterDocRead = std::function<void(std::string_view docid, std::string* doc_json)>;

struct ViewQuery {
  // Owns the JSON values below (key, keys, start/end keys).
  std::shared_ptr<json::Document> values = std::make_shared<json::Document>();
  const json::Value* key = nullptr;
  const json::Value* keys = nullptr;  // an array
  const json::Value* start_key = nullptr;
  const json::Value* end_key = nullptr;
  std::optional<std::string> start_docid;
  std::optional<std::string> end_docid;
  bool inclusive_end = true;
  bool descending = false;
  uint64_t skip = 0;
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  std::optional<bool> reduce;  // unset: reduce when the view has one
  bool group = false;
  std::optional<uint64_t> group_level;  // never 0: group_level=0 parses as no grouping
  bool include_docs = false;
  bool conflicts = false;
  bool update_seq = false;
  UpdateMode update = UpdateMode::kTrue;
  // Set by the caller, not parsed: applied to each include_docs document.
  AfterDocRead after_read;
};

// Parses `options` (a JSON object; unknown members are ignored, as CouchDB
// does). A boolean or count option may be given as its JSON value or as the
// text a query string carries; a value of another JSON type stands for its
// JSON text, so {"limit":-1} reads as ?limit=-1 does (the wording PouchDB's
// query() also gives). kQueryParseError with CouchDB's reason for a value
// ParseBooleanText or ParsePosIntText refuses, a non-array "keys", keys
// together with key/startkey/endkey, an unknown stale/stable/update value,
// group=false beside group_level>0 (couch_mrview_util:determine_group_level).
Result<ViewQuery> ParseViewQuery(const json::Value& options);

// CouchDB's couch_mrview_http:parse_boolean of a query-string value: "true"
// or "false" in any case. Anything else is kQueryParseError "Invalid boolean
// parameter: <value>", the value as Erlang prints a string
// (erlang::ListText: "yes" in quotes, [] when empty).
Status ParseBooleanText(std::string_view text, bool* out);

// couch_mrview_http:parse_pos_int of a query-string value (limit, skip,
// group_level): an integer as Erlang's list_to_integer reads it (an optional
// sign, then decimal digits and nothing else) that is not negative; one past
// uint64's range is taken as the largest. Otherwise kQueryParseError
// "Invalid value for integer: <value>", or "Invalid value for positive
// integer: <value>" for a negative integer, the value shown as above.
Status ParsePosIntText(std::string_view text, uint64_t* out);

// One stale, stable or update parameter's text, as CouchDB 3 takes it
// (stale=ok|update_after, stable=true|false, update=true|false|lazy),
// setting *update for stale and update; anything else is kQueryParseError
// "Invalid value for `<name>`.". Any other name is OK and changes nothing.
Status ParseFreshness(std::string_view name, std::string_view value, UpdateMode* update);

// Builds the options object from query-string parameters (name, raw text):
// key, keys, startkey, endkey and their start_key/end_key spellings are
// JSON; startkey_docid/endkey_docid, stale and update are strings; the rest
// booleans or integers as text. The parameters are folded in order as
// CouchDB's parse_params folds them: a repeated option (in either spelling)
// keeps its last value, and a start or end key after `key` replaces that end
// of the range `key` set. Malformed JSON is kBadRequest "invalid_json".
Status QueryStringToOptions(const std::vector<std::pair<std::string, std::string>>& params,
                            json::Document* out);

}  // namespace settee::views
