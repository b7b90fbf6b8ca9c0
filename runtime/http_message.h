// HttpRequest: one parsed HTTP/1.x request, plus the URL helpers the router
// and the CouchDB handlers need (percent-decoding, query-string parsing).
//
// A request is a plain value owned by the connection fiber that read it; it is
// never shared between threads.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settee/status.h"

namespace settee::http {

// Percent-decodes `in` (and '+' as space when `plus_is_space`, for query
// strings and form bodies). False on a malformed escape ("%zz", "%4").
bool PercentDecode(std::string_view in, std::string* out, bool plus_is_space);

// Percent-encodes everything but unreserved characters (RFC 3986).
std::string PercentEncode(std::string_view in);

// Lowercases ASCII letters.
std::string AsciiLower(std::string_view s);

// Case-insensitive ASCII equality.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

// The body of a request whose handler reads it as it arrives
// (HttpHandler::StreamsBody()) instead of after the server buffered it.
// Owned by the connection; valid while the handler runs, on its fiber.
class BodyReader {
 public:
  virtual ~BodyReader() = default;
  // Calls `sink` with consecutive pieces of the body (chunked framing
  // removed) as they come off the socket, each valid during the call only,
  // until the body ends: then OK. Reading waits for the peer (the fiber
  // parks; the loop serves others), and the socket is read no faster than
  // `sink` consumes: memory stays at the connection's input buffer. The
  // sink's first error stops the reading and is returned; so is kBadRequest
  // for a body cut short (the peer closed, or sent nothing for the request
  // timeout) or malformed, and kAttachmentTooLarge past the size limit. Once
  // only. A body the handler leaves unread is drained (or the connection
  // closed) after its response.
  virtual Status Read(const std::function<Status(std::string_view)>& sink) = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "PUT", ... as sent (http-parser validates it)
  std::string url;     // the raw request target: path and query, still encoded
  std::string path;    // the raw path part of `url` (still percent-encoded)
  std::string query;   // the raw query string without '?'
  int http_major = 1;
  int http_minor = 1;
  // Header names are stored lowercased; values as sent (repeated headers are
  // kept as separate entries, in order).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Set instead of `body` for a request whose body is streamed.
  BodyReader* body_reader = nullptr;
  // Query parameters, decoded, in order (repeated names kept).
  std::vector<std::pair<std::string, std::string>> params;
  // The peer address, "ip:port", for logs.
  std::string peer;

  // The first header named `lower_name` (must be lowercase), or nullptr.
  const std::string* Header(std::string_view lower_name) const;
  // The first query parameter named `name`, or nullptr.
  const std::string* Param(std::string_view name) const;
  bool HasParam(std::string_view name) const { return Param(name) != nullptr; }

  // Splits `url` into path/query and decodes `params`. False when the query
  // string holds a malformed percent escape.
  bool ParseUrl();

  // The media type of Content-Type without parameters, lowercased
  // ("application/json"); empty when absent.
  std::string ContentType() const;
};

}  // namespace settee::http
