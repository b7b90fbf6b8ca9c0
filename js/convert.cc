#include "js/convert.h"

#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <vector>

#include <v8-array-buffer.h>
#include <v8-container.h>
#include <v8-exception.h>
#include <v8-function.h>
#include <v8-isolate.h>
#include <v8-json.h>
#include <v8-object.h>
#include <v8-primitive.h>
#include <v8-primitive-object.h>

#include "util/json.h"

namespace settee::js {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Appends one UTF-16 code unit sequence as the body of a JSON string (no
// quotes), escaping what JSON requires and encoding as UTF-8.
template <typename Char>
void AppendEscaped(const Char* s, size_t n, std::string* out) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = s[i];
    if (c < 0x80) {
      if (c >= 0x20 && c != '"' && c != '\\') {
        out->push_back(static_cast<char>(c));
        continue;
      }
      out->push_back('\\');
      switch (c) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '\b': out->push_back('b'); break;
        case '\f': out->push_back('f'); break;
        case '\n': out->push_back('n'); break;
        case '\r': out->push_back('r'); break;
        case '\t': out->push_back('t'); break;
        default:
          out->append("u00");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
      }
      continue;
    }
    if (c >= 0xD800 && c <= 0xDFFF) {
      // A surrogate pair becomes one 4-byte sequence; a lone half is not
      // representable in UTF-8 and becomes U+FFFD.
      if (c <= 0xDBFF && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
        c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
        ++i;
      } else {
        c = 0xFFFD;
      }
    }
    if (c < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (c >> 12)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (c >> 18)));
      out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
}

void AppendString(v8::Isolate* isolate, v8::Local<v8::String> str, std::string* out) {
  thread_local std::vector<uint8_t> one_byte;
  thread_local std::vector<uint16_t> two_byte;
  int len = str->Length();
  out->push_back('"');
  if (str->IsOneByte()) {
    one_byte.resize(len);
    str->WriteOneByte(isolate, one_byte.data(), 0, len, v8::String::NO_NULL_TERMINATION);
    AppendEscaped(one_byte.data(), len, out);
  } else {
    two_byte.resize(len);
    str->Write(isolate, two_byte.data(), 0, len, v8::String::NO_NULL_TERMINATION);
    AppendEscaped(two_byte.data(), len, out);
  }
  out->push_back('"');
}

void AppendNumber(double d, std::string* out) {
  // Integers print as integers (as JSON.stringify does, -0 included).
  if (d == std::trunc(d) && std::fabs(d) < 9007199254740992.0) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(d));
    out->append(buf, r.ptr);
    return;
  }
  // Shortest text that parses back to the same double.
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  out->append(buf, r.ptr);
}

class Serializer {
 public:
  Serializer(v8::Local<v8::Context> context, std::string* out)
      : context_(context), isolate_(context->GetIsolate()), out_(out) {}

  Status Write(v8::Local<v8::Value> v) {
    path_.push_back({v8::Local<v8::Value>(), -1});
    return WriteValue(v, v8::Local<v8::Value>());
  }

 private:
  struct PathElem {
    v8::Local<v8::Value> key;  // object member (empty for the root)
    int64_t index;             // array index, or -1 for members
  };

  std::string PathString() const {
    std::string p;
    for (auto& e : path_) {
      if (e.index >= 0) {
        p += "[" + std::to_string(e.index) + "]";
      } else if (e.key.IsEmpty()) {
        p += "value";
      } else {
        p += "." + ToUtf8(isolate_, e.key);
      }
    }
    return p;
  }

  Status Unrepresentable(const char* what) {
    return Status::BadRequest(PathString() + ": " + what + " cannot be stored as JSON");
  }

