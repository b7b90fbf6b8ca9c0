// The HTTP server core over real loopback sockets, with a test handler:
// framing, keep-alive, pipelining, chunked bodies, 100-continue, limits,
// malformed input, streaming, cross-thread wakeups and shutdown.
#include "runtime/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>
#include <stdexcept>
#include <thread>

#include "tests/runtime/test_client.h"

namespace settee::http {
namespace {

using settee::testing::TestClient;

// Echoes the request: method, path, query params and body. Special paths:
//   /stream     streams three chunks
//   /throw      throws from the handler
//   /wait       waits for a Waker::Wake() from another thread
//   /silent     returns without responding
class EchoHandler : public HttpHandler {
 public:
  void Handle(HttpRequest& req, HttpResponse& res) override {
    if (req.path == "/stream") {
      res.StartChunked(200, "text/plain");
      res.WriteChunk("one,");
      res.WriteChunk("two,");
      res.WriteChunk("three");
      res.EndChunked();
      return;
    }
    if (req.path == "/big") {
      // Larger than a socket buffer: the gather write's rest waits for the peer.
      std::string body(3 << 20, '\0');
      for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>('a' + i % 26);
      res.Send(200, "text/plain", body, "!");
      return;
    }
    if (req.path.rfind("/up", 0) == 0) {
      // Streamed uploads: the body's length, piece count and a checksum.
      EXPECT_NE(req.body_reader, nullptr);
      EXPECT_TRUE(req.body.empty());
      if (req.path == "/up/unread") {
        res.Send(409, "text/plain", "refused before the body");
        return;
      }
      uint64_t length = 0, sum = 0, pieces = 0;
      Status s = req.body_reader->Read([&](std::string_view piece) {
        ++pieces;
        for (unsigned char c : piece) sum = sum * 31 + c;
        length += piece.size();
        if (req.path == "/up/fail" && length > 10) return Status::BadRequest("sink refused");
        return Status::OK();
      });
      {
        std::lock_guard<std::mutex> lock(mu);
        upload_statuses.push_back(s);
      }
      if (!s.ok()) {
        res.Send(400, "text/plain", s.ToString());
        return;
      }
      res.Send(200, "text/plain",
               std::to_string(length) + " " + std::to_string(sum) + " " +
                   std::to_string(pieces > 0));
      return;
    }
    if (req.path == "/gate") {
      // Waits until the test opens the gate.
      {
        std::lock_guard<std::mutex> lock(mu);
        gate_waker = res.GetWaker();
      }
      ++waits_entered;
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (!gate_open.load() && res.WaitUntil(deadline) && std::chrono::steady_clock::now() < deadline) {
      }
      res.Send(200, "text/plain", gate_open.load() ? "opened" : "timeout");
      return;
    }
    if (req.path == "/throw") throw std::runtime_error("boom");
    if (req.path == "/silent") return;
    if (req.path == "/wait") {
      ++waits_entered;
      Waker w = res.GetWaker();
      std::thread([w] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        w.Wake();
      }).detach();
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      bool ok = res.WaitUntil(deadline);
      bool woken_early = std::chrono::steady_clock::now() < deadline;
      res.Send(200, "text/plain", ok && woken_early ? "woken" : "timeout");
      return;
    }
    std::string out = req.method + " " + req.path;
    for (auto& [k, v] : req.params) out += " " + k + "=" + v;
    out += "|" + req.body;
    res.AddHeader("X-Test", "1");
    res.Send(200, "text/plain", out);
  }
  void HandleParseError(int status, const std::string& reason, HttpResponse& res) override {
    res.Send(status, "text/plain", "error:" + reason);
  }
  bool StreamsBody(const HttpRequest& head) override { return head.path.rfind("/up", 0) == 0; }

  std::mutex mu;
  std::vector<Status> upload_statuses;  // guarded by mu
  Waker gate_waker;                     // guarded by mu
  std::atomic<bool> gate_open{false};

  // How many /wait handlers have started: tests that act while a request is
  // in flight wait for it rather than sleeping and hoping.
  std::atomic<int> waits_entered{0};
};

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(HttpServerOptions()); }
  void StartServer(HttpServerOptions opts) {
    server_.reset();
    opts.port = 0;
    opts.threads = 2;
    opts.limits.max_body_bytes = 1024;
    opts.limits.max_header_count = 20;
    opts.limits.max_header_bytes = 4096;
    server_ = std::make_unique<HttpServer>(opts, &handler_);
    ASSERT_TRUE(server_->Start().ok());
    ASSERT_GT(server_->port(), 0);
  }
  int port() const { return server_->port(); }

  EchoHandler handler_;
  std::unique_ptr<HttpServer> server_;
};

