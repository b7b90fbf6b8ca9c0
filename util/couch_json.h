// CouchDB's JSON shapes for the results of the Database API, shared by the
// HTTP server (runtime/) and the PouchDB-style JS API (js/), which must agree
// to the byte on what a row or a write result looks like.
#pragma once

#include <string>
#include <string_view>

#include "settee/database.h"

namespace settee::couch_json {

// A document's text up to its closing brace, which the caller appends (after
// any members of its own): {"_id":..,"_rev":..[,"_deleted":true] and then the
// members of `body` (the stored body, a JSON object's text).
void OpenDocJson(std::string* out, std::string_view docid, std::string_view rev, bool deleted,
                 std::string_view body);

// {"ok":true,"id":..,"rev":..} or {"id":..,"error":..,"reason":..} (with
// "rev" when `with_rev_on_error`, as replicated writes report).
void AppendUpdateResult(std::string* out, const DocUpdateResult& r, bool with_rev_on_error);

// One _all_docs row: {"id","key","value":{"rev"[,"deleted"]}[,"doc"]}, or
// {"key","error":"not_found"} for a requested key that does not exist.
void AppendAllDocsRow(std::string* out, const AllDocsRow& row);

// One _changes row: {"seq","id","changes":[{"rev"}..][,"deleted"][,"doc"]};
// the doc only with `with_doc` (a row read with its doc for a filter, not
// for the answer, leaves it out).
void AppendChangeRow(std::string* out, const ChangeRow& row, bool with_doc = true);

// One open_revs item: {"ok":doc} or {"missing":rev}.
void AppendOpenRev(std::string* out, const OpenRevResult& r);

// One _bulk_get result: {"id","docs":[{"ok":doc} | {"error":{id,rev,error,reason}}..]}.
void AppendBulkGetResult(std::string* out, const BulkGetResult& r);

// The _revs_diff answer: {id:{"missing":[..][,"possible_ancestors":[..]]},..},
// listing only ids with something missing.
void AppendRevsDiff(std::string* out, const std::vector<RevsDiffResult>& results);

}  // namespace settee::couch_json
