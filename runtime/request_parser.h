// RequestParser: incremental HTTP/1.x request parsing over http-parser, with
// the limits that keep hostile clients from exhausting memory.
//
// The parser stops after the headers of each request (so the caller can answer
// `Expect: 100-continue` or refuse an oversize body before it arrives) and
// after each complete request (so pipelined requests are handled one at a
// time, in order). Bytes beyond the point where it stopped are left to the
// caller, who passes them again on the next call.
//
// A request the stream classifier picks (SetStreamClassifier(), asked at the
// end of the headers) has its body streamed: no bytes are kept in
// request().body; each piece goes to the body sink (SetBodySink()) as it is
// parsed, and max_streamed_body_bytes is its limit.
//
// Thread safety: a RequestParser is owned by one connection; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <http_parser.h>

#include "runtime/http_message.h"

namespace settee::http {

struct ParserLimits {
  // Request line plus all header lines, in bytes. Beyond it: 431.
  size_t max_header_bytes = 64 * 1024;
  // Number of header fields. Beyond it: 431.
  size_t max_header_count = 100;
  // Request-target length. Beyond it: 414.
  size_t max_url_bytes = 16 * 1024;
  // Decoded body bytes (Content-Length or the sum of chunks). Beyond it: 413.
  uint64_t max_body_bytes = 64u << 20;
  // The same for a streamed body (a standalone attachment PUT), which is
  // never held whole. CouchDB's max_attachment_size default (1 GiB).
  uint64_t max_streamed_body_bytes = 1u << 30;
};

class RequestParser {
 public:
  enum class Event {
    kNeedMore,          // all input consumed; feed more bytes
    kHeadersComplete,   // request() has method, url and headers; body follows
    kMessageComplete,   // request() is complete
    kError,             // error_status() (400, 413, 414, 417, 431, 505) and
                        // error_reason() say why; close after answering
  };

  explicit RequestParser(const ParserLimits& limits);
  RequestParser(const RequestParser&) = delete;
  RequestParser& operator=(const RequestParser&) = delete;

  // Parses from `data`; *consumed gets the number of bytes used. Returns at
  // the first event. After kMessageComplete the next call starts a new
  // request (call TakeRequest() first).
  Event Execute(std::string_view data, size_t* consumed);

  // The request being parsed (valid after kHeadersComplete; body filled by
  // kMessageComplete).
  HttpRequest& request() { return request_; }
  // Moves the finished request out and resets for the next one.
  HttpRequest TakeRequest();

  // Decides, with the request's method, URL and headers, whether its body is
  // streamed. Unset: no body is.
  void SetStreamClassifier(std::function<bool(const HttpRequest&)> classifier) {
    classifier_ = std::move(classifier);
  }
  // True from kHeadersComplete of a streamed request until the next request.
  bool streaming() const { return streaming_; }
  // Receives a streamed body's pieces during Execute() (nullptr: dropped).
  // The pieces point into the caller's data.
  void SetBodySink(const std::function<void(std::string_view)>* sink) { body_sink_ = sink; }
  // A streamed request's head, moved out at kHeadersComplete while its body
  // is still to be parsed; TakeRequest() after kMessageComplete resets.
  HttpRequest TakeHead() { return std::move(request_); }

  // True once headers arrived with "Expect: 100-continue" and HTTP/1.1.
  bool expects_continue() const { return expects_continue_; }
  // The declared Content-Length, when given (not for chunked bodies).
  std::optional<uint64_t> content_length() const { return content_length_; }
  // Whether the connection may be reused after this request.
  bool ShouldKeepAlive() const { return http_should_keep_alive(&parser_) != 0; }
  // True after at least one byte of the current request was seen.
  bool in_message() const { return in_message_; }

  int error_status() const { return error_status_; }
  const std::string& error_reason() const { return error_reason_; }

 private:
  static int OnMessageBegin(http_parser* p);
  static int OnUrl(http_parser* p, const char* at, size_t len);
  static int OnHeaderField(http_parser* p, const char* at, size_t len);
  static int OnHeaderValue(http_parser* p, const char* at, size_t len);
  static int OnHeadersComplete(http_parser* p);
  static int OnBody(http_parser* p, const char* at, size_t len);
  static int OnMessageComplete(http_parser* p);

  int Fail(int status, std::string reason);
  uint64_t BodyLimit() const {
    return streaming_ ? limits_.max_streamed_body_bytes : limits_.max_body_bytes;
  }
  void Reset();

  const ParserLimits limits_;
  http_parser parser_;
  http_parser_settings settings_;
  HttpRequest request_;
  std::string field_;  // header name being read (lowercased)
  bool reading_value_ = false;
  size_t header_bytes_ = 0;
  bool expects_continue_ = false;
  bool in_message_ = false;
  std::optional<uint64_t> content_length_;
  std::function<bool(const HttpRequest&)> classifier_;
  bool streaming_ = false;
  uint64_t body_bytes_ = 0;
  const std::function<void(std::string_view)>* body_sink_ = nullptr;
  Event pending_ = Event::kNeedMore;
  int error_status_ = 0;
  std::string error_reason_;
};

}  // namespace settee::http