// The loops share their port through SO_REUSEPORT, which would let a second
// server of the same user bind it too: two `settee serve --port 5984` both
// "listened", and the kernel split the connections between them. A port in
// use is refused, as CouchDB's eaddrinuse; so is one out of range (it was
// taken modulo 65536).
TEST_F(HttpServerTest, APortInUseOrOutOfRangeIsRefused) {
  HttpServerOptions opts;
  opts.port = port();
  opts.threads = 2;
  HttpServer second(opts, &handler_);
  Status s = second.Start();
  EXPECT_EQ(s.code(), Status::Code::kIOError) << s.ToString();
  EXPECT_NE(s.reason().find("in use"), std::string::npos) << s.ToString();
  for (int bad : {-1, 65536, 99999}) {
    opts.port = bad;
    HttpServer out_of_range(opts, &handler_);
    EXPECT_EQ(out_of_range.Start().code(), Status::Code::kBadRequest) << bad;
  }
  // The first server still answers, and its port is free again once it stops.
  TestClient c(port());
  EXPECT_EQ(c.Request("GET", "/x").status, 200);
  const int was = port();
  server_.reset();
  opts.port = was;
  HttpServer again(opts, &handler_);
  EXPECT_TRUE(again.Start().ok());
}

// A host name binds to its address, as CouchDB's bind_address takes one.
TEST_F(HttpServerTest, ABindAddressMayBeAHostName) {
  HttpServerOptions opts;
  opts.bind_address = "localhost";  // /etc/hosts: 127.0.0.1 first
  opts.port = 0;
  HttpServer named(opts, &handler_);
  ASSERT_TRUE(named.Start().ok());
  TestClient c(named.port());  // connects to 127.0.0.1
  EXPECT_EQ(c.Request("GET", "/x").status, 200);
  named.Stop();
}

TEST_F(HttpServerTest, SimpleGetHasFramingAndHeaders) {
  TestClient c(port());
  ASSERT_TRUE(c.connected());
  auto r = c.Request("GET", "/hello?a=1&b=x%20y");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "GET /hello a=1 b=x y|");
  EXPECT_EQ(r.HeaderOr("content-type"), "text/plain");
  EXPECT_EQ(r.HeaderOr("x-test"), "1");
  EXPECT_NE(r.Header("date"), nullptr);
  EXPECT_NE(r.Header("server"), nullptr);
}

TEST_F(HttpServerTest, LargeBodyAndTailArriveWholeAndConnectionStaysUsable) {
  TestClient c(port());
  for (int round = 0; round < 2; ++round) {
    auto r = c.Request("GET", "/big");
    ASSERT_EQ(r.status, 200);
    ASSERT_EQ(r.body.size(), (3u << 20) + 1);
    EXPECT_EQ(r.HeaderOr("content-length"), std::to_string((3u << 20) + 1));
    EXPECT_EQ(r.body.back(), '!');
    bool ok = true;
    for (size_t i = 0; i + 1 < r.body.size() && ok; ++i) ok = r.body[i] == static_cast<char>('a' + i % 26);
    EXPECT_TRUE(ok);
  }
  EXPECT_EQ(c.Request("GET", "/x").body, "GET /x|");
}

TEST_F(HttpServerTest, KeepAliveServesManyRequestsOnOneConnection) {
  TestClient c(port());
  for (int i = 0; i < 20; ++i) {
    auto r = c.Request("POST", "/k", "body" + std::to_string(i));
    ASSERT_EQ(r.status, 200);
    EXPECT_EQ(r.body, "POST /k|body" + std::to_string(i));
  }
  EXPECT_EQ(server_->connection_count(), 1);
}

TEST_F(HttpServerTest, PipelinedRequestsAnswerInOrder) {
  TestClient c(port());
  std::string all;
  for (int i = 0; i < 5; ++i) {
    all += "GET /p" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  all += "PUT /body HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc";
  ASSERT_TRUE(c.SendRaw(all));
  for (int i = 0; i < 5; ++i) {
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "GET /p" + std::to_string(i) + "|");
  }
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "PUT /body|abc");
}

