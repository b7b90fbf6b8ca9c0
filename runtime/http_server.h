// HttpServer: an HTTP/1.1 server on N libuv event-loop threads, each running
// one Boost.Fiber per connection.
//
// Design
// ------
// Every loop thread owns a uv_loop, a listening socket bound with
// SO_REUSEPORT to the shared port (the kernel spreads new connections across
// them), and a UvFiberScheduler. Each accepted connection gets a fiber that
// runs plain sequential code: read a request (RequestParser), call the
// HttpHandler, write the response, repeat while keep-alive. A fiber waiting for
// bytes, for a write to drain or for a change notification is suspended on a
// fiber condition variable that uv callbacks (or other threads) notify, so one
// slow client never blocks the loop for the others.
//
// Handlers run on loop threads: work that can take long (fsync'd writes,
// compaction) belongs on a worker thread (see runtime/worker_pool.h) awaited
// with a fiber future.
//
// Stop() closes the listeners, lets each in-flight request finish (its
// response goes out with "Connection: close"), closes idle connections and
// joins the threads.
//
// Thread safety: Start/Stop from one controlling thread. The HttpHandler is
// called concurrently from every loop thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "runtime/http_message.h"
#include "runtime/request_parser.h"
#include "settee/status.h"

namespace settee::http {

class Connection;
class LoopThread;
struct WakeSignal;

struct HttpServerOptions {
  // An IPv4 or IPv6 address, or a host name ("localhost": its first IPv4
  // address, else its first IPv6 one, resolved once at Start).
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0 = an ephemeral port (see HttpServer::port())
  int threads = 1;
  ParserLimits limits;
  // A keep-alive connection with no request for this long is closed.
  std::chrono::milliseconds idle_timeout{std::chrono::minutes(5)};
  // Once a request has begun, it must be fully received within this time
  // (slow-loris protection); also bounds how long a write may stall.
  std::chrono::milliseconds request_timeout{std::chrono::seconds(60)};
  // Stack reserved per connection fiber. Pages are committed lazily, so idle
  // connections cost only what their fiber touched.
  size_t fiber_stack_bytes = 1024 * 1024;
  // Value of the Server header.
  std::string server_header = "settee/0.1 (CouchDB compatible)";
};

// Lets a thread other than the connection's wake a handler fiber that waits in
// HttpResponse::WaitUntil(). Copyable; safe to call from any thread and after
// the connection is gone. Wake() never blocks and never touches fiber
// primitives of the other thread: it queues the signal for the connection's
// loop (under a plain mutex, held for a push) and uv_async_sends it; the loop
// notifies the fiber from its own thread. So it may be called while holding
// a database lock (Database::AddChangeListener callbacks). Spurious wakeups
// happen (reads on the connection also wake it): callers re-check state.
class Waker {
 public:
  Waker() = default;
  explicit Waker(std::shared_ptr<WakeSignal> s) : signal_(std::move(s)) {}
  void Wake() const;

 private:
  std::shared_ptr<WakeSignal> signal_;
};

// The response side of one exchange, handed to the HttpHandler. Either call
// Send() once, or StartChunked() / WriteChunk()... / EndChunked().
// Owned by the connection fiber; not thread-safe.
class HttpResponse {
 public:
  // Adds a response header (beyond Server, Date, Content-Length/
  // Transfer-Encoding and Connection, which are set here).
  void AddHeader(std::string_view name, std::string_view value);
  // Replaces the value of an added header, or adds it.
  void SetHeader(std::string_view name, std::string_view value);

  // Sends the whole response: `body` then `tail` (a JSON answer's newline,
  // so a large body is not copied to gain one byte). `content_type` may be
  // empty (no header). For HEAD requests the body is measured for
  // Content-Length but not sent. Returns false when the peer is gone.
  bool Send(int status, std::string_view content_type, std::string_view body,
            std::string_view tail = {});

