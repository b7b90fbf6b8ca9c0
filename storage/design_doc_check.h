// What CouchDB checks of a design document before it stores one
// (couch_db:validate_doc_update -> couch_mrview:validate), for interactive
// and replicated writes alike:
//   - the types of the fields it knows (`views.v.map` a string, `filters` an
//     object of strings or objects, `validate_doc_update` a string, ...),
//     refused with invalid_design_doc and CouchDB's reason
//     ("`views.v.map` field must have string type");
//   - a map function in every view but `views.lib`;
//   - reduces starting with '_' only among the built-ins;
//   - every JavaScript map and reduce function compiling (the caller runs
//     FunctionsToCompile's list through a JavaScript runtime), refused with
//     compilation_error: "Compilation of the map function in the 'v' view
//     failed: ...".
// A design document the engine would later fail to run is refused at the
// write, so a broken one never reaches the database (or its replicas).
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "settee/status.h"
#include "util/json.h"

namespace settee::design {

// OK, or kInvalidDesignDoc with CouchDB's reason. `body` is the design
// document's JSON object.
Status CheckFields(const json::Value& body);

// A function CouchDB compiles before it stores a design document.
struct FunctionToCompile {
  std::string kind;    // "map" or "reduce"
  std::string view;    // the view's name
  std::string source;  // the function's source text
};

// Each view's map and JavaScript reduce, in document order, when the
// document's language is JavaScript (the default); empty otherwise. `body`
// must have passed CheckFields.
std::vector<FunctionToCompile> FunctionsToCompile(const json::Value& body);

// The compilation_error a failed compile of `f` gives, with the runtime's
// `message`.
Status CompilationError(const FunctionToCompile& f, const std::string& message);

}  // namespace settee::design