// A pipelining client's batch is answered in one write, not one per
// response; a client that waits for each answer gets each written at once.
TEST_F(HttpServerTest, PipelinedResponsesGoOutTogether) {
  TestClient c(port());
  std::string all;
  for (int i = 0; i < 16; ++i) all += "GET /p" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n";
  uint64_t before = server_->response_writes();
  ASSERT_TRUE(c.SendRaw(all));
  for (int i = 0; i < 16; ++i) {
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "GET /p" + std::to_string(i) + "|");
  }
  uint64_t batched = server_->response_writes() - before;
  EXPECT_GE(batched, 1u);
  EXPECT_LE(batched, 4u);  // one, unless the batch arrived in pieces
  before = server_->response_writes();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(c.Request("GET", "/one").status, 200);
  EXPECT_EQ(server_->response_writes() - before, 5u);
  EXPECT_GE(server_->requests_served(), 21u);
}

// A response held for the pipelined request behind it still goes out while
// that request's handler waits: the loop flushes before it waits for I/O.
TEST_F(HttpServerTest, HeldResponseIsNotDelayedByABlockedHandler) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /gate HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto first = c.ReadResponse();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->body, "GET /first|");
  // Only now is the gate opened: had the first response waited for /gate,
  // /gate would have answered "timeout" at its deadline.
  while (handler_.waits_entered.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  handler_.gate_open = true;
  {
    std::lock_guard<std::mutex> lock(handler_.mu);
    handler_.gate_waker.Wake();
  }
  auto second = c.ReadResponse();
  ASSERT_TRUE(second.has_value());
  EXPECT_EQ(second->body, "opened");
}

// Held responses go out before a pipelined request the parser refuses
// closes the connection, in order.
TEST_F(HttpServerTest, HeldResponsesPrecedeAParseErrorsClose) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nBOGUS\r\n\r\n"));
  for (const char* path : {"/a", "/b"}) {
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value()) << path;
    EXPECT_EQ(r->body, std::string("GET ") + path + "|");
  }
  auto error = c.ReadResponse();
  ASSERT_TRUE(error.has_value());
  EXPECT_EQ(error->status, 400);
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, ChunkedRequestBodyIsDecoded) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw(
      "POST /c HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
      "3\r\nabc\r\n"
      "5\r\ndefgh\r\n"
      "0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "POST /c|abcdefgh");
}

TEST_F(HttpServerTest, RequestSplitIntoTinyWritesStillParses) {
  TestClient c(port());
  std::string req = "PUT /slow?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello";
  for (char ch : req) {
    ASSERT_TRUE(c.SendRaw(std::string(1, ch)));
  }
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "PUT /slow x=1|hello");
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimResponseBeforeBody) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("PUT /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"));
  std::string interim = c.ReadUntil("\r\n\r\n");
  EXPECT_EQ(interim.rfind("HTTP/1.1 100 Continue", 0), 0u) << interim;
  ASSERT_TRUE(c.SendRaw("data"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "PUT /e|data");
}

TEST_F(HttpServerTest, ExpectContinueWithOversizeBodyIsRefusedWith413) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("PUT /e HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 999999\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 413);
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, OversizeChunkedBodyIs413) {
  TestClient c(port());
  std::string chunk(800, 'x');
  std::string req = "POST /big HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
  req += "320\r\n" + chunk + "\r\n320\r\n" + chunk + "\r\n0\r\n\r\n";
  ASSERT_TRUE(c.SendRaw(req));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 413);
}

TEST_F(HttpServerTest, TooManyHeadersIs431) {
  TestClient c(port());
  std::string req = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 30; ++i) req += "X-H" + std::to_string(i) + ": v\r\n";
  req += "\r\n";
  ASSERT_TRUE(c.SendRaw(req));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 431);
}

TEST_F(HttpServerTest, HugeHeaderIs431) {
  TestClient c(port());
  std::string req = "GET / HTTP/1.1\r\nX-Big: " + std::string(10000, 'a') + "\r\n\r\n";
  ASSERT_TRUE(c.SendRaw(req));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 431);
}

