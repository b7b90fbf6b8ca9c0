#include "storage/attachments.h"

#include <cstring>

#include "util/json.h"

namespace settee {

namespace {
constexpr std::string_view kMember = "\"_attachments\":{";
}  // namespace

bool MayHaveAttachments(std::string_view body) {
  return body.size() > kMember.size() &&
         std::string_view(body).find(kMember) != std::string_view::npos;
}

namespace {

// Reads the stored member exactly as AppendAttachmentsMember() writes it,
// without a JSON parse: a document read with 100 attachments spent 7% of
// its time parsing its body into a DOM and serializing it again without
// the member. Anything else (escapes in a string, another member order,
// text after the member) is left to the JSON parser: false.
class StoredMemberReader {
 public:
  explicit StoredMemberReader(std::string_view body) : s_(body) {}

  bool Read(std::vector<AttachmentEntry>* out, std::string* rest) {
    // The member is the body's last, so it starts at the last occurrence of
    // its text: one inside it would be an entry named "_attachments", which
    // the entry format below refuses, and one nested deeper leaves more
    // closing brackets than the single one expected at the end.
    const size_t at = s_.rfind(kMember);
    if (at == std::string_view::npos || at == 0 || (s_[at - 1] != ',' && s_[at - 1] != '{')) {
      return false;
    }
    pos_ = at + kMember.size();
    out->clear();
    if (!Peek('}')) {
      do {
        AttachmentEntry& e = out->emplace_back();
        if (!String(&e.name) || !Lit(":{\"content_type\":") || !String(&e.content_type) ||
            !Lit(",\"revpos\":") || !Number(&e.revpos) || !Lit(",\"digest\":") ||
            !String(&e.digest) || !Lit(",\"length\":") || !Number(&e.length) ||
            !Lit(",\"stub\":true}")) {
          return false;
        }
      } while (Lit(","));
    }
    if (!Lit("}}") || pos_ != s_.size()) return false;
    if (rest != nullptr) {
      // "{...,"_attachments":{..}}" -> "{...}"; "{"_attachments":{..}}" -> "{}".
      const size_t keep = s_[at - 1] == ',' ? at - 1 : at;
      rest->reserve(keep + 1);
      rest->assign(s_.substr(0, keep));
      rest->push_back('}');
    }
    return true;
  }

 private:
  bool Peek(char c) const { return pos_ < s_.size() && s_[pos_] == c; }
  bool Lit(std::string_view lit) {
    if (s_.substr(pos_, lit.size()) != lit) return false;
    pos_ += lit.size();
    return true;
  }
  // A string without escapes (AppendQuoted writes other bytes as they are).
  bool String(std::string* into) {
    if (!Peek('"')) return false;
    const size_t start = pos_ + 1;
    const size_t end = s_.find('"', start);
    if (end == std::string_view::npos) return false;
    const std::string_view text = s_.substr(start, end - start);
    if (text.find('\\') != std::string_view::npos) return false;
    into->assign(text);
    pos_ = end + 1;
    return true;
  }
  bool Number(uint64_t* into) {
    const size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9' && pos_ - start < 19) {
      v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
    }
    if (pos_ == start || (s_[start] == '0' && pos_ - start > 1)) return false;
    *into = v;
    return true;
  }

  const std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

Status ParseStoredAttachments(std::string_view body, std::vector<AttachmentEntry>* out,
                              std::string* rest) {
  out->clear();
  if (!MayHaveAttachments(body)) {
    if (rest != nullptr) rest->assign(body);
    return Status::OK();
  }
  if (StoredMemberReader(body).Read(out, rest)) return Status::OK();
  out->clear();
  json::Document doc;
  Status s = json::Parse(body, &doc);
  if (!s.ok() || !doc.IsObject()) return Status::Corruption("stored body is not a JSON object");
  auto it = doc.FindMember("_attachments");
  if (it == doc.MemberEnd()) {
    if (rest != nullptr) rest->assign(body);
    return Status::OK();
  }
  if (!it->value.IsObject()) return Status::Corruption("stored _attachments is not an object");
  for (const auto& m : it->value.GetObject()) {
    AttachmentEntry& e = out->emplace_back();
    e.name.assign(json::View(m.name));
    const json::Value& v = m.value;
    if (!v.IsObject()) return Status::Corruption("stored attachment is not an object");
    auto str = [&v](const char* key, std::string* into) {
      auto f = v.FindMember(key);
      if (f != v.MemberEnd() && f->value.IsString()) into->assign(json::View(f->value));
    };
    auto num = [&v](const char* key, uint64_t* into) {
      auto f = v.FindMember(key);
      if (f != v.MemberEnd() && f->value.IsUint64()) *into = f->value.GetUint64();
    };
    str("content_type", &e.content_type);
    str("digest", &e.digest);
    num("revpos", &e.revpos);
    num("length", &e.length);
  }
  if (rest != nullptr) {
    doc.RemoveMember(it);
    *rest = json::Serialize(doc);
  }
  return Status::OK();
}

void AppendAttachmentJson(std::string* out, const AttachmentEntry& e, bool stub,
                          std::string_view encoding, uint64_t encoded_length) {
  out->append("{\"content_type\":");
  json::AppendQuoted(out, e.content_type);
  out->append(",\"revpos\":");
  out->append(std::to_string(e.revpos));
  out->append(",\"digest\":");
  json::AppendQuoted(out, e.digest);
  if (stub) {
    out->append(",\"length\":");
    out->append(std::to_string(e.length));
  }
  if (!encoding.empty()) {
    out->append(",\"encoding\":");
    json::AppendQuoted(out, encoding);
    out->append(",\"encoded_length\":");
    out->append(std::to_string(encoded_length));
  }
  if (stub) out->append(",\"stub\":true}");
}

void AppendAttachmentsMember(std::string* body, const std::vector<AttachmentEntry>& entries) {
  if (entries.empty()) return;
  // body is "{...}": reopen it.
  body->pop_back();
  if (body->size() > 1) body->push_back(',');
  body->append("\"_attachments\":{");
  bool first = true;
  for (const AttachmentEntry& e : entries) {
    if (!first) body->push_back(',');
    first = false;
    json::AppendQuoted(body, e.name);
    body->push_back(':');
    AppendAttachmentJson(body, e, /*stub=*/true, {}, 0);
  }
  body->append("}}");
}

}  // namespace settee
