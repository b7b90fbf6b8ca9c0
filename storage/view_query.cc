#include "storage/view_query.h"

#include <cmath>
#include <string_view>

namespace settee::views {

namespace {

Status ParseError(std::string reason) { return Status(Status::Code::kQueryParseError, std::move(reason)); }

std::string Shown(const json::Value& v) { return v.IsString() ? std::string(json::View(v)) : json::Serialize(v); }

Status Bool(const json::Value& v, bool* out) {
  if (v.IsBool()) {
    *out = v.GetBool();
    return Status::OK();
  }
  if (v.IsString() && (json::View(v) == "true" || json::View(v) == "false")) {
    *out = json::View(v) == "true";
    return Status::OK();
  }
  return ParseError("Invalid value for boolean: \"" + Shown(v) + "\"");
}

Status Uint(const json::Value& v, std::string_view name, uint64_t* out) {
  double d = -1;
  if (v.IsNumber()) {
    d = v.GetDouble();
  } else if (v.IsString()) {
    std::string s(json::View(v));
    char* end = nullptr;
    d = s.empty() ? -1 : std::strtod(s.c_str(), &end);
    if (end == nullptr || *end != '\0') d = -1;
  }
  if (!(d >= 0) || d != std::floor(d)) {
    if (name == "skip" || name == "limit" || name == "group_level") {
      if (v.IsNumber() || v.IsString()) {
        // CouchDB: a negative count is its own message.
        if (d < 0 && d == std::floor(d) && name != "group_level") {
          return ParseError("Invalid value for positive integer: \"" + Shown(v) + "\"");
        }
      }
    }
    return ParseError("Invalid value for integer: \"" + Shown(v) + "\"");
  }
  *out = d >= 1.8e19 ? std::numeric_limits<uint64_t>::max() : static_cast<uint64_t>(d);
  return Status::OK();
}

}  // namespace

Status ParseFreshness(std::string_view name, std::string_view value, UpdateMode* update) {
  // couch_mrview_http:parse_param; its reasons name no value.
  if (name == "stale") {
    if (value == "ok") {
      *update = UpdateMode::kFalse;
    } else if (value == "update_after") {
      *update = UpdateMode::kLazy;
    } else {
      return ParseError("Invalid value for `stale`.");
    }
  } else if (name == "stable") {
    // Only checked: with no replicas to choose among, settee has nothing
    // for `stable` to change.
    if (value != "true" && value != "false") return ParseError("Invalid value for `stable`.");
  } else if (name == "update") {
    if (value == "true") {
      *update = UpdateMode::kTrue;
    } else if (value == "false") {
      *update = UpdateMode::kFalse;
    } else if (value == "lazy") {
      *update = UpdateMode::kLazy;
    } else {
      return ParseError("Invalid value for `update`.");
    }
  }
  return Status::OK();
}

Result<ViewQuery> ParseViewQuery(const json::Value& options) {
  ViewQuery q;
  if (!options.IsObject()) return ParseError("query options must be an object");
  json::Document& values = *q.values;
  values.SetObject();
  auto& alloc = values.GetAllocator();
  auto keep = [&](const char* name, const json::Value& v) {
    values.AddMember(json::Value(name, alloc), json::Value(v, alloc), alloc);
  };
  // RapidJSON may move members when the object grows: collect first.
  std::vector<std::pair<std::string, const json::Value*>> json_opts;
  for (auto& m : options.GetObject()) {
    std::string_view name = json::View(m.name);
    const json::Value& v = m.value;
    Status s;
    if (name == "key" || name == "keys" || name == "startkey" || name == "start_key" ||
        name == "endkey" || name == "end_key") {
      json_opts.emplace_back(std::string(name), &v);
    } else if (name == "startkey_docid" || name == "start_key_doc_id") {
      if (!v.IsString()) return ParseError("Invalid value for string: \"" + Shown(v) + "\"");
      q.start_docid = std::string(json::View(v));
    } else if (name == "endkey_docid" || name == "end_key_doc_id") {
      if (!v.IsString()) return ParseError("Invalid value for string: \"" + Shown(v) + "\"");
      q.end_docid = std::string(json::View(v));
    } else if (name == "inclusive_end") {
      s = Bool(v, &q.inclusive_end);
    } else if (name == "descending") {
      s = Bool(v, &q.descending);
    } else if (name == "skip") {
      s = Uint(v, name, &q.skip);
    } else if (name == "limit") {
      s = Uint(v, name, &q.limit);
    } else if (name == "reduce") {
      bool b = false;
      s = Bool(v, &b);
      q.reduce = b;
    } else if (name == "group") {
      s = Bool(v, &q.group);
    } else if (name == "group_level") {
      if (!v.IsNull()) {
        uint64_t level = 0;
        s = Uint(v, name, &level);
        q.group_level = level;
      }
    } else if (name == "include_docs") {
      s = Bool(v, &q.include_docs);
    } else if (name == "conflicts") {
      s = Bool(v, &q.conflicts);
    } else if (name == "update_seq") {
      s = Bool(v, &q.update_seq);
    } else if (name == "stale" || name == "stable" || name == "update") {
      // A JSON boolean is taken as its text here, for callers that pass
      // options as JSON (PouchDB's query()); a view's POST body is checked
      // for strings before it gets here.
      std::string_view sv = v.IsString() ? json::View(v) : std::string_view();
      if (v.IsBool()) sv = v.GetBool() ? "true" : "false";
      s = ParseFreshness(name, sv, &q.update);
    }
    if (!s.ok()) return s;
  }
  for (auto& [name, v] : json_opts) keep(name.c_str(), *v);
  // Pointers into `values` once nothing more is added to it.
  for (auto& m : values.GetObject()) {
    std::string_view name = json::View(m.name);
    if (name == "key") {
      q.key = &m.value;
    } else if (name == "keys") {
      q.keys = &m.value;
    } else if (name == "startkey" || name == "start_key") {
      q.start_key = &m.value;
    } else {
      q.end_key = &m.value;
    }
  }
  // Pointers into `values` are stable now that no member is added.
  if (q.keys != nullptr) {
    if (!q.keys->IsArray()) return ParseError("`keys` must be an array.");
    if (q.key != nullptr || q.start_key != nullptr || q.end_key != nullptr) {
      return ParseError("`keys` is incompatible with `key`, `start_key` and `end_key`");
    }
  }
  return q;
}

Status QueryStringToOptions(const std::vector<std::pair<std::string, std::string>>& params,
                            json::Document* out) {
  out->SetObject();
  auto& alloc = out->GetAllocator();
  for (const auto& [name, text] : params) {
    json::Value v;
    if (name == "key" || name == "keys" || name == "startkey" || name == "start_key" ||
        name == "endkey" || name == "end_key") {
      json::Document parsed;
      if (!json::Parse(text, &parsed).ok()) {
        return Status(Status::Code::kBadRequest, "invalid_json");
      }
      v.CopyFrom(parsed, alloc);
    } else {
      v = json::StringValue(text, alloc);
    }
    if (auto it = out->FindMember(name.c_str()); it != out->MemberEnd()) {
      it->value = v;  // the last one wins
    } else {
      out->AddMember(json::StringValue(name, alloc), v, alloc);
    }
  }
  return Status::OK();
}

}  // namespace settee::views
