#include "storage/mango.h"

#include <algorithm>
#include <chrono>
#include <optional>

#include "storage/collation.h"
#include "storage/design_doc.h"
#include "storage/keys.h"
#include "storage/mango_selector.h"
#include "storage/views.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::mango {

namespace {

constexpr uint64_t kDefaultLimit = 25;

Status Bad(std::string reason) { return Status::BadRequest(std::move(reason)); }

// One JSON index: its design doc, view and fields.
struct IndexDef {
  views::DesignDoc ddoc;
  std::string name;
  std::vector<std::string> fields;
  std::vector<bool> desc;         // per field
  std::string def_json;           // {"fields":[{"a":"asc"}..][,"partial_filter_selector":..]}
  bool partial = false;
};

// The fields of an index definition's "fields" array: "a" or {"a":"asc"}.
Status ParseFields(const json::Value& fields, std::vector<std::string>* names, std::vector<bool>* desc) {
  if (!fields.IsArray() || fields.Empty()) return Bad("Index fields must be a non-empty array");
  for (auto& f : fields.GetArray()) {
    if (f.IsString()) {
      names->emplace_back(json::View(f));
      desc->push_back(false);
    } else if (f.IsObject() && f.MemberCount() == 1 && f.MemberBegin()->value.IsString() &&
               (json::View(f.MemberBegin()->value) == "asc" || json::View(f.MemberBegin()->value) == "desc")) {
      names->emplace_back(json::View(f.MemberBegin()->name));
      desc->push_back(json::View(f.MemberBegin()->value) == "desc");
    } else {
      return Bad("Invalid sort field: " + json::Serialize(f));
    }
  }
  return Status::OK();
}

// The "query" views of every design document.
Status LoadIndexes(Database& db, std::vector<IndexDef>* out) {
  AllDocsResult docs;
  Status s = views::DesignDocs(db, &docs);
  if (!s.ok()) return s;
  for (const AllDocsRow& r : docs.rows) {
    json::Document d;
    if (!json::Parse(r.doc, &d).ok() || !d.IsObject()) continue;
    auto lang = d.FindMember("language");
    if (lang == d.MemberEnd() || !lang->value.IsString() || json::View(lang->value) != "query") continue;
    auto parsed = views::ParseDesignDoc(r.id, r.doc);
    if (!parsed.ok()) continue;
    auto views_it = d.FindMember("views");
    for (const views::ViewDef& v : parsed->views) {
      const json::Value& view = views_it->value[v.name.c_str()];
      IndexDef def;
      def.ddoc = *parsed;
      def.name = v.name;
      auto map = view.FindMember("map");
      if (map == view.MemberEnd() || !map->value.IsObject()) continue;
      auto fields = map->value.FindMember("fields");
      if (fields == map->value.MemberEnd() || !fields->value.IsObject()) continue;
      std::string def_json = "{\"fields\":[";
      for (auto& f : fields->value.GetObject()) {
        def.fields.emplace_back(json::View(f.name));
        bool desc = f.value.IsString() && json::View(f.value) == "desc";
        def.desc.push_back(desc);
        if (def.fields.size() > 1) def_json += ',';
        def_json += "{";
        json::AppendQuoted(&def_json, json::View(f.name));
        def_json += desc ? ":\"desc\"}" : ":\"asc\"}";
      }
      def_json += ']';
      if (auto p = map->value.FindMember("partial_filter_selector"); p != map->value.MemberEnd()) {
        def.partial = true;
        def_json += ",\"partial_filter_selector\":" + json::Serialize(p->value);
      }
      def_json += '}';
      def.def_json = std::move(def_json);
      if (!def.fields.empty()) out->push_back(std::move(def));
    }
  }
  return Status::OK();
}

//////// The C++ mapper of "query" indexes

class MangoFunctions final : public views::ViewFunctions {
 public:
  Status Map(const views::MapCode& code, const std::vector<std::string>& docs, std::string* out) override {
    struct Index {
      std::vector<std::vector<std::string>> paths;
      std::optional<Selector> partial;
    };
    std::vector<Index> indexes;
    for (const std::string& src : code.maps) {
      json::Document d;
      Status s = json::Parse(src, &d);
      if (!s.ok()) return s;
      Index ix;
      const json::Value& map = d["map"];
      auto fields = map.FindMember("fields");
      if (fields == map.MemberEnd() || !fields->value.IsObject()) {
        return Status(Status::Code::kInvalidDesignDoc, "a query index needs map.fields");
      }
      for (auto& f : fields->value.GetObject()) ix.paths.push_back(SplitField(json::View(f.name)));
      if (auto p = map.FindMember("partial_filter_selector"); p != map.MemberEnd()) {
        auto sel = Selector::Parse(p->value);
        if (!sel.ok()) return sel.status();
        ix.partial = std::move(sel).value();
      }
      indexes.push_back(std::move(ix));
    }
    out->clear();
    out->push_back('[');
    json::Document doc;
    for (size_t i = 0; i < docs.size(); ++i) {
      if (i) out->push_back(',');
      out->push_back('[');
      const bool parsed = json::Parse(docs[i], &doc).ok() && doc.IsObject();
      for (size_t x = 0; x < indexes.size(); ++x) {
        if (x) out->push_back(',');
        const Index& ix = indexes[x];
        if (!parsed || (ix.partial && !ix.partial->Matches(doc))) {
          out->append("[]");
          continue;
        }
        std::string key = "[";
        bool all = true;
        for (size_t f = 0; f < ix.paths.size() && all; ++f) {
          const json::Value* v = GetField(doc, ix.paths[f]);
          if (v == nullptr) {
            all = false;
            break;
          }
          if (f) key.push_back(',');
          json::SerializeTo(*v, &key);
        }
        if (!all) {
          out->append("[]");
          continue;
        }
        out->append("[[");
        out->append(key);
        out->append("],null]]");
      }
      out->push_back(']');
    }
    out->push_back(']');
    return Status::OK();
  }

