// MIME multipart bodies as CouchDB exchanges them: multipart/related
// documents with their attachments (the replicator's PUT, and GET with
// Accept: multipart/related), multipart/mixed open_revs answers and
// multipart/byteranges for several Range requests.
//
// Parsing works on a body held in memory (the server reads request bodies
// whole, within its body limit); parts view that body. Plain functions,
// thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "settee/status.h"

namespace settee {

struct MultipartPart {
  // Header names lowercased, values as sent.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string_view body;

  // The first header named `lower_name`, or nullptr.
  const std::string* Header(std::string_view lower_name) const;
};

// The boundary parameter of a multipart Content-Type value (quotes
// removed); false when there is none.
bool MultipartBoundary(std::string_view content_type, std::string* boundary);

// Splits `body` at `boundary` into its parts. kBadRequest for a body that
// does not start with the boundary, a part without a header end, or a body
// without the closing boundary (a truncated upload).
Status ParseMultipart(std::string_view body, std::string_view boundary,
                      std::vector<MultipartPart>* parts);

// The text that opens a part: "--boundary\r\n" + headers + "\r\n".
std::string MultipartPartHead(std::string_view boundary,
                              const std::vector<std::pair<std::string, std::string>>& headers);
// "\r\n--boundary--": ends the last part and the body.
std::string MultipartClose(std::string_view boundary);

}  // namespace settee
