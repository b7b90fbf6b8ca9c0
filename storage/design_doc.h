// DesignDoc: the views of a CouchDB design document, as the index machinery
// sees them (storage/views.h).
//
// Views whose map functions are identical share one row range of the
// index, and the whole design document's index is named by a signature over
// everything that decides its rows (language, map sources, views.lib, the
// collator version), as CouchDB's couch_mrview_util:ddoc_to_mrst does: two
// design documents with the same signature share one index, and editing a
// map function gives a new signature, so a new index.
//
// Thread safety: a plain value.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"
#include "storage/view_functions.h"

namespace settee::views {

struct ViewDef {
  std::string name;
  size_t map_index = 0;  // into code.maps
  std::string reduce;    // "" when the view has no reduce
};

struct DesignDoc {
  std::string id;  // "_design/name"
  MapCode code;
  std::vector<ViewDef> views;  // sorted by name
  std::string signature;       // 32 hex digits

  // The view named `name`, or nullptr.
  const ViewDef* Find(std::string_view name) const;
};

// Parses design document `id` (its JSON body). kNotFound ("missing_named_view")
// is for callers; this returns kInvalidDesignDoc for a "views" that is not an
// object, a view that is not an object or has no string map (an object map
// for language "query"), or a non-string reduce. "views.lib" is a library,
// not a view.
Result<DesignDoc> ParseDesignDoc(std::string_view id, std::string_view json);

// The design document of a temporary view: one view named "temp".
DesignDoc TempDesignDoc(std::string language, std::string map, std::string reduce);

}  // namespace settee::views
