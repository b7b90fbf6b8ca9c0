#include "runtime/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <exception>
#include <mutex>
#include <optional>
#include <unordered_set>

#include <boost/fiber/all.hpp>
#include <boost/fiber/protected_fixedsize_stack.hpp>
#include <uv.h>

#include "runtime/log.h"
#include "runtime/uv_fiber_scheduler.h"

namespace settee::http {

////////////////////////////////////////////////////////////////////////////////
// ---- Tuning

namespace {

// Unconsumed input buffered per connection before reading pauses. Bounds the
// memory a client that pipelines without reading responses can pin.
constexpr size_t kMaxBufferedInput = 1u << 20;
// Size of the per-loop read buffer libuv reads into.
constexpr size_t kReadBufferBytes = 64 * 1024;
// After a response that closes the connection, unread input is drained for
// at most this long so the peer sees the response rather than a reset.
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr int kListenBacklog = 1024;
// Per-connection buffers larger than this are released once drained, so an
// idle keep-alive connection costs a few KB whatever it carried before.
constexpr size_t kRetainedBufferBytes = 64 * 1024;
// Responses held back while pipelined requests wait behind them (see
// Connection::WriteParts) go out once they pass this size.
constexpr size_t kMaxHeldOutput = 64 * 1024;

}  // namespace

////////////////////////////////////////////////////////////////////////////////
// ---- WakeSignal

// Wakeups posted from other threads for fibers of one loop thread. Wakers
// push here and uv_async_send; the loop drains it in its async callback and
// notifies each signal there, on its own thread. A waker therefore never
// blocks (it may run under a database lock) and never touches fiber
// primitives of another thread. Shared so that late wakers stay safe after
// the loop is gone (async becomes nullptr).
struct RemoteWakeQueue {
  std::mutex mu;
  uv_async_t* async = nullptr;  // guarded by mu
  std::vector<std::shared_ptr<WakeSignal>> pending;  // guarded by mu
};

// The condition a connection fiber sleeps on.
struct WakeSignal {
  explicit WakeSignal(std::shared_ptr<RemoteWakeQueue> q) : queue(std::move(q)) {}
  boost::fibers::mutex mu;
  boost::fibers::condition_variable cv;
  std::atomic<uint64_t> wakes{0};  // bumped by Waker::Wake()
  const std::shared_ptr<RemoteWakeQueue> queue;

  // Only on the owning loop thread (uv callbacks or fibers). No lock is
  // needed: a fiber cannot be between its predicate check and its wait while
  // a callback runs, because both run on this thread and the fiber yields only
  // inside cv.wait().
  void NotifyLocal() { cv.notify_all(); }
};

void Waker::Wake() const {
  if (!signal_) return;
  signal_->wakes.fetch_add(1);
  RemoteWakeQueue& q = *signal_->queue;
  std::lock_guard<std::mutex> lk(q.mu);
  if (q.async == nullptr) return;
  q.pending.push_back(signal_);
  uv_async_send(q.async);
}

// ---- LoopThread

class LoopThread {
 public:
  LoopThread(HttpServer* server, int index) : server_(server), index_(index) {}
  ~LoopThread() {
    if (fd_ >= 0) ::close(fd_);
  }

  // Creates and binds this thread's listening socket (controlling thread).
  Status Bind(const sockaddr* addr, socklen_t len, int* bound_port);
  void Start() { thread_ = std::thread([this] { ThreadMain(); }); }
  void RequestStop() {
    stop_requested_.store(true);
    std::lock_guard<std::mutex> lk(wake_queue_->mu);
    if (wake_queue_->async != nullptr) uv_async_send(wake_queue_->async);
  }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }

