// The `native.http*` functions behind js/prelude/http_adapter.js: PouchDB's
// http adapter (`new PouchDB('http://host:port/db')`) over the replicator's
// HTTP client (replication/http_client.h: libcurl, keep-alive, gzip, TLS,
// Basic auth or a cookie session).
//
// A remote database handle owns one client and one worker thread, so the
// isolate's loop never blocks on the network: native.httpRequest queues a
// request and returns; the worker performs it and wakes the loop through a
// ListenNotify feed, whose hooks.onFeed(feedId) makes JS collect the answer
// with native.httpResult. A handle's requests are sent one at a time, in the
// order given, on its one kept-alive connection.
//
// Handles belong to the isolate thread that opened them (thread_local); a
// handle's worker is interrupted and joined when JS closes it or the thread
// ends.
#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "replication/http_client.h"
#include "replication/url.h"

namespace settee::js {

namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;
using replication::HttpClient;
using replication::HttpResponse;

// One answer, written by the worker, read by JS once woken.
struct Slot {
  std::mutex mu;
  bool binary = false;  // JS wants a 2xx body as bytes (an attachment)
  bool done = false;
  Result<HttpResponse> response = Status::Internal("no answer yet");
};

struct Request {
  std::string method;
  std::string url;
  std::string body;
  std::string content_type = "application/json";
  std::string accept = "application/json";
  std::shared_ptr<Slot> slot;
  std::function<void()> wake;
};

class RemoteDb {
 public:
  RemoteDb(replication::Url url, replication::HttpClientOptions options)
      : url_(std::move(url)), client_(std::move(options)), thread_([this] { Work(); }) {}
  ~RemoteDb() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_one();
    client_.Interrupt();
    thread_.join();
    // Requests never sent still get an answer, so no JS promise waits for
    // ever on a closed database.
    for (Request& r : queue_) {
      {
        std::lock_guard<std::mutex> lock(r.slot->mu);
        r.slot->response = Status::NotFound("database handle is closed");
        r.slot->done = true;
      }
      r.wake();
    }
  }

  const replication::Url& url() const { return url_; }

  void Enqueue(Request r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(r));
    }
    cv_.notify_one();
  }

 private:
  void Work() {
    bool logged_in = false;
    for (;;) {
      Request r;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
        if (stop_) return;
        r = std::move(queue_.front());
        queue_.pop_front();
      }
      Result<HttpResponse> response = Status::Internal("not sent");
      Status login = Status::OK();
      if (!logged_in) {
        // A cookie session when credentials are given (falls back to Basic
        // auth when the server has no _session).
        login = client_.Login(url_.scheme + "://" + url_.host +
                              (url_.port ? ":" + std::to_string(url_.port) : "") + "/");
        logged_in = login.ok();
      }
      response = login.ok() ? client_.Request(r.method, r.url, r.body, std::chrono::milliseconds(0),
                                              r.accept, r.content_type)
                            : Result<HttpResponse>(login);
      {
        std::lock_guard<std::mutex> lock(r.slot->mu);
        r.slot->response = std::move(response);
        r.slot->done = true;
      }
      r.wake();
    }
  }

  replication::Url url_;
  HttpClient client_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: started once the rest is built
};

// Per isolate thread.
thread_local std::map<int, std::unique_ptr<RemoteDb>> remotes;
thread_local int next_remote = 1;
thread_local std::map<uint64_t, std::shared_ptr<Slot>> answers;

RemoteDb* RemoteArg(IsolateThread* t, const Args& args) {
  int h = args[0]->IsNumber() ? static_cast<int>(args[0].As<v8::Number>()->Value()) : -1;
  auto it = remotes.find(h);
  if (it == remotes.end()) {
    t->ThrowStatus(Status::NotFound("database handle is closed"));
    return nullptr;
  }
  return it->second.get();
}

// native.httpOpen(url, user?, password?): a handle; kBadRequest for a URL
// that is not http(s). Credentials in the URL win over the arguments.
void HttpOpen(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  auto url = replication::ParseUrl(ToUtf8(isolate, args[0]));
  if (!url.ok()) {
    t->ThrowStatus(url.status());
    return;
  }
  replication::HttpClientOptions options;
  if (!url->user.empty()) {
    options.user = url->user;
    options.password = url->password;
  } else if (args.Length() > 2 && args[1]->IsString()) {
    options.user = ToUtf8(isolate, args[1]);
    options.password = ToUtf8(isolate, args[2]);
  }
  int h = next_remote++;
  remotes[h] = std::make_unique<RemoteDb>(std::move(*url), std::move(options));
  args.GetReturnValue().Set(h);
}

// native.httpUrl(h): the database URL without credentials (db.name).
void HttpUrl(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  RemoteDb* db = RemoteArg(t, args);
  if (!db) return;
  std::string u = db->url().WithoutCredentials();
  args.GetReturnValue().Set(
      v8::String::NewFromUtf8(args.GetIsolate(), u.data(), v8::NewStringType::kNormal,
                              static_cast<int>(u.size()))
          .ToLocalChecked());
}