TEST_F(HttpServerTest, MalformedRequestIs400AndServerKeepsServing) {
  {
    TestClient c(port());
    ASSERT_TRUE(c.SendRaw("THIS IS NOT HTTP\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
    EXPECT_TRUE(c.WaitForClose());
  }
  {
    TestClient c(port());
    ASSERT_TRUE(c.SendRaw("GET / HTTP/1.1\r\nContent-Length: abc\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
  }
  {
    TestClient c(port());
    ASSERT_TRUE(c.SendRaw("GET /x?a=%zz HTTP/1.1\r\n\r\n"));
    auto r = c.ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400);
  }
  TestClient ok(port());
  EXPECT_EQ(ok.Request("GET", "/still").status, 200);
}

TEST_F(HttpServerTest, TruncatedBodyThenCloseDoesNotDisturbOthers) {
  {
    TestClient c(port());
    ASSERT_TRUE(c.SendRaw("PUT /t HTTP/1.1\r\nContent-Length: 100\r\n\r\nonly-part"));
  }  // closed mid-body
  TestClient ok(port());
  EXPECT_EQ(ok.Request("GET", "/after").body, "GET /after|");
}

std::string Checksum(std::string_view body) {
  uint64_t sum = 0;
  for (unsigned char c : body) sum = sum * 31 + c;
  return std::to_string(body.size()) + " " + std::to_string(sum) + " " +
         std::to_string(!body.empty());
}

TEST_F(HttpServerTest, StreamedBodiesPassTheBufferedLimitAndKeepTheConnection) {
  // 3 MiB, past max_body_bytes (1 KiB here): never buffered, so not 413.
  std::string body(3 << 20, '\0');
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<char>(i * 7 + i / 1000);
  TestClient c(port());
  auto r = c.Request("PUT", "/up", body);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, Checksum(body));
  // Chunked, then a pipelined request behind it on the same connection.
  ASSERT_TRUE(c.SendRaw("PUT /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n"
                        "GET /next HTTP/1.1\r\n\r\n"));
  auto a = c.ReadResponse();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->body, Checksum("abcdefgh"));
  auto b = c.ReadResponse();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->body, "GET /next|");
  // Buffered routes keep their limit.
  EXPECT_EQ(c.Request("PUT", "/buffered", std::string(2000, 'x')).status, 413);
}

TEST_F(HttpServerTest, StreamedBodyLimitIs413) {
  HttpServerOptions opts;
  opts.limits.max_streamed_body_bytes = 100;
  StartServer(opts);
  {
    TestClient c(port());
    EXPECT_EQ(c.Request("PUT", "/up", std::string(101, 'x')).status, 413);
  }
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("PUT /up HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                        "40\r\n" + std::string(64, 'y') + "\r\n"
                        "40\r\n" + std::string(64, 'y') + "\r\n0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->body.find("Attachment is too large"), std::string::npos) << r->body;
}

TEST_F(HttpServerTest, StreamedBodyLeftUnreadIsDrainedAndSinkErrorsStopTheRead) {
  TestClient c(port());
  // Larger than the server's input buffer (1 MiB): most of it arrives after
  // the handler answered, and must be drained for the next request.
  const std::string body(4 << 20, 'u');
  auto r = c.Request("PUT", "/up/unread", body);
  EXPECT_EQ(r.status, 409);
  EXPECT_EQ(c.Request("GET", "/after").body, "GET /after|");
  r = c.Request("PUT", "/up/fail", body);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body.find("sink refused"), std::string::npos);
  EXPECT_EQ(c.Request("GET", "/again").body, "GET /again|");
  EXPECT_EQ(server_->connection_count(), 1);
}

TEST_F(HttpServerTest, StreamedBodyCutShortReachesTheHandlerAsAnError) {
  {
    TestClient c(port());
    ASSERT_TRUE(c.SendRaw("PUT /up HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" +
                          std::string(30000, 'z')));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }  // closed mid-body
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard<std::mutex> lock(handler_.mu);
      if (!handler_.upload_statuses.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::lock_guard<std::mutex> lock(handler_.mu);
  ASSERT_EQ(handler_.upload_statuses.size(), 1u);
  EXPECT_EQ(handler_.upload_statuses[0].code(), Status::Code::kBadRequest);
  EXPECT_EQ(handler_.upload_statuses[0].reason(), "The request body was cut short");
  TestClient ok(port());
  EXPECT_EQ(ok.Request("GET", "/fine").body, "GET /fine|");
}

TEST_F(HttpServerTest, StreamedResponseIsChunked) {
  TestClient c(port());
  auto r = c.Request("GET", "/stream");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("transfer-encoding"), "chunked");
  EXPECT_EQ(r.body, "one,two,three");
  // The connection is still usable afterwards.
  EXPECT_EQ(c.Request("GET", "/again").body, "GET /again|");
}

