// ValidateFunctions: how the document engine runs the validate_doc_update
// functions of a database's design documents. storage/ knows nothing of V8:
// js/ implements this interface on its isolate threads
// (js/view_functions_js.h), as it does storage/view_functions.h for views,
// and the embedder installs it on a Store with SetValidateFunctions().
//
// Everything crosses as JSON text, as between CouchDB and couchjs.
//
// A design document written is checked as CouchDB checks it
// (storage/design_doc_check.h), its map and reduce functions compiled
// through Compile() when a runtime is installed.
//
// When a write runs them (DatabaseImpl, storage/database_validate.cc):
// before its documents queue for the database's writer lock, for each
// document that is neither a design nor a _local document, with CouchDB's
// arguments (couch_db:validate_doc_update): the new document as sent
// (with _revisions), the revision it edits (null for a new document; for a
// replicated one, its nearest stored ancestor), the writer's userCtx and
// the database's _security object.
//
// Thread safety: an implementation may be called from several threads at
// once (writers of different databases validate concurrently).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"

namespace settee {
class Store;
}

namespace settee::validation {

// One design document's validate_doc_update function.
struct Validator {
  std::string ddoc_id;  // "_design/name"
  std::string source;   // the function's source text
  std::string ddoc;     // the design document as JSON: `this`, and require()
};

// Every validator of one database, in design-document id order (CouchDB
// runs them all; the first refusal wins).
struct ValidatorSet {
  std::vector<Validator> validators;
  // 32 hex digits over the sources and design documents: implementations
  // cache their compiled functions under it.
  std::string signature;
};

// One document to validate.
struct ValidateCall {
  std::string new_doc;  // JSON object
  std::string old_doc;  // JSON object, or "null"
};

class ValidateFunctions {
 public:
  virtual ~ValidateFunctions() = default;

  // Runs every function of `set` on every call, with `user_ctx` ({"db",
  // "name","roles"}) and `sec_obj` (the _security object) as the third and
  // fourth arguments. (*results)[i] gets call i's outcome: OK, or what the
  // first refusing function threw: {forbidden: msg} -> kForbidden(msg),
  // {unauthorized: msg} -> kUnauthorized(msg), any other value or an Error
  // -> kInternal(its message), as CouchDB's couch_query_servers maps them.
  // The returned Status is for the run as a whole: kCompilationError (a
  // function does not compile or is not a function), kTimeout (the
  // runtime's time budget ran out), kInternal; every write of the batch then
  // fails with it.
  virtual Status Validate(const ValidatorSet& set, const std::vector<ValidateCall>& calls,
                          std::string_view user_ctx, std::string_view sec_obj,
                          std::vector<Status>* results) = 0;

  // Compiles each of `sources` (a design document's JavaScript map and
  // reduce functions) without calling it, as CouchDB's try_compile does
  // before it stores the design document. OK when all compile; else
  // kCompilationError with the runtime's message, and *failed the index of
  // the first that does not. kTimeout / kInternal when the runtime could
  // not run it.
  virtual Status Compile(const std::vector<std::string>& sources, size_t* failed) = 0;
};

// Installs `functions` as what runs validate_doc_update for every database
// of `store`, replacing any earlier one (nullptr: none; a write a function
// would check is then refused with kInternal, never let through). Safe to
// call at any time; `store` must be a Store from Store::Open.
void SetValidateFunctions(Store& store, std::shared_ptr<ValidateFunctions> functions);

// The functions installed on `store` (nullptr if none).
std::shared_ptr<ValidateFunctions> GetValidateFunctions(Store& store);

}  // namespace settee::validation