// native.httpRequest(h, feedId, method, rel, body?, options?): queues a
// request for `rel` (escaped, relative to the database URL; "" is the
// database itself). `body` is a string or bytes (an ArrayBufferView);
// options: {contentType, accept, binary} — `binary` makes a 2xx answer's
// body a Uint8Array instead of text (an error's stays text, for its JSON).
// hooks.onFeed(feedId) runs once the answer is in.
void HttpRequest(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  RemoteDb* db = RemoteArg(t, args);
  if (!db) return;
  uint64_t feed_id = static_cast<uint64_t>(args[1].As<v8::Number>()->Value());
  Request r;
  r.method = ToUtf8(isolate, args[2]);
  std::string rel = ToUtf8(isolate, args[3]);
  r.url = db->url().Join(rel);
  if (rel.empty() || rel[0] == '?') {
    // The database itself, as /db (CouchDB answers /db/ too, proxies may
    // not). Credentials never appear in URLs: the client sends them.
    r.url = db->url().WithoutCredentials();
    if (r.url.size() > 1 && r.url.back() == '/') r.url.pop_back();
    r.url += rel;
  }
  if (args.Length() > 4 && args[4]->IsString()) {
    r.body = ToUtf8(isolate, args[4]);
  } else if (args.Length() > 4 && args[4]->IsArrayBufferView()) {
    v8::Local<v8::ArrayBufferView> bytes = args[4].As<v8::ArrayBufferView>();
    r.body.resize(bytes->ByteLength());
    bytes->CopyContents(r.body.data(), r.body.size());
  }
  r.slot = std::make_shared<Slot>();
  if (args.Length() > 5 && args[5]->IsObject()) {
    v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
    v8::Local<v8::Object> options = args[5].As<v8::Object>();
    auto text_option = [&](const char* name, std::string* out) {
      v8::Local<v8::Value> v;
      if (options->Get(ctx, ToV8String(isolate, name)).ToLocal(&v) && v->IsString()) {
        *out = ToUtf8(isolate, v);
      }
    };
    text_option("contentType", &r.content_type);
    text_option("accept", &r.accept);
    v8::Local<v8::Value> v;
    r.slot->binary = options->Get(ctx, ToV8String(isolate, "binary")).ToLocal(&v) && v->IsTrue();
  }
  answers[feed_id] = r.slot;
  r.wake = t->ListenNotify(feed_id, [feed_id] { answers.erase(feed_id); });
  db->Enqueue(std::move(r));
}

// native.httpResult(feedId): [status, body, contentType] once answered
// (undefined before), and the feed is closed. A transport failure throws.
void HttpResult(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto it = answers.find(feed_id);
  if (it == answers.end()) return;
  std::shared_ptr<Slot> slot = it->second;
  std::lock_guard<std::mutex> lock(slot->mu);
  if (!slot->done) return;
  t->Unlisten(feed_id);  // erases the answer
  if (!slot->response.ok()) {
    t->ThrowStatus(slot->response.status());
    return;
  }
  HttpResponse& r = *slot->response;
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  v8::Local<v8::Array> out = v8::Array::New(isolate, 3);
  if (out->Set(ctx, 0, v8::Number::New(isolate, static_cast<double>(r.status))).IsNothing()) return;
  v8::Local<v8::Value> body;
  if (slot->binary && r.status >= 200 && r.status < 300) {
    // The bytes are handed over, not copied: the ArrayBuffer owns the string.
    auto* owned = new std::string(std::move(r.body));
    const size_t length = owned->size();
    std::shared_ptr<v8::BackingStore> store = v8::ArrayBuffer::NewBackingStore(
        owned->data(), length,
        [](void*, size_t, void* deleter_data) { delete static_cast<std::string*>(deleter_data); },
        owned);
    body = v8::Uint8Array::New(v8::ArrayBuffer::New(isolate, std::move(store)), 0, length);
  } else {
    v8::Local<v8::String> text;
    if (!v8::String::NewFromUtf8(isolate, r.body.data(), v8::NewStringType::kNormal,
                                 static_cast<int>(r.body.size()))
             .ToLocal(&text)) {
      t->ThrowStatus(Status(Status::Code::kTooLarge, "response body too large for a JS string"));
      return;
    }
    body = text;
  }
  if (out->Set(ctx, 1, body).IsNothing()) return;
  if (out->Set(ctx, 2, ToV8String(isolate, r.content_type)).IsNothing()) return;
  args.GetReturnValue().Set(out);
}

// native.httpClose(h): interrupts what is in flight and ends the worker.
void HttpClose(const Args& args) {
  int h = args[0]->IsNumber() ? static_cast<int>(args[0].As<v8::Number>()->Value()) : -1;
  remotes.erase(h);
}

}  // namespace

void InstallHttpBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->context();
  SetFn(ctx, native, "httpOpen", HttpOpen);
  SetFn(ctx, native, "httpUrl", HttpUrl);
  SetFn(ctx, native, "httpRequest", HttpRequest);
  SetFn(ctx, native, "httpResult", HttpResult);
  SetFn(ctx, native, "httpClose", HttpClose);
}

}  // namespace settee::js