  // `holder_key` is the key under which `v` sits, passed to toJSON(key).
  // For array elements `holder_key` is empty and `holder_index` >= 0.
  Status WriteValue(v8::Local<v8::Value> v, v8::Local<v8::Value> holder_key, int64_t holder_index = -1) {
    if (v->IsString()) {
      AppendString(isolate_, v.As<v8::String>(), out_);
      return Status::OK();
    }
    if (v->IsInt32()) {
      char buf[16];
      auto r = std::to_chars(buf, buf + sizeof buf, v.As<v8::Int32>()->Value());
      out_->append(buf, r.ptr);
      return Status::OK();
    }
    if (v->IsNumber()) {
      double d = v.As<v8::Number>()->Value();
      if (!std::isfinite(d)) return Unrepresentable(std::isnan(d) ? "NaN" : "Infinity");
      AppendNumber(d, out_);
      return Status::OK();
    }
    if (v->IsBoolean()) {
      out_->append(v->IsTrue() ? "true" : "false");
      return Status::OK();
    }
    if (v->IsNull()) {
      out_->append("null");
      return Status::OK();
    }
    if (v->IsUndefined()) return Unrepresentable("undefined");
    if (v->IsFunction()) return Unrepresentable("a function");
    if (v->IsSymbol()) return Unrepresentable("a symbol");
    if (v->IsBigInt()) return Unrepresentable("a BigInt");
    if (!v->IsObject()) return Unrepresentable("this value");

    v8::Local<v8::Object> obj = v.As<v8::Object>();
    // Boxed primitives serialize as their value, like JSON.stringify.
    if (v->IsStringObject() || v->IsNumberObject() || v->IsBooleanObject()) {
      v8::Local<v8::Value> prim;
      if (v->IsStringObject()) prim = v.As<v8::StringObject>()->ValueOf();
      else if (v->IsNumberObject()) prim = v8::Number::New(isolate_, v.As<v8::NumberObject>()->ValueOf());
      else prim = v8::Boolean::New(isolate_, v.As<v8::BooleanObject>()->ValueOf());
      return WriteValue(prim, holder_key, holder_index);
    }
    // toJSON(), as JSON.stringify calls it (Date.prototype.toJSON).
    if (!v->IsArray()) {
      v8::Local<v8::Value> to_json;
      if (!obj->Get(context_, ToJsonKey()).ToLocal(&to_json)) return Status::Internal("toJSON getter threw");
      if (to_json->IsFunction()) {
        v8::Local<v8::Value> arg =
            holder_index >= 0 ? ToV8String(isolate_, std::to_string(holder_index)).As<v8::Value>()
            : holder_key.IsEmpty() ? v8::String::Empty(isolate_).As<v8::Value>()
                                   : holder_key;
        v8::Local<v8::Value> replaced;
        if (!to_json.As<v8::Function>()->Call(context_, obj, 1, &arg).ToLocal(&replaced)) {
          return Status::Internal("toJSON() threw");
        }
        if (replaced->IsObject() && replaced->StrictEquals(obj)) {
          // toJSON returning `this` would recurse forever; fall through.
        } else {
          return WriteValue(replaced, holder_key, holder_index);
        }
      }
    }

    for (auto& seen : stack_) {
      if (seen == obj) return Unrepresentable("a cyclic structure");
    }
    if (stack_.size() >= static_cast<size_t>(json::kMaxNestingDepth)) {
      return Unrepresentable("nesting deeper than 512 levels");
    }
    stack_.push_back(obj);
    Status s = v->IsArray() ? WriteArray(obj.As<v8::Array>()) : WriteObject(obj);
    stack_.pop_back();
    return s;
  }

  Status WriteArray(v8::Local<v8::Array> arr) {
    uint32_t n = arr->Length();
    out_->push_back('[');
    path_.push_back({v8::Local<v8::Value>(), 0});
    for (uint32_t i = 0; i < n; ++i) {
      if (i) out_->push_back(',');
      path_.back().index = i;
      v8::Local<v8::Value> e;
      if (!arr->Get(context_, i).ToLocal(&e)) return Status::Internal("array getter threw");
      Status s = WriteValue(e, v8::Local<v8::Value>(), i);
      if (!s.ok()) return s;
    }
    path_.pop_back();
    out_->push_back(']');
    return Status::OK();
  }

