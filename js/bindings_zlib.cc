// The `native.zlib*` functions behind js/prelude/zlib.js (node's zlib
// module without its streams): gzip, deflate and raw deflate one way or the
// other, on Debian's zlib, synchronously or on libuv's thread pool.
//
// An asynchronous call copies its input and runs as a PoolJob
// (js/pool_job.h); JS collects the answer with native.zlibResult.
#include <zlib.h>

#include <cstring>
#include <memory>
#include <string>

#include <v8-array-buffer.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-typed-array.h>

#include "js/convert.h"
#include "js/isolate_thread.h"
#include "js/pool_job.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

// node's modes (zlib.constants): DEFLATE 1, INFLATE 2, GZIP 3, GUNZIP 4,
// DEFLATERAW 5, INFLATERAW 6, UNZIP 7 (gzip or zlib, by the header).
enum Mode { kDeflate = 1, kInflate, kGzip, kGunzip, kDeflateRaw, kInflateRaw, kUnzip };

struct ZlibParams {
  int mode = kDeflate;
  int level = Z_DEFAULT_COMPRESSION;
  int window_bits = 15;
  int mem_level = 8;
  int strategy = Z_DEFAULT_STRATEGY;
};

struct ZlibOutcome {
  std::string out;
  int code = Z_OK;       // a zlib error code when failed
  std::string message;   // non-empty: failed
};

// zlib's windowBits for a mode: +16 gzip, +32 detect, negative raw.
int WindowBitsFor(const ZlibParams& p) {
  switch (p.mode) {
    case kGzip: case kGunzip: return p.window_bits + 16;
    case kUnzip: return p.window_bits + 32;
    case kDeflateRaw: case kInflateRaw: return -p.window_bits;
    default: return p.window_bits;
  }
}

