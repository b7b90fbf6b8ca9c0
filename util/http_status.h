// The HTTP status code CouchDB answers for each settee error kind
// (chttpd:error_info). The one mapping shared by the HTTP server (runtime/)
// and the PouchDB-style JS errors (js/), whose `status` must match it.
#pragma once

#include "settee/status.h"

namespace settee {

// 200 for kOk; 4xx/5xx otherwise.
int HttpStatusFor(Status::Code code);

}  // namespace settee
