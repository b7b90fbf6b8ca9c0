// The one place where settee's error kinds become HTTP: status code plus the
// CouchDB body {"error": kind, "reason": text}.
//
// Handlers return a Status; the dispatcher answers a non-OK one with
// SendStatusError(). Errors that exist only in HTTP (405, 431, ...) go through
// SendHttpError() so their bodies have the same shape.
#pragma once

#include <string>
#include <string_view>

#include "runtime/http_server.h"
#include "settee/status.h"

namespace settee {

// HTTP status for a non-OK Status (CouchDB's chttpd:error_info mapping).
int HttpStatusFor(const Status& status);

// {"error":"<kind>","reason":"<reason>"} followed by a newline, as CouchDB.
std::string ErrorJson(std::string_view error, std::string_view reason);

// Writes `status` as a CouchDB error response.
void SendStatusError(http::HttpResponse& res, const Status& status);

// For HTTP-level errors with no Status kind (405 method_not_allowed, 431, 414).
void SendHttpError(http::HttpResponse& res, int http_status, std::string_view error,
                   std::string_view reason);

// The error name CouchDB uses for an HTTP-level failure status (413 ->
// "too_large", 431 -> "bad_request", ...), for parser errors.
std::string_view ErrorNameForHttpStatus(int http_status);

}  // namespace settee
