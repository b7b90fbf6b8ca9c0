// HttpClient (replication/http_client.h): timeouts against a raw loopback
// server that reads a request body slowly.
#include "replication/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace settee::replication {
namespace {

// Accepts one connection, reads the request's headers, then its body in
// small pieces with a pause between them (a slow link), answers 201 once
// the body is in, or never answers when `stall` (after the headers).
class SlowReader {
 public:
  explicit SlowReader(bool stall) : stall_(stall) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    // A small receive window, so the client's bytes move as we read them
    // rather than into kernel buffers.
    int small = 16 << 10;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
    socklen_t len = sizeof a;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~SlowReader() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/db/doc"; }
  size_t body_read() const { return body_read_.load(); }

 private:
  void Serve() {
    int c = ::accept(fd_, nullptr, nullptr);
    if (c < 0) return;
    timeval tv{0, 100'000};  // so stop_ is seen while the client is silent
    ::setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string head;
    char buf[8192];
    size_t length = 0, header_end = std::string::npos;
    while (!stop_ && header_end == std::string::npos) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n == 0) break;
      if (n < 0) continue;
      head.append(buf, static_cast<size_t>(n));
      header_end = head.find("\r\n\r\n");
    }
    if (header_end != std::string::npos) {
      auto at = head.find("Content-Length: ");
      if (at != std::string::npos) length = std::stoull(head.substr(at + 16));
      body_read_ = head.size() - header_end - 4;
    }
    while (!stop_ && !stall_ && body_read_ < length) {
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n == 0) break;
      if (n > 0) body_read_ += static_cast<size_t>(n);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (!stall_ && body_read_ >= length) {
      const std::string reply =
          "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
          "Content-Length: 11\r\nConnection: close\r\n\r\n{\"ok\":true}";
      (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
    }
    while (!stop_) {  // until the client closes
      ssize_t n = ::recv(c, buf, sizeof buf, 0);
      if (n == 0) break;
    }
    ::close(c);
  }

  const bool stall_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<size_t> body_read_{0};
  std::thread thread_;
};

HttpClientOptions ShortTimeout() {
  HttpClientOptions o;
  o.request_timeout = std::chrono::milliseconds(1000);
  o.connect_timeout = std::chrono::milliseconds(5000);
  return o;
}

// 2 MiB read 8 KiB per 10 ms takes about 2.5 s, longer than the 1 s
// request_timeout: a whole-request limit ends it, kUntilIdle lets a body
// that keeps moving finish (a big attachment over a slow link).
TEST(HttpClient, UntilIdleLetsASlowButMovingBodyFinish) {
  const std::string body(2 << 20, 'b');
  {
    SlowReader server(false);
    HttpClient client(ShortTimeout());
    auto r = client.Request("PUT", server.url(), body);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), Status::Code::kTimeout) << r.status().ToString();
    EXPECT_LT(server.body_read(), body.size());
  }
  {
    SlowReader server(false);
    HttpClient client(ShortTimeout());
    auto r = client.Request("PUT", server.url(), body, HttpClient::kUntilIdle);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, 201);
    EXPECT_EQ(server.body_read(), body.size());
  }
}

// A peer that stops reading and never answers still ends a kUntilIdle
// request: nothing moves for request_timeout (here ~6 s: libcurl averages
// the speed over its last ~5 s).
TEST(HttpClient, UntilIdleEndsARequestThatStalls) {
  SlowReader server(true);
  HttpClient client(ShortTimeout());
  auto r = client.Request("PUT", server.url(), std::string(2 << 20, 's'), HttpClient::kUntilIdle);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Status::Code::kTimeout) << r.status().ToString();
}

}  // namespace
}  // namespace settee::replication