  Status Reduce(const views::MapCode&, const std::string&, std::string_view, std::string*) override {
    return Status::BadRequest("query indexes have no JavaScript reduce");
  }
};

//////// Planning

struct FindRequest {
  json::Document body;
  std::optional<Selector> selector;
  uint64_t limit = kDefaultLimit;
  uint64_t skip = 0;
  std::vector<std::string> sort_fields;
  bool sort_desc = false;
  const json::Value* fields = nullptr;
  std::vector<std::string> use_index;  // [ddoc] or [ddoc, name]
  bool execution_stats = false;
  bool conflicts = false;
  bool update = true;
  // Where the previous page ended (a bookmark): its last row's index key
  // (JSON; empty for an _all_docs scan) and document id. The next page
  // starts strictly after that row, so documents written between pages do
  // not shift it (a skip count would).
  std::string bookmark_key;
  std::string bookmark_id;
  bool has_bookmark = false;
};

// A bookmark: base64 of {"id": docid} or {"key": key, "id": docid}.
std::string EncodeBookmark(const std::string& key_json, const std::string& id) {
  std::string b = "{";
  if (!key_json.empty()) b += "\"key\":" + key_json + ",";
  b += "\"id\":" + json::Quote(id) + "}";
  return Base64Encode(b);
}

Status ParseFind(std::string_view body, FindRequest* r) {
  Status s = json::Parse(body, &r->body);
  if (!s.ok()) return s;
  if (!r->body.IsObject()) return Bad("Request body must be a JSON object");
  auto sel = r->body.FindMember("selector");
  if (sel == r->body.MemberEnd()) return Bad("Missing required key: selector");
  auto parsed = Selector::Parse(sel->value);
  if (!parsed.ok()) return parsed.status();
  r->selector = std::move(parsed).value();
  for (auto& m : r->body.GetObject()) {
    std::string_view name = json::View(m.name);
    const json::Value& v = m.value;
    if (name == "limit" || name == "skip") {
      if (!v.IsNumber() || v.GetDouble() < 0 || v.GetDouble() != static_cast<double>(static_cast<uint64_t>(v.GetDouble()))) {
        return Bad("Invalid value for " + std::string(name) + ": must be a non-negative integer");
      }
      (name == "limit" ? r->limit : r->skip) = static_cast<uint64_t>(v.GetDouble());
    } else if (name == "sort") {
      if (!v.IsArray()) return Bad("Invalid sort: must be an array");
      std::vector<bool> desc;
      s = ParseFields(v, &r->sort_fields, &desc);
      if (!s.ok() && !v.Empty()) return s;
      if (std::find(desc.begin(), desc.end(), !desc.empty() && !desc[0]) != desc.end() && !desc.empty()) {
        return Status(Status::Code::kBadRequest, "Sorts currently only support a single direction for all fields.");
      }
      r->sort_desc = !desc.empty() && desc[0];
    } else if (name == "fields") {
      if (!v.IsArray()) return Bad("Invalid fields: must be an array of strings");
      for (auto& f : v.GetArray()) {
        if (!f.IsString()) return Bad("Invalid fields: must be an array of strings");
      }
      r->fields = &v;
    } else if (name == "use_index") {
      // mango_opts:validate_use_index: a string splits at its first "/"
      // ("ddoc/name"; "_design/ddoc" is the ddoc), and null or [] ask for
      // no index.
      if (v.IsString()) {
        std::string_view u = json::View(v);
        const size_t slash = u.find('/');
        if (slash == std::string_view::npos) {
          r->use_index.emplace_back(u);
        } else if (u.substr(0, slash) == "_design") {
          r->use_index.emplace_back(u.substr(slash + 1));
        } else {
          r->use_index.emplace_back(u.substr(0, slash));
          r->use_index.emplace_back(u.substr(slash + 1));
        }
      } else if (v.IsNull() || (v.IsArray() && v.Empty())) {
        // no index asked for
      } else if (v.IsArray() && v.Size() >= 1 && v.Size() <= 2 && v[0].IsString() &&
                 (v.Size() == 1 || v[1].IsString())) {
        for (auto& x : v.GetArray()) r->use_index.emplace_back(json::View(x));
      } else {
        return Bad("Invalid use_index: must be a string or [ddoc, name]");
      }
      if (!r->use_index.empty() && r->use_index[0].rfind("_design/", 0) != 0) {
        r->use_index[0] = "_design/" + r->use_index[0];
      }
    } else if (name == "execution_stats") {
      r->execution_stats = v.IsBool() && v.GetBool();
    } else if (name == "conflicts") {
      r->conflicts = v.IsBool() && v.GetBool();
    } else if (name == "update") {
      r->update = !v.IsBool() || v.GetBool();
    } else if (name == "stale") {
      r->update = !(v.IsString() && json::View(v) == "ok");
    } else if (name == "bookmark") {
      // mango_opts:validate_bookmark: null and "" are no bookmark, as "nil".
      if (v.IsNull()) continue;
      if (!v.IsString()) return Bad("Invalid bookmark: must be a string");
      if (json::View(v) != "nil" && json::View(v) != "") {
        std::string raw;
        json::Document b;
        if (!Base64Decode(json::View(v), &raw) || !json::Parse(raw, &b).ok() || !b.IsObject() ||
            !b.HasMember("id") || !b["id"].IsString()) {
          return Bad("Invalid bookmark value: " + std::string(json::View(v)));
        }
        r->bookmark_id.assign(json::View(b["id"]));
        if (auto k = b.FindMember("key"); k != b.MemberEnd()) r->bookmark_key = json::Serialize(k->value);
        r->has_bookmark = true;
      }
    }
  }
  return Status::OK();
}

struct Plan {
  const IndexDef* index = nullptr;  // nullptr: _all_docs
  std::string lower, upper;         // encoded key range in the index
  std::string start_key = "null", end_key = "null";  // JSON, for _explain
  bool descending = false;
  std::string warning;
};

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// How many leading columns of `ix` the selector constrains with a range.
size_t RangedColumns(const IndexDef& ix, const std::vector<Selector::FieldCondition>& conds) {
  size_t n = 0;
  for (const std::string& f : ix.fields) {
    bool eq = false, ranged = false;
    for (auto& c : conds) {
      if (c.field != f) continue;
      if (c.op == "$eq") eq = true;
      if (c.op == "$gt" || c.op == "$gte" || c.op == "$lt" || c.op == "$lte") ranged = true;
    }
    if (!eq && !ranged) break;
    ++n;
    if (!eq) break;
  }
  return n;
}

bool Usable(const IndexDef& ix, const FindRequest& r, const std::vector<std::string>& required) {
  // Every column must be one the selector requires, or a sort field (the
  // rows must have those, as CouchDB's mango_idx_view:is_usable says).
  for (const std::string& f : ix.fields) {
    if (!Contains(required, f) && !Contains(r.sort_fields, f)) return false;
  }
  if (!r.sort_fields.empty()) {
    if (r.sort_fields.size() > ix.fields.size()) return false;
    for (size_t i = 0; i < r.sort_fields.size(); ++i) {
      if (r.sort_fields[i] != ix.fields[i]) return false;
    }
  }
  return true;
}

void RangeFor(const IndexDef& ix, const std::vector<Selector::FieldCondition>& conds, Plan* p) {
  std::string prefix = "\x60";
  std::string start = "[", end = "[";
  const json::Value* lo = nullptr;
  const json::Value* hi = nullptr;
  bool lo_incl = true, hi_incl = true;
  size_t fixed = 0;
  for (const std::string& f : ix.fields) {
    const json::Value* eq = nullptr;
    for (auto& c : conds) {
      if (c.field != f) continue;
      if (c.op == "$eq" && eq == nullptr) eq = c.arg;
      if (c.op == "$gt" || c.op == "$gte") {
        if (lo == nullptr || collation::Compare(*c.arg, *lo) > 0 ||
            (collation::Compare(*c.arg, *lo) == 0 && c.op == "$gt")) {
          lo = c.arg;
          lo_incl = c.op == "$gte";
        }
      }
      if (c.op == "$lt" || c.op == "$lte") {
        if (hi == nullptr || collation::Compare(*c.arg, *hi) < 0 ||
            (collation::Compare(*c.arg, *hi) == 0 && c.op == "$lt")) {
          hi = c.arg;
          hi_incl = c.op == "$lte";
        }
      }
    }
    if (eq != nullptr) {
      collation::AppendIndexKey(*eq, &prefix);
      if (fixed++) {
        start += ',';
        end += ',';
      }
      start += json::Serialize(*eq);
      end += json::Serialize(*eq);
      lo = hi = nullptr;
      continue;
    }
    break;
  }
  // lo/hi belong to the first column after the fixed ones.
  if (lo != nullptr) {
    std::string b = prefix;
    collation::AppendIndexKey(*lo, &b);
    p->lower = lo_incl ? b : keys::PrefixEnd(b);
    start += std::string(fixed ? "," : "") + json::Serialize(*lo);
  } else {
    p->lower = prefix;
  }
  if (hi != nullptr) {
    std::string b = prefix;
    collation::AppendIndexKey(*hi, &b);
    p->upper = hi_incl ? keys::PrefixEnd(b) : b;
    end += std::string(fixed ? "," : "") + json::Serialize(*hi);
  } else {
    p->upper = keys::PrefixEnd(prefix);
    end += std::string(fixed ? "," : "") + "\"<MAX>\"";
  }
  p->start_key = start + "]";
  p->end_key = end + "]";
}

Status MakePlan(Database& db, const FindRequest& r, std::vector<IndexDef>* indexes, Plan* p) {
  Status s = LoadIndexes(db, indexes);
  if (!s.ok()) return s;
  const std::vector<std::string> required = r.selector->RequiredFields();
  const auto conds = r.selector->TopLevelConditions();
  const IndexDef* best = nullptr;
  const IndexDef* asked = nullptr;
  for (const IndexDef& ix : *indexes) {
    bool named = !r.use_index.empty() && ix.ddoc.id == r.use_index[0] &&
                 (r.use_index.size() == 1 || ix.name == r.use_index[1]);
    if (!Usable(ix, r, required)) continue;
    if (named) asked = &ix;
    if (ix.partial) continue;  // used only when asked for, as CouchDB does
    if (best == nullptr) {
      best = &ix;
      continue;
    }
    size_t a = RangedColumns(ix, conds), b = RangedColumns(*best, conds);
    if (a > b || (a == b && (ix.fields.size() < best->fields.size() ||
                             (ix.fields.size() == best->fields.size() && ix.name < best->name)))) {
      best = &ix;
    }
  }
  if (!r.use_index.empty() && asked == nullptr) {
    std::string name = r.use_index[0] + (r.use_index.size() > 1 ? ", " + r.use_index[1] : "");
    p->warning = name + " was not used because it does not contain a valid index for this query.";
  }
  if (asked != nullptr) best = asked;
  p->descending = r.sort_desc;
  if (best == nullptr) {
    if (!r.sort_fields.empty() && !(r.sort_fields.size() == 1 && r.sort_fields[0] == "_id")) {
      return Status(Status::Code::kNoUsableIndex,
                    "No index exists for this sort, try indexing by the sort fields.");
    }
    if (p->warning.empty()) {
      p->warning = "No matching index found, create an index to optimize query time.";
    }
    return Status::OK();
  }
  p->index = best;
  RangeFor(*best, conds, p);
  return Status::OK();
}

// Parses a _find body and plans it; `plan` points into `indexes`.
Status Prepare(Database& db, std::string_view body, FindRequest* r, std::vector<IndexDef>* indexes,
               Plan* plan) {
  Status s = ParseFind(body, r);
  if (!s.ok()) return s;
  return MakePlan(db, *r, indexes, plan);
}

// The document cut down to `fields` (dotted paths), as CouchDB's
// mango_fields:extract does.
std::string Project(const json::Value& doc, const json::Value* fields) {
  if (fields == nullptr || fields->Empty()) return json::Serialize(doc);
  json::Document out;
  out.SetObject();
  auto& a = out.GetAllocator();
  for (auto& f : fields->GetArray()) {
    std::vector<std::string> path = SplitField(json::View(f));
    const json::Value* v = GetField(doc, path);
    if (v == nullptr) continue;
    json::Value* at = &out;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      auto it = at->FindMember(path[i].c_str());
      if (it == at->MemberEnd()) {
        at->AddMember(json::StringValue(path[i], a), json::Value(rapidjson::kObjectType), a);
        it = at->MemberEnd() - 1;
      }
      at = &it->value;
      if (!at->IsObject()) break;
    }
    if (at->IsObject() && !at->HasMember(path.back().c_str())) {
      at->AddMember(json::StringValue(path.back(), a), json::Value(*v, a), a);
    }
  }
  return json::Serialize(out);
}

}  // namespace