  HttpServer* server() const { return server_; }
  uv_loop_t* loop() { return &loop_; }
  // Connection c holds responses back; they go out before the loop next
  // waits for I/O (OnPrepare). Loop thread only.
  void HoldOutput(Connection* c) { held_.push_back(c); }
  void ForgetHeld(Connection* c);
  // Per-loop counters: written by this loop alone, read by any thread, each
  // loop's on a cache line of its own so loops never write a shared one.
  void CountRequest() { requests_.store(requests_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  void CountWrite() { writes_.store(writes_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
  uint64_t requests() const { return requests_.load(std::memory_order_relaxed); }
  uint64_t writes() const { return writes_.load(std::memory_order_relaxed); }
  bool stopping() const { return stopping_; }
  char* read_buffer() { return read_buffer_.get(); }
  const std::shared_ptr<RemoteWakeQueue>& wake_queue() const { return wake_queue_; }
  void ConnectionDone(Connection* c);

 private:
  void ThreadMain();
  static void OnConnection(uv_stream_t* server, int status);
  static void OnWakeup(uv_async_t* handle);
  static void OnPrepare(uv_prepare_t* handle);
  void BeginStop();

  HttpServer* const server_;
  const int index_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_requested_{false};
  const std::shared_ptr<RemoteWakeQueue> wake_queue_ = std::make_shared<RemoteWakeQueue>();

  // Loop-thread state below.
  uv_loop_t loop_;
  uv_async_t wakeup_;
  uv_timer_t sched_timer_;
  uv_tcp_t listener_;
  uv_prepare_t flush_;                  // runs OnPrepare before each poll
  std::vector<Connection*> held_;       // connections holding responses back
  std::vector<Connection*> flushing_;   // OnPrepare's: held_ as it flushes them (kept for its capacity)
  alignas(64) std::atomic<uint64_t> requests_{0};
  std::atomic<uint64_t> writes_{0};
  UvFiberScheduler* scheduler_ = nullptr;  // owned by Boost's thread scheduler
  bool stopping_ = false;
  std::unique_ptr<char[]> read_buffer_{new char[kReadBufferBytes]};
  boost::fibers::mutex mu_;
  boost::fibers::condition_variable cv_;  // main fiber: new connections, drained
  std::vector<Connection*> pending_;      // accepted, fiber not yet started
  std::unordered_set<Connection*> live_;  // every connection with a fiber
};

////////////////////////////////////////////////////////////////////////////////
// ---- Connection

class Connection {
 public:
  explicit Connection(LoopThread* loop)
      : loop_(loop), signal_(std::make_shared<WakeSignal>(loop->wake_queue())) {
    tcp_.data = this;
  }

  uv_tcp_t* tcp() { return &tcp_; }
  std::shared_ptr<WakeSignal> signal() const { return signal_; }
  void WakeLocal() { signal_->NotifyLocal(); }

  // The fiber body: serves requests until the connection ends, then closes.
  void Run();

  // Blocking (fiber) I/O. False when the peer is gone or the write stalled.
  bool Write(std::string_view data) { return WriteParts(&data, 1); }
  // Writes `parts` in order as one gather write: a response head and a large
  // body go out without being joined into one string first.
  bool WriteParts(const std::string_view* parts, size_t count);
  bool Wait(std::chrono::steady_clock::time_point deadline, uint64_t* seen_wakes);
  bool PeerGone() const { return eof_ || broken_; }
  bool ServerStopping() const { return loop_->stopping(); }
  HttpServer* server() const { return loop_->server(); }
  // Writes the responses held back (loop thread, outside any fiber: the
  // loop is about to wait for I/O). What the socket does not take at once
  // goes out as a uv_write the next WriteParts waits for.
  void FlushHeld();

 private:
  enum class ReadResult { kRequest, kClosed, kError };
  ReadResult ReadRequest(RequestParser& parser, HttpRequest* out);
  // BodyReader::Read() of a streamed body: parses it off the input as it
  // arrives, handing its pieces to `sink`. *done once the body ended.
  // *broken when the body cannot be read on (cut short, malformed); after a
  // sink error it can (the rest is drained).
  Status ReadBody(RequestParser& parser, const std::function<Status(std::string_view)>& sink,
                  bool* done, bool* broken);
  // Runs the parser over the buffered input and drops what it used.
  RequestParser::Event Parse(RequestParser& parser);
  // Waits for more input; false on EOF, error, timeout or (when idle) stop.
  bool WaitForInput(std::chrono::steady_clock::time_point deadline, bool idle);
  void StartReading();
  void Close(bool linger);

  static void OnAlloc(uv_handle_t* h, size_t suggested, uv_buf_t* buf);
  static void OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf);
  static void OnWrite(uv_write_t* req, int status);
  static void OnShutdown(uv_shutdown_t* req, int status);
  static void OnClose(uv_handle_t* h);
  // Waits (fiber) until no uv_write of this connection is in flight.
  bool WaitWriteDone();

  LoopThread* const loop_;
  std::shared_ptr<WakeSignal> signal_;
  uv_tcp_t tcp_;
  uv_write_t write_req_;
  uv_shutdown_t shutdown_req_;
  std::string peer_;
  std::string inbuf_;   // received bytes; [inpos_, size) not yet parsed
  size_t inpos_ = 0;
  // While the parser runs over inbuf_ (its body sink may park the fiber),
  // reads land here instead, so the views it hands out stay valid.
  bool parsing_ = false;
  std::string inbuf_side_;
  bool reading_ = false;
  bool eof_ = false;
  bool broken_ = false;  // write failed or timed out
  std::string outbuf_;   // bytes of the in-flight uv_write
  // Responses written while more requests were already buffered behind
  // them, sent together later (WriteParts, FlushHeld).
  std::string held_out_;
  bool held_listed_ = false;  // in loop_->held_
  bool closing_ = false;      // in Close(): nothing is held any more
  bool write_pending_ = false;
  bool shutdown_done_ = false;
  bool closed_ = false;
};

void Connection::OnAlloc(uv_handle_t* h, size_t, uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(h->data);
  buf->base = c->loop_->read_buffer();
  buf->len = kReadBufferBytes;
}

void Connection::OnRead(uv_stream_t* s, ssize_t nread, const uv_buf_t* buf) {
  auto* c = static_cast<Connection*>(s->data);
  if (nread > 0) {
    if (c->parsing_) {
      c->inbuf_side_.append(buf->base, static_cast<size_t>(nread));
    } else {
      if (c->inpos_ == c->inbuf_.size()) {
        c->inbuf_.clear();
        c->inpos_ = 0;
      }
      c->inbuf_.append(buf->base, static_cast<size_t>(nread));
    }
    if (c->inbuf_.size() - c->inpos_ + c->inbuf_side_.size() > kMaxBufferedInput) {
      uv_read_stop(s);
      c->reading_ = false;
    }
  } else if (nread < 0) {
    c->eof_ = true;  // UV_EOF or a reset: either way no more input
    uv_read_stop(s);
    c->reading_ = false;
  }
  c->WakeLocal();
}

void Connection::OnWrite(uv_write_t* req, int status) {
  auto* c = static_cast<Connection*>(req->data);
  c->write_pending_ = false;
  if (status != 0) c->broken_ = true;
  c->WakeLocal();
}

void Connection::OnShutdown(uv_shutdown_t* req, int) {
  auto* c = static_cast<Connection*>(req->data);
  c->shutdown_done_ = true;
  c->WakeLocal();
}

void Connection::OnClose(uv_handle_t* h) {
  auto* c = static_cast<Connection*>(h->data);
  c->closed_ = true;
  c->WakeLocal();
}

void Connection::StartReading() {
  if (reading_ || eof_ || closed_) return;
  if (uv_read_start(reinterpret_cast<uv_stream_t*>(&tcp_), &OnAlloc, &OnRead) == 0) {
    reading_ = true;
  } else {
    eof_ = true;
  }
}

bool Connection::Wait(std::chrono::steady_clock::time_point deadline, uint64_t* seen_wakes) {
  std::unique_lock<boost::fibers::mutex> lk(signal_->mu);
  uint64_t now = signal_->wakes.load();
  if (now == *seen_wakes) {
    signal_->cv.wait_until(lk, deadline);
    now = signal_->wakes.load();
  }
  *seen_wakes = now;
  return true;
}

bool Connection::WaitForInput(std::chrono::steady_clock::time_point deadline, bool idle) {
  size_t have = inbuf_.size() - inpos_;
  StartReading();
  std::unique_lock<boost::fibers::mutex> lk(signal_->mu);
  while (inbuf_.size() - inpos_ == have) {
    if (eof_ || (idle && loop_->stopping())) return false;
    if (signal_->cv.wait_until(lk, deadline) == boost::fibers::cv_status::timeout &&
        inbuf_.size() - inpos_ == have) {
      return false;
    }
  }
  return true;
}

bool Connection::WaitWriteDone() {
  if (!write_pending_) return !broken_;
  auto deadline = std::chrono::steady_clock::now() + server()->options().request_timeout;
  std::unique_lock<boost::fibers::mutex> lk(signal_->mu);
  while (write_pending_) {
    if (signal_->cv.wait_until(lk, deadline) == boost::fibers::cv_status::timeout && write_pending_) {
      // A client that stopped reading; Close() cancels the write.
      broken_ = true;
      return false;
    }
  }
  return !broken_;
}

void Connection::FlushHeld() {
  held_listed_ = false;
  if (held_out_.empty() || broken_ || closed_) return;
  if (write_pending_) {
    // The fiber's own write is in flight: it sends these after it.
    held_listed_ = true;
    loop_->HoldOutput(this);
    return;
  }
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  uv_buf_t buf = uv_buf_init(held_out_.data(), static_cast<unsigned>(held_out_.size()));
  loop_->CountWrite();
  int n = uv_try_write(stream, &buf, 1);
  if (n == static_cast<int>(held_out_.size())) {
    held_out_.clear();
    return;
  }
  if (n < 0 && n != UV_EAGAIN) {
    held_out_.clear();
    broken_ = true;
    WakeLocal();
    return;
  }
  outbuf_.assign(held_out_, n < 0 ? 0 : static_cast<size_t>(n));
  held_out_.clear();
  buf = uv_buf_init(outbuf_.data(), static_cast<unsigned>(outbuf_.size()));
  write_req_.data = this;
  write_pending_ = true;
  if (uv_write(&write_req_, stream, &buf, 1, &OnWrite) != 0) {
    write_pending_ = false;
    broken_ = true;
    WakeLocal();
  }
}

bool Connection::WriteParts(const std::string_view* parts, size_t count) {
  if (broken_ || closed_) return false;
  // A write flushed from the loop may still be in flight: bytes go in order.
  if (!WaitWriteDone()) return false;
  assert(count <= 4);
  size_t total = 0;
  for (size_t i = 0; i < count; ++i) total += parts[i].size();
  // More requests are already buffered behind this response (a pipelining
  // client): hold it and send it with theirs, one write for the batch
  // instead of one per response (on loopback a write also runs the
  // receiver's TCP input, so each saved write is a few microseconds on
  // both sides). It goes out at the latest when the loop next waits for
  // I/O (LoopThread::OnPrepare), so a handler that blocks never holds back
  // what was answered before it.
  if (!closing_ && inpos_ < inbuf_.size() && held_out_.size() + total <= kMaxHeldOutput) {
    for (size_t i = 0; i < count; ++i) held_out_.append(parts[i]);
    if (!held_listed_) {
      held_listed_ = true;
      loop_->HoldOutput(this);
    }
    return true;
  }
  auto* stream = reinterpret_cast<uv_stream_t*>(&tcp_);
  uv_buf_t bufs[5];
  size_t nbufs = 0;
  if (!held_out_.empty()) {
    bufs[nbufs++] = uv_buf_init(held_out_.data(), static_cast<unsigned>(held_out_.size()));
    total += held_out_.size();
  }
  for (size_t i = 0; i < count; ++i) {
    if (parts[i].empty()) continue;
    bufs[nbufs++] = uv_buf_init(const_cast<char*>(parts[i].data()),
                                static_cast<unsigned>(parts[i].size()));
  }
  if (nbufs > 0) loop_->CountWrite();
  int n = nbufs == 0 ? 0 : uv_try_write(stream, bufs, static_cast<unsigned>(nbufs));
  if (n == static_cast<int>(total)) {
    held_out_.clear();
    return true;
  }
  if (n < 0 && n != UV_EAGAIN) {
    held_out_.clear();
    broken_ = true;
    return false;
  }
  if (n < 0) n = 0;
  // The rest is copied: a write that times out returns while libuv still
  // holds its buffer, which the caller's memory may not outlive.
  outbuf_.clear();
  outbuf_.reserve(total - static_cast<size_t>(n));
  size_t skip = static_cast<size_t>(n);
  for (size_t i = 0; i < nbufs; ++i) {
    std::string_view part(bufs[i].base, bufs[i].len);
    if (skip >= part.size()) {
      skip -= part.size();
      continue;
    }
    outbuf_.append(part.substr(skip));
    skip = 0;
  }
  held_out_.clear();
  uv_buf_t buf = uv_buf_init(outbuf_.data(), static_cast<unsigned>(outbuf_.size()));
  write_req_.data = this;
  write_pending_ = true;
  if (uv_write(&write_req_, stream, &buf, 1, &OnWrite) != 0) {
    write_pending_ = false;
    broken_ = true;
    return false;
  }
  // A failed write marks the connection broken (OnWrite).
  if (!WaitWriteDone()) return false;
  if (outbuf_.capacity() > kRetainedBufferBytes) std::string().swap(outbuf_);
  return true;
}

RequestParser::Event Connection::Parse(RequestParser& parser) {
  size_t used = 0;
  parsing_ = true;
  auto ev = parser.Execute(std::string_view(inbuf_).substr(inpos_), &used);
  parsing_ = false;
  inpos_ += used;
  if (inpos_ == inbuf_.size()) {
    // An idle connection must not pin the buffer of its largest upload.
    if (inbuf_.capacity() > kRetainedBufferBytes) std::string().swap(inbuf_);
    inbuf_.clear();
    inpos_ = 0;
  } else if (inpos_ > 64 * 1024) {
    inbuf_.erase(0, inpos_);
    inpos_ = 0;
  }
  if (!inbuf_side_.empty()) {
    inbuf_.append(inbuf_side_);
    inbuf_side_.clear();
  }
  return ev;
}

Status Connection::ReadBody(RequestParser& parser,
                            const std::function<Status(std::string_view)>& sink, bool* done,
                            bool* broken) {
  Status sink_status;
  const std::function<void(std::string_view)> forward = [&](std::string_view piece) {
    if (sink_status.ok()) sink_status = sink(piece);  // after an error: dropped
  };
  parser.SetBodySink(&forward);
  struct Unset {
    RequestParser& p;
    ~Unset() { p.SetBodySink(nullptr); }
  } unset{parser};
  const auto timeout = server()->options().request_timeout;
  for (;;) {
    if (inpos_ < inbuf_.size()) {
      switch (Parse(parser)) {
        case RequestParser::Event::kMessageComplete:
          *done = true;
          return sink_status;
        case RequestParser::Event::kError:
          *broken = true;
          if (parser.error_status() == 413) {
            return {Status::Code::kAttachmentTooLarge, "Attachment is too large"};
          }
          return Status::BadRequest(parser.error_reason());
        default:
          break;
      }
      if (!sink_status.ok()) return sink_status;
      continue;
    }
    // The peer must keep sending: no progress for the request timeout ends it.
    if (!WaitForInput(std::chrono::steady_clock::now() + timeout, false)) {
      *broken = true;
      return Status::BadRequest("The request body was cut short");
    }
  }
}

Connection::ReadResult Connection::ReadRequest(RequestParser& parser, HttpRequest* out) {
  const auto& opts = server()->options();
  auto idle_deadline = std::chrono::steady_clock::now() + opts.idle_timeout;
  std::optional<std::chrono::steady_clock::time_point> request_deadline;
  for (;;) {
    if (inpos_ < inbuf_.size()) {
      if (!request_deadline) {
        request_deadline = std::chrono::steady_clock::now() + opts.request_timeout;
      }
      auto ev = Parse(parser);
      switch (ev) {
        case RequestParser::Event::kHeadersComplete: {
          bool has_body = !parser.content_length() || *parser.content_length() > 0;
          if (parser.expects_continue() && has_body) {
            if (!Write("HTTP/1.1 100 Continue\r\n\r\n")) return ReadResult::kClosed;
          }
          if (parser.streaming()) {
            *out = parser.TakeHead();
            return ReadResult::kRequest;
          }
          continue;
        }
        case RequestParser::Event::kMessageComplete:
          *out = parser.TakeRequest();
          return ReadResult::kRequest;
        case RequestParser::Event::kError:
          return ReadResult::kError;
        case RequestParser::Event::kNeedMore:
          break;
      }
    }
    bool idle = !parser.in_message();
    if (!WaitForInput(idle ? idle_deadline : *request_deadline, idle)) return ReadResult::kClosed;
  }
}

void Connection::Run() {
  HttpServer* srv = server();
  {
    sockaddr_storage ss;
    int len = sizeof(ss);
    if (uv_tcp_getpeername(&tcp_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) {
      char ip[INET6_ADDRSTRLEN] = {0};
      int port = 0;
      if (ss.ss_family == AF_INET) {
        auto* a = reinterpret_cast<sockaddr_in*>(&ss);
        uv_ip4_name(a, ip, sizeof(ip));
        port = ntohs(a->sin_port);
      } else if (ss.ss_family == AF_INET6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
        uv_ip6_name(a, ip, sizeof(ip));
        port = ntohs(a->sin6_port);
      }
      peer_ = std::string(ip) + ":" + std::to_string(port);
    }
  }
  uv_tcp_nodelay(&tcp_, 1);
  StartReading();
  RequestParser parser(srv->options().limits);
  parser.SetStreamClassifier(
      [srv](const HttpRequest& head) { return srv->handler()->StreamsBody(head); });
  // A streamed request's body, read by its handler as it arrives.
  class StreamedBody final : public BodyReader {
   public:
    StreamedBody(Connection* c, RequestParser* p) : c_(c), p_(p) {}
    Status Read(const std::function<Status(std::string_view)>& sink) override {
      if (read_) return Status::BadRequest("the request body was read already");
      read_ = true;
      return c_->ReadBody(*p_, sink, &done_, &broken_);
    }
    bool done() const { return done_; }
    // After the handler: reads what it left unread. False when the
    // connection cannot be reused.
    bool Finish() {
      if (!done_ && !broken_) {
        c_->ReadBody(*p_, [](std::string_view) { return Status::OK(); }, &done_, &broken_).ok();
      }
      if (done_) p_->TakeRequest();  // resets the parser for the next request
      return done_;
    }

   private:
    Connection* const c_;
    RequestParser* const p_;
    bool read_ = false;
    bool done_ = false;
    bool broken_ = false;
  };
  bool linger = false;
  try {
    for (;;) {
      HttpRequest req;
      ReadResult r = ReadRequest(parser, &req);
      if (r == ReadResult::kClosed) break;
      if (r == ReadResult::kError) {
        HttpRequest dummy;
        dummy.method = "GET";
        HttpResponse res(this, &dummy, false);
        srv->handler()->HandleParseError(parser.error_status(), parser.error_reason(), res);
        if (!res.finished() && !res.started()) res.Send(parser.error_status(), "", "");
        linger = true;
        break;
      }
      bool keep_alive = parser.ShouldKeepAlive() && !loop_->stopping();
      req.peer = peer_;
      std::optional<StreamedBody> streamed;
      if (parser.streaming()) req.body_reader = &streamed.emplace(this, &parser);
      HttpResponse res(this, &req, keep_alive);
      loop_->CountRequest();
      try {
        srv->handler()->Handle(req, res);
      } catch (const std::exception& e) {
        LogError("handler threw: %s", e.what());
      } catch (...) {
        LogError("handler threw a non-std exception");
      }
      if (!res.started()) {
        res.Send(500, "application/json",
                 "{\"error\":\"unknown_error\",\"reason\":\"no response\"}\n");
      } else if (!res.finished()) {
        if (res.chunked_) res.EndChunked();
        else broken_ = true;  // HTTP/1.0 stream: only the close ends it
      }
      const bool reuse = !broken_ && res.keep_alive_ && !res.close_after_ && !loop_->stopping();
      if (streamed) {
        if (!streamed->done() && !reuse) {
          // Unread body, and the connection ends: linger so that the peer,
          // still sending, sees the response rather than a reset.
          linger = !broken_;
          break;
        }
        // A body the handler left unread (an error answered before it) is
        // read and dropped so that the connection can be reused; one cut
        // short ends it.
        if (!streamed->Finish()) break;
      }
      if (!reuse) break;
    }
  } catch (const std::exception& e) {
    LogError("connection %s: %s", peer_.c_str(), e.what());
  } catch (...) {
    LogError("connection %s: unknown exception", peer_.c_str());
  }
  Close(linger);
}

void Connection::Close(bool linger) {
  // What was held back goes out before the close (a pipelined request that
  // ends the connection, or one the parser refused).
  closing_ = true;
  if (!held_out_.empty() && !broken_) {
    std::string held;
    held.swap(held_out_);
    Write(held);
  }
  if (held_listed_) loop_->ForgetHeld(this);
  if (write_pending_) WaitWriteDone();
  if (linger && !eof_ && !broken_) {
    // Half-close, then discard whatever the peer still sends for a moment, so
    // that a response sent before reading its whole request (413) is not lost
    // to a TCP reset.
    shutdown_req_.data = this;
    if (uv_shutdown(&shutdown_req_, reinterpret_cast<uv_stream_t*>(&tcp_), &OnShutdown) == 0) {
      auto deadline = std::chrono::steady_clock::now() + kLingerTime;
      StartReading();
      std::unique_lock<boost::fibers::mutex> lk(signal_->mu);
      while (!eof_ || !shutdown_done_) {
        inbuf_.clear();
        inpos_ = 0;
        if (signal_->cv.wait_until(lk, deadline) == boost::fibers::cv_status::timeout) break;
      }
    }
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&tcp_), &OnClose);
  std::unique_lock<boost::fibers::mutex> lk(signal_->mu);
  // Pending write and shutdown callbacks run (cancelled) before the close one.
  signal_->cv.wait(lk, [this] { return closed_; });
}

////////////////////////////////////////////////////////////////////////////////
// ---- HttpResponse

namespace {

// "Sun, 06 Nov 1994 08:49:37 GMT", recomputed at most once a second per thread.
const std::string& HttpDate() {
  thread_local std::string cached;
  thread_local std::time_t cached_at = 0;
  std::time_t now = std::time(nullptr);
  if (now != cached_at) {
    char buf[64];
    std::tm tm;
    gmtime_r(&now, &tm);
    size_t n = std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S GMT", &tm);
    cached.assign(buf, n);
    cached_at = now;
  }
  return cached;
}

}  // namespace

HttpResponse::HttpResponse(Connection* conn, const HttpRequest* req, bool keep_alive)
    : conn_(conn), req_(req), keep_alive_(keep_alive) {}

void HttpResponse::AddHeader(std::string_view name, std::string_view value) {
  headers_.append(name);
  headers_.append(": ");
  headers_.append(value);
  headers_.append("\r\n");
}

void HttpResponse::SetHeader(std::string_view name, std::string_view value) {
  size_t pos = 0;
  while (pos < headers_.size()) {
    size_t eol = headers_.find("\r\n", pos);
    std::string_view line(headers_.data() + pos, eol - pos);
    if (line.size() > name.size() && line[name.size()] == ':' &&
        EqualsIgnoreCase(line.substr(0, name.size()), name)) {
      headers_.erase(pos, eol + 2 - pos);
      break;
    }
    pos = eol + 2;
  }
  AddHeader(name, value);
}

std::string HttpResponse::BuildHead(int status, std::string_view content_type,
                                    const char* framing) {
  status_ = status;
  if (close_after_ || conn_->ServerStopping()) keep_alive_ = false;
  std::string head;
  head.reserve(256 + headers_.size());
  head.append(req_->http_minor == 0 && req_->http_major == 1 ? "HTTP/1.0 " : "HTTP/1.1 ");
  head.append(std::to_string(status));
  head.push_back(' ');
  head.append(StatusText(status));
  head.append("\r\nServer: ");
  head.append(conn_->server()->options().server_header);
  head.append("\r\nDate: ");
  head.append(HttpDate());
  head.append("\r\n");
  if (!content_type.empty()) {
    head.append("Content-Type: ");
    head.append(content_type);
    head.append("\r\n");
  }
  head.append(framing);
  if (!keep_alive_) {
    head.append("Connection: close\r\n");
  } else if (req_->http_minor == 0 && req_->http_major == 1) {
    head.append("Connection: keep-alive\r\n");
  }
  head.append(headers_);
  head.append("\r\n");
  return head;
}

bool HttpResponse::Send(int status, std::string_view content_type, std::string_view body,
                        std::string_view tail) {
  if (started_) return false;
  started_ = true;
  finished_ = true;
  bool no_body = status == 204 || status == 304 || (status >= 100 && status < 200);
  std::string framing;
  if (!no_body) framing = "Content-Length: " + std::to_string(body.size() + tail.size()) + "\r\n";
  std::string head = BuildHead(status, content_type, framing.c_str());
  if (req_->method == "HEAD" || no_body) {
    bytes_sent_ += head.size();
    return conn_->Write(head);
  }
  if (body.size() + tail.size() < 16 * 1024) {
    // Small: one buffer, one syscall.
    head.append(body);
    head.append(tail);
    bytes_sent_ += head.size();
    return conn_->Write(head);
  }
  const std::string_view parts[3] = {head, body, tail};
  bytes_sent_ += head.size() + body.size() + tail.size();
  return conn_->WriteParts(parts, 3);
}

bool HttpResponse::StartChunked(int status, std::string_view content_type) {
  if (started_) return false;
  started_ = true;
  bool http10 = req_->http_major == 1 && req_->http_minor == 0;
  if (http10) {
    keep_alive_ = false;  // the body ends with the connection
  }
  chunked_ = !http10;
  std::string out = BuildHead(status, content_type, chunked_ ? "Transfer-Encoding: chunked\r\n" : "");
  if (req_->method == "HEAD") {
    finished_ = true;
    chunked_ = false;
    return conn_->Write(out);
  }
  bytes_sent_ += out.size();
  return conn_->Write(out);
}

bool HttpResponse::StartFixed(int status, std::string_view content_type, uint64_t length) {
  if (started_) return false;
  started_ = true;
  fixed_ = true;
  std::string out =
      BuildHead(status, content_type, ("Content-Length: " + std::to_string(length) + "\r\n").c_str());
  if (req_->method == "HEAD") finished_ = true;
  bytes_sent_ += out.size();
  return conn_->Write(out);
}

bool HttpResponse::WriteChunk(std::string_view data) {
  if (!started_ || finished_) return false;
  if (data.empty()) return !conn_->PeerGone();
  bytes_sent_ += data.size();
  if (!chunked_) return conn_->Write(data);
  char size_line[24];
  int n = snprintf(size_line, sizeof(size_line), "%zx\r\n", data.size());
  std::string out;
  out.reserve(static_cast<size_t>(n) + data.size() + 2);
  out.append(size_line, static_cast<size_t>(n));
  out.append(data);
  out.append("\r\n");
  return conn_->Write(out);
}

bool HttpResponse::EndChunked() {
  if (!started_ || finished_) return false;
  finished_ = true;
  if (fixed_) return !conn_->PeerGone();
  if (!chunked_) {
    keep_alive_ = false;
    return true;
  }
  return conn_->Write("0\r\n\r\n");
}

bool HttpResponse::WaitUntil(std::chrono::steady_clock::time_point deadline) {
  if (ShouldAbort()) return false;
  uint64_t seen = seen_wakes_;
  conn_->Wait(deadline, &seen);
  seen_wakes_ = seen;
  return !ShouldAbort();
}

Waker HttpResponse::GetWaker() const { return Waker(conn_->signal()); }

bool HttpResponse::ShouldAbort() const { return conn_->ServerStopping() || conn_->PeerGone(); }

////////////////////////////////////////////////////////////////////////////////
// ---- LoopThread implementation

Status LoopThread::Bind(const sockaddr* addr, socklen_t len, int* bound_port) {
  fd_ = ::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  int one = 1;
  ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::setsockopt(fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) != 0) {
    return Status::IOError(std::string("SO_REUSEPORT: ") + strerror(errno));
  }
  if (::bind(fd_, addr, len) != 0) {
    return Status::IOError(std::string("bind: ") + strerror(errno));
  }
  if (::listen(fd_, kListenBacklog) != 0) {
    return Status::IOError(std::string("listen: ") + strerror(errno));
  }
  sockaddr_storage ss;
  socklen_t sl = sizeof(ss);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &sl);
  *bound_port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                         : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  return Status::OK();
}

void LoopThread::ForgetHeld(Connection* c) {
  held_.erase(std::remove(held_.begin(), held_.end(), c), held_.end());
}

void LoopThread::OnPrepare(uv_prepare_t* handle) {
  auto* self = static_cast<LoopThread*>(handle->data);
  if (self->held_.empty()) return;
  // Swapped with a member, not a local, so neither list gives up its
  // capacity: under pipelined load this runs every loop iteration.
  self->flushing_.swap(self->held_);
  for (Connection* c : self->flushing_) c->FlushHeld();  // may list c again
  self->flushing_.clear();
}

void LoopThread::OnWakeup(uv_async_t* handle) {
  auto* self = static_cast<LoopThread*>(handle->data);
  std::vector<std::shared_ptr<WakeSignal>> woken;
  {
    std::lock_guard<std::mutex> lk(self->wake_queue_->mu);
    woken.swap(self->wake_queue_->pending);
  }
  for (auto& s : woken) s->NotifyLocal();
  if (self->stop_requested_.load() && !self->stopping_) self->BeginStop();
}

void LoopThread::BeginStop() {
  stopping_ = true;
  uv_close(reinterpret_cast<uv_handle_t*>(&listener_), nullptr);
  cv_.notify_all();
  // Idle connections notice the stop and close; busy ones finish first.
  for (Connection* c : live_) c->WakeLocal();
}

void LoopThread::OnConnection(uv_stream_t* server, int status) {
  auto* self = static_cast<LoopThread*>(server->data);
  if (status < 0 || self->stopping_) return;
  auto* conn = new Connection(self);
  uv_tcp_init(&self->loop_, conn->tcp());
  if (uv_accept(server, reinterpret_cast<uv_stream_t*>(conn->tcp())) != 0) {
    uv_close(reinterpret_cast<uv_handle_t*>(conn->tcp()),
             [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
    return;
  }
  self->pending_.push_back(conn);
  self->cv_.notify_all();
}

void LoopThread::ConnectionDone(Connection* c) {
  live_.erase(c);
  server_->connections_.fetch_sub(1);
  if (stopping_ && live_.empty()) cv_.notify_all();
}

void LoopThread::ThreadMain() {
  uv_loop_init(&loop_);
  uv_async_init(&loop_, &wakeup_, &OnWakeup);
  wakeup_.data = this;
  uv_timer_init(&loop_, &sched_timer_);
  uv_prepare_init(&loop_, &flush_);
  flush_.data = this;
  uv_prepare_start(&flush_, &OnPrepare);
  {
    std::lock_guard<std::mutex> lk(wake_queue_->mu);
    wake_queue_->async = &wakeup_;
  }
  scheduler_ = new UvFiberScheduler(&loop_, &wakeup_, &sched_timer_);
  boost::fibers::context::active()->get_scheduler()->set_algo(
      boost::fibers::algo::algorithm::ptr_t(scheduler_));
  uv_tcp_init(&loop_, &listener_);
  listener_.data = this;
  int rc = uv_tcp_open(&listener_, fd_);
  if (rc == 0) {
    fd_ = -1;  // owned by the handle now
    rc = uv_listen(reinterpret_cast<uv_stream_t*>(&listener_), kListenBacklog, &OnConnection);
  }
  if (rc != 0) LogError("loop %d: listen failed: %s", index_, uv_strerror(rc));
  if (stop_requested_.load()) BeginStop();

  const size_t stack_bytes = server_->options().fiber_stack_bytes;
  {
    std::unique_lock<boost::fibers::mutex> lk(mu_);
    for (;;) {
      cv_.wait(lk, [this] { return !pending_.empty() || stopping_; });
      std::vector<Connection*> batch;
      batch.swap(pending_);
      for (Connection* c : batch) {
        if (stopping_) {
          uv_close(reinterpret_cast<uv_handle_t*>(c->tcp()),
                   [](uv_handle_t* h) { delete static_cast<Connection*>(h->data); });
          continue;
        }
        live_.insert(c);
        server_->connections_.fetch_add(1);
        boost::fibers::fiber(std::allocator_arg,
                             boost::fibers::protected_fixedsize_stack(stack_bytes),
                             [this, c] {
                               c->Run();
                               ConnectionDone(c);
                               delete c;
                             })
            .detach();
      }
      if (stopping_) break;
    }
    cv_.wait(lk, [this] { return live_.empty(); });
  }
  // Let exited fibers be reaped before the loop goes away.
  boost::this_fiber::yield();
  {
    std::lock_guard<std::mutex> lk(wake_queue_->mu);
    wake_queue_->async = nullptr;
    wake_queue_->pending.clear();
  }
  scheduler_->Detach();
  uv_close(reinterpret_cast<uv_handle_t*>(&wakeup_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&sched_timer_), nullptr);
  uv_close(reinterpret_cast<uv_handle_t*>(&flush_), nullptr);
  uv_run(&loop_, UV_RUN_DEFAULT);
  uv_loop_close(&loop_);
}

////////////////////////////////////////////////////////////////////////////////
// ---- HttpServer

namespace {

// A host name given as the bind address ("localhost"): its first IPv4
// address, else its first IPv6 one, as CouchDB's listener (mochiweb,
// inet:getaddr) takes a name. Numeric addresses never get here.
bool ResolveBindName(const std::string& name, int port, sockaddr_storage* ss, socklen_t* len) {
  for (int family : {AF_INET, AF_INET6}) {
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(name.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) continue;
    std::memcpy(ss, found->ai_addr, found->ai_addrlen);
    *len = found->ai_addrlen;
    ::freeaddrinfo(found);
    if (family == AF_INET) reinterpret_cast<sockaddr_in*>(ss)->sin_port = htons(port);
    else reinterpret_cast<sockaddr_in6*>(ss)->sin6_port = htons(port);
    return true;
  }
  return false;
}

// SO_REUSEPORT lets any socket of the same user join a port that already
// listens, so the loops' binds alone would not notice another server on
// it (the kernel would split the connections between the two). A plain
// bind does: it fails while anything listens there. SO_REUSEADDR keeps
// connections of an earlier server in TIME_WAIT from counting.
Status CheckPortFree(const sockaddr* addr, socklen_t len, const std::string& host, int port) {
  int fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IOError(std::string("socket: ") + strerror(errno));
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  const int rc = ::bind(fd, addr, len);
  const int err = errno;
  ::close(fd);
  if (rc == 0) return Status::OK();
  if (err == EADDRINUSE) {
    return Status::IOError("address already in use: " + host + ":" + std::to_string(port));
  }
  return Status::IOError(std::string("bind: ") + strerror(err));
}

}  // namespace

HttpServer::HttpServer(const HttpServerOptions& options, HttpHandler* handler)
    : options_(options), handler_(handler) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() {
  if (started_) return Status(Status::Code::kInvalidOperation, "already started");
  // A peer that resets mid-write must yield EPIPE, not kill the process.
  ::signal(SIGPIPE, SIG_IGN);
  if (options_.port < 0 || options_.port > 65535) {
    return Status::BadRequest("invalid port: " + std::to_string(options_.port));
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (uv_ip4_addr(options_.bind_address.c_str(), options_.port,
                  reinterpret_cast<sockaddr_in*>(&ss)) == 0) {
    len = sizeof(sockaddr_in);
  } else if (uv_ip6_addr(options_.bind_address.c_str(), options_.port,
                         reinterpret_cast<sockaddr_in6*>(&ss)) == 0) {
    len = sizeof(sockaddr_in6);
  } else if (!ResolveBindName(options_.bind_address, options_.port, &ss, &len)) {
    return Status::BadRequest("invalid bind address: " + options_.bind_address);
  }
  if (options_.port != 0) {
    Status s = CheckPortFree(reinterpret_cast<sockaddr*>(&ss), len, options_.bind_address,
                             options_.port);
    if (!s.ok()) return s;
  }
  int n = options_.threads < 1 ? 1 : options_.threads;
  for (int i = 0; i < n; ++i) {
    auto loop = std::make_unique<LoopThread>(this, i);
    int bound = 0;
    Status s = loop->Bind(reinterpret_cast<sockaddr*>(&ss), len, &bound);
    if (!s.ok()) {
      loops_.clear();
      return s;
    }
    if (i == 0) {
      port_ = bound;
      // The other sockets join the same port (matters when port was 0).
      if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(bound);
      else reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(bound);
    }
    loops_.push_back(std::move(loop));
  }
  for (auto& l : loops_) l->Start();
  started_ = true;
  return Status::OK();
}

void HttpServer::Stop() {
  if (!started_) return;
  started_ = false;
  for (auto& l : loops_) l->RequestStop();
  for (auto& l : loops_) l->Join();
  stopped_requests_ = requests_served();
  stopped_writes_ = response_writes();
  loops_.clear();
}

uint64_t HttpServer::requests_served() const {
  uint64_t n = stopped_requests_;
  for (const auto& l : loops_) n += l->requests();
  return n;
}

uint64_t HttpServer::response_writes() const {
  uint64_t n = stopped_writes_;
  for (const auto& l : loops_) n += l->writes();
  return n;
}

const char* StatusText(int status) {
  switch (status) {
    case 100: return "Continue";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Object Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Request Entity Too Large";
    case 414: return "Request-URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Requested Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

}  // namespace settee::http
