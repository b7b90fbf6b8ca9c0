#include "runtime/endpoint_helpers.h"

#include <algorithm>
#include <iterator>

#include "replication/replicator_doc_check.h"
#include "runtime/http_message.h"
#include "runtime/users_db.h"
#include "storage/document.h"
#include "storage/view_query.h"
#include "util/couch_json.h"
#include "util/erlang_text.h"
#include "util/json.h"

namespace settee {

Status CheckReplicatorWrite(const RequestContext& ctx, Database& db, std::string_view docid, const json::Value& doc) {
  json::Document old;
  if (replication::ReplicatorCheckNeedsOld(doc)) {
    bool stored = false;
    Status s = ReadEditedRevision(db, docid, doc, /*new_edits=*/true, &old, &stored);
    if (!s.ok()) return s;
  }
  return replication::CheckReplicatorDoc(docid, doc, ctx.user, old.IsObject() ? &old : nullptr);
}

Status PrepareReplicatorWrite(RequestContext& ctx, Database& db, std::string_view docid, json::Document* doc,
                              std::string* text) {
  bool changed = false;
  Status s = replication::StampReplicatorOwner(docid, doc, doc->GetAllocator(), ctx.user,
                                               ctx.CheckAccess(db, true).ok(), &changed);
  if (!s.ok()) return s;
  if (changed) *text = json::Serialize(*doc);
  return CheckReplicatorWrite(ctx, db, docid, *doc);
}

ReplicatorReadFilter::ReplicatorReadFilter(RequestContext& ctx, Database& db) : db_(db), user_(ctx.user) {
  active_ = db.name() == replication::kReplicatorDbName && !ctx.CheckAccess(db, true).ok();
}

namespace {

// The parent of revision `rev` of `docid` ("" for a first revision or one
// whose history is not kept), from `doc`'s _revisions or else the stored
// revision's.
std::string ParentRev(Database& db, std::string_view docid, const json::Value& doc, std::string_view rev) {
  json::Document stored;
  const json::Value* revisions = nullptr;
  if (auto it = doc.FindMember("_revisions"); it != doc.MemberEnd()) {
    revisions = &it->value;
  } else {
    GetOptions opts;
    opts.rev = std::string(rev);
    opts.revs = true;
    auto text = db.Get(docid, opts);
    if (text.ok() && json::Parse(*text, &stored).ok() && stored.IsObject()) {
      if (auto r = stored.FindMember("_revisions"); r != stored.MemberEnd()) revisions = &r->value;
    }
  }
  if (revisions == nullptr || !revisions->IsObject()) return {};
  auto start = revisions->FindMember("start");
  auto ids = revisions->FindMember("ids");
  if (start == revisions->MemberEnd() || ids == revisions->MemberEnd() || !start->value.IsUint64() ||
      !ids->value.IsArray() || ids->value.Size() < 2 || !ids->value[1].IsString()) {
    return {};
  }
  return std::to_string(start->value.GetUint64() - 1) + "-" + std::string(json::View(ids->value[1]));
}

}  // namespace

void ReplicatorReadFilter::Apply(std::string_view docid, std::string* doc_json) const {
  if (!active_) return;
  json::Document doc;
  if (!json::Parse(*doc_json, &doc).ok() || !doc.IsObject()) return;
  if (!replication::ReplicatorReadIsStripped(docid, doc, user_, false)) return;
  if (!replication::StripReplicatorCredentials(&doc, doc.GetAllocator())) return;
  auto rev = doc.FindMember("_rev");
  if (rev != doc.MemberEnd() && rev->value.IsString()) {
    std::string_view text = json::View(rev->value);
    const size_t dash = text.find('-');
    if (dash != std::string_view::npos) {
      // The revision id a write of the stripped body on the parent would
      // get, as CouchDB's new_revid over the stripped #doc.
      json::Document body;
      body.SetObject();
      bool deleted = false;
      for (auto& m : doc.GetObject()) {
        std::string_view name = json::View(m.name);
        if (name == "_deleted") deleted = m.value.IsBool() && m.value.GetBool();
        if (name.starts_with("_")) continue;
        body.AddMember(json::Value(m.name, body.GetAllocator()), json::Value(m.value, body.GetAllocator()),
                       body.GetAllocator());
      }
      std::string parent = ParentRev(db_, docid, doc, text);
      std::string fresh = std::string(text.substr(0, dash + 1)) + ComputeRevHash(parent, deleted, json::Serialize(body));
      rev->value = json::StringValue(fresh, doc.GetAllocator());
      // _revisions, when asked for, names the new id at its head.
      auto revisions = doc.FindMember("_revisions");
      if (revisions != doc.MemberEnd() && revisions->value.IsObject()) {
        auto ids = revisions->value.FindMember("ids");
        if (ids != revisions->value.MemberEnd() && ids->value.IsArray() && !ids->value.Empty()) {
          ids->value[0] = json::StringValue(fresh.substr(dash + 1), doc.GetAllocator());
        }
      }
    }
  }
  *doc_json = json::Serialize(doc);
}

Status UsersDocReadFields(RequestContext& ctx, Database& db, std::string_view docid,
                          std::optional<std::vector<std::string>>* public_fields) {
  public_fields->reset();
  if (db.name() != kUsersDbName || ctx.CheckAccess(db, true).ok()) return Status::OK();
  Status s = CheckUserDocRead(ctx.user, docid);
  if (!s.IsNotFound()) return s;
  // Read live: an admin sets the list through _config at any time.
  std::vector<std::string> fields =
      ParsePublicFields(ctx.server.config().Get("chttpd_auth", "public_fields").value_or(""));
  if (fields.empty()) return s;
  *public_fields = std::move(fields);
  return Status::OK();
}

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
  // Every option is parsed in the order given, as CouchDB's
  // couch_mrview_http:parse_params folds over the query string, so a
  // repeated one ends as its last value says. _all_docs reads no index and
  // groups nothing, but CouchDB parses reduce, group, group_level, sorted and
  // stale/stable/update for it as for a view and refuses a value it does not
  // know.
  Status s;
  for (const auto& [name, value] : ctx.req.params) {
    bool* flag = name == "descending"          ? &out->descending
                 : name == "inclusive_end"     ? &out->inclusive_end
                 : name == "include_docs"      ? &out->include_docs
                 : name == "conflicts"         ? &out->conflicts
                 : name == "attachments"       ? &out->attachments
                 : name == "att_encoding_info" ? &out->att_encoding_info
                 : name == "update_seq"        ? want_update_seq
                                               : nullptr;
    uint64_t* count = name == "skip" ? &out->skip : name == "limit" ? &out->limit : nullptr;
    bool unused_flag = false;
    uint64_t unused_count = 0;
    views::UpdateMode unused_update = views::UpdateMode::kTrue;
    if (name == "reduce" || name == "group" || name == "sorted") flag = &unused_flag;
    if (name == "group_level") count = &unused_count;
    if (name == "attachments" || name == "att_encoding_info") {
      // parse_param adds these to the document options on true and leaves
      // the options as they are on false: once asked for, they stay.
      bool on = false;
      s = views::ParseBooleanText(value, &on);
      if (on) *flag = true;
    } else if (flag != nullptr) {
      s = views::ParseBooleanText(value, flag);
    } else if (count != nullptr) {
      s = views::ParsePosIntText(value, count);
    } else {
      s = views::ParseFreshness(name, value, &unused_update);
    }
    if (!s.ok()) return s;
  }

