#include "util/couch_json.h"

#include "util/json.h"

namespace settee::couch_json {

void AppendUpdateResult(std::string* out, const DocUpdateResult& r, bool with_rev_on_error) {
  if (r.status.ok()) {
    *out += R"({"ok":true,"id":)";
    json::AppendQuoted(out, r.id);
    *out += R"(,"rev":)";
    json::AppendQuoted(out, r.rev);
    *out += "}";
    return;
  }
  *out += R"({"id":)";
  json::AppendQuoted(out, r.id);
  if (with_rev_on_error && !r.rev.empty()) {
    *out += R"(,"rev":)";
    json::AppendQuoted(out, r.rev);
  }
  *out += R"(,"error":)";
  json::AppendQuoted(out, r.status.ErrorName());
  *out += R"(,"reason":)";
  json::AppendQuoted(out, r.status.reason());
  *out += "}";
}

void AppendAllDocsRow(std::string* out, const AllDocsRow& row) {
  if (!row.error.ok()) {
    *out += R"({"key":)";
    // Keys that were not strings were passed serialized; emit them raw.
    json::Document probe;
    const std::string& id = row.id;
    if (!id.empty() &&
        (id[0] == '[' || id[0] == '{' || id[0] == '-' || (id[0] >= '0' && id[0] <= '9') ||
         id == "null" || id == "true" || id == "false") &&
        json::Parse(id, &probe).ok() && !probe.IsString()) {
      *out += id;
    } else {
      json::AppendQuoted(out, id);
    }
    *out += R"(,"error":)";
    json::AppendQuoted(out, row.error.ErrorName());
    *out += "}";
    return;
  }
  *out += R"({"id":)";
  json::AppendQuoted(out, row.id);
  *out += R"(,"key":)";
  json::AppendQuoted(out, row.id);
  *out += R"(,"value":{"rev":)";
  json::AppendQuoted(out, row.rev);
  if (row.deleted) *out += R"(,"deleted":true)";
  *out += "}";
  if (!row.doc.empty()) {
    *out += R"(,"doc":)";
    *out += row.doc;
  }
  *out += "}";
}

void AppendChangeRow(std::string* out, const ChangeRow& row) {
  *out += R"({"seq":)";
  *out += std::to_string(row.seq);
  *out += R"(,"id":)";
  json::AppendQuoted(out, row.id);
  *out += R"(,"changes":[)";
  for (size_t i = 0; i < row.revs.size(); ++i) {
    if (i > 0) *out += ",";
    *out += R"({"rev":)";
    json::AppendQuoted(out, row.revs[i]);
    *out += "}";
  }
  *out += "]";
  if (row.deleted) *out += R"(,"deleted":true)";
  if (!row.doc.empty()) {
    *out += R"(,"doc":)";
    *out += row.doc;
  }
  *out += "}";
}

}  // namespace settee::couch_json
