#include "replication/selector_normal_form.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "util/json.h"

namespace settee::replication {

namespace {

// An EJSON value as mango_selector sees it: objects are member lists (in
// their given order, duplicates kept, as jiffy decodes them).
struct Ej {
  enum class Kind { kObject, kArray, kString, kInteger, kFloat, kBool, kNull };
  Kind kind = Kind::kNull;
  std::vector<std::pair<std::string, Ej>> props;  // kObject
  std::vector<Ej> items;                          // kArray
  std::string text;                               // kString
  int64_t integer = 0;
  double number = 0;
  bool boolean = false;

  static Ej Object(std::string key, Ej value) {
    Ej e;
    e.kind = Kind::kObject;
    e.props.emplace_back(std::move(key), std::move(value));
    return e;
  }
  static Ej Array(std::vector<Ej> items) {
    Ej e;
    e.kind = Kind::kArray;
    e.items = std::move(items);
    return e;
  }
  static Ej Bool(bool b) {
    Ej e;
    e.kind = Kind::kBool;
    e.boolean = b;
    return e;
  }
  bool is_object() const { return kind == Kind::kObject; }
  bool is_list() const { return kind == Kind::kArray; }
  // {[{K, V}]}: an object of exactly one member.
  bool single() const { return is_object() && props.size() == 1; }
  const std::string& key() const { return props[0].first; }
  const Ej& arg() const { return props[0].second; }
};

Ej FromJson(const json::Value& v) {
  Ej e;
  if (v.IsObject()) {
    e.kind = Ej::Kind::kObject;
    for (const auto& m : v.GetObject()) e.props.emplace_back(json::View(m.name), FromJson(m.value));
  } else if (v.IsArray()) {
    e.kind = Ej::Kind::kArray;
    for (const auto& item : v.GetArray()) e.items.push_back(FromJson(item));
  } else if (v.IsString()) {
    e.kind = Ej::Kind::kString;
    e.text = json::View(v);
  } else if (v.IsBool()) {
    e = Ej::Bool(v.GetBool());
  } else if (v.IsNull()) {
    e.kind = Ej::Kind::kNull;
  } else if (v.IsInt64()) {
    e.kind = Ej::Kind::kInteger;
    e.integer = v.GetInt64();
  } else if (v.IsUint64()) {
    e.kind = Ej::Kind::kInteger;
    e.integer = static_cast<int64_t>(v.GetUint64());
  } else {
    e.kind = Ej::Kind::kFloat;
    e.number = v.GetDouble();
  }
  return e;
}

// What mango's ?MANGO_ERROR throws. Thrown and caught in this file only
// (NormalSelectorTerm), so the rewriting reads as CouchDB's does.
struct Invalid {
  std::string reason;
};

bool IsOperator(const std::string& key) { return !key.empty() && key[0] == '$'; }
bool OneOf(const std::string& key, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), key) != names.end();
}

Ej MapList(const Ej& list, Ej (*f)(const Ej&)) {
  std::vector<Ej> out;
  out.reserve(list.items.size());
  for (const Ej& item : list.items) out.push_back(f(item));
  return Ej::Array(std::move(out));
}

// norm_ops/1.
Ej NormOps(const Ej& v) {
  if (v.single()) {
    const std::string& k = v.key();
    const Ej& a = v.arg();
    auto bad = [&]() -> Ej { throw Invalid{"Bad argument for operator " + k}; };
    if (OneOf(k, {"$and", "$or", "$nor"})) {
      if (!a.is_list()) return bad();
      return Ej::Object(k, MapList(a, NormOps));
    }
    if (OneOf(k, {"$not", "$elemMatch", "$allMatch", "$keyMapMatch"})) {
      if (!a.is_object()) return bad();
      return Ej::Object(k, NormOps(a));
    }
    if (OneOf(k, {"$in", "$nin", "$all"})) return a.is_list() ? v : bad();
    if (k == "$exists") return a.kind == Ej::Kind::kBool ? v : bad();
    if (OneOf(k, {"$type", "$regex", "$beginsWith"})) {
      return a.kind == Ej::Kind::kString ? v : bad();
    }
    if (k == "$mod") {
      bool ok = a.is_list() && a.items.size() == 2 &&
                a.items[0].kind == Ej::Kind::kInteger && a.items[1].kind == Ej::Kind::kInteger;
      return ok ? v : bad();
    }
    if (k == "$size") return a.kind == Ej::Kind::kInteger && a.integer >= 0 ? v : bad();
    if (k == "$text") {
      if (a.kind != Ej::Kind::kString && a.kind != Ej::Kind::kInteger &&
          a.kind != Ej::Kind::kFloat && a.kind != Ej::Kind::kBool) {
        return bad();
      }
      return Ej::Object("$default", v);
    }
    if (OneOf(k, {"$default", "$lt", "$lte", "$eq", "$ne", "$gte", "$gt"})) return v;
    if (IsOperator(k)) throw Invalid{"Invalid operator: " + k};
    return Ej::Object(k, NormOps(a));  // {Field: Cond}
  }
  if (v.is_object() && v.props.size() >= 2) {  // an implicit $and
    std::vector<Ej> terms;
    for (const auto& [k, a] : v.props) terms.push_back(NormOps(Ej::Object(k, a)));
    return Ej::Object("$and", Ej::Array(std::move(terms)));
  }
  return Ej::Object("$eq", v);  // a bare value means equality
}

