#include "storage/document.h"

#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

enum class SpecialMember { kId, kRev, kDeleted, kRevisions, kIgnored, kKept, kAttachments, kBad };

SpecialMember Classify(std::string_view name) {
  if (name == "_id") return SpecialMember::kId;
  if (name == "_rev") return SpecialMember::kRev;
  if (name == "_deleted") return SpecialMember::kDeleted;
  if (name == "_revisions") return SpecialMember::kRevisions;
  if (name == "_attachments") return SpecialMember::kAttachments;
  if (name == "_revs_info" || name == "_conflicts" || name == "_deleted_conflicts" ||
      name == "_local_seq") {
    return SpecialMember::kIgnored;
  }
  if (name == "_access" || StartsWith(name, "_replication_")) return SpecialMember::kKept;
  return SpecialMember::kBad;
}

Status ParseRevisions(const json::Value& v, Revisions* out) {
  if (!v.IsObject()) return Status::BadRequest("_revisions must be an object");
  auto start = v.FindMember("start");
  auto ids = v.FindMember("ids");
  if (start == v.MemberEnd() || !start->value.IsUint64() || start->value.GetUint64() < 1) {
    return Status::BadRequest("_revisions.start must be a positive integer");
  }
  if (ids == v.MemberEnd() || !ids->value.IsArray() || ids->value.Empty()) {
    return Status::BadRequest("_revisions.ids must be a non-empty array");
  }
  out->start = start->value.GetUint64();
  if (out->start < ids->value.Size()) {
    return Status::BadRequest("_revisions.start is smaller than the number of ids");
  }
  out->ids.clear();
  for (auto& id : ids->value.GetArray()) {
    if (!id.IsString() || id.GetStringLength() == 0) {
      return Status::BadRequest("_revisions.ids must be non-empty strings");
    }
    out->ids.emplace_back(json::View(id));
  }
  return Status::OK();
}

}  // namespace

Status ValidateDocId(std::string_view id) {
  if (id.empty()) return {Status::Code::kIllegalDocId, "Document id must not be empty"};
  if (id[0] != '_') return Status::OK();
  if (StartsWith(id, kDesignPrefix) && id.size() > kDesignPrefix.size()) return Status::OK();
  if (StartsWith(id, kLocalPrefix) && id.size() > kLocalPrefix.size()) return Status::OK();
  return {Status::Code::kIllegalDocId, "Only reserved document ids may start with underscore."};
}

Status ParseIncomingDocValue(const json::Value& doc, std::string_view id_override,
                             IncomingDoc* out) {
  if (!doc.IsObject()) return Status::BadRequest("Document must be a JSON object");
  *out = IncomingDoc();
  std::string& body = out->body;
  body.reserve(256);
  json::StringOutput body_out(&body);
  json::Writer body_writer(body_out);
  body_writer.StartObject();
  std::optional<std::string_view> rev_text;
  for (auto& m : doc.GetObject()) {
    std::string_view name = json::View(m.name);
    if (!name.empty() && name[0] == '_') {
      switch (Classify(name)) {
        case SpecialMember::kId:
          if (!m.value.IsString()) return Status::BadRequest("Document id must be a string");
          out->id.assign(json::View(m.value));
          continue;
        case SpecialMember::kRev:
          if (!m.value.IsString()) return Status::BadRequest("Invalid rev format");
          rev_text = json::View(m.value);
          continue;
        case SpecialMember::kDeleted:
          // CouchDB treats only the literal true as a deletion.
          out->deleted = m.value.IsBool() && m.value.GetBool();
          continue;
        case SpecialMember::kRevisions: {
          Revisions r;
          Status s = ParseRevisions(m.value, &r);
          if (!s.ok()) return s;
          out->revisions = std::move(r);
          continue;
        }
        case SpecialMember::kIgnored:
          continue;
        case SpecialMember::kAttachments:
          return Status::BadRequest("attachments are not supported by this version of settee");
        case SpecialMember::kKept:
          break;
        case SpecialMember::kBad:
          return {Status::Code::kDocValidation,
                  "Bad special document member: " + std::string(name)};
      }
    }
    body_writer.Key(m.name.GetString(), m.name.GetStringLength());
    m.value.Accept(body_writer);
  }
  body_writer.EndObject();

  if (!id_override.empty()) out->id.assign(id_override);
  if (!out->id.empty() || doc.HasMember("_id")) {
    Status s = ValidateDocId(out->id);
    if (!s.ok()) return s;
  }
  if (rev_text) out->rev_text.assign(*rev_text);
  // _local/ documents carry "0-N" revisions, checked by the writer.
  if (rev_text && out->id.compare(0, kLocalPrefix.size(), kLocalPrefix) != 0) {
    RevId rev;
    if (!RevId::Parse(*rev_text, &rev)) return Status::BadRequest("Invalid rev format");
    out->rev = std::move(rev);
  }
  return Status::OK();
}

Status ParseIncomingDoc(std::string_view text, std::string_view id_override, size_t max_size,
                        IncomingDoc* out) {
  if (text.size() > max_size) {
    return {Status::Code::kDocumentTooLarge, "Document exceeds max_document_size"};
  }
  json::ScratchDoc& doc = json::ScratchDocument();
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  return ParseIncomingDocValue(doc, id_override, out);
}

std::string ComputeRevHash(std::string_view parent_rev, bool deleted, std::string_view body) {
  // One hasher per thread: creating an OpenSSL context per revision costs
  // more than hashing a small document.
  thread_local Md5 md5;
  md5.Reset();
  md5.Update(parent_rev);
  md5.Update(deleted ? "\n1\n" : "\n0\n");
  md5.Update(body);
  return md5.FinishHex();
}

}  // namespace settee