views::ViewFunctions& IndexFunctions() {
  static MangoFunctions functions;
  return functions;
}

Status CreateIndex(Store& store, Database& db, std::string_view body, std::string* out) {
  json::Document req;
  Status s = json::Parse(body, &req);
  if (!s.ok()) return s;
  if (!req.IsObject()) return Bad("Request body must be a JSON object");
  auto index = req.FindMember("index");
  if (index == req.MemberEnd() || !index->value.IsObject()) return Bad("Missing required key: index");
  if (auto t = req.FindMember("type"); t != req.MemberEnd() && !(t->value.IsString() && json::View(t->value) == "json")) {
    return Bad("Invalid index type: only json indexes are supported");
  }
  std::vector<std::string> fields;
  std::vector<bool> desc;
  auto fit = index->value.FindMember("fields");
  if (fit == index->value.MemberEnd()) return Bad("Missing required key: fields");
  s = ParseFields(fit->value, &fields, &desc);
  if (!s.ok()) return s;
  // The view's map: {"fields":{"a":"asc"..}[,"partial_filter_selector":..]}.
  std::string map = "{\"fields\":{";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) map += ',';
    json::AppendQuoted(&map, fields[i]);
    map += desc[i] ? ":\"desc\"" : ":\"asc\"";
  }
  map += '}';
  if (auto p = index->value.FindMember("partial_filter_selector"); p != index->value.MemberEnd()) {
    auto sel = Selector::Parse(p->value);
    if (!sel.ok()) return sel.status();
    map += ",\"partial_filter_selector\":" + json::Serialize(p->value);
  }
  map += '}';
  const std::string hash = Md5Hex(map);
  std::string ddoc_id = "_design/" + hash;
  std::string name = hash;
  if (auto d = req.FindMember("ddoc"); d != req.MemberEnd()) {
    if (!d->value.IsString() || d->value.GetStringLength() == 0) return Bad("Invalid ddoc: must be a string");
    std::string_view dv = json::View(d->value);
    ddoc_id = dv.rfind("_design/", 0) == 0 ? std::string(dv) : "_design/" + std::string(dv);
  }
  if (auto n = req.FindMember("name"); n != req.MemberEnd()) {
    if (!n->value.IsString() || n->value.GetStringLength() == 0) return Bad("Invalid name: must be a string");
    name = std::string(json::View(n->value));
  }
  std::string def_fields = "[";
  for (size_t i = 0; i < fields.size(); ++i) {
    if (i) def_fields += ',';
    json::AppendQuoted(&def_fields, fields[i]);
  }
  def_fields += ']';
  // Retried once if another writer changed the design doc in between.
  for (int attempt = 0; attempt < 3; ++attempt) {
    json::Document ddoc;
    auto existing = db.Get(ddoc_id);
    if (existing.ok()) {
      s = json::Parse(*existing, &ddoc);
      if (!s.ok()) return s;
      auto lang = ddoc.FindMember("language");
      if (lang == ddoc.MemberEnd() || !lang->value.IsString() || json::View(lang->value) != "query") {
        return Bad("Design document " + ddoc_id + " is not a query index design document");
      }
    } else if (existing.status().IsNotFound()) {
      ddoc.SetObject();
      ddoc.AddMember("_id", json::StringValue(ddoc_id, ddoc.GetAllocator()), ddoc.GetAllocator());
      ddoc.AddMember("language", "query", ddoc.GetAllocator());
    } else {
      return existing.status();
    }
    auto& a = ddoc.GetAllocator();
    if (!ddoc.HasMember("views") || !ddoc["views"].IsObject()) {
      ddoc.RemoveMember("views");
      ddoc.AddMember("views", json::Value(rapidjson::kObjectType), a);
    }
    json::Value& views = ddoc["views"];
    json::Document map_doc;
    (void)json::Parse(map, &map_doc);
    if (auto v = views.FindMember(name.c_str()); v != views.MemberEnd()) {
      if (v->value.IsObject() && v->value.HasMember("map") && json::Serialize(v->value["map"]) == map) {
        *out = "{\"result\":\"exists\",\"id\":" + json::Quote(ddoc_id) + ",\"name\":" + json::Quote(name) + "}";
        return Status::OK();
      }
      views.RemoveMember(name.c_str());
    }
    json::Value view(rapidjson::kObjectType);
    view.AddMember("map", json::Value(map_doc, a), a);
    view.AddMember("reduce", "_count", a);
    json::Document options;
    (void)json::Parse("{\"def\":{\"fields\":" + def_fields + "}}", &options);
    view.AddMember("options", json::Value(options, a), a);
    views.AddMember(json::StringValue(name, a), view, a);
    auto put = db.Put(ddoc_id, json::Serialize(ddoc));
    if (!put.ok()) return put.status();
    if (put->status.IsConflict()) continue;
    if (!put->status.ok()) return put->status;
    *out = "{\"result\":\"created\",\"id\":" + json::Quote(ddoc_id) + ",\"name\":" + json::Quote(name) + "}";
    auto written = db.Get(ddoc_id);
    if (!written.ok()) return Status::OK();  // changed meanwhile: built by the next _find
    auto parsed = views::ParseDesignDoc(ddoc_id, *written);
    if (!parsed.ok()) return Status::OK();
    return views::UpdateIndex(store, db, &IndexFunctions(), *parsed);
  }
  return Status::Conflict();
}

