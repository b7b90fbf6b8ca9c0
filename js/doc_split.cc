#include "js/doc_split.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

#include <rapidjson/internal/dtoa.h>
#include <rapidjson/internal/itoa.h>
#include <v8-container.h>
#include <v8-isolate.h>
#include <v8-object.h>
#include <v8-primitive.h>

#include "js/body_jobs.h"
#include "util/json.h"

namespace settee::js {

namespace {

// js/prelude/pouchdb.js's plainJson() gives up deeper than this too; the
// engine's parsers accept json::kMaxNestingDepth.
constexpr int kMaxDepth = 500;

// A scratch body bigger than this is let go after the call, so that one huge
// document does not leave its size held by the thread for good.
constexpr size_t kKeepScratchBytes = 4 << 20;

// Appends UTF-16 code units as UTF-8; false on a lone surrogate (which
// JSON.stringify writes as an escape that the engine's parsers refuse).
bool AppendUtf16(const uint16_t* s, size_t n, std::string* out) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = s[i];
    if (c < 0x80) {
      out->push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (c >> 6)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0xD800 || c > 0xDFFF) {
      out->push_back(static_cast<char>(0xE0 | (c >> 12)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      if (c > 0xDBFF || i + 1 >= n || s[i + 1] < 0xDC00 || s[i + 1] > 0xDFFF) return false;
      c = 0x10000 + ((c - 0xD800) << 10) + (s[i + 1] - 0xDC00);
      ++i;
      out->push_back(static_cast<char>(0xF0 | (c >> 18)));
      out->push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return true;
}

// Numbers as the engine's parsers write JSON.stringify's text of them:
// integers below 2^53 (which JS prints exactly) as integers, fractions and
// numbers from 1e21 up (which JS prints with an exponent) by RapidJSON's
// dtoa, as storage/document.cc's TapeWriter does. Integers in between are
// printed by JS rounded to their shortest digits, which the parsers then
// read as 64-bit integers or not, depending on the digits: false.
bool AppendNumber(double d, std::string* out) {
  char buf[32];
  char* end;
  if (d != std::trunc(d) || std::fabs(d) >= 1e21) {
    end = rapidjson::internal::dtoa(d, buf);
  } else if (std::fabs(d) < 9007199254740992.0) {
    end = rapidjson::internal::i64toa(static_cast<int64_t>(d), buf);
  } else {
    return false;
  }
  out->append(buf, end);
  return true;
}

// The UTF-8 of `s` (no quotes, no escapes) into *out, through `units`;
// false on a lone surrogate.
bool Utf8Of(v8::Isolate* isolate, v8::Local<v8::String> s, std::vector<uint16_t>* units, std::string* out) {
  out->clear();
  const int len = s->Length();
  units->resize(len);
  s->Write(isolate, units->data(), 0, len, v8::String::NO_NULL_TERMINATION);
  return AppendUtf16(units->data(), units->size(), out);
}

class Splitter {
 public:
  explicit Splitter(v8::Local<v8::Context> context)
      : context_(context), isolate_(context->GetIsolate()), body_(Claim()) {}
  ~Splitter() {
    if (&body_ == &own_) return;
    if (body_.capacity() > kKeepScratchBytes) std::string().swap(body_);
    ScratchInUse() = false;
  }

  // False if either prototype carries a toJSON (JSON.stringify would call it).
  bool Init() {
    object_proto_ = v8::Object::New(isolate_)->GetPrototype();
    array_proto_ = v8::Array::New(isolate_, 0)->GetPrototype();
    if (!object_proto_->IsObject() || !array_proto_->IsObject()) return NotPlain();
    auto to_json = v8::String::NewFromUtf8Literal(isolate_, "toJSON", v8::NewStringType::kInternalized);
    for (auto proto : {object_proto_, array_proto_}) {
      v8::Maybe<bool> has = proto.As<v8::Object>()->HasRealNamedProperty(context_, to_json);
      if (has.IsNothing()) return Threw();
      if (has.FromJust()) return NotPlain();
    }
    return true;
  }

  SplitOutcome outcome() const { return outcome_; }

  // Splits one document into *out; false (outcome() says why) if it is not
  // plain.
  bool Doc(v8::Local<v8::Value> value, IncomingDoc* out, Status* status) {
    v8::HandleScope scope(isolate_);
    if (!value->IsObject() || value->IsArray() || value->IsFunction() || value->IsProxy()) return NotPlain();
    v8::Local<v8::Object> obj = value.As<v8::Object>();
    if (obj->GetPrototype() != object_proto_) return NotPlain();
    v8::Local<v8::Array> keys;
    if (!Keys(obj).ToLocal(&keys)) return false;
    stack_.clear();
    stack_.push_back(obj);
    body_.clear();
    body_.push_back('{');
    bool saw_id = false;
    std::optional<std::string> rev_text;
    const uint32_t n = keys->Length();
    for (uint32_t i = 0; i < n; ++i) {
      v8::HandleScope member_scope(isolate_);
      v8::Local<v8::Value> key_value, v;
      if (!keys->Get(context_, i).ToLocal(&key_value) || !obj->Get(context_, key_value).ToLocal(&v)) {
        return Threw();
      }
      v8::Local<v8::String> key = key_value.As<v8::String>();
      if (StartsWithUnderscore(key)) {
        if (!Utf8(key, &name_)) return NotPlain();
        switch (Classify(name_)) {
          case SpecialMember::kId:
            if (!v->IsString() || !Utf8(v.As<v8::String>(), &out->id)) return NotPlain();
            saw_id = true;
            continue;
          case SpecialMember::kRev:
            if (!v->IsString() || !Utf8(v.As<v8::String>(), &rev_text.emplace())) return NotPlain();
            continue;
          case SpecialMember::kDeleted:
            if (!v->IsBoolean()) return NotPlain();
            out->deleted = v->IsTrue();
            continue;
          case SpecialMember::kIgnored: {
            // Dropped, but only once it is known to be plain JSON.
            const size_t at = body_.size();
            if (!Value(v, 1)) return false;
            body_.resize(at);
            continue;
          }
          case SpecialMember::kKept:
            break;
          default:
            return NotPlain();  // _attachments, _revisions and errors
        }
      }
      if (body_.size() > 1) body_.push_back(',');
      if (!String(key)) return NotPlain();
      body_.push_back(':');
      if (!Value(v, 1)) return false;
    }
    body_.push_back('}');
    out->body.assign(body_);
    *status = FinishSplitDoc(saw_id, rev_text, out);
    return true;
  }

 private:
  // The thread's scratch body, or this splitter's own when a getter run by
  // an outer split has called back into bulkDocs.
  std::string& Claim() {
    thread_local std::string scratch;
    if (ScratchInUse()) return own_;
    ScratchInUse() = true;
    return scratch;
  }
  static bool& ScratchInUse() {
    thread_local bool in_use = false;
    return in_use;
  }

  bool NotPlain() {
    outcome_ = SplitOutcome::kNotPlain;
    return false;
  }
  bool Threw() {
    outcome_ = SplitOutcome::kThrew;
    return false;
  }

  v8::MaybeLocal<v8::Array> Keys(v8::Local<v8::Object> obj) {
    v8::MaybeLocal<v8::Array> keys = obj->GetOwnPropertyNames(
        context_, static_cast<v8::PropertyFilter>(v8::ONLY_ENUMERABLE | v8::SKIP_SYMBOLS),
        v8::KeyConversionMode::kConvertToString);
    if (keys.IsEmpty()) Threw();
    return keys;
  }

  bool StartsWithUnderscore(v8::Local<v8::String> s) {
    if (s->Length() == 0) return false;
    uint16_t c;
    s->Write(isolate_, &c, 0, 1, v8::String::NO_NULL_TERMINATION);
    return c == '_';
  }

  bool Utf8(v8::Local<v8::String> s, std::string* out) { return Utf8Of(isolate_, s, &units_, out); }

  // Appends `s` as a JSON string, escaped as json::AppendQuoted escapes;
  // false on a lone surrogate.
  bool String(v8::Local<v8::String> s) {
    const int len = s->Length();
    const size_t at = body_.size();
    if (s->IsOneByte()) {
      // Straight into the body; most strings need nothing more.
      body_.resize(at + len + 2);
      char* p = body_.data() + at;
      p[0] = '"';
      s->WriteOneByte(isolate_, reinterpret_cast<uint8_t*>(p + 1), 0, len, v8::String::NO_NULL_TERMINATION);
      const auto* u = reinterpret_cast<const unsigned char*>(p + 1);
      bool plain = true;
      for (int i = 0; i < len; ++i) {
        const unsigned char c = u[i];
        plain &= (c >= 0x20) & (c != '"') & (c != '\\') & (c < 0x80);
      }
      if (plain) {
        p[len + 1] = '"';
        return true;
      }
      body_.resize(at);
    }
    if (!Utf8(s, &text_)) return false;
    json::AppendQuoted(&body_, text_);
    return true;
  }

  bool Number(double d) { return AppendNumber(d, &body_) || NotPlain(); }

  bool Value(v8::Local<v8::Value> v, int depth) {
    if (v->IsString()) return String(v.As<v8::String>()) || NotPlain();
    if (v->IsInt32()) {
      char buf[16];
      body_.append(buf, rapidjson::internal::i64toa(v.As<v8::Int32>()->Value(), buf));
      return true;
    }
    if (v->IsNumber()) {
      const double d = v.As<v8::Number>()->Value();
      return std::isfinite(d) ? Number(d) : NotPlain();
    }
    if (v->IsTrue()) {
      body_.append("true", 4);
      return true;
    }
    if (v->IsFalse()) {
      body_.append("false", 5);
      return true;
    }
    if (v->IsNull()) {
      body_.append("null", 4);
      return true;
    }
    if (!v->IsObject() || v->IsFunction() || v->IsProxy() || depth > kMaxDepth) return NotPlain();
    v8::Local<v8::Object> obj = v.As<v8::Object>();
    for (const auto& seen : stack_) {
      if (seen == obj) return NotPlain();  // a cycle
    }
    const bool array = v->IsArray();
    if (obj->GetPrototype() != (array ? array_proto_ : object_proto_)) return NotPlain();
    stack_.push_back(obj);
    const bool ok = array ? Array(obj.As<v8::Array>(), depth) : Object(obj, depth);
    stack_.pop_back();
    return ok;
  }

  bool Array(v8::Local<v8::Array> arr, int depth) {
    body_.push_back('[');
    const uint32_t n = arr->Length();
    for (uint32_t i = 0; i < n; ++i) {
      // Each member's handles go when it is written: a big document would
      // otherwise keep every handle (and what it holds) alive to the end.
      v8::HandleScope scope(isolate_);
      if (i) body_.push_back(',');
      v8::Local<v8::Value> e;
      if (!arr->Get(context_, i).ToLocal(&e)) return Threw();
      if (!Value(e, depth + 1)) return false;
    }
    body_.push_back(']');
    return true;
  }

  bool Object(v8::Local<v8::Object> obj, int depth) {
    v8::HandleScope scope(isolate_);
    v8::Local<v8::Array> keys;
    if (!Keys(obj).ToLocal(&keys)) return false;
    body_.push_back('{');
    const uint32_t n = keys->Length();
    for (uint32_t i = 0; i < n; ++i) {
      v8::HandleScope member_scope(isolate_);
      v8::Local<v8::Value> key, v;
      if (!keys->Get(context_, i).ToLocal(&key) || !obj->Get(context_, key).ToLocal(&v)) return Threw();
      if (i) body_.push_back(',');
      if (!String(key.As<v8::String>())) return NotPlain();
      body_.push_back(':');
      if (!Value(v, depth + 1)) return false;
    }
    body_.push_back('}');
    return true;
  }

  v8::Local<v8::Context> context_;
  v8::Isolate* isolate_;
  std::string own_;  // declared before body_, which may refer to it
  std::string& body_;
  v8::Local<v8::Value> object_proto_;
  v8::Local<v8::Value> array_proto_;
  std::vector<v8::Local<v8::Object>> stack_;
  std::string name_;
  std::string text_;
  std::vector<uint16_t> units_;
  SplitOutcome outcome_ = SplitOutcome::kDone;
};

}  // namespace

SplitOutcome SplitPlainDocs(v8::Local<v8::Context> context, v8::Local<v8::Array> array,
                            std::vector<IncomingDoc>* docs, std::vector<Status>* statuses) {
  Splitter splitter(context);
  const uint32_t n = array->Length();
  docs->clear();
  statuses->clear();
  bool ok = splitter.Init();
  if (ok) {
    docs->resize(n);
    statuses->resize(n);
  }
  for (uint32_t i = 0; ok && i < n; ++i) {
    v8::Local<v8::Value> doc;
    if (!array->Get(context, i).ToLocal(&doc)) {
      docs->clear();
      statuses->clear();
      return SplitOutcome::kThrew;
    }
    ok = splitter.Doc(doc, &(*docs)[i], &(*statuses)[i]);
  }
  if (ok) return SplitOutcome::kDone;
  docs->clear();
  statuses->clear();
  return splitter.outcome() == SplitOutcome::kThrew ? SplitOutcome::kThrew : SplitOutcome::kNotPlain;
}

SplitOutcome BuildEncodedDocs(v8::Local<v8::Context> context, std::string_view bytes,
                              std::span<const int32_t> meta, v8::Local<v8::Array> strs,
                              std::span<const double> nums, uint32_t count,
                              std::vector<IncomingDoc>* docs, std::vector<Status>* statuses,
                              BodyJobs* defer) {
  v8::Isolate* isolate = context->GetIsolate();
  auto not_plain = [&] {
    if (defer != nullptr) defer->Drop();
    docs->clear();
    statuses->clear();
    return SplitOutcome::kNotPlain;
  };
  if (meta.size() / 3 < count || strs->Length() < 2 * count) return not_plain();
  const size_t base = docs->size();
  docs->resize(base + count);
  statuses->resize(base + count);
  std::vector<uint16_t> units;
  size_t next_num = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const int32_t start = meta[3 * i];
    const int32_t end = meta[3 * i + 1];
    if (start < 0 || end < start || static_cast<size_t>(end) > bytes.size()) return not_plain();
    IncomingDoc& doc = (*docs)[base + i];
    doc.deleted = (meta[3 * i + 2] & 1) != 0;
    v8::Local<v8::Value> id, rev;
    if (!strs->Get(context, 2 * i).ToLocal(&id) || !strs->Get(context, 2 * i + 1).ToLocal(&rev)) {
      return not_plain();
    }
    // The body, with each 0x01 byte replaced by its number's text.
    std::string_view body = bytes.substr(start, end - start);
    size_t mark = body.find('\x01');
    // A big new document without numbers to print is held compressed
    // straight from the encoder's bytes (storage/document.h): the batch
    // then holds its JSON only here, not until it is written.
    if (mark == std::string_view::npos && rev->IsUndefined()) {
      if (defer != nullptr && body.size() >= BodyJobs::MinBodyBytes()) {
        defer->Add(&doc, body);
        body = {};
      } else if (HoldBodyCompressed(body, &doc)) {
        body = {};
      }
    }
    if (!body.empty()) doc.body.reserve(body.size());
    for (size_t at = 0; !body.empty();) {
      if (mark == std::string_view::npos) {
        doc.body.append(body.substr(at));
        break;
      }
      doc.body.append(body.substr(at, mark - at));
      if (next_num == nums.size() || !AppendNumber(nums[next_num++], &doc.body)) return not_plain();
      at = mark + 1;
      mark = body.find('\x01', at);
    }
    const bool saw_id = id->IsString();
    if (saw_id && !Utf8Of(isolate, id.As<v8::String>(), &units, &doc.id)) return not_plain();
    std::optional<std::string> rev_text;
    if (rev->IsString() && !Utf8Of(isolate, rev.As<v8::String>(), &units, &rev_text.emplace())) {
      return not_plain();
    }
    (*statuses)[base + i] = FinishSplitDoc(saw_id, rev_text, &doc);
  }
  return SplitOutcome::kDone;
}

}  // namespace settee::js
