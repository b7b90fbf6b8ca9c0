// OpenSSL behind the prelude's `crypto` module (js/prelude/crypto.js):
// digests and HMACs of byte chunks, and strong random bytes.
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

void ThrowError(v8::Isolate* isolate, const std::string& message) {
  isolate->ThrowException(v8::Exception::Error(ToV8String(isolate, message)));
}

std::string_view Bytes(v8::Local<v8::Value> v) {
  auto view = v.As<v8::ArrayBufferView>();
  return {static_cast<const char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset(),
          view->ByteLength()};
}

v8::Local<v8::Uint8Array> NewBytes(v8::Isolate* isolate, const unsigned char* data, size_t len) {
  auto ab = v8::ArrayBuffer::New(isolate, len);
  if (len > 0) std::memcpy(ab->GetBackingStore()->Data(), data, len);
  return v8::Uint8Array::New(ab, 0, len);
}

// cryptoHasDigest(name) -> whether OpenSSL knows the digest ("sha256", ...).
void HasDigest(const Args& args) {
  std::string name = ToUtf8(args.GetIsolate(), args[0]);
  args.GetReturnValue().Set(EVP_get_digestbyname(name.c_str()) != nullptr);
}

// cryptoDigest(name, chunks: Uint8Array[], hmacKey?: Uint8Array) -> Uint8Array
void Digest(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  v8::Local<v8::Context> ctx = isolate->GetCurrentContext();
  std::string name = ToUtf8(isolate, args[0]);
  const EVP_MD* md = EVP_get_digestbyname(name.c_str());
  if (md == nullptr) return ThrowError(isolate, "Digest method not supported");
  if (!args[1]->IsArray()) return ThrowError(isolate, "chunks must be an array");
  auto chunks = args[1].As<v8::Array>();
  // The chunks as byte views, checked once for both kinds of digest.
  std::vector<std::string_view> pieces;
  for (uint32_t i = 0; i < chunks->Length(); ++i) {
    v8::Local<v8::Value> c;
    if (!chunks->Get(ctx, i).ToLocal(&c) || !c->IsArrayBufferView()) return ThrowError(isolate, "bad chunk");
    pieces.push_back(Bytes(c));
  }
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  bool ok;
  if (args[2]->IsArrayBufferView()) {
    std::string_view key = Bytes(args[2]);
    // EVP_MAC_init takes a null key as "keep the key set before"; an empty
    // key (which node accepts) must be a non-null pointer of length 0.
    static const unsigned char kNoKeyBytes = 0;
    const auto* key_bytes =
        key.empty() ? &kNoKeyBytes : reinterpret_cast<const unsigned char*>(key.data());
    std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr),
                                                          EVP_MAC_free);
    std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> h(
        mac ? EVP_MAC_CTX_new(mac.get()) : nullptr, EVP_MAC_CTX_free);
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST,
                                         const_cast<char*>(EVP_MD_get0_name(md)), 0),
        OSSL_PARAM_construct_end()};
    ok = h && EVP_MAC_init(h.get(), key_bytes, key.size(), params) == 1;
    for (std::string_view b : pieces) {
      ok = ok && EVP_MAC_update(h.get(), reinterpret_cast<const unsigned char*>(b.data()), b.size()) == 1;
    }
    size_t mac_len = 0;
    ok = ok && EVP_MAC_final(h.get(), out, &mac_len, sizeof(out)) == 1;
    out_len = static_cast<unsigned int>(mac_len);
  } else {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> h(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    ok = h && EVP_DigestInit_ex(h.get(), md, nullptr) == 1;
    for (std::string_view b : pieces) ok = ok && EVP_DigestUpdate(h.get(), b.data(), b.size()) == 1;
    ok = ok && EVP_DigestFinal_ex(h.get(), out, &out_len) == 1;
  }
  if (!ok) return ThrowError(isolate, "digest failed: " + name);
  args.GetReturnValue().Set(NewBytes(isolate, out, out_len));
}

// cryptoRandomFill(view): fills a typed array with strong random bytes.
void RandomFill(const Args& args) {
  v8::Isolate* isolate = args.GetIsolate();
  if (!args[0]->IsArrayBufferView()) {
    isolate->ThrowException(v8::Exception::TypeError(ToV8String(isolate, "expected a typed array")));
    return;
  }
  std::string_view b = Bytes(args[0]);
  if (!b.empty() && RAND_bytes(reinterpret_cast<unsigned char*>(const_cast<char*>(b.data())),
                               static_cast<int>(b.size())) != 1) {
    ThrowError(isolate, "no random bytes to be had");
  }
}

}  // namespace

void InstallCryptoBindings(IsolateThread* t, v8::Local<v8::Object> native) {
  v8::Local<v8::Context> ctx = t->isolate()->GetCurrentContext();
  SetFn(ctx, native, "cryptoHasDigest", HasDigest);
  SetFn(ctx, native, "cryptoDigest", Digest);
  SetFn(ctx, native, "cryptoRandomFill", RandomFill);
}

}  // namespace settee::js