  // The key parameters are folded in the order given, as CouchDB's
  // couch_mrview_http:parse_params does: `key` sets both ends, a later
  // `startkey`/`endkey` replaces one of them, a later `key` both again.
  json::Document start, end, keys_query;
  bool has_start = false, has_end = false, has_keys_query = false;
  for (const auto& [name, value] : ctx.req.params) {
    const bool is_key = name == "key";
    const bool is_start = is_key || name == "startkey" || name == "start_key";
    const bool is_end = is_key || name == "endkey" || name == "end_key";
    const bool is_keys = name == "keys";
    if (!is_start && !is_end && !is_keys) continue;
    json::Document parsed;
    if (!json::Parse(value, &parsed).ok()) {
      return Status(Status::Code::kQueryParseError, "Invalid JSON in parameter \"" + name + "\"");
    }
    if (is_keys) {
      keys_query.Swap(parsed);
      has_keys_query = true;
      continue;
    }
    if (is_start && is_end) {
      end.CopyFrom(parsed, end.GetAllocator());
      start.Swap(parsed);
      has_start = has_end = true;
    } else if (is_start) {
      start.Swap(parsed);
      has_start = true;
    } else {
      end.Swap(parsed);
      has_end = true;
    }
  }

  // The query string is read after the body (couch_mrview_http's
  // parse_body_and_query), so its `keys` wins.
  const json::Value* keys = has_keys_query ? &keys_query : keys_body;
  if (keys != nullptr) {
    if (!keys->IsArray()) return Status(Status::Code::kQueryParseError, "`keys` member must be an array.");
    // CouchDB's validate_args: an empty `keys` list goes with anything.
    if (!keys->Empty() && (has_start || has_end)) {
      return Status(Status::Code::kQueryParseError,
                    "`keys` is incompatible with `key`, `start_key` and `end_key`");
    }
    std::vector<AllDocsKey> list;
    list.reserve(keys->Size());
    for (const auto& k : keys->GetArray()) {
      if (k.IsString()) list.emplace_back(std::string(json::View(k)));
      else list.push_back(AllDocsKey::NotAString(json::Serialize(k)));
    }
    out->keys = std::move(list);
    return Status::OK();
  }

