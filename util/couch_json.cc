#include "util/couch_json.h"

#include "util/json.h"

namespace settee::couch_json {

void OpenDocJson(std::string* out, std::string_view docid, std::string_view rev, bool deleted,
                 std::string_view body) {
  out->reserve(out->size() + body.size() + docid.size() + rev.size() + 32);
  out->append("{\"_id\":");
  json::AppendQuoted(out, docid);
  out->append(",\"_rev\":");
  json::AppendQuoted(out, rev);
  if (deleted) out->append(",\"_deleted\":true");
  if (body.size() > 2) {
    out->push_back(',');
    out->append(body.substr(1, body.size() - 2));
  }
}

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
    // A key that was not a string is given back as the JSON it was; every
    // other key is a string, whatever its text looks like.
    if (!row.key_json.empty()) *out += row.key_json;
    else json::AppendQuoted(out, row.id);
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

void AppendChangeRow(std::string* out, const ChangeRow& row, bool with_doc) {
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
  if (with_doc && !row.doc.empty()) {
    *out += R"(,"doc":)";
    *out += row.doc;
  }
  *out += "}";
}

void AppendOpenRev(std::string* out, const OpenRevResult& r) {
  if (r.found) {
    *out += R"({"ok":)";
    *out += r.doc;
  } else {
    *out += R"({"missing":)";
    json::AppendQuoted(out, r.rev);
  }
  *out += "}";
}

void AppendBulkGetResult(std::string* out, const BulkGetResult& r) {
  *out += R"({"id":)";
  json::AppendQuoted(out, r.id);
  *out += R"(,"docs":[)";
  for (size_t j = 0; j < r.docs.size(); ++j) {
    if (j > 0) *out += ",";
    const BulkGetItem& item = r.docs[j];
    if (item.status.ok()) {
      *out += R"({"ok":)";
      *out += item.doc;
      *out += "}";
      continue;
    }
    *out += R"({"error":{"id":)";
    json::AppendQuoted(out, r.id);
    // CouchDB names an item asked without a rev "undefined" (chttpd_db's
    // bulk_get_rev_error), never an empty string.
    *out += R"(,"rev":)";
    json::AppendQuoted(out, item.rev.empty() ? std::string_view("undefined") : item.rev);
    *out += R"(,"error":)";
    json::AppendQuoted(out, item.status.ErrorName());
    *out += R"(,"reason":)";
    json::AppendQuoted(out, item.status.reason());
    *out += "}}";
  }
  *out += "]}";
}

void AppendRevsDiff(std::string* out, const std::vector<RevsDiffResult>& results) {
  *out += "{";
  bool first = true;
  for (const RevsDiffResult& r : results) {
    if (r.missing.empty()) continue;
    if (!first) *out += ",";
    first = false;
    json::AppendQuoted(out, r.id);
    *out += R"(:{"missing":)";
    json::AppendStringArray(out, r.missing);
    if (!r.possible_ancestors.empty()) {
      *out += R"(,"possible_ancestors":)";
      json::AppendStringArray(out, r.possible_ancestors);
    }
    *out += "}";
  }
  *out += "}";
}

}  // namespace settee::couch_json