Status ListIndexes(Database& db, std::string* out) {
  std::vector<IndexDef> indexes;
  Status s = LoadIndexes(db, &indexes);
  if (!s.ok()) return s;
  *out = "{\"total_rows\":" + std::to_string(indexes.size() + 1) +
         ",\"indexes\":[{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{\"_id\":\"asc\"}]}}";
  for (const IndexDef& ix : indexes) {
    *out += ",{\"ddoc\":" + json::Quote(ix.ddoc.id) + ",\"name\":" + json::Quote(ix.name) +
            ",\"type\":\"json\",\"partitioned\":false,\"def\":" + ix.def_json + "}";
  }
  *out += "]}";
  return Status::OK();
}

Status DeleteIndex(Database& db, std::string_view ddoc, std::string_view name, std::string* out) {
  std::string id = ddoc.rfind("_design/", 0) == 0 ? std::string(ddoc) : "_design/" + std::string(ddoc);
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto body = db.Get(id);
    if (!body.ok()) {
      return body.status().IsNotFound() ? Status::NotFound("Index not found") : body.status();
    }
    json::Document d;
    Status s = json::Parse(*body, &d);
    if (!s.ok()) return s;
    auto views = d.FindMember("views");
    auto lang = d.FindMember("language");
    if (lang == d.MemberEnd() || !lang->value.IsString() || json::View(lang->value) != "query" ||
        views == d.MemberEnd() || !views->value.IsObject() ||
        !views->value.HasMember(std::string(name).c_str())) {
      return Status::NotFound("Index not found");
    }
    views->value.RemoveMember(std::string(name).c_str());
    Result<DocUpdateResult> r = Status::Internal("unset");
    if (views->value.MemberCount() == 0) {
      r = db.Delete(id, d["_rev"].GetString());
    } else {
      r = db.Put(id, json::Serialize(d));
    }
    if (!r.ok()) return r.status();
    if (r->status.IsConflict()) continue;
    if (!r->status.ok()) return r->status;
    *out = "{\"ok\":true}";
    return Status::OK();
  }
  return Status::Conflict();
}

