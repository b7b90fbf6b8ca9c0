// The `native.fetch*` functions behind js/prelude/fetch.js (the WHATWG
// fetch() global): any HTTP(S) request, with its headers, body and
// redirect mode, on libcurl.
//
// Each isolate thread that fetches gets one Fetcher: a worker thread that
// drives every transfer of that isolate at once on one curl multi handle,
// so concurrent fetches (Promise.all) run concurrently and the isolate's
// loop never blocks on the network. native.fetchStart queues a transfer
// and returns; the worker wakes the loop through a ListenNotify feed when
// the transfer ends, and JS collects the answer with native.fetchResult.
// native.fetchAbort takes a transfer out of the multi handle (an aborted
// signal).
//
// Thread safety: a Transfer's request fields are written before it is
// queued; its answer fields are written by the worker before `done` is
// released, and read by the isolate thread only after acquiring it.
#include <curl/curl.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

enum class RedirectMode { kFollow, kManual, kError };

struct Transfer {
  // The request (set before the transfer is queued).
  uint64_t feed_id = 0;
  std::string method;
  std::string url;
  std::vector<std::string> header_lines;  // "Name: value"
  std::string body;
  bool has_body = false;
  RedirectMode redirect = RedirectMode::kFollow;
  std::function<void()> wake;

  // Owned by the worker while the transfer runs.
  CURL* easy = nullptr;
  curl_slist* headers = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {0};

  // The answer (written by the worker before `done`).
  long status = 0;
  std::string status_text;
  std::vector<std::pair<std::string, std::string>> response_headers;
  std::string response_body;
  std::string final_url;
  long redirects = 0;
  std::string error;  // non-empty: the request failed, no response
  std::atomic<bool> done{false};

  ~Transfer() {
    if (easy != nullptr) curl_easy_cleanup(easy);
    if (headers != nullptr) curl_slist_free_all(headers);
  }
};

// Response header lines. A new status line (after a redirect or a
// 100 Continue) starts the header list again, so the list is the last
// response's.
size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  std::string line(data, n);
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.pop_back();
  if (line.rfind("HTTP/", 0) == 0) {
    t->response_headers.clear();
    // "HTTP/1.1 404 Not Found": the reason phrase, if any (HTTP/2 has none).
    const size_t first = line.find(' ');
    const size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
    t->status_text = second == std::string::npos ? "" : line.substr(second + 1);
  } else if (!line.empty()) {
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string value = line.substr(colon + 1);
      const size_t start = value.find_first_not_of(" \t");
      value = start == std::string::npos ? "" : value.substr(start);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.pop_back();
      t->response_headers.emplace_back(line.substr(0, colon), std::move(value));
    }
  }
  return n;
}

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  static_cast<Transfer*>(user)->response_body.append(data, size * count);
  return size * count;
}

