// MIME multipart bodies as CouchDB exchanges them: multipart/related
// documents with their attachments (the replicator's PUT, and GET with
// Accept: multipart/related), multipart/mixed open_revs answers and
// multipart/byteranges for several Range requests.
//
// ParseMultipart() works on a body held in memory, its parts viewing that
// body; MultipartStreamParser takes the same bodies as they arrive (a
// multipart/related document PUT streamed from the socket), holding only a
// part's headers and a boundary's length of bytes. Plain functions are
// thread-safe; a parser is used by one thread.
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

// Receives the parts MultipartStreamParser finds, in order.
class MultipartPartHandler {
 public:
  virtual ~MultipartPartHandler() = default;
  // A part's headers are in (head.body is empty).
  virtual Status PartBegin(const MultipartPart& head) = 0;
  // Consecutive bytes of the part's body, valid during the call only.
  virtual Status PartData(std::string_view bytes) = 0;
  virtual Status PartEnd() = 0;
};

// ParseMultipart()'s rules over a body fed in pieces: the handler gets each
// part's headers, then its body in pieces, as soon as they are known not to
// be the start of a boundary. A handler error stops the parse and is
// returned by Feed(). Malformed bodies are kBadRequest, as ParseMultipart's.
class MultipartStreamParser {
 public:
  // Part header blocks larger than this are refused.
  static constexpr size_t kMaxHeaderBytes = 64 << 10;

  // `handler` must outlive the parser.
  MultipartStreamParser(std::string_view boundary, MultipartPartHandler* handler);
  Status Feed(std::string_view piece);
  // After the last piece: kBadRequest unless the closing boundary came.
  Status Finish();

 private:
  enum class State { kStart, kPreamble, kAfterBoundary, kHeaders, kBody, kDone };
  Status Process();

  const std::string dash_;       // "--boundary"
  const std::string delimiter_;  // "\r\n--boundary"
  MultipartPartHandler* const handler_;
  State state_ = State::kStart;
  std::string buf_;  // bytes not yet consumed
  MultipartPart part_;
  size_t header_bytes_ = 0;
};

// The text that opens a part: "--boundary\r\n" + headers + "\r\n".
std::string MultipartPartHead(std::string_view boundary,
                              const std::vector<std::pair<std::string, std::string>>& headers);
// "\r\n--boundary--": ends the last part and the body.
std::string MultipartClose(std::string_view boundary);

}  // namespace settee
