#include "runtime/endpoint_helpers.h"

#include "runtime/http_message.h"
#include "util/couch_json.h"
#include "util/json.h"

namespace settee {

std::string AbsoluteUrl(const RequestContext& ctx, std::string_view path) {
  const std::string* host = ctx.req.Header("host");
  std::string out = "http://";
  out += host != nullptr ? *host : std::string("localhost");
  out += path;
  return out;
}

std::string EncodeDocIdForPath(std::string_view docid) {
  for (std::string_view prefix : {std::string_view("_design/"), std::string_view("_local/")}) {
    if (docid.substr(0, prefix.size()) == prefix) {
      return std::string(prefix) + http::PercentEncode(docid.substr(prefix.size()));
    }
  }
  return http::PercentEncode(docid);
}

namespace {

// Where a JSON key sorts relative to the doc-id strings of _all_docs under
// CouchDB collation: null, booleans and numbers sort before every string;
// arrays and objects after.
enum class KeyClass { kBelowStrings, kString, kAboveStrings };

KeyClass Classify(const json::Value& v) {
  if (v.IsString()) return KeyClass::kString;
  if (v.IsArray() || v.IsObject()) return KeyClass::kAboveStrings;
  return KeyClass::kBelowStrings;
}

}  // namespace

Status ParseAllDocsOptions(const RequestContext& ctx, const json::Value* keys_body,
                           AllDocsOptions* out, bool* want_update_seq) {
  Status s;
  s = ctx.BoolParam("descending", &out->descending);
  if (s.ok()) s = ctx.BoolParam("inclusive_end", &out->inclusive_end);
  if (s.ok()) s = ctx.BoolParam("include_docs", &out->include_docs);
  if (s.ok()) s = ctx.BoolParam("conflicts", &out->conflicts);
  if (s.ok()) s = ctx.BoolParam("update_seq", want_update_seq);
  if (s.ok()) s = ctx.UIntParam("skip", &out->skip);
  if (s.ok()) s = ctx.UIntParam("limit", &out->limit);
  if (!s.ok()) return s;

  bool empty_range = false;
  bool has_range = false;
  auto bound = [&](const char* a, const char* b, bool is_start) -> Status {
    json::Document d;
    bool present = false;
    Status st = ctx.JsonParam(a, &d, &present);
    if (st.ok() && !present) st = ctx.JsonParam(b, &d, &present);
    if (!st.ok() || !present) return st;
    has_range = true;
    KeyClass c = Classify(d);
    if (c == KeyClass::kString) {
      (is_start ? out->start_key : out->end_key) = std::string(json::View(d));
      return Status::OK();
    }
    // The upper end of the scan: start when descending, end otherwise.
    bool is_upper = is_start == out->descending;
    if ((is_upper && c == KeyClass::kBelowStrings) || (!is_upper && c == KeyClass::kAboveStrings)) {
      empty_range = true;
    }
    return Status::OK();
  };
  s = bound("startkey", "start_key", true);
  if (s.ok()) s = bound("endkey", "end_key", false);
  if (!s.ok()) return s;

  json::Document key;
  bool has_key = false;
  s = ctx.JsonParam("key", &key, &has_key);
  if (!s.ok()) return s;

  json::Document keys_query;
  bool has_keys_query = false;
  s = ctx.JsonParam("keys", &keys_query, &has_keys_query);
  if (!s.ok()) return s;
  const json::Value* keys = keys_body != nullptr ? keys_body : (has_keys_query ? &keys_query : nullptr);

  if (keys != nullptr) {
    if (has_key || has_range) {
      return Status(Status::Code::kQueryParseError,
                    "`keys` is incompatible with `key`, `start_key` and `end_key`");
    }
    if (!keys->IsArray()) return Status(Status::Code::kQueryParseError, "`keys` member must be an array.");
    std::vector<std::string> ids;
    for (const auto& k : keys->GetArray()) {
      if (k.IsString()) {
        ids.emplace_back(json::View(k));
      } else {
        // Not a doc id: serialized, it can never match and answers not_found.
        ids.push_back(json::Serialize(k));
      }
    }
    out->keys = std::move(ids);
    return Status::OK();
  }
  if (has_key) {
    if (has_range) {
      return Status(Status::Code::kQueryParseError,
                    "`key` is incompatible with `start_key` and `end_key`");
    }
    if (!key.IsString()) {
      out->limit = 0;
      return Status::OK();
    }
    out->start_key = out->end_key = std::string(json::View(key));
    out->inclusive_end = true;
    return Status::OK();
  }
  if (out->start_key && out->end_key) {
    bool reversed = out->descending ? *out->start_key < *out->end_key
                                    : *out->start_key > *out->end_key;
    if (reversed) {
      return Status(Status::Code::kQueryParseError,
                    out->descending
                        ? "No rows can match your key range, reverse your start_key and end_key "
                          "or set descending=false"
                        : "No rows can match your key range, reverse your start_key and end_key "
                          "or set descending=true");
    }
  }
  if (empty_range) out->limit = 0;
  return Status::OK();
}

std::string AllDocsJson(const AllDocsResult& result, bool include_update_seq) {
  std::string out;
  out.reserve(64 + result.rows.size() * 96);
  out += R"({"total_rows":)" + std::to_string(result.total_rows) +
         R"(,"offset":)" + std::to_string(result.offset);
  if (include_update_seq) out += R"(,"update_seq":)" + std::to_string(result.update_seq);
  out += R"(,"rows":[)";
  bool first = true;
  for (const AllDocsRow& row : result.rows) {
    out += first ? "\r\n" : ",\r\n";
    first = false;
    couch_json::AppendAllDocsRow(&out, row);
  }
  out += "\r\n]}";
  return out;
}

}  // namespace settee