class Fetcher {
 public:
  Fetcher() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
    multi_ = curl_multi_init();
    thread_ = std::thread([this] { Work(); });
  }
  ~Fetcher() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    curl_multi_wakeup(multi_);
    thread_.join();
    curl_multi_cleanup(multi_);
  }

  void Start(std::shared_ptr<Transfer> t) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      incoming_.push_back(std::move(t));
    }
    curl_multi_wakeup(multi_);
  }

  void Abort(uint64_t feed_id) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      aborts_.push_back(feed_id);
    }
    curl_multi_wakeup(multi_);
  }

 private:
  void Work() {
    for (;;) {
      std::deque<std::shared_ptr<Transfer>> incoming;
      std::vector<uint64_t> aborts;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (stop_) break;
        incoming.swap(incoming_);
        aborts.swap(aborts_);
      }
      for (auto& t : incoming) Add(std::move(t));
      for (uint64_t id : aborts) {
        for (auto it = active_.begin(); it != active_.end(); ++it) {
          if (it->second->feed_id != id) continue;
          curl_multi_remove_handle(multi_, it->first);
          active_.erase(it);  // JS has already answered the abort
          break;
        }
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int queued = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &queued)) {
        if (m->msg != CURLMSG_DONE) continue;
        auto it = active_.find(m->easy_handle);
        if (it == active_.end()) continue;
        std::shared_ptr<Transfer> t = it->second;
        active_.erase(it);
        curl_multi_remove_handle(multi_, t->easy);
        Finish(*t, m->data.result);
      }
      curl_multi_poll(multi_, nullptr, 0, 1000, nullptr);
    }
    for (auto& [easy, t] : active_) curl_multi_remove_handle(multi_, easy);
    active_.clear();
  }

  void Add(std::shared_ptr<Transfer> t) {
    t->easy = curl_easy_init();
    CURL* e = t->easy;
    if (e == nullptr) {
      t->error = "cannot start a transfer";
      Done(*t);
      return;
    }
    curl_easy_setopt(e, CURLOPT_URL, t->url.c_str());
    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, t->error_buffer);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, OnHeader);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, t.get());
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, OnBody);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, t.get());
    // Compressed answers are decoded, as fetch does (the header stays).
    curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
    if (t->redirect == RedirectMode::kFollow) {
      curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 1L);
      curl_easy_setopt(e, CURLOPT_MAXREDIRS, 20L);  // fetch's limit
    }
    bool has_user_agent = false;
    for (const std::string& line : t->header_lines) {
      if (strncasecmp(line.c_str(), "user-agent:", 11) == 0) has_user_agent = true;
      t->headers = curl_slist_append(t->headers, line.c_str());
    }
    // curl adds "Expect: 100-continue" to large bodies; fetch never waits.
    t->headers = curl_slist_append(t->headers, "Expect:");
    if (!has_user_agent) t->headers = curl_slist_append(t->headers, "User-Agent: settee");
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t->headers);
    if (t->method == "HEAD") {
      curl_easy_setopt(e, CURLOPT_NOBODY, 1L);
    } else if (t->method != "GET" || t->has_body) {
      if (t->has_body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, t->body.data());
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(t->body.size()));
      }
      // POST stays curl's own verb, so that a 303 (or 301/302) redirect
      // turns it into a GET as fetch does; other verbs are kept.
      if (t->method != "POST") curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, t->method.c_str());
      else if (!t->has_body) curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(0));
    }
    CURLMcode rc = curl_multi_add_handle(multi_, e);
    if (rc != CURLM_OK) {
      t->error = curl_multi_strerror(rc);
      Done(*t);
      return;
    }
    active_[e] = std::move(t);
  }

  void Finish(Transfer& t, CURLcode result) {
    if (result != CURLE_OK) {
      t.error = t.error_buffer[0] != '\0' ? std::string(t.error_buffer) : curl_easy_strerror(result);
    } else {
      curl_easy_getinfo(t.easy, CURLINFO_RESPONSE_CODE, &t.status);
      char* effective = nullptr;
      curl_easy_getinfo(t.easy, CURLINFO_EFFECTIVE_URL, &effective);
      t.final_url = effective != nullptr ? effective : t.url;
      curl_easy_getinfo(t.easy, CURLINFO_REDIRECT_COUNT, &t.redirects);
      if (t.redirect == RedirectMode::kError && t.status >= 300 && t.status < 400) {
        t.error = "unexpected redirect";
      }
    }
    Done(t);
  }

  static void Done(Transfer& t) {
    t.done.store(true, std::memory_order_release);
    t.wake();
  }

  CURLM* multi_ = nullptr;
  std::mutex mu_;
  std::deque<std::shared_ptr<Transfer>> incoming_;
  std::vector<uint64_t> aborts_;
  bool stop_ = false;
  std::map<CURL*, std::shared_ptr<Transfer>> active_;  // worker only
  std::thread thread_;  // last: started once the rest is built
};

// Per isolate thread.
thread_local std::unique_ptr<Fetcher> fetcher;
thread_local std::map<uint64_t, std::shared_ptr<Transfer>> transfers;

