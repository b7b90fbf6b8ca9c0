// The `native.stdin*` functions behind process.stdin (js/prelude/stdio.js, a
// stream.Readable): fd 0 read asynchronously on the isolate's own loop, so a
// script can read its input (readline over `cat file | settee run x.js`)
// while its timers, feeds and database calls go on. JS starts the reads when
// its stream wants data and stops them when the stream's buffer is full
// (backpressure) or it is paused: at most one read's chunk is kept here.
//
// A pipe, socket or terminal is read as a libuv stream: uv_read_stop() on
// pause leaves nothing active on the loop, so a script that stops reading
// (rl.close()) ends as node's does even if its input never ends. A regular
// file or character device (`< file`, /dev/null), which libuv cannot read
// as a stream, is read with uv_fs_read one chunk at a time while JS wants
// data; such reads never block for long.
//
// The reader works on a dup() of fd 0, so closing it (at an isolate's
// disposal) leaves fd 0 open, and it puts back fd 0's blocking mode, which
// libuv's non-blocking reads share through the file description (a child
// process or a synchronous read of fd 0 after it would see EAGAIN).
//
// One isolate thread reads stdin at a time: the first to start reading owns
// it until its isolate is disposed; another thread's start throws.
//
// Thread safety: everything but the owner check runs on the owning isolate
// thread; the owner pointer is guarded by g_owner_mu.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <utility>

#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

// Bytes asked of each read: node's stream highWaterMark for fd reads.
constexpr size_t kReadSize = 64 * 1024;

struct StdinReader {
  IsolateThread* thread = nullptr;
  uint64_t feed_id = 0;     // hooks.onFeed(feed_id) after each read
  int fd = -1;              // our dup of fd 0
  int saved_flags = -1;     // fd 0's file status flags before libuv's
  bool is_stream = false;   // uv stream (pipe/tty) or uv_fs_read (file)
  union {
    uv_pipe_t pipe;
    uv_tty_t tty;
    uv_stream_t stream;
  } h;
  uv_fs_t req;
  bool req_pending = false;  // a uv_fs_read is in flight
  bool detached = false;     // disposed while the read was in flight
  char file_buf[kReadSize];
  bool wanted = false;       // JS wants data (not paused)
  bool ended = false;        // EOF or an error was seen
  std::deque<std::string> chunks;  // read, not yet taken by JS
  int error = 0;                   // a read error (UV_EIO ...), told once
};

std::mutex g_owner_mu;
IsolateThread* g_owner = nullptr;  // guarded by g_owner_mu
StdinReader* g_reader = nullptr;   // the owner thread's reader (owner thread only)

void Notify(StdinReader* r) {
  v8::HandleScope hs(r->thread->isolate());
  v8::Local<v8::Value> argv[] = {v8::Number::New(r->thread->isolate(), static_cast<double>(r->feed_id))};
  r->thread->MakeCallback(IsolateThread::kOnFeed, 1, argv);
}

void StartFileRead(StdinReader* r);

void OnFileRead(uv_fs_t* req) {
  auto* r = static_cast<StdinReader*>(req->data);
  ssize_t n = req->result;
  uv_fs_req_cleanup(req);
  r->req_pending = false;
  if (r->detached) {
    delete r;
    return;
  }
  if (n > 0) {
    r->chunks.emplace_back(r->file_buf, static_cast<size_t>(n));
  } else {
    r->ended = true;
    if (n < 0) r->error = static_cast<int>(n);
  }
  // A next read that fails to start ends the input here too: the Notify
  // below tells JS of it with this chunk.
  if (r->wanted && !r->ended) StartFileRead(r);
  Notify(r);
}

// Starts the next read of a file; one that cannot start ends the input with
// its error, which the caller must tell JS of (OnFileRead notifies,
// StdinStart answers that a take has something).
void StartFileRead(StdinReader* r) {
  if (r->req_pending || r->ended) return;
  uv_buf_t buf = uv_buf_init(r->file_buf, kReadSize);
  r->req.data = r;
  int rc = uv_fs_read(r->thread->loop(), &r->req, r->fd, &buf, 1, -1, OnFileRead);
  if (rc < 0) {
    r->ended = true;
    r->error = rc;
    return;
  }
  r->req_pending = true;
}

void OnAlloc(uv_handle_t*, size_t, uv_buf_t* buf) {
  buf->base = new char[kReadSize];
  buf->len = kReadSize;
}

void OnStreamRead(uv_stream_t* stream, ssize_t n, const uv_buf_t* buf) {
  auto* r = static_cast<StdinReader*>(stream->data);
  if (n > 0) r->chunks.emplace_back(buf->base, static_cast<size_t>(n));
  delete[] buf->base;
  if (n == 0) return;  // EAGAIN: nothing this time
  if (n < 0) {
    r->ended = true;
    if (n != UV_EOF) r->error = static_cast<int>(n);
    uv_read_stop(stream);
  }
  Notify(r);
}

// Puts back fd 0's mode and lets the reader go (on its thread, at disposal).
void CloseReader(StdinReader* r) {
  if (r->saved_flags >= 0) fcntl(r->fd, F_SETFL, r->saved_flags);
  if (r->is_stream) {
    uv_close(reinterpret_cast<uv_handle_t*>(&r->h.stream),
             [](uv_handle_t* h) { delete static_cast<StdinReader*>(h->data); });
  } else {
    close(r->fd);
    if (r->req_pending) {
      r->detached = true;  // OnFileRead frees it (the loop runs it before it closes)
    } else {
      delete r;
    }
  }
}

