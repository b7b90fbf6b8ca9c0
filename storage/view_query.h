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
  std::optional<uint64_t> group_level;
  bool include_docs = false;
  bool conflicts = false;
  bool update_seq = false;
  UpdateMode update = UpdateMode::kTrue;
  // Set by the caller, not parsed: applied to each include_docs document.
  AfterDocRead after_read;
};

// Parses `options` (a JSON object; unknown members are ignored, as CouchDB
// does). kQueryParseError with CouchDB's reason for a value of the wrong
// type ("Invalid value for boolean: ...", "Invalid value for integer: ..."),
// a non-array "keys", keys together with key/startkey/endkey, group with
// group_level conflicts, an unknown stale/stable/update value.
Result<ViewQuery> ParseViewQuery(const json::Value& options);

// One stale, stable or update parameter's text, as CouchDB 3 takes it
// (stale=ok|update_after, stable=true|false, update=true|false|lazy),
// setting *update for stale and update; anything else is kQueryParseError
// "Invalid value for `<name>`.". Any other name is OK and changes nothing.
Status ParseFreshness(std::string_view name, std::string_view value, UpdateMode* update);

// Builds the options object from query-string parameters (name, raw text):
// key, keys, startkey, endkey and their start_key/end_key spellings are
// JSON; startkey_docid/endkey_docid, stale and update are strings; the rest
// booleans or integers as text. Malformed JSON is kQueryParseError
// ("Invalid JSON: ..."), as CouchDB answers.
Status QueryStringToOptions(const std::vector<std::pair<std::string, std::string>>& params,
                            json::Document* out);

}  // namespace settee::views