TEST_F(HttpServerTest, Http10ClosesAfterResponseUnlessKeepAlive) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("GET /old HTTP/1.0\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->body, "GET /old|");
  EXPECT_EQ(r->HeaderOr("connection"), "close");
  EXPECT_TRUE(c.WaitForClose());

  TestClient k(port());
  ASSERT_TRUE(k.SendRaw("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
  auto r2 = k.ReadResponse();
  ASSERT_TRUE(r2.has_value());
  EXPECT_EQ(r2->HeaderOr("connection"), "keep-alive");
  ASSERT_TRUE(k.SendRaw("GET /b HTTP/1.0\r\n\r\n"));
  auto r3 = k.ReadResponse();
  ASSERT_TRUE(r3.has_value());
  EXPECT_EQ(r3->body, "GET /b|");
}

TEST_F(HttpServerTest, ConnectionCloseHeaderIsHonoured) {
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("GET /x HTTP/1.1\r\nConnection: close\r\n\r\n"));
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->HeaderOr("connection"), "close");
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, HeadSendsNoBodyButLength) {
  TestClient c(port());
  auto r = c.Request("HEAD", "/h");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.HeaderOr("content-length"), std::to_string(std::string("HEAD /h|").size()));
  EXPECT_TRUE(r.body.empty());
  EXPECT_EQ(c.Request("GET", "/next").body, "GET /next|");
}

TEST_F(HttpServerTest, HandlerExceptionBecomes500AndConnectionSurvives) {
  TestClient c(port());
  EXPECT_EQ(c.Request("GET", "/throw").status, 500);
  EXPECT_EQ(c.Request("GET", "/silent").status, 500);
  EXPECT_EQ(c.Request("GET", "/fine").status, 200);
}

TEST_F(HttpServerTest, WakerFromAnotherThreadWakesWaitingHandler) {
  TestClient c(port());
  auto r = c.Request("GET", "/wait");
  EXPECT_EQ(r.body, "woken");
}

TEST_F(HttpServerTest, WaitingHandlerDoesNotBlockOtherConnections) {
  // Thirty connections at once, spread over both loop threads, each blocked
  // in a handler that waits; plain requests still get through meanwhile.
  std::vector<std::unique_ptr<TestClient>> waiting;
  for (int i = 0; i < 30; ++i) {
    waiting.push_back(std::make_unique<TestClient>(port()));
    ASSERT_TRUE(waiting.back()->Send("GET", "/wait"));
  }
  TestClient c(port());
  EXPECT_EQ(c.Request("GET", "/quick").status, 200);
  for (auto& w : waiting) {
    auto r = w->ReadResponse();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->body, "woken");
  }
}

TEST_F(HttpServerTest, IdleConnectionTimesOut) {
  HttpServerOptions opts;
  opts.idle_timeout = std::chrono::milliseconds(100);
  StartServer(opts);
  TestClient c(port());
  EXPECT_EQ(c.Request("GET", "/").status, 200);
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, SlowLorisHeadersAreCutOff) {
  HttpServerOptions opts;
  opts.request_timeout = std::chrono::milliseconds(200);
  StartServer(opts);
  TestClient c(port());
  ASSERT_TRUE(c.SendRaw("GET / HTTP/1.1\r\nX-Slow: "));
  EXPECT_TRUE(c.WaitForClose());
}

TEST_F(HttpServerTest, StopClosesIdleConnectionsAndJoins) {
  TestClient c(port());
  EXPECT_EQ(c.Request("GET", "/").status, 200);
  server_->Stop();
  EXPECT_TRUE(c.WaitForClose());
  EXPECT_EQ(server_->connection_count(), 0);
}

TEST_F(HttpServerTest, StopLetsInFlightRequestFinish) {
  TestClient c(port());
  ASSERT_TRUE(c.Send("GET", "/wait"));
  // Stop only once the handler runs: a request the server has not read yet
  // is not in flight, and a loaded machine can take a while to read it.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (handler_.waits_entered.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(handler_.waits_entered.load(), 0);
  server_->Stop();
  auto r = c.ReadResponse();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 200);  // answered (early, as the server stops), not dropped
}

TEST_F(HttpServerTest, ManyConnectionsInParallel) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      TestClient c(port());
      for (int i = 0; i < 50; ++i) {
        auto r = c.Request("POST", "/m", std::to_string(t * 1000 + i));
        if (r.status == 200 && r.body == "POST /m|" + std::to_string(t * 1000 + i)) ++ok;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(ok.load(), 400);
  EXPECT_GE(server_->requests_served(), 400u);
}

TEST(HttpMessageTest, PercentDecoding) {
  std::string out;
  EXPECT_TRUE(PercentDecode("a%2Fb+c", &out, false));
  EXPECT_EQ(out, "a/b+c");
  EXPECT_TRUE(PercentDecode("a%2fb+c", &out, true));
  EXPECT_EQ(out, "a/b c");
  EXPECT_FALSE(PercentDecode("%4", &out, false));
  EXPECT_FALSE(PercentDecode("%", &out, false));
  EXPECT_FALSE(PercentDecode("%g0", &out, false));
  EXPECT_EQ(PercentEncode("a/b c"), "a%2Fb%20c");
}

}  // namespace
}  // namespace settee::http