  Status WriteObject(v8::Local<v8::Object> obj) {
    v8::Local<v8::Array> keys;
    if (!obj->GetOwnPropertyNames(context_,
                                  static_cast<v8::PropertyFilter>(v8::ONLY_ENUMERABLE | v8::SKIP_SYMBOLS),
                                  v8::KeyConversionMode::kConvertToString)
             .ToLocal(&keys)) {
      return Status::Internal("enumerating properties threw");
    }
    uint32_t n = keys->Length();
    out_->push_back('{');
    path_.push_back({v8::Local<v8::Value>(), -1});
    for (uint32_t i = 0; i < n; ++i) {
      v8::Local<v8::Value> key;
      v8::Local<v8::Value> val;
      if (!keys->Get(context_, i).ToLocal(&key) || !obj->Get(context_, key).ToLocal(&val)) {
        return Status::Internal("property getter threw");
      }
      if (i) out_->push_back(',');
      AppendString(isolate_, key.As<v8::String>(), out_);
      out_->push_back(':');
      path_.back().key = key;
      Status s = WriteValue(val, key);
      if (!s.ok()) return s;
    }
    path_.pop_back();
    out_->push_back('}');
    return Status::OK();
  }

  v8::Local<v8::String> ToJsonKey() {
    return v8::String::NewFromUtf8Literal(isolate_, "toJSON", v8::NewStringType::kInternalized);
  }

  v8::Local<v8::Context> context_;
  v8::Isolate* isolate_;
  std::string* out_;
  std::vector<v8::Local<v8::Object>> stack_;
  std::vector<PathElem> path_;
};

}  // namespace

namespace {

// UTF-8 as a V8 string; false if V8 cannot make it (too long). ASCII (ids,
// revs, keys, nearly every document's JSON) is already V8's one-byte form:
// a copy, where the UTF-8 path scans it once to size it and again to decode
// (a get of a small document spent ~5% of its time in that decoder).
bool NewV8String(v8::Isolate* isolate, std::string_view utf8, v8::Local<v8::String>* out) {
  if (utf8.size() > static_cast<size_t>(v8::String::kMaxLength)) return false;
  const int size = static_cast<int>(utf8.size());
  return json::IsAscii(utf8)
             ? v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(utf8.data()),
                                          v8::NewStringType::kNormal, size)
                   .ToLocal(out)
             : v8::String::NewFromUtf8(isolate, utf8.data(), v8::NewStringType::kNormal, size).ToLocal(out);
}

}  // namespace

v8::MaybeLocal<v8::Value> JsonToV8(v8::Local<v8::Context> context, std::string_view json) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::String> text;
  if (!NewV8String(isolate, json, &text)) {
    isolate->ThrowException(v8::Exception::RangeError(
        v8::String::NewFromUtf8Literal(isolate, "JSON text is too large for a JS string")));
    return {};
  }
  return v8::JSON::Parse(context, text);
}

Status V8ToJson(v8::Local<v8::Context> context, v8::Local<v8::Value> value, std::string* out) {
  Serializer s(context, out);
  return s.Write(value);
}

std::string ToUtf8(v8::Isolate* isolate, v8::Local<v8::Value> value) {
  if (value.IsEmpty()) return {};
  if (value->IsString()) {
    std::string out;
    StringToUtf8(isolate, value.As<v8::String>(), &out);
    return out;
  }
  v8::String::Utf8Value s(isolate, value);
  return *s ? std::string(*s, s.length()) : std::string();
}

void StringToUtf8(v8::Isolate* isolate, v8::Local<v8::String> s, std::string* out) {
  if (s->IsOneByte()) {
    out->resize(static_cast<size_t>(s->Length()));
    s->WriteOneByte(isolate, reinterpret_cast<uint8_t*>(out->data()), 0, -1,
                    v8::String::NO_NULL_TERMINATION);
    if (json::IsAscii(*out)) return;
  }
  // Latin-1 past ASCII, or two-byte: V8's UTF-8 writer.
  out->resize(static_cast<size_t>(s->Utf8Length(isolate)));
  s->WriteUtf8(isolate, out->data(), static_cast<int>(out->size()), nullptr,
               v8::String::NO_NULL_TERMINATION | v8::String::REPLACE_INVALID_UTF8);
}