Ej NormFields(const Ej& v, const std::string& path);

// norm_fields/1.
Ej NormFieldsTop(const Ej& v) {
  if (v.is_object() && v.props.empty()) return v;
  return NormFields(v, "");
}

// norm_fields/2.
Ej NormFields(const Ej& v, const std::string& path) {
  if (!v.single()) throw Invalid{"Invalid selector: bad field"};
  const std::string& k = v.key();
  const Ej& a = v.arg();
  if (OneOf(k, {"$and", "$or", "$nor"})) {
    std::vector<Ej> terms;
    for (const Ej& item : a.items) terms.push_back(NormFields(item, path));
    return Ej::Object(k, Ej::Array(std::move(terms)));
  }
  if (k == "$not") return Ej::Object(k, NormFields(a, path));
  if (OneOf(k, {"$elemMatch", "$allMatch", "$keyMapMatch"})) {
    return Ej::Object(path, Ej::Object(k, NormFieldsTop(a)));
  }
  if (k == "$default") {
    if (path.empty() && a.single() && a.key() == "$text") return v;
    throw Invalid{"Invalid selector: bad field"};
  }
  if (IsOperator(k)) return Ej::Object(path, v);  // a terminal
  return NormFields(a, path.empty() ? k : path + "." + k);
}

Ej Negate(const Ej& v);

// norm_negations/1.
Ej NormNegations(const Ej& v) {
  if (!v.single()) return v;
  const std::string& k = v.key();
  const Ej& a = v.arg();
  if (k == "$not") return Negate(a);
  if (k == "$nor") return Ej::Object("$and", MapList(a, Negate));
  if (OneOf(k, {"$and", "$or"})) return Ej::Object(k, MapList(a, NormNegations));
  if (OneOf(k, {"$elemMatch", "$allMatch", "$keyMapMatch"})) {
    return Ej::Object(k, NormNegations(a));
  }
  return v;
}

// negate/1.
Ej Negate(const Ej& v) {
  if (!v.single()) throw Invalid{"Invalid selector: cannot negate"};
  const std::string& k = v.key();
  const Ej& a = v.arg();
  if (k == "$not") return NormNegations(a);
  if (k == "$nor") return Ej::Object("$or", MapList(a, NormNegations));
  if (k == "$and") return Ej::Object("$or", MapList(a, Negate));
  if (k == "$or") return Ej::Object("$and", MapList(a, Negate));
  if (k == "$default") throw Invalid{"Bad argument for operator $not"};
  static const std::pair<std::string_view, std::string_view> kOpposites[] = {
      {"$lt", "$gte"}, {"$lte", "$gt"}, {"$eq", "$ne"},  {"$ne", "$eq"},
      {"$gte", "$lt"}, {"$gt", "$lte"}, {"$in", "$nin"}, {"$nin", "$in"}};
  for (const auto& [op, opposite] : kOpposites) {
    if (k == op) return Ej::Object(std::string(opposite), a);
  }
  if (k == "$exists") return Ej::Object(k, Ej::Bool(!a.boolean));
  if (IsOperator(k)) return Ej::Object("$not", v);
  return Ej::Object(k, Negate(a));  // a field: negate its condition
}

// ejsort/1, to the term: members sorted by name. lists:keysort is stable
// over the members accumulated in reverse, so repeated names end up last
// given, first.
ErlTerm SortedTerm(const Ej& v) {
  switch (v.kind) {
    case Ej::Kind::kObject: {
      std::vector<const std::pair<std::string, Ej>*> members;
      for (auto it = v.props.rbegin(); it != v.props.rend(); ++it) members.push_back(&*it);
      std::stable_sort(members.begin(), members.end(),
                       [](const auto* x, const auto* y) { return x->first < y->first; });
      ErlTerm list = ErlTerm::List();
      for (const auto* m : members) {
        list.Add(ErlTerm::Tuple().Add(ErlTerm::Binary(m->first)).Add(SortedTerm(m->second)));
      }
      return ErlTerm::Tuple().Add(list);
    }
    case Ej::Kind::kArray: {
      ErlTerm list = ErlTerm::List();
      for (const Ej& item : v.items) list.Add(SortedTerm(item));
      return list;
    }
    case Ej::Kind::kString: return ErlTerm::Binary(v.text);
    case Ej::Kind::kInteger: return ErlTerm::Integer(v.integer);
    case Ej::Kind::kFloat: return ErlTerm::Float(v.number);
    case Ej::Kind::kBool: return ErlTerm::Atom(v.boolean ? "true" : "false");
    case Ej::Kind::kNull: return ErlTerm::Atom("null");
  }
  return ErlTerm::Atom("null");
}

}  // namespace

Result<ErlTerm> NormalSelectorTerm(std::string_view selector_json) {
  json::Document d;
  Status s = json::Parse(selector_json, &d);
  if (!s.ok()) return s;
  if (!d.IsObject()) return Status::BadRequest("selector must be a JSON object");
  Ej selector = FromJson(d);
  if (selector.props.empty()) return SortedTerm(selector);  // normalize({[]})
  try {
    Ej normal = NormNegations(NormFieldsTop(NormOps(selector)));
    for (const auto& [name, value] : normal.props) {
      if (name.empty()) return Status::BadRequest("Invalid selector: missing field name");
    }
    return SortedTerm(normal);
  } catch (const Invalid& e) {
    return Status::BadRequest(e.reason);
  }
}

}  // namespace settee::replication
