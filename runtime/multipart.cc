#include "runtime/multipart.h"

#include <algorithm>

#include "runtime/http_message.h"

namespace settee {

const std::string* MultipartPart::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return &value;
  }
  return nullptr;
}

bool MultipartBoundary(std::string_view content_type, std::string* boundary) {
  const std::string lower = http::AsciiLower(content_type);
  size_t p = lower.find("boundary=");
  if (p == std::string::npos) return false;
  std::string_view v = content_type.substr(p + 9);
  if (!v.empty() && v.front() == '"') {
    v.remove_prefix(1);
    v = v.substr(0, v.find('"'));
  } else {
    v = v.substr(0, v.find_first_of("; \t"));
  }
  if (v.empty() || v.size() > 200) return false;
  boundary->assign(v);
  return true;
}

Status ParseMultipart(std::string_view body, std::string_view boundary,
                      std::vector<MultipartPart>* parts) {
  parts->clear();
  const std::string dash = "--" + std::string(boundary);
  const std::string delimiter = "\r\n" + dash;
  auto bad = [](const char* why) { return Status::BadRequest(std::string("Malformed multipart body: ") + why); };
  // The first boundary may come after a preamble, or right at the start.
  size_t pos;
  if (body.substr(0, dash.size()) == dash) {
    pos = dash.size();
  } else {
    size_t first = body.find(delimiter);
    if (first == std::string_view::npos) return bad("no boundary");
    pos = first + delimiter.size();
  }
  for (;;) {
    // After a boundary: "--" ends the body, else CRLF and a part.
    if (body.substr(pos, 2) == "--") return Status::OK();
    size_t line_end = body.find("\r\n", pos);
    if (line_end == std::string_view::npos) return bad("truncated");
    pos = line_end + 2;  // (transport padding after the boundary is ignored)
    MultipartPart& part = parts->emplace_back();
    // Headers up to an empty line.
    for (;;) {
      size_t eol = body.find("\r\n", pos);
      if (eol == std::string_view::npos) return bad("part headers do not end");
      std::string_view line = body.substr(pos, eol - pos);
      pos = eol + 2;
      if (line.empty()) break;
      size_t colon = line.find(':');
      if (colon == std::string_view::npos) return bad("part header without a colon");
      std::string_view value = line.substr(colon + 1);
      while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      part.headers.emplace_back(http::AsciiLower(line.substr(0, colon)), std::string(value));
    }
    size_t end = body.find(delimiter, pos);
    if (end == std::string_view::npos) return bad("no closing boundary");
    part.body = body.substr(pos, end - pos);
    pos = end + delimiter.size();
  }
}

MultipartStreamParser::MultipartStreamParser(std::string_view boundary,
                                             MultipartPartHandler* handler)
    : dash_("--" + std::string(boundary)), delimiter_("\r\n" + dash_), handler_(handler) {}

Status MultipartStreamParser::Feed(std::string_view piece) {
  if (state_ == State::kDone) return Status::OK();  // the epilogue is ignored
  buf_.append(piece);
  return Process();
}

Status MultipartStreamParser::Finish() {
  if (state_ == State::kDone) return Status::OK();
  return Status::BadRequest(state_ == State::kBody ? "Malformed multipart body: no closing boundary"
                                                   : "Malformed multipart body: truncated");
}

Status MultipartStreamParser::Process() {
  auto bad = [](const char* why) {
    return Status::BadRequest(std::string("Malformed multipart body: ") + why);
  };
  std::string_view rest(buf_);
  Status s;
  bool more = true;
  while (more && s.ok()) {
    switch (state_) {
      case State::kStart:
        // The first boundary may come after a preamble, or right at the start.
        if (rest.size() < dash_.size()) {
          if (dash_.compare(0, rest.size(), rest) != 0) state_ = State::kPreamble;
          more = state_ == State::kPreamble;
          break;
        }
        if (rest.substr(0, dash_.size()) == dash_) {
          rest.remove_prefix(dash_.size());
          state_ = State::kAfterBoundary;
        } else {
          state_ = State::kPreamble;
        }
        break;
      case State::kPreamble: {
        size_t at = rest.find(delimiter_);
        if (at == std::string_view::npos) {
          // Keep what may be the start of the boundary.
          rest.remove_prefix(rest.size() - std::min(rest.size(), delimiter_.size() - 1));
          more = false;
          break;
        }
        rest.remove_prefix(at + delimiter_.size());
        state_ = State::kAfterBoundary;
        break;
      }
      case State::kAfterBoundary: {
        // "--" ends the body, else CRLF (after any transport padding) and a part.
        if (rest.size() < 2) {
          more = false;
          break;
        }
        if (rest.substr(0, 2) == "--") {
          state_ = State::kDone;
          rest = {};
          more = false;
          break;
        }
        size_t eol = rest.find("\r\n");
        if (eol == std::string_view::npos) {
          if (rest.size() > kMaxHeaderBytes) s = bad("boundary line does not end");
          more = false;
          break;
        }
        rest.remove_prefix(eol + 2);
        part_ = MultipartPart();
        header_bytes_ = 0;
        state_ = State::kHeaders;
        break;
      }
      case State::kHeaders: {
        size_t eol = rest.find("\r\n");
        if (eol == std::string_view::npos) {
          if (header_bytes_ + rest.size() > kMaxHeaderBytes) s = bad("part headers do not end");
          more = false;
          break;
        }
        std::string_view line = rest.substr(0, eol);
        rest.remove_prefix(eol + 2);
        header_bytes_ += eol + 2;
        if (header_bytes_ > kMaxHeaderBytes) {
          s = bad("part headers do not end");
          break;
        }
        if (line.empty()) {
          state_ = State::kBody;
          s = handler_->PartBegin(part_);
          break;
        }
        size_t colon = line.find(':');
        if (colon == std::string_view::npos) {
          s = bad("part header without a colon");
          break;
        }
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        part_.headers.emplace_back(http::AsciiLower(line.substr(0, colon)), std::string(value));
        break;
      }
      case State::kBody: {
        size_t at = rest.find(delimiter_);
        if (at == std::string_view::npos) {
          // All but what may be the start of the delimiter is body.
          const size_t n = rest.size() - std::min(rest.size(), delimiter_.size() - 1);
          if (n > 0) s = handler_->PartData(rest.substr(0, n));
          rest.remove_prefix(n);
          more = false;
          break;
        }
        if (at > 0) s = handler_->PartData(rest.substr(0, at));
        if (s.ok()) s = handler_->PartEnd();
        rest.remove_prefix(at + delimiter_.size());
        state_ = State::kAfterBoundary;
        break;
      }
      case State::kDone:
        rest = {};
        more = false;
        break;
    }
  }
  buf_.erase(0, buf_.size() - rest.size());
  return s;
}

std::string MultipartPartHead(std::string_view boundary,
                              const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out = "--";
  out.append(boundary);
  out.append("\r\n");
  for (const auto& [name, value] : headers) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  }
  out.append("\r\n");
  return out;
}

std::string MultipartClose(std::string_view boundary) {
  return "\r\n--" + std::string(boundary) + "--";
}

}  // namespace settee
