#include "storage/view_query.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "util/erlang_text.h"

namespace settee::views {

namespace {

Status ParseError(std::string reason) { return Status(Status::Code::kQueryParseError, std::move(reason)); }

std::string Shown(const json::Value& v) { return v.IsString() ? std::string(json::View(v)) : json::Serialize(v); }

// A boolean option: a JSON boolean, or its text as the query string's.
Status Bool(const json::Value& v, bool* out) {
  if (v.IsBool()) {
    *out = v.GetBool();
    return Status::OK();
  }
  return ParseBooleanText(Shown(v), out);
}

// A count option, read as the query string's text (a JSON integer's text is
// its digits).
Status Uint(const json::Value& v, uint64_t* out) { return ParsePosIntText(Shown(v), out); }

}  // namespace

Status ParseBooleanText(std::string_view text, bool* out) {
  // parse_boolean lowers the value with string:to_lower; only ASCII letters
  // can make "true" or "false".
  auto lower_is = [&](std::string_view word) {
    if (text.size() != word.size()) return false;
    for (size_t i = 0; i < text.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(text[i])) != word[i]) return false;
    }
    return true;
  };
  if (lower_is("true")) {
    *out = true;
  } else if (lower_is("false")) {
    *out = false;
  } else {
    return ParseError("Invalid boolean parameter: " + erlang::ListText(text));
  }
  return Status::OK();
}

Status ParsePosIntText(std::string_view text, uint64_t* out) {
  bool negative = false;
  uint64_t value = 0;
  if (!erlang::ListToInteger(text, &negative, &value)) {
    return ParseError("Invalid value for integer: " + erlang::ListText(text));
  }
  // "-0" is 0, which parse_pos_int takes.
  if (negative && value != 0) return ParseError("Invalid value for positive integer: " + erlang::ListText(text));
  *out = value;
  return Status::OK();
}

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
  bool group_given = false;
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
      s = Uint(v, &q.skip);
    } else if (name == "limit") {
      s = Uint(v, &q.limit);
    } else if (name == "reduce") {
      bool b = false;
      s = Bool(v, &b);
      q.reduce = b;
    } else if (name == "group") {
      s = Bool(v, &q.group);
      group_given = true;
    } else if (name == "group_level") {
      if (!v.IsNull()) {
        uint64_t level = 0;
        s = Uint(v, &level);
        q.group_level = level;
      }
    } else if (name == "include_docs") {
      s = Bool(v, &q.include_docs);
    } else if (name == "conflicts") {
      s = Bool(v, &q.conflicts);
    } else if (name == "update_seq") {
      s = Bool(v, &q.update_seq);
    } else if (name == "sorted" || name == "attachments" || name == "att_encoding_info") {
      // Checked as CouchDB's parse_param checks them; a view's rows are
      // always sorted here, and its include_docs documents carry stubs.
      bool unused = false;
      s = Bool(v, &unused);
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
  // couch_mrview_util:determine_group_level: group_level wins over group,
  // and level 0 is no grouping at all (one row, key null), whatever group
  // says; group=false beside a positive level is refused.
  if (q.group_level.has_value()) {
    if (group_given && !q.group && *q.group_level > 0) {
      return ParseError("Can't specify group=false and group_level>0 at the same time");
    }
    if (*q.group_level == 0) {
      q.group_level.reset();
      q.group = false;
    }
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

namespace {

// The names that set one option (CouchDB's parse_param takes each spelling
// alike).
std::vector<std::string_view> Spellings(std::string_view name) {
  if (name == "startkey" || name == "start_key") return {"startkey", "start_key"};
  if (name == "endkey" || name == "end_key") return {"endkey", "end_key"};
  if (name == "startkey_docid" || name == "start_key_doc_id") return {"startkey_docid", "start_key_doc_id"};
  if (name == "endkey_docid" || name == "end_key_doc_id") return {"endkey_docid", "end_key_doc_id"};
  return {name};
}

void Erase(json::Document* out, std::string_view name) {
  if (auto it = out->FindMember(json::Value(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size()))));
      it != out->MemberEnd()) {
    out->EraseMember(it);
  }
}

}  // namespace

Status QueryStringToOptions(const std::vector<std::pair<std::string, std::string>>& params,
                            json::Document* out) {
  out->SetObject();
  auto& alloc = out->GetAllocator();
  for (const auto& [name, text] : params) {
    json::Value v;
    const bool is_key = name == "key";
    const bool is_bound = name == "startkey" || name == "start_key" || name == "endkey" || name == "end_key";
    if (is_key || is_bound || name == "keys") {
      json::Document parsed;
      if (!json::Parse(text, &parsed).ok()) {
        return Status(Status::Code::kBadRequest, "invalid_json");
      }
      v.CopyFrom(parsed, alloc);
    } else {
      v = json::StringValue(text, alloc);
    }
    // CouchDB's parse_params folds the parameters in order: the last value
    // of an option wins, `key` sets both ends of the range, and a later
    // start or end key replaces one of the ends `key` set.
    if (is_key) {
      for (std::string_view n : {"startkey", "start_key", "endkey", "end_key"}) Erase(out, n);
    } else if (auto key = out->FindMember("key"); is_bound && key != out->MemberEnd()) {
      json::Value start(key->value, alloc), end(key->value, alloc);
      out->EraseMember(key);
      out->AddMember("startkey", start, alloc);
      out->AddMember("endkey", end, alloc);
    }
    for (std::string_view n : Spellings(name)) Erase(out, n);
    out->AddMember(json::StringValue(name, alloc), v, alloc);
  }
  return Status::OK();
}

}  // namespace settee::views
