// The `native` functions behind the prelude's web_events.js and util.types
// that need V8 itself: structuredClone (V8's ValueSerializer, the HTML
// structured clone algorithm), detaching a transferred ArrayBuffer, and
// telling a Proxy from its target.
#include <cstdlib>
#include <utility>

#include <v8-array-buffer.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-primitive.h>
#include <v8-value-serializer.h>

#include "js/convert.h"
#include "js/isolate_thread.h"

namespace settee::js {
namespace {

using Args = v8::FunctionCallbackInfo<v8::Value>;

// Throws the serializer's refusals as Errors named DataCloneError, which the
// prelude turns into DOMExceptions (it cannot be constructed from here).
class CloneDelegate final : public v8::ValueSerializer::Delegate {
 public:
  explicit CloneDelegate(v8::Isolate* isolate) : isolate_(isolate) {}
  void ThrowDataCloneError(v8::Local<v8::String> message) override {
    v8::Local<v8::Value> error = v8::Exception::Error(message);
    error.As<v8::Object>()
        ->Set(isolate_->GetCurrentContext(), ToV8String(isolate_, "name"),
              ToV8String(isolate_, "DataCloneError"))
        .Check();
    isolate_->ThrowException(error);
  }

 private:
  v8::Isolate* isolate_;
};

// structuredClone(value) -> a deep copy through V8's wire format.
void StructuredClone(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  CloneDelegate delegate(isolate);
  v8::ValueSerializer serializer(isolate, &delegate);
  serializer.WriteHeader();
  if (serializer.WriteValue(ctx, args[0]).IsNothing()) return;  // the exception is pending
  std::pair<uint8_t*, size_t> wire = serializer.Release();
  v8::ValueDeserializer deserializer(isolate, wire.first, wire.second);
  v8::Local<v8::Value> copy;
  const bool ok = deserializer.ReadHeader(ctx).FromMaybe(false) && deserializer.ReadValue(ctx).ToLocal(&copy);
  std::free(wire.first);  // Release() hands over a buffer from realloc
  if (ok) args.GetReturnValue().Set(copy);
}

// detachArrayBuffer(buffer): after a transfer the original has no bytes.
void DetachArrayBuffer(const Args& args) {
  if (!args[0]->IsArrayBuffer()) return;
  v8::Local<v8::ArrayBuffer> buffer = args[0].As<v8::ArrayBuffer>();
  if (buffer->IsDetachable()) buffer->Detach();
}

void IsProxy(const Args& args) { args.GetReturnValue().Set(args[0]->IsProxy()); }

}  // namespace

void InstallValueBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "structuredClone", StructuredClone);
  SetFn(ctx, native, "detachArrayBuffer", DetachArrayBuffer);
  SetFn(ctx, native, "isProxy", IsProxy);
}

}  // namespace settee::js
