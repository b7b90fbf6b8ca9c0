#include "replication/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "util/json.h"

namespace settee::replication {

namespace {

void GlobalInit() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t Collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

}  // namespace

HttpClient::HttpClient(HttpClientOptions options) : options_(std::move(options)) {
  GlobalInit();
  curl_ = curl_easy_init();
  multi_ = curl_multi_init();
}

HttpClient::~HttpClient() {
  curl_multi_cleanup(static_cast<CURLM*>(multi_));
  curl_easy_cleanup(static_cast<CURL*>(curl_));
}

void HttpClient::Interrupt() {
  interrupted_ = true;
  curl_multi_wakeup(static_cast<CURLM*>(multi_));
}

int HttpClient::Progress(void* self, long, long, long, long) {
  return static_cast<HttpClient*>(self)->interrupted_ ? 1 : 0;
}

int HttpClient::Perform() {
  // The multi interface instead of curl_easy_perform, so that Interrupt()
  // wakes the wait at once (curl_multi_wakeup) instead of at the next
  // progress callback, which an idle long poll gets about once a second.
  CURL* c = static_cast<CURL*>(curl_);
  CURLM* m = static_cast<CURLM*>(multi_);
  curl_multi_add_handle(m, c);
  CURLcode result = CURLE_OK;
  for (;;) {
    int running = 0;
    CURLMcode mc = curl_multi_perform(m, &running);
    if (mc != CURLM_OK) {
      result = CURLE_RECV_ERROR;
      break;
    }
    int queued = 0;
    bool done = false;
    while (CURLMsg* msg = curl_multi_info_read(m, &queued)) {
      if (msg->msg == CURLMSG_DONE) {
        result = msg->data.result;
        done = true;
      }
    }
    if (done) break;
    if (interrupted_) {
      result = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
    curl_multi_poll(m, nullptr, 0, 1000, nullptr);
  }
  curl_multi_remove_handle(m, c);
  return result;
}

Result<HttpResponse> HttpClient::Send(std::string_view method, const std::string& url,
                                      std::string_view body, std::chrono::milliseconds timeout,
                                      std::string_view accept, std::string_view content_type) {
  if (interrupted_) return Status(Status::Code::kTimeout, "interrupted");
  CURL* c = static_cast<CURL*>(curl_);
  // Reset per request but keep the connection cache and cookies.
  curl_easy_reset(c);
  HttpResponse response;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");  // every encoding libcurl decodes
  curl_easy_setopt(c, CURLOPT_COOKIEFILE, "");       // the in-memory cookie engine
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(options_.connect_timeout.count()));
  if (timeout == kUntilIdle) {
    // Below 1 byte/s for request_timeout (whole seconds, at least one).
    const auto idle = std::max<long>(
        1, static_cast<long>((options_.request_timeout.count() + 999) / 1000));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 0L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, idle);
  } else {
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                     static_cast<long>((timeout.count() ? timeout : options_.request_timeout).count()));
  }
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, Progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, this);
  if (!options_.verify_tls) {
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  if (!options_.user.empty() && !session_) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, static_cast<long>(CURLAUTH_BASIC));
    curl_easy_setopt(c, CURLOPT_USERNAME, options_.user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, options_.password.c_str());
  }
  std::string accept_header = "Accept: " + std::string(accept);
  curl_slist* raw = curl_slist_append(nullptr, accept_header.c_str());
  const bool has_body = !body.empty() || method == "POST" || method == "PUT";
  if (has_body) {
    std::string content_type_header = "Content-Type: " + std::string(content_type);
    raw = curl_slist_append(raw, content_type_header.c_str());
    // No "Expect: 100-continue" round trip for large bodies.
    raw = curl_slist_append(raw, "Expect:");
  }
  std::unique_ptr<curl_slist, SlistDeleter> headers(raw);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (method == "GET") {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  } else if (method == "HEAD") {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, std::string(method).c_str());
  }
  if (has_body) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.empty() ? "" : body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  CURLcode rc = static_cast<CURLcode>(Perform());
  if (rc != CURLE_OK) {
    if (interrupted_) return Status(Status::Code::kTimeout, "interrupted");
    std::string reason = std::string(curl_easy_strerror(rc)) + " (" + std::string(method) +
                         " " + url.substr(0, url.find('?')) + ")";
    if (rc == CURLE_OPERATION_TIMEDOUT) return Status(Status::Code::kTimeout, reason);
    return Status::IOError(reason);
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &response.status);
  const char* response_type = nullptr;
  if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &response_type) == CURLE_OK && response_type) {
    response.content_type = response_type;
  }
  return response;
}

Result<HttpResponse> HttpClient::Request(std::string_view method, const std::string& url,
                                         std::string_view body,
                                         std::chrono::milliseconds timeout,
                                         std::string_view accept,
                                         std::string_view content_type) {
  auto r = Send(method, url, body, timeout, accept, content_type);
  if (r.ok() && r->status == 401 && session_) {
    // The session cookie expired: log in again once and retry.
    session_ = false;
    Status s = Login(server_root_);
    if (!s.ok()) return s;
    r = Send(method, url, body, timeout, accept, content_type);
  }
  return r;
}

Status HttpClient::Login(const std::string& server_root) {
  server_root_ = server_root;
  if (options_.user.empty() || !options_.cookie_session) return Status::OK();
  std::string body = "{\"name\":";
  json::AppendQuoted(&body, options_.user);
  body += ",\"password\":";
  json::AppendQuoted(&body, options_.password);
  body += '}';
  session_ = false;
  auto r = Send("POST", server_root + "_session", body, {}, "application/json", "application/json");
  if (!r.ok()) return r.status();
  if (r->status == 200) {
    session_ = true;
    return Status::OK();
  }
  if (r->status == 401) return StatusFromResponse(*r);
  // No _session (pouchdb-server without auth, proxies): Basic auth.
  return Status::OK();
}

Status StatusFromResponse(const HttpResponse& response) {
  if (response.status >= 200 && response.status < 300) return Status::OK();
  std::string error, reason;
  json::Document d;
  if (json::Parse(response.body, &d).ok() && d.IsObject()) {
    if (d.HasMember("error") && d["error"].IsString()) error = json::View(d["error"]);
    if (d.HasMember("reason") && d["reason"].IsString()) reason = json::View(d["reason"]);
  }
  if (reason.empty()) reason = error.empty() ? "HTTP " + std::to_string(response.status) : error;
  using C = Status::Code;
  switch (response.status) {
    case 400: return Status(C::kBadRequest, reason);
    case 401: return Status(C::kUnauthorized, reason);
    case 403: return Status(C::kForbidden, reason);
    case 404: return Status(C::kNotFound, reason);
    case 409: return Status(C::kConflict, reason);
    case 412: return Status(error == "file_exists" ? C::kFileExists : C::kPreconditionFailed,
                            reason);
    case 413: return Status(C::kTooLarge, reason);
    case 415: return Status(C::kBadContentType, reason);
    default:
      return Status::IOError("HTTP " + std::to_string(response.status) + ": " + reason);
  }
}

}  // namespace settee::replication