ZlibOutcome Transform(const ZlibParams& p, const unsigned char* data, size_t size) {
  ZlibOutcome r;
  z_stream z{};
  const bool compress = p.mode == kDeflate || p.mode == kGzip || p.mode == kDeflateRaw;
  int rc = compress ? deflateInit2(&z, p.level, Z_DEFLATED, WindowBitsFor(p), p.mem_level, p.strategy)
                    : inflateInit2(&z, WindowBitsFor(p));
  if (rc != Z_OK) {
    r.code = rc;
    r.message = rc == Z_STREAM_ERROR ? "Init error" : (z.msg != nullptr ? z.msg : "zlib init failed");
    return r;
  }
  z.next_in = const_cast<unsigned char*>(data);
  z.avail_in = static_cast<uInt>(size);
  unsigned char chunk[64 * 1024];
  for (;;) {
    z.next_out = chunk;
    z.avail_out = sizeof chunk;
    rc = compress ? deflate(&z, Z_FINISH) : inflate(&z, Z_FINISH);
    r.out.append(reinterpret_cast<char*>(chunk), sizeof chunk - z.avail_out);
    if (rc == Z_STREAM_END) {
      // node inflates concatenated gzip members (gunzip of `cat a.gz b.gz`).
      if (!compress && (p.mode == kGunzip || p.mode == kUnzip) && z.avail_in > 0 && z.next_in[0] == 0x1f) {
        inflateReset(&z);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && z.avail_out != 0) {
      // Input ended before the stream did.
      r.code = Z_BUF_ERROR;
      r.message = "unexpected end of file";
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      r.code = rc;
      r.message = z.msg != nullptr ? z.msg : "zlib error";
      break;
    }
  }
  if (compress) deflateEnd(&z); else inflateEnd(&z);
  return r;
}

bool ReadParams(const Args& args, int first, ZlibParams* p) {
  v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
  int* fields[] = {&p->mode, &p->level, &p->window_bits, &p->mem_level, &p->strategy};
  for (int i = 0; i < 5; ++i) {
    if (!args[first + i]->IsNumber()) continue;
    *fields[i] = args[first + i]->Int32Value(ctx).FromMaybe(*fields[i]);
  }
  return true;
}

std::string Bytes(v8::Local<v8::Value> v) {
  if (!v->IsArrayBufferView()) return {};
  auto view = v.As<v8::ArrayBufferView>();
  std::string out(view->ByteLength(), '\0');
  view->CopyContents(out.data(), out.size());
  return out;
}

v8::Local<v8::Value> Answer(v8::Isolate* isolate, ZlibOutcome& r) {
  if (!r.message.empty()) {
    v8::Local<v8::Object> e = v8::Exception::Error(ToV8String(isolate, r.message)).As<v8::Object>();
    v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
    const char* name = r.code == Z_DATA_ERROR ? "Z_DATA_ERROR" : r.code == Z_BUF_ERROR ? "Z_BUF_ERROR"
                       : r.code == Z_STREAM_ERROR ? "ERR_ZLIB_INITIALIZATION_FAILED" : "Z_ERROR";
    e->Set(ctx, ToV8String(isolate, "errno"), v8::Integer::New(isolate, r.code)).FromMaybe(false);
    e->Set(ctx, ToV8String(isolate, "code"), ToV8String(isolate, name)).FromMaybe(false);
    return e;
  }
  auto store = v8::ArrayBuffer::NewBackingStore(isolate, r.out.size());
  if (!r.out.empty()) std::memcpy(store->Data(), r.out.data(), r.out.size());
  return v8::Uint8Array::New(v8::ArrayBuffer::New(isolate, std::move(store)), 0, r.out.size());
}

// native.zlibSync(bytes, mode, level, windowBits, memLevel, strategy) ->
// Uint8Array; throws node's zlib errors.
void ZlibSync(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  ZlibParams p;
  ReadParams(args, 1, &p);
  const std::string in = Bytes(args[0]);
  ZlibOutcome r = Transform(p, reinterpret_cast<const unsigned char*>(in.data()), in.size());
  v8::Local<v8::Value> answer = Answer(isolate, r);
  if (!r.message.empty()) {
    isolate->ThrowException(answer);
    return;
  }
  args.GetReturnValue().Set(answer);
}

struct ZlibJob final : PoolJob {
  ZlibParams params;
  std::string input;
  ZlibOutcome outcome;
  void Run() override {
    outcome = Transform(params, reinterpret_cast<const unsigned char*>(input.data()), input.size());
  }
};

// native.zlibAsync(feedId, bytes, mode, level, windowBits, memLevel,
// strategy): hooks.onFeed(feedId) once native.zlibResult has the answer.
void ZlibAsync(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto job = std::make_shared<ZlibJob>();
  ReadParams(args, 2, &job->params);
  job->input = Bytes(args[1]);
  StartPoolJob(t, feed_id, std::move(job));
}

// native.zlibResult(feedId) -> undefined until done; then the Uint8Array or
// the Error (returned, not thrown), and the feed is closed.
void ZlibResult(const Args& args) {
  IsolateThread* t = IsolateThread::From(args.GetIsolate());
  const uint64_t feed_id = static_cast<uint64_t>(args[0].As<v8::Number>()->Value());
  auto job = std::static_pointer_cast<ZlibJob>(TakeFinishedPoolJob(t, feed_id));
  if (job) args.GetReturnValue().Set(Answer(args.GetIsolate(), job->outcome));
}

void Crc32(const Args& args) {
  v8::Local<v8::Context> ctx = args.GetIsolate()->GetCurrentContext();
  const std::string in = Bytes(args[0]);
  const uLong start = args[1]->IsNumber() ? static_cast<uLong>(args[1]->Uint32Value(ctx).FromMaybe(0)) : 0;
  const uLong crc = crc32(start, reinterpret_cast<const Bytef*>(in.data()), static_cast<uInt>(in.size()));
  args.GetReturnValue().Set(static_cast<uint32_t>(crc));
}

}  // namespace

void InstallZlibBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "zlibSync", ZlibSync);
  SetFn(ctx, native, "zlibAsync", ZlibAsync);
  SetFn(ctx, native, "zlibResult", ZlibResult);
  SetFn(ctx, native, "zlibCrc32", Crc32);
}

}  // namespace settee::js
