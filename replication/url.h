// A remote database URL as the replicator uses it: parsed by libcurl's URL
// API, credentials split off so they never reach logs, ids or task lists.
#pragma once

#include <string>
#include <string_view>

#include "settee/status.h"

namespace settee::replication {

struct Url {
  std::string scheme;    // "http" or "https"
  std::string user;      // decoded; empty when none
  std::string password;  // decoded
  std::string host;
  int port = 0;          // 0: the scheme's default
  std::string path;      // "/db/" (always ends with '/')

  // scheme://host[:port]/path/ — no credentials.
  std::string WithoutCredentials() const;
  // The same, with `rel` (already escaped, no leading '/') appended.
  std::string Join(std::string_view rel) const;
};

// True if `s` looks like an http(s) URL rather than a local database name.
bool IsRemote(std::string_view s);

// kBadRequest for anything that is not an absolute http(s) URL.
Result<Url> ParseUrl(std::string_view text);

// Percent-escapes a document id for a URL path: "_design/x" and
// "_local/x" keep their slash, as CouchDB and PouchDB expect.
std::string EscapeDocId(std::string_view id);
// Percent-escapes a query parameter value.
std::string EscapeQuery(std::string_view value);

}  // namespace settee::replication
