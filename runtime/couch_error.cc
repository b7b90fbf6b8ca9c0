#include "runtime/couch_error.h"

#include "util/http_status.h"

#include "util/json.h"

namespace settee {

int HttpStatusFor(const Status& status) { return HttpStatusFor(status.code()); }

std::string ErrorJson(std::string_view error, std::string_view reason) {
  std::string out = "{\"error\":";
  json::AppendQuoted(&out, error);
  out += ",\"reason\":";
  json::AppendQuoted(&out, reason);
  out += "}\n";
  return out;
}

void SendStatusError(http::HttpResponse& res, const Status& status) {
  res.Send(HttpStatusFor(status), "application/json",
           ErrorJson(status.ErrorName(), status.reason()));
}

void SendHttpError(http::HttpResponse& res, int http_status, std::string_view error,
                   std::string_view reason) {
  res.Send(http_status, "application/json", ErrorJson(error, reason));
}

std::string_view ErrorNameForHttpStatus(int http_status) {
  switch (http_status) {
    case 413: return "too_large";
    case 414: return "uri_too_long";
    case 417: return "expectation_failed";
    case 431: return "header_fields_too_large";
    case 505: return "http_version_not_supported";
    default: return "bad_request";
  }
}

}  // namespace settee