v8::Local<v8::String> ToV8String(v8::Isolate* isolate, std::string_view utf8) {
  v8::Local<v8::String> s;
  return NewV8String(isolate, utf8, &s) ? s : v8::String::Empty(isolate);
}

namespace {

std::atomic<size_t> g_owned_bytes{0};

// An external one-byte string's bytes, freed when V8 collects the string.
// V8 makes external strings in the old generation, which only a full
// mark-compact collects, and it does not count their bytes towards any GC
// limit on its own: a view build hands it every document once (~1.2 MB for
// 10,000 small ones) in a few dozen such strings, too few objects to move
// the old generation towards a full GC, so without being told V8 kept them
// all (views_bench: allocated bytes +1.2 MB a build, linear over 300
// builds, no Mark-Compact in --trace-gc). Registering the bytes as external
// memory (as Node's external strings do) lets V8 start a full GC when they
// pile up, but only past its external-memory limit (64 MB above what the
// last full GC left, per isolate): over 200 builds of 10,000 documents,
// allocated bytes then swung between 24 and 85 MB (12-43 MB with the
// request below; 13-131 MB and still rising before either). So every
// kOwnedBytesPerGc of such strings made on a thread, the isolate is also
// told of moderate memory pressure, which starts an incremental full GC
// (finished by the foreground tasks an isolate thread runs after each job).
class OwnedOneByte final : public v8::String::ExternalOneByteStringResource {
 public:
  OwnedOneByte(v8::Isolate* isolate, std::string&& s) : isolate_(isolate), s_(std::move(s)) {
    g_owned_bytes.fetch_add(s_.size(), std::memory_order_relaxed);
  }
  // Called by V8 on the isolate's thread (a GC, or the isolate's teardown).
  ~OwnedOneByte() override {
    g_owned_bytes.fetch_sub(s_.size(), std::memory_order_relaxed);
    if (registered_) isolate_->AdjustAmountOfExternalAllocatedMemory(-static_cast<int64_t>(s_.size()));
  }
  // Once V8 owns the string.
  void Register() {
    registered_ = true;
    isolate_->AdjustAmountOfExternalAllocatedMemory(static_cast<int64_t>(s_.size()));
  }
  const char* data() const override { return s_.data(); }
  size_t length() const override { return s_.size(); }

 private:
  v8::Isolate* const isolate_;
  bool registered_ = false;
  std::string s_;
};

// Below this a copy costs less than the external string's bookkeeping.
constexpr size_t kExternalMinBytes = 16 * 1024;
// Owned bytes made on one thread between two requests for a full GC: a
// 10,000-document view build makes ~1.2 MB, so one GC every dozen builds.
constexpr size_t kOwnedBytesPerGc = 16 << 20;

}  // namespace

v8::Local<v8::String> ToV8StringOwned(v8::Isolate* isolate, std::string&& utf8) {
  if (utf8.size() < kExternalMinBytes || utf8.size() > v8::String::kMaxLength || !json::IsAscii(utf8)) {
    return ToV8String(isolate, utf8);
  }
  auto* resource = new OwnedOneByte(isolate, std::move(utf8));
  v8::Local<v8::String> s;
  if (!v8::String::NewExternalOneByte(isolate, resource).ToLocal(&s)) {
    // V8 did not take it: ours to free.
    std::string back(resource->data(), resource->length());
    delete resource;
    return ToV8String(isolate, back);
  }
  resource->Register();
  thread_local size_t made_since_gc = 0;
  made_since_gc += resource->length();
  if (made_since_gc >= kOwnedBytesPerGc) {
    made_since_gc = 0;
    // Only a change from kNone starts the marking; kNone again leaves V8's
    // heuristics as they were.
    isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kModerate);
    isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kNone);
  }
  return s;
}

size_t OwnedStringBytes() { return g_owned_bytes.load(std::memory_order_relaxed); }

}  // namespace settee::js
