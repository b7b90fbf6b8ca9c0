#include "runtime/multipart.h"

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