  // Doc ids are strings; a bound of another type sorts wholly below them
  // (null, booleans, numbers) or above them (arrays, objects) in CouchDB
  // collation, so it leaves its end of the range open, or the range empty.
  bool empty_range = false;
  auto bound = [&](const json::Value& v, bool is_start) {
    KeyClass c = Classify(v);
    if (c == KeyClass::kString) {
      (is_start ? out->start_key : out->end_key) = std::string(json::View(v));
      return;
    }
    // The upper end of the scan: start when descending, end otherwise.
    bool is_upper = is_start == out->descending;
    if ((is_upper && c == KeyClass::kBelowStrings) || (!is_upper && c == KeyClass::kAboveStrings)) {
      empty_range = true;
    }
  };
  if (has_start) bound(start, true);
  if (has_end) bound(end, false);
  if (empty_range) out->limit = 0;
  return Status::OK();
}

namespace {

bool IsKeyParam(std::string_view name) {
  return name == "key" || name == "keys" || name == "startkey" || name == "start_key" || name == "endkey" ||
         name == "end_key";
}

// A JSON array of character codes (integers 0-255) decodes to what Erlang
// calls a string, a list of them, and CouchDB's parsers read it as they
// read a query-string value. *text gets its bytes; [] is the empty string.
bool IsErlangString(const json::Value& v, std::string* text) {
  if (!v.IsArray()) return false;
  std::string bytes;
  for (const auto& c : v.GetArray()) {
    if (!c.IsUint64() || c.GetUint64() > 255) return false;
    bytes.push_back(static_cast<char>(c.GetUint64()));
  }
  *text = std::move(bytes);
  return true;
}

// Erlang's ~p of a JSON value as CouchDB's ?JSON_DECODE (jiffy with
// dedupe_keys) hands it to the code that shows it in a reason: a string is
// a binary, <<"...">>; an object {[{Key,Value},...]}, holding only the last
// of a repeated key, in that one's place; an array a list, written as a
// string when it is one; null, true and false atoms; a float as
// erlang::FloatText writes it. On one line: ~p breaks a term wider than
// what is left of its 80 columns, and this does not.
std::string ErlangShown(const json::Value& v) {
  std::string text;
  if (v.IsString()) return erlang::BinaryText(json::View(v));
  if (IsErlangString(v, &text)) return erlang::ListText(text);
  if (v.IsDouble()) return erlang::FloatText(v.GetDouble());
  if (v.IsArray()) {
    std::string out = "[";
    for (const auto& e : v.GetArray()) {
      if (out.size() > 1) out += ",";
      out += ErlangShown(e);
    }
    return out + "]";
  }
  if (v.IsObject()) {
    std::string out = "{[";
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      const bool repeated_later = std::any_of(m + 1, v.MemberEnd(), [&](const auto& later) {
        return json::View(later.name) == json::View(m->name);
      });
      if (repeated_later) continue;
      if (out.size() > 2) out += ",";
      out += "{" + erlang::BinaryText(json::View(m->name)) + "," + ErlangShown(m->value) + "}";
    }
    return out + "]}";
  }
  return json::Serialize(v);  // null, true, false and integers read alike
}

// Appends the bytes list_to_binary makes of `v` when it is an iolist
// (character codes, binaries and lists of them); false when it is not.
bool AppendIoList(const json::Value& v, std::string* out) {
  if (v.IsString()) {
    out->append(json::View(v));
    return true;
  }
  if (v.IsUint64() && v.GetUint64() <= 255) {
    out->push_back(static_cast<char>(v.GetUint64()));
    return true;
  }
  if (!v.IsArray()) return false;
  for (const auto& e : v.GetArray()) {
    if (!AppendIoList(e, out)) return false;
  }
  return true;
}

// couch_util:to_binary of a decoded value: a binary as it is, a list that
// list_to_binary takes as its bytes, anything else as ~p writes it.
std::string ErlangToBinary(const json::Value& v) {
  std::string bytes;
  if (v.IsString()) return std::string(json::View(v));
  if (v.IsArray() && AppendIoList(v, &bytes)) return bytes;
  return ErlangShown(v);
}

}  // namespace