Status Find(Store& store, Database& db, std::string_view body, std::string* out) {
  return Find(store, db, body, out, views::AfterDocRead());
}

Status Find(Store& store, Database& db, std::string_view body, std::string* out,
            const views::AfterDocRead& after_read) {
  const auto started = std::chrono::steady_clock::now();
  FindRequest r;
  std::vector<IndexDef> indexes;
  Plan plan;
  Status s = Prepare(db, body, &r, &indexes, &plan);
  if (!s.ok()) return s;
  // A bookmark replaces skip: the page starts after the bookmarked row.
  const uint64_t skip = r.has_bookmark ? 0 : r.skip;
  uint64_t keys_examined = 0, docs_examined = 0, matched = 0;
  std::string last_key, last_id;  // the last kept row, for the bookmark
  std::vector<std::string> docs;
  GetOptions go;
  go.conflicts = r.conflicts;
  json::Document doc;
  // Takes one candidate document; false once enough are kept.
  auto consider = [&](std::string_view doc_json) {
    ++docs_examined;
    if (!json::Parse(doc_json, &doc).ok() || !doc.IsObject()) return true;
    if (!r.selector->Matches(doc)) return true;
    if (matched++ < skip) return true;
    if (docs.size() >= r.limit) return false;
    docs.push_back(Project(doc, r.fields));
    return docs.size() < r.limit;
  };
  if (r.limit > 0) {
    if (plan.index != nullptr) {
      const views::ViewDef* view = plan.index->ddoc.Find(plan.index->name);
      std::string lower = plan.lower, upper = plan.upper;
      if (r.has_bookmark && !r.bookmark_key.empty()) {
        json::Document k;
        s = json::Parse(r.bookmark_key, &k);
        if (!s.ok()) return Bad("Invalid bookmark value");
        // The bookmarked row's encoded key and id: rows sort by both.
        std::string at;
        collation::AppendIndexKey(k, &at);
        json::Value id(rapidjson::StringRef(r.bookmark_id.data(), r.bookmark_id.size()));
        collation::AppendIndexKey(id, &at);
        if (!plan.descending) {
          std::string after = keys::PrefixEnd(at);
          if (after > lower) lower = std::move(after);
        } else if (upper.empty() || at < upper) {
          upper = std::move(at);
        }
      }
      s = views::ScanIndex(store, db, &IndexFunctions(), plan.index->ddoc, *view, r.update, lower,
                           upper, plan.descending, [&](const views::IndexRow& row) {
                             ++keys_examined;
                             auto d = db.Get(row.id, go);
                             if (!d.ok()) return true;  // deleted since indexed
                             if (after_read) after_read(row.id, &*d);
                             const size_t kept = docs.size();
                             bool more = consider(*d);
                             if (docs.size() > kept) {
                               last_key.assign(row.key);
                               last_id.assign(row.id);
                             }
                             return more;
                           });
      if (!s.ok()) return s;
    } else {
      // _all_docs, a page at a time.
      AllDocsOptions ao;
      ao.include_docs = true;
      ao.conflicts = r.conflicts;
      ao.descending = plan.descending;
      ao.limit = 1000;
      bool more = true;
      std::optional<std::string> after;
      // After a bookmark: from its id on, that id itself left out.
      if (r.has_bookmark) ao.start_key = r.bookmark_id;
      while (more) {
        AllDocsResult page;
        if (after) {
          ao.start_key = *after;
          ao.skip = 1;
        }
        s = db.AllDocs(ao, &page);
        if (!s.ok()) return s;
        if (page.rows.empty()) break;
        for (AllDocsRow& row : page.rows) {
          if (r.has_bookmark && row.id == r.bookmark_id) continue;
          ++keys_examined;
          if (row.id.rfind("_design/", 0) == 0) continue;
          if (after_read) after_read(row.id, &row.doc);
          const size_t kept = docs.size();
          const bool go_on = consider(row.doc);
          if (docs.size() > kept) last_id = row.id;
          if (!go_on) {
            more = false;
            break;
          }
        }
        after = page.rows.back().id;
        if (page.rows.size() < ao.limit) break;
      }
    }
  }
  out->clear();
  *out += "{\"docs\":[";
  for (size_t i = 0; i < docs.size(); ++i) {
    if (i) out->push_back(',');
    *out += docs[i];
  }
  *out += "],\"bookmark\":";
  if (docs.empty()) {
    *out += "\"nil\"";
  } else {
    *out += json::Quote(EncodeBookmark(last_key, last_id));
  }
  if (!plan.warning.empty()) *out += ",\"warning\":" + json::Quote(plan.warning);
  if (r.execution_stats) {
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
    *out += ",\"execution_stats\":{\"total_keys_examined\":" + std::to_string(keys_examined) +
            ",\"total_docs_examined\":" + std::to_string(docs_examined) +
            ",\"total_quorum_docs_examined\":0,\"results_returned\":" + std::to_string(docs.size()) +
            ",\"execution_time_ms\":" + std::to_string(ms) + "}";
  }
  *out += "}";
  return Status::OK();
}

