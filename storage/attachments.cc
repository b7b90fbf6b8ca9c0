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

Status ParseStoredAttachments(std::string_view body, std::vector<AttachmentEntry>* out,
                              std::string* rest) {
  out->clear();
  if (!MayHaveAttachments(body)) {
    if (rest != nullptr) rest->assign(body);
    return Status::OK();
  }
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