// native.fetchStart(feedId, method, url, headers: [name, value][],
//                   body: Uint8Array | undefined, redirect: string)
// hooks.onFeed(feedId) runs once the answer is in.
void FetchStart(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  auto transfer = std::make_shared<Transfer>();
  transfer->feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  transfer->method = ToUtf8(isolate, args[1]);
  transfer->url = ToUtf8(isolate, args[2]);
  if (args[3]->IsArray()) {
    auto list = args[3].As<v8::Array>();
    for (uint32_t i = 0; i < list->Length(); ++i) {
      v8::Local<v8::Value> pair;
      if (!list->Get(ctx, i).ToLocal(&pair) || !pair->IsArray()) continue;
      v8::Local<v8::Value> name;
      v8::Local<v8::Value> value;
      if (!pair.As<v8::Array>()->Get(ctx, 0).ToLocal(&name) ||
          !pair.As<v8::Array>()->Get(ctx, 1).ToLocal(&value)) {
        return;
      }
      std::string v = ToUtf8(isolate, value);
      // An empty value needs curl's "Name;" spelling to be sent at all.
      transfer->header_lines.push_back(v.empty() ? ToUtf8(isolate, name) + ";"
                                                 : ToUtf8(isolate, name) + ": " + v);
    }
  }
  if (args[4]->IsArrayBufferView()) {
    auto view = args[4].As<v8::ArrayBufferView>();
    transfer->body.resize(view->ByteLength());
    view->CopyContents(transfer->body.data(), transfer->body.size());
    transfer->has_body = true;
  }
  const std::string redirect = ToUtf8(isolate, args[5]);
  transfer->redirect = redirect == "manual" ? RedirectMode::kManual
                       : redirect == "error" ? RedirectMode::kError
                                             : RedirectMode::kFollow;
  const uint64_t feed_id = transfer->feed_id;
  transfers[feed_id] = transfer;
  transfer->wake = t->ListenNotify(feed_id, [feed_id] { transfers.erase(feed_id); });
  if (!fetcher) fetcher = std::make_unique<Fetcher>();
  fetcher->Start(std::move(transfer));
}

v8::Local<v8::String> V8Str(v8::Isolate* isolate, const std::string& s) {
  return ToV8String(isolate, s);
}

// native.fetchResult(feedId): undefined until answered; then the feed is
// closed and the answer is {error} or {status, statusText, headers: [name,
// value][], url, redirected, body: ArrayBuffer}.
void FetchResult(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto it = transfers.find(feed_id);
  if (it == transfers.end()) return;
  std::shared_ptr<Transfer> tr = it->second;
  if (!tr->done.load(std::memory_order_acquire)) return;
  t->Unlisten(feed_id);  // erases the transfer from `transfers`
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  auto set = [&](const char* key, v8::Local<v8::Value> v) {
    return out->Set(ctx, V8Str(isolate, key), v).FromMaybe(false);
  };
  if (!tr->error.empty()) {
    set("error", V8Str(isolate, tr->error));
    args.GetReturnValue().Set(out);
    return;
  }
  v8::Local<v8::Array> headers = v8::Array::New(isolate, static_cast<int>(tr->response_headers.size()));
  for (size_t i = 0; i < tr->response_headers.size(); ++i) {
    v8::Local<v8::Array> pair = v8::Array::New(isolate, 2);
    if (pair->Set(ctx, 0, V8Str(isolate, tr->response_headers[i].first)).IsNothing() ||
        pair->Set(ctx, 1, V8Str(isolate, tr->response_headers[i].second)).IsNothing() ||
        headers->Set(ctx, static_cast<uint32_t>(i), pair).IsNothing()) {
      return;
    }
  }
  auto store = v8::ArrayBuffer::NewBackingStore(isolate, tr->response_body.size());
  if (!tr->response_body.empty()) std::memcpy(store->Data(), tr->response_body.data(), tr->response_body.size());
  if (!set("status", v8::Number::New(isolate, static_cast<double>(tr->status))) ||
      !set("statusText", V8Str(isolate, tr->status_text)) || !set("headers", headers) ||
      !set("url", V8Str(isolate, tr->final_url)) ||
      !set("redirected", v8::Boolean::New(isolate, tr->redirects > 0)) ||
      !set("body", v8::ArrayBuffer::New(isolate, std::move(store)))) {
    return;
  }
  args.GetReturnValue().Set(out);
}

// native.fetchAbort(feedId): stops the transfer; its feed is closed and no
// answer comes.
void FetchAbort(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  if (transfers.find(feed_id) == transfers.end()) return;
  t->Unlisten(feed_id);
  if (fetcher) fetcher->Abort(feed_id);
}

}  // namespace

void InstallFetchBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "fetchStart", FetchStart);
  SetFn(ctx, native, "fetchResult", FetchResult);
  SetFn(ctx, native, "fetchAbort", FetchAbort);
}

}  // namespace settee::js
