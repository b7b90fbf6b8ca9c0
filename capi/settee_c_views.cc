// The C API's view queries (include/settee/settee.h, "Views") over
// storage/views.h, with the store's design-document functions
// (c_api_internal.h). Handles and errors as in settee_c.cc.
#include <string>
#include <string_view>

#include "capi/c_api_internal.h"
#include "storage/views.h"
#include "util/json.h"

using settee::Status;
using namespace settee_c;  // NOLINT: the C functions below are this module's surface

extern "C" {

settee_code settee_db_query(settee_db* db, const char* ddoc, const char* view,
                            const char* options_json, char** json_out, settee_error* err) {
  if (json_out) *json_out = nullptr;
  DbCall call(db);
  SETTEE_C_CHECK(call.Check(db, err));
  SETTEE_C_CHECK(Utf8Arg(ddoc, "ddoc", err));
  SETTEE_C_CHECK(Utf8Arg(view, "view", err));
  SETTEE_C_CHECK(OptionalUtf8Arg(options_json, "options_json", err));
  if (!json_out) return InvalidArgument(err, "json_out is NULL");
  std::string_view name = ddoc;
  if (name.starts_with("_design/")) name.remove_prefix(8);
  if (name.empty()) return InvalidArgument(err, "ddoc is empty");
  if (!*view) return InvalidArgument(err, "view is empty");
  return Guarded(err, [&] {
    settee::json::Document options;
    Status s = settee::json::Parse(options_json ? options_json : "{}", &options);
    if (!s.ok()) return Fail(err, s);
    if (!options.IsObject()) return Fail(err, SETTEE_ERR_BAD_REQUEST, "options_json must be a JSON object");
    auto query = settee::views::ParseViewQuery(options);
    if (!query.ok()) return Fail(err, query.status());
    std::string out;
    s = settee::views::Query(call.store_ref(), call.db(), call.view_functions(), name, view, *query,
                             &out);
    if (!s.ok()) {
      // What a build without JS answers for JavaScript (settee_c_js.cc).
      if (s.code() == Status::Code::kInvalidOperation && !settee::JsRuntimeAvailable()) {
        return Fail(err, SETTEE_ERR_UNSUPPORTED, s.reason());
      }
      return Fail(err, s);
    }
    Give(json_out, out);
    return Ok(err);
  });
}

}  // extern "C"
