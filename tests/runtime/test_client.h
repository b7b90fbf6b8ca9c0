// A tiny blocking HTTP/1.1 client for the runtime tests: real sockets, raw
// bytes in, parsed responses out. Header-only; one client per connection.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace settee::testing {

struct ClientResponse {
  int status = 0;
  std::string reason;
  std::vector<std::pair<std::string, std::string>> headers;  // names lowercased
  std::string body;

  const std::string* Header(std::string_view lower) const {
    for (auto& [n, v] : headers)
      if (n == lower) return &v;
    return nullptr;
  }
  std::string HeaderOr(std::string_view lower, std::string def = {}) const {
    const std::string* v = Header(lower);
    return v ? *v : def;
  }
};

class TestClient {
 public:
  explicit TestClient(int port, int timeout_ms = 10000) : timeout_ms_(timeout_ms) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
    int one = 1;
    if (fd_ >= 0) ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~TestClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  TestClient(const TestClient&) = delete;
  TestClient& operator=(const TestClient&) = delete;

  bool connected() const { return fd_ >= 0; }

  bool SendRaw(std::string_view data) {
    while (!data.empty()) {
      ssize_t n = ::send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      data.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  // Sends a request with Content-Length (when body non-empty or method needs it).
  bool Send(std::string_view method, std::string_view target, std::string_view body = {},
            std::vector<std::pair<std::string, std::string>> headers = {}) {
    std::string req;
    req.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: localhost\r\n");
    bool has_ct = false;
    for (auto& [n, v] : headers) {
      req.append(n).append(": ").append(v).append("\r\n");
      if (strcasecmp(n.c_str(), "content-type") == 0) has_ct = true;
    }
    if (!body.empty() || method == "POST" || method == "PUT") {
      if (!has_ct && !body.empty()) req.append("Content-Type: application/json\r\n");
      req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
    }
    req.append("\r\n").append(body);
    return SendRaw(req);
  }

  ClientResponse Request(std::string_view method, std::string_view target,
                         std::string_view body = {},
                         std::vector<std::pair<std::string, std::string>> headers = {}) {
    if (!Send(method, target, body, std::move(headers))) return {};
    auto r = ReadResponse(method == "HEAD");
    return r ? *r : ClientResponse{};
  }

  // Request with `Content-Type: application/json` when there is a body.
  ClientResponse JsonRequest(std::string_view method, std::string_view target,
                             std::string_view body = {},
                             std::vector<std::pair<std::string, std::string>> headers = {}) {
    if (!body.empty()) headers.emplace_back("Content-Type", "application/json");
    return Request(method, target, body, std::move(headers));
  }

  // Reads one response (nullopt on EOF/timeout/garbage).
  std::optional<ClientResponse> ReadResponse(bool head_request = false) {
    ClientResponse r;
    size_t eoh;
    while ((eoh = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    std::string head = buf_.substr(0, eoh);
    buf_.erase(0, eoh + 4);
    size_t eol = head.find("\r\n");
    std::string status_line = head.substr(0, eol);
    if (status_line.size() < 12) return std::nullopt;
    r.status = std::stoi(status_line.substr(9, 3));
    r.reason = status_line.substr(13);
    size_t pos = eol == std::string::npos ? head.size() : eol + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string name = line.substr(0, colon);
        for (char& c : name) c = static_cast<char>(tolower(c));
        size_t v = colon + 1;
        while (v < line.size() && line[v] == ' ') ++v;
        r.headers.emplace_back(name, line.substr(v));
      }
      pos = e + 2;
    }
    if (r.status == 100) return ReadResponse(head_request);  // interim
    if (head_request || r.status == 204 || r.status == 304) return r;
    if (const std::string* te = r.Header("transfer-encoding"); te && *te == "chunked") {
      for (;;) {
        size_t e;
        while ((e = buf_.find("\r\n")) == std::string::npos)
          if (!Fill()) return std::nullopt;
        size_t n = std::stoul(buf_.substr(0, e), nullptr, 16);
        while (buf_.size() < e + 2 + n + 2)
          if (!Fill()) return std::nullopt;
        r.body.append(buf_, e + 2, n);
        buf_.erase(0, e + 2 + n + 2);
        if (n == 0) break;
      }
    } else if (const std::string* cl = r.Header("content-length")) {
      size_t n = std::stoul(*cl);
      while (buf_.size() < n)
        if (!Fill()) return std::nullopt;
      r.body = buf_.substr(0, n);
      buf_.erase(0, n);
    } else {
      while (Fill()) {
      }
      r.body = std::move(buf_);
      buf_.clear();
    }
    return r;
  }

  // Reads whatever arrives until `marker` is in the buffer (streams). Returns
  // everything read so far and keeps it consumed.
  std::string ReadUntil(std::string_view marker) {
    while (buf_.find(marker) == std::string::npos)
      if (!Fill()) break;
    std::string out = std::move(buf_);
    buf_.clear();
    return out;
  }

  // True if the server closed the connection (EOF) within the timeout.
  bool WaitForClose() {
    while (Fill()) {
    }
    return eof_;
  }

  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

 private:
  bool Fill() {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms_) <= 0) return false;
    char tmp[65536];
    ssize_t n = ::recv(fd_, tmp, sizeof(tmp), 0);
    if (n <= 0) {
      eof_ = true;
      return false;
    }
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }

  int fd_ = -1;
  int timeout_ms_;
  std::string buf_;
  bool eof_ = false;
};

}  // namespace settee::testing
