// HttpClient: the replicator's HTTP/1.1 client, on libcurl (Debian's
// libcurl4-openssl-dev): one easy handle per client, so its connection is
// kept alive across requests; gzip/deflate responses (Accept-Encoding);
// TLS through OpenSSL for https; connect and transfer timeouts; Basic auth,
// or a CouchDB cookie session (POST /_session once, then the AuthSession
// cookie, renewed on a 401).
//
// Thread safety: one request at a time per client (the replication job's
// thread); Interrupt() may be called from any thread and makes the request
// in flight, and every later one, fail with kTimeout "interrupted".
// Several requests in flight need several clients.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "settee/status.h"

namespace settee::replication {

struct HttpClientOptions {
  std::string user;  // empty: no credentials
  std::string password;
  // Log in with POST /_session and send the cookie instead of Basic auth on
  // every request (CouchDB's replicator does the same by default).
  bool cookie_session = true;
  std::chrono::milliseconds connect_timeout{10'000};
  // A whole request, unless the call gives its own (a long poll).
  std::chrono::milliseconds request_timeout{60'000};
  // Verify the peer's TLS certificate (off only for tests and self-signed
  // setups).
  bool verify_tls = true;
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string content_type;  // the response's Content-Type ("" when absent)
};

class HttpClient {
 public:
  static constexpr std::chrono::milliseconds kUntilIdle{-1};

  explicit HttpClient(HttpClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends one request. Transport failures (refused, reset, timeout, TLS)
  // are kIOError / kTimeout; any HTTP status is a response (see
  // StatusFromResponse). `body` is sent as `content_type` when non-empty or
  // for POST/PUT; `accept` is the Accept header. `timeout` 0 = the client's
  // request_timeout; kUntilIdle = no limit on the whole request, which fails
  // only when no byte moves for request_timeout (for big bodies whose
  // transfer time depends on the link, as CouchDB's connection_timeout;
  // libcurl averages the speed over its last ~5 s, so never under that).
  Result<HttpResponse> Request(std::string_view method, const std::string& url,
                               std::string_view body = {},
                               std::chrono::milliseconds timeout = std::chrono::milliseconds(0),
                               std::string_view accept = "application/json",
                               std::string_view content_type = "application/json");

  // Starts a cookie session at `server_root` ("http://host:port/") when
  // the options ask for one. Falls back to Basic auth (and returns OK) if
  // the server has no _session; kUnauthorized for wrong credentials.
  Status Login(const std::string& server_root);

  void Interrupt();

 private:
  Result<HttpResponse> Send(std::string_view method, const std::string& url,
                            std::string_view body, std::chrono::milliseconds timeout,
                            std::string_view accept, std::string_view content_type);
  static int Progress(void* self, long, long, long, long);
  int Perform();  // a CURLcode

  HttpClientOptions options_;
  void* curl_;   // CURL*
  void* multi_;  // CURLM*, driving curl_ (so Interrupt() can wake it)
  std::string server_root_;
  bool session_ = false;  // a cookie session is active: no Basic auth
  std::atomic<bool> interrupted_{false};
};

// A CouchDB error response as a Status: the body's "error"/"reason" with
// the kind its HTTP status implies (401 kUnauthorized, 403 kForbidden, 404
// kNotFound, 409 kConflict, 412 kFileExists, 400 kBadRequest, 5xx
// kIOError, ...). OK for 2xx.
Status StatusFromResponse(const HttpResponse& response);

}  // namespace settee::replication