Status Explain(Store& store, Database& db, std::string_view body, std::string* out) {
  (void)store;
  FindRequest r;
  std::vector<IndexDef> indexes;
  Plan plan;
  Status s = Prepare(db, body, &r, &indexes, &plan);
  if (!s.ok()) return s;
  std::string index;
  if (plan.index != nullptr) {
    index = "{\"ddoc\":" + json::Quote(plan.index->ddoc.id) + ",\"name\":" + json::Quote(plan.index->name) +
            ",\"type\":\"json\",\"partitioned\":false,\"def\":" + plan.index->def_json + "}";
  } else {
    index = "{\"ddoc\":null,\"name\":\"_all_docs\",\"type\":\"special\",\"def\":{\"fields\":[{\"_id\":\"asc\"}]}}";
  }
  std::string fields = "\"all_fields\"";
  if (r.fields != nullptr && !r.fields->Empty()) fields = json::Serialize(*r.fields);
  std::string sort = "{";
  for (size_t i = 0; i < r.sort_fields.size(); ++i) {
    if (i) sort += ',';
    json::AppendQuoted(&sort, r.sort_fields[i]);
    sort += r.sort_desc ? ":\"desc\"" : ":\"asc\"";
  }
  sort += '}';
  *out = "{\"dbname\":" + json::Quote(db.name()) + ",\"index\":" + index +
         ",\"partitioned\":false,\"selector\":" + r.selector->ToJson() +
         ",\"opts\":{\"limit\":" + std::to_string(r.limit) + ",\"skip\":" + std::to_string(r.skip) +
         ",\"sort\":" + sort + ",\"fields\":" + fields + ",\"conflicts\":" + (r.conflicts ? "true" : "false") +
         ",\"execution_stats\":" + (r.execution_stats ? "true" : "false") + "}" +
         ",\"limit\":" + std::to_string(r.limit) + ",\"skip\":" + std::to_string(r.skip) +
         ",\"fields\":" + fields + ",\"mrargs\":{\"include_docs\":true,\"view_type\":\"map\",\"reduce\":false," +
         "\"start_key\":" + (plan.index ? plan.start_key : "null") +
         ",\"end_key\":" + (plan.index ? plan.end_key : "\"<MAX>\"") +
         ",\"direction\":" + (plan.descending ? "\"rev\"" : "\"fwd\"") + ",\"stable\":false,\"update\":" +
         (r.update ? "true" : "false") + ",\"conflicts\":\"undefined\"}";
  if (!plan.warning.empty()) *out += ",\"warning\":" + json::Quote(plan.warning);
  *out += "}";
  return Status::OK();
}

}  // namespace settee::mango