Status ObjectOptionsToParams(const json::Value& object, QueryParams* out) {
  static constexpr std::string_view kBooleans[] = {"descending", "inclusive_end", "include_docs", "conflicts",
                                                   "attachments", "att_encoding_info", "update_seq", "reduce",
                                                   "group", "sorted"};
  static constexpr std::string_view kCounts[] = {"skip", "limit", "group_level"};
  for (const auto& m : object.GetObject()) {
    std::string name(json::View(m.name));
    const json::Value& v = m.value;
    if (name == "keys") continue;
    if (IsKeyParam(name)) {
      out->emplace_back(std::move(name), json::Serialize(v));
    } else if (std::find(std::begin(kBooleans), std::end(kBooleans), name) != std::end(kBooleans)) {
      // couch_mrview_http:parse_boolean: a JSON boolean as it is, a string
      // (a binary, turned into a list first) or a list of character codes
      // as the query string's text.
      bool b = false;
      std::string text;
      if (v.IsBool()) {
        b = v.GetBool();
      } else if (v.IsString() || IsErlangString(v, &text)) {
        Status s = views::ParseBooleanText(v.IsString() ? json::View(v) : std::string_view(text), &b);
        if (!s.ok()) return s;
      } else {
        return Status(Status::Code::kQueryParseError, "Invalid boolean parameter: " + ErlangShown(v));
      }
      out->emplace_back(std::move(name), b ? "true" : "false");
    } else if (std::find(std::begin(kCounts), std::end(kCounts), name) != std::end(kCounts)) {
      // parse_pos_int: an integer as it is; list_to_integer reads a list of
      // character codes as the query string's text and refuses the rest.
      std::string text;
      if (IsErlangString(v, &text)) {
        uint64_t n = 0;
        Status s = views::ParsePosIntText(text, &n);
        if (!s.ok()) return s;
        out->emplace_back(std::move(name), std::to_string(n));
      } else if (v.IsUint64()) {
        out->emplace_back(std::move(name), std::to_string(v.GetUint64()));
      } else if (v.IsInt64()) {
        return Status(Status::Code::kQueryParseError, "Invalid value for positive integer: " + ErlangShown(v));
      } else {
        return Status(Status::Code::kQueryParseError, "Invalid value for integer: " + ErlangShown(v));
      }
    } else if (name == "stale" || name == "stable" || name == "update") {
      // parse_param compares these with strings only ("ok" == a binary or
      // a list of the same characters): a decoded true is no "true". What
      // is a string is checked as the query string's text is.
      std::string text;
      if (v.IsString()) {
        text = json::View(v);
      } else if (!IsErlangString(v, &text)) {
        return Status(Status::Code::kQueryParseError, "Invalid value for `" + name + "`.");
      }
      out->emplace_back(std::move(name), std::move(text));
    } else if (name == "startkey_docid" || name == "start_key_doc_id" || name == "endkey_docid" ||
               name == "end_key_doc_id") {
      out->emplace_back(std::move(name), ErlangToBinary(v));
    }
  }
  return Status::OK();
}

QueryParams LayerParams(const QueryParams& lower, const QueryParams& upper) {
  QueryParams out;
  out.reserve(lower.size() + upper.size());
  out.insert(out.end(), lower.begin(), lower.end());
  out.insert(out.end(), upper.begin(), upper.end());
  return out;
}

std::string AllDocsJson(const AllDocsResult& result, bool include_update_seq, AllDocsMeta meta) {
  std::string out;
  out.reserve(64 + result.rows.size() * 96);
  const bool counted = meta == AllDocsMeta::kRange;
  out += R"({"total_rows":)";
  out += meta == AllDocsMeta::kLocal ? "null" : std::to_string(result.total_rows);
  out += R"(,"offset":)";
  out += counted ? std::to_string(result.offset) : "null";
  if (include_update_seq) {
    out += R"(,"update_seq":)";
    out += counted ? std::to_string(result.update_seq) : "null";
  }
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

Status QueryOrHeaderRev(const RequestContext& ctx, std::optional<CouchRev>* out) {
  CouchRev query;
  const std::string* q = ctx.Param("rev");
  if (q != nullptr) {
    query = ParseCouchRev(*q);
    if (query.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
  }
  return ExtractHeaderRev(q != nullptr ? &query : nullptr, ctx.req.Header("if-match"), out);
}

}  // namespace settee
