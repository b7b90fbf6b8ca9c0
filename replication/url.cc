#include "replication/url.h"

#include <curl/curl.h>

#include <memory>

namespace settee::replication {

namespace {

struct CurluDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct CurlFree {
  void operator()(char* p) const { curl_free(p); }
};

// A part of `u`, or "" when absent.
std::string Part(CURLU* u, CURLUPart part, unsigned flags = 0) {
  char* raw = nullptr;
  if (curl_url_get(u, part, &raw, flags) != CURLUE_OK || raw == nullptr) return {};
  std::unique_ptr<char, CurlFree> owned(raw);
  return std::string(raw);
}

// libcurl's escaping: everything but RFC 3986's unreserved characters.
std::string Escape(std::string_view s) {
  char* raw = curl_easy_escape(nullptr, s.data(), static_cast<int>(s.size()));
  if (raw == nullptr) return {};
  std::unique_ptr<char, CurlFree> owned(raw);
  return std::string(raw);
}

}  // namespace

bool IsRemote(std::string_view s) {
  return s.starts_with("http://") || s.starts_with("https://");
}

Result<Url> ParseUrl(std::string_view text) {
  if (!IsRemote(text)) return Status::BadRequest("Not an http(s) URL: " + std::string(text));
  std::unique_ptr<CURLU, CurluDeleter> u(curl_url());
  if (curl_url_set(u.get(), CURLUPART_URL, std::string(text).c_str(), 0) != CURLUE_OK) {
    return Status::BadRequest("Malformed URL");
  }
  Url url;
  url.scheme = Part(u.get(), CURLUPART_SCHEME);
  url.user = Part(u.get(), CURLUPART_USER, CURLU_URLDECODE);
  url.password = Part(u.get(), CURLUPART_PASSWORD, CURLU_URLDECODE);
  url.host = Part(u.get(), CURLUPART_HOST);
  std::string port = Part(u.get(), CURLUPART_PORT);
  if (!port.empty()) url.port = std::stoi(port);
  url.path = Part(u.get(), CURLUPART_PATH);
  if (url.host.empty()) return Status::BadRequest("URL has no host");
  if (url.path.empty() || url.path.back() != '/') url.path += '/';
  return url;
}

std::string Url::WithoutCredentials() const {
  std::string out = scheme + "://" + host;
  if (port) out += ":" + std::to_string(port);
  return out + path;
}

std::string Url::Join(std::string_view rel) const {
  std::string out = WithoutCredentials();
  out += rel;
  return out;
}

std::string EscapeDocId(std::string_view id) {
  for (std::string_view prefix : {std::string_view("_design/"), std::string_view("_local/")}) {
    if (id.starts_with(prefix)) return std::string(prefix) + Escape(id.substr(prefix.size()));
  }
  return Escape(id);
}

std::string EscapeQuery(std::string_view value) { return Escape(value); }

}  // namespace settee::replication