  // Starts a streamed response (chunked for HTTP/1.1; for HTTP/1.0 the body
  // runs to connection close).
  bool StartChunked(int status, std::string_view content_type);
  // Starts a streamed response of exactly `length` bytes (Content-Length
  // framing, so the connection stays reusable): WriteChunk() them, then
  // EndChunked(). For HEAD only the head is sent.
  bool StartFixed(int status, std::string_view content_type, uint64_t length);
  // Sends one piece; empty pieces are skipped. False when the peer is gone.
  bool WriteChunk(std::string_view data);
  bool EndChunked();

  // Waits until Waker::Wake(), the deadline, the peer closing, or the server
  // stopping. Returns false for the last two (the handler should wrap up).
  bool WaitUntil(std::chrono::steady_clock::time_point deadline);
  Waker GetWaker() const;

  // The connection will be closed after this response.
  void CloseAfterResponse() { close_after_ = true; }

  bool started() const { return started_; }
  bool finished() const { return finished_; }
  int status() const { return status_; }
  uint64_t bytes_sent() const { return bytes_sent_; }
  // True when the server is shutting down or the peer closed its side.
  bool ShouldAbort() const;

 private:
  friend class Connection;
  HttpResponse(Connection* conn, const HttpRequest* req, bool keep_alive);
  std::string BuildHead(int status, std::string_view content_type, const char* framing);

  Connection* const conn_;
  const HttpRequest* const req_;
  std::string headers_;  // extra header lines, CRLF-terminated
  bool keep_alive_;
  bool close_after_ = false;
  bool started_ = false;
  bool finished_ = false;
  bool chunked_ = false;
  bool fixed_ = false;  // StartFixed(): raw pieces, Content-Length framing
  int status_ = 0;
  uint64_t bytes_sent_ = 0;
  uint64_t seen_wakes_ = 0;
};

// Responses to pipelined requests: a response written while the next request
// is already buffered is held and sent with the following ones in one write,
// at the latest when the loop next waits for I/O; a client that waits for
// each answer gets it written at once, as before.
//
// The application. Handle() is called on loop threads, concurrently; it must
// not throw (an escaping exception is answered with a bare 500 and logged).
// If it returns without sending anything, a 500 is sent.
class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  virtual void Handle(HttpRequest& request, HttpResponse& response) = 0;
  // Asked once the headers of a request with a body are in: true to have
  // Handle() called then, with the body left to request.body_reader (an
  // upload read as it arrives, never held whole), instead of after the
  // body was buffered into request.body. Called on loop threads.
  virtual bool StreamsBody(const HttpRequest& /*head*/) { return false; }
  // Called for requests the parser rejected (status 400/413/414/417/431) so the
  // application can shape the error body; the connection is closed after.
  virtual void HandleParseError(int status, const std::string& reason, HttpResponse& response) = 0;
};

class HttpServer {
 public:
  // `handler` must outlive the server.
  HttpServer(const HttpServerOptions& options, HttpHandler* handler);
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;
  ~HttpServer();  // Stop()s

  // Binds and starts the loop threads. After OK, port() is the bound port.
  // Sets SIGPIPE to ignored for the process (writes to reset peers fail with
  // EPIPE instead).
  Status Start();
  // Graceful stop; idempotent. Blocks until every thread exited.
  void Stop();

  int port() const { return port_; }
  const HttpServerOptions& options() const { return options_; }
  HttpHandler* handler() const { return handler_; }

  // Live connections across all threads (for tests and stats).
  int64_t connection_count() const { return connections_.load(); }
  // Requests served, and socket writes issued for responses (responses to
  // pipelined requests go out together, so fewer writes than responses),
  // summed over the loops; kept per loop, so counting costs no shared cache
  // line. Any thread, but not during Start() or Stop().
  uint64_t requests_served() const;
  uint64_t response_writes() const;

 private:
  friend class Connection;
  friend class LoopThread;

  const HttpServerOptions options_;
  HttpHandler* const handler_;
  int port_ = 0;
  bool started_ = false;
  std::vector<std::unique_ptr<LoopThread>> loops_;
  std::atomic<int64_t> connections_{0};
  // Counts of loops that stopped (the running loops keep their own).
  uint64_t stopped_requests_ = 0;
  uint64_t stopped_writes_ = 0;
};

// Reason phrase for a status code ("Not Found").
const char* StatusText(int status);

}  // namespace settee::http