// Makes the calling thread's reader, or throws if another thread owns stdin.
StdinReader* OwnReader(const Args& args, uint64_t feed_id) {
  v8::Isolate* isolate = args.GetIsolate();
  IsolateThread* t = IsolateThread::From(isolate);
  {
    std::lock_guard<std::mutex> lock(g_owner_mu);
    if (g_owner != nullptr && g_owner != t) {
      isolate->ThrowException(v8::Exception::Error(
          ToV8String(isolate, "process.stdin is being read by another isolate thread")));
      return nullptr;
    }
    g_owner = t;
  }
  if (g_reader != nullptr) return g_reader;
  auto* r = new StdinReader();
  r->thread = t;
  r->feed_id = feed_id;
  r->fd = fcntl(0, F_DUPFD_CLOEXEC, 3);
  uv_handle_type type = r->fd < 0 ? UV_UNKNOWN_HANDLE : uv_guess_handle(r->fd);
  int rc = 0;
  if (type == UV_TTY) {
    r->saved_flags = fcntl(r->fd, F_GETFL);
    rc = uv_tty_init(t->loop(), &r->h.tty, r->fd, 1);
    r->is_stream = rc == 0;  // a failed init leaves no handle to close
  } else if (type == UV_NAMED_PIPE || type == UV_TCP) {
    r->saved_flags = fcntl(r->fd, F_GETFL);
    uv_pipe_init(t->loop(), &r->h.pipe, 0);
    r->is_stream = true;  // initialized: closed through uv_close from now on
    rc = uv_pipe_open(&r->h.pipe, r->fd);
    if (rc < 0) {
      close(r->fd);  // the handle did not take it
      r->saved_flags = -1;
    }
  } else if (type != UV_FILE) {
    rc = UV_EBADF;  // fd 0 closed (or of no readable kind): an empty input, as node's
  }
  if (r->is_stream) r->h.stream.data = r;
  if (rc < 0) {
    r->ended = true;  // nothing to read: the first take tells the end
    if (rc != UV_EBADF) r->error = rc;
  }
  g_reader = r;
  t->AtDispose([t] {
    if (g_reader) CloseReader(g_reader);
    g_reader = nullptr;
    std::lock_guard<std::mutex> lock(g_owner_mu);
    if (g_owner == t) g_owner = nullptr;
  });
  return r;
}

// native.stdinStart(feedId) -> whether native.stdinTake has something (or
// the end, or an error) already, which JS then takes at once: JS wants data,
// and hooks.onFeed(feedId) runs whenever more is read, the input ends or a
// read fails. Never calls back into JS itself.
void StdinStart(const Args& args) {
  uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  StdinReader* r = OwnReader(args, feed_id);
  if (!r) return;
  r->wanted = true;
  if (!r->ended) {
    if (r->is_stream) {
      int rc = uv_read_start(&r->h.stream, OnAlloc, OnStreamRead);
      if (rc < 0 && rc != UV_EALREADY) {
        r->ended = true;
        r->error = rc;
      }
    } else {
      StartFileRead(r);
    }
  }
  args.GetReturnValue().Set(!r->chunks.empty() || (r->ended && !r->req_pending));
}

// native.stdinStop(): JS paused, or its buffer is full; nothing of stdin
// keeps the loop alive then (a file read already in flight completes, is
// kept for the next take and notified).
void StdinStop(const Args&) {
  StdinReader* r = g_reader;
  if (!r || r->thread != IsolateThread::From(v8::Isolate::GetCurrent())) return;
  r->wanted = false;
  if (r->is_stream && !r->ended) uv_read_stop(&r->h.stream);
}

// native.stdinTake() -> [chunks (Uint8Array[]), ended (bool), error name
// ("ECONNRESET") or undefined, error number (node's errno: libuv's, < 0)]:
// what was read since the last take.
void StdinTake(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  StdinReader* r = g_reader;
  v8::Local<v8::Array> chunks = v8::Array::New(isolate);
  bool ended = false;
  int error = 0;
  if (r && r->thread == IsolateThread::From(isolate)) {
    uint32_t i = 0;
    for (std::string& c : r->chunks) {
      auto ab = v8::ArrayBuffer::New(isolate, c.size());
      std::memcpy(ab->GetBackingStore()->Data(), c.data(), c.size());
      chunks->Set(ctx, i++, v8::Uint8Array::New(ab, 0, c.size())).Check();
    }
    r->chunks.clear();
    ended = r->ended && !r->req_pending;
    std::swap(error, r->error);
  }
  v8::Local<v8::Value> out[] = {chunks, v8::Boolean::New(isolate, ended),
                                error == 0 ? v8::Undefined(isolate).As<v8::Value>()
                                           : ToV8String(isolate, uv_err_name(error)).As<v8::Value>(),
                                v8::Integer::New(isolate, error)};
  args.GetReturnValue().Set(v8::Array::New(isolate, out, 4));
}

// native.stdinKind() -> how node would read fd 0: "file" (a regular file or
// a device such as /dev/null, and a closed fd 0, for which node opens
// /dev/null), "pipe" (a pipe or socket), "tty", or "unknown" (a directory:
// node offers an empty stream). Opens nothing and starts no read.
void StdinKind(const Args& args) {
  const char* kind = "unknown";
  if (fcntl(0, F_GETFD) < 0) {
    kind = "file";
  } else {
    switch (uv_guess_handle(0)) {
      case UV_FILE: kind = "file"; break;
      case UV_NAMED_PIPE: case UV_TCP: kind = "pipe"; break;
      case UV_TTY: kind = "tty"; break;
      default: break;
    }
  }
  args.GetReturnValue().Set(ToV8String(args.GetIsolate(), kind));
}

}  // namespace

void InstallStdinBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "stdinStart", StdinStart);
  SetFn(ctx, native, "stdinStop", StdinStop);
  SetFn(ctx, native, "stdinTake", StdinTake);
  SetFn(ctx, native, "stdinKind", StdinKind);
}

}  // namespace settee::js
