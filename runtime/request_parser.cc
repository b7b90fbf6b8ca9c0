#include "runtime/request_parser.h"

#include <climits>
#include <utility>

namespace settee::http {

namespace {

RequestParser* Self(http_parser* p) { return static_cast<RequestParser*>(p->data); }

}  // namespace

RequestParser::RequestParser(const ParserLimits& limits) : limits_(limits) {
  http_parser_settings_init(&settings_);
  settings_.on_message_begin = &OnMessageBegin;
  settings_.on_url = &OnUrl;
  settings_.on_header_field = &OnHeaderField;
  settings_.on_header_value = &OnHeaderValue;
  settings_.on_headers_complete = &OnHeadersComplete;
  settings_.on_body = &OnBody;
  settings_.on_message_complete = &OnMessageComplete;
  http_parser_init(&parser_, HTTP_REQUEST);
  parser_.data = this;
  Reset();
}

void RequestParser::Reset() {
  request_ = HttpRequest();
  field_.clear();
  reading_value_ = false;
  header_bytes_ = 0;
  expects_continue_ = false;
  in_message_ = false;
  content_length_.reset();
  streaming_ = false;
  body_bytes_ = 0;
}

HttpRequest RequestParser::TakeRequest() {
  HttpRequest r = std::move(request_);
  Reset();
  return r;
}

int RequestParser::Fail(int status, std::string reason) {
  error_status_ = status;
  error_reason_ = std::move(reason);
  pending_ = Event::kError;
  return 1;  // non-zero stops http-parser with HPE_CB_*
}

RequestParser::Event RequestParser::Execute(std::string_view data, size_t* consumed) {
  *consumed = 0;
  if (error_status_ != 0) return Event::kError;
  // A pause set by the previous event is lifted here: the caller has acted on it.
  if (HTTP_PARSER_ERRNO(&parser_) == HPE_PAUSED) http_parser_pause(&parser_, 0);
  if (data.empty()) return Event::kNeedMore;
  pending_ = Event::kNeedMore;
  size_t n = http_parser_execute(&parser_, &settings_, data.data(), data.size());
  *consumed = n;
  http_errno err = HTTP_PARSER_ERRNO(&parser_);
  if (pending_ == Event::kError) return Event::kError;
  if (err == HPE_PAUSED) {
    // A pause in a callback leaves the byte that triggered it unconsumed only
    // for on_message_complete in some http-parser versions; the count returned
    // is authoritative either way.
    return pending_;
  }
  if (err != HPE_OK) {
    if (err == HPE_HEADER_OVERFLOW) {
      Fail(431, "Request header fields too large");
    } else {
      Fail(400, std::string("Bad request: ") + http_errno_description(err));
    }
    return Event::kError;
  }
  return pending_;
}

int RequestParser::OnMessageBegin(http_parser* p) {
  Self(p)->in_message_ = true;
  return 0;
}

int RequestParser::OnUrl(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  self->in_message_ = true;
  self->request_.url.append(at, len);
  if (self->request_.url.size() > self->limits_.max_url_bytes) {
    return self->Fail(414, "Request URI too long");
  }
  self->header_bytes_ += len;
  return 0;
}

int RequestParser::OnHeaderField(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  self->header_bytes_ += len;
  if (self->header_bytes_ > self->limits_.max_header_bytes) {
    return self->Fail(431, "Request header fields too large");
  }
  if (self->reading_value_) {
    // A new field starts; http-parser may deliver one field in several pieces.
    self->field_.clear();
    self->reading_value_ = false;
  }
  for (size_t i = 0; i < len; ++i) {
    char c = at[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    self->field_.push_back(c);
  }
  return 0;
}

int RequestParser::OnHeaderValue(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  self->header_bytes_ += len;
  if (self->header_bytes_ > self->limits_.max_header_bytes) {
    return self->Fail(431, "Request header fields too large");
  }
  if (!self->reading_value_) {
    if (self->request_.headers.size() >= self->limits_.max_header_count) {
      return self->Fail(431, "Too many request header fields");
    }
    self->request_.headers.emplace_back(std::move(self->field_), std::string());
    self->field_.clear();
    self->reading_value_ = true;
  }
  self->request_.headers.back().second.append(at, len);
  return 0;
}

int RequestParser::OnHeadersComplete(http_parser* p) {
  RequestParser* self = Self(p);
  HttpRequest& r = self->request_;
  r.method = http_method_str(static_cast<http_method>(p->method));
  r.http_major = p->http_major;
  r.http_minor = p->http_minor;
  // Failing here must pause, not return non-zero: http-parser reads 1 from
  // on_headers_complete as "no body follows".
  auto fail = [&](int status, std::string reason) {
    self->Fail(status, std::move(reason));
    http_parser_pause(p, 1);
    return 0;
  };
  if (p->http_major != 1) return fail(505, "HTTP version not supported");
  if (!r.ParseUrl()) return fail(400, "Malformed percent-encoding in the query string");
  if (const std::string* expect = r.Header("expect")) {
    if (!EqualsIgnoreCase(*expect, "100-continue")) {
      return fail(417, "Unsupported Expect header");
    }
    self->expects_continue_ = p->http_major == 1 && p->http_minor >= 1;
  }
  // http-parser sets content_length to ULLONG_MAX when absent or chunked.
  const bool chunked = (p->flags & F_CHUNKED) != 0;
  const bool sized = !chunked && p->content_length != ULLONG_MAX;
  const bool has_body = chunked || (sized && p->content_length > 0);
  self->streaming_ = has_body && self->classifier_ && self->classifier_(r);
  if (sized) {
    self->content_length_ = p->content_length;
    if (p->content_length > self->BodyLimit()) {
      return fail(413, "the request entity is too large");
    }
  }
  if (sized && !self->streaming_) {
    // One allocation for the whole body: growing a large upload (an
    // attachment) by doubling would copy it twice over and hold the old and
    // the new buffer at once. Pages are touched only as bytes arrive, so a
    // client announcing a body it never sends pins address space, not RAM.
    self->request_.body.reserve(p->content_length);
  }
  self->pending_ = Event::kHeadersComplete;
  http_parser_pause(p, 1);
  return 0;
}

int RequestParser::OnBody(http_parser* p, const char* at, size_t len) {
  RequestParser* self = Self(p);
  self->body_bytes_ += len;
  if (self->body_bytes_ > self->BodyLimit()) {
    return self->Fail(413, "the request entity is too large");
  }
  if (!self->streaming_) {
    self->request_.body.append(at, len);
  } else if (self->body_sink_ != nullptr) {
    (*self->body_sink_)(std::string_view(at, len));
  }
  return 0;
}

int RequestParser::OnMessageComplete(http_parser* p) {
  RequestParser* self = Self(p);
  self->pending_ = Event::kMessageComplete;
  http_parser_pause(p, 1);
  return 0;
}

}  // namespace settee::http
