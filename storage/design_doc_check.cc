#include "storage/design_doc_check.h"

#include <initializer_list>
#include <string_view>

namespace settee::design {

namespace {

enum Type : unsigned { kObject = 1, kString = 2, kArray = 4, kBoolean = 8 };

bool HasType(const json::Value& v, unsigned types) {
  return ((types & kObject) && v.IsObject()) || ((types & kString) && v.IsString()) ||
         ((types & kArray) && v.IsArray()) || ((types & kBoolean) && v.IsBool());
}

std::string TypeName(unsigned types) {
  std::string out;
  for (auto [bit, name] : {std::pair{kObject, "object"}, {kString, "string"}, {kArray, "array"},
                           {kBoolean, "boolean"}}) {
    if (!(types & bit)) continue;
    if (!out.empty()) out += " or ";
    out += name;
  }
  return out;
}

// One step of a rule's path: a member by name, or every member (`name`
// empty, CouchDB's `any`), which must have one of `types`.
struct Step {
  std::string_view name;
  unsigned types;
};

// CouchDB's validate_ddoc_fields/3: walks `path` from `v`; a member that is
// absent ends the walk (only present fields are checked).
Status Walk(const json::Value& v, const Step* step, const Step* end, std::string* at) {
  if (step == end || !v.IsObject()) return Status::OK();
  auto check = [&](std::string_view name, const json::Value& member) -> Status {
    const size_t mark = at->size();
    if (!at->empty()) *at += '.';
    at->append(name);
    if (!HasType(member, step->types)) {
      return Status(Status::Code::kInvalidDesignDoc,
                    "`" + *at + "` field must have " + TypeName(step->types) + " type");
    }
    Status s = Walk(member, step + 1, end, at);
    at->resize(mark);
    return s;
  };
  if (step->name.empty()) {
    for (auto& m : v.GetObject()) {
      Status s = check(json::View(m.name), m.value);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }
  auto m = v.FindMember(rapidjson::StringRef(step->name.data(), step->name.size()));
  if (m == v.MemberEnd()) return Status::OK();
  return check(step->name, m->value);
}

bool IsQueryLanguage(const json::Value& body) {
  auto lang = body.FindMember("language");
  return lang != body.MemberEnd() && lang->value.IsString() && json::View(lang->value) == "query";
}

bool IsJavaScript(const json::Value& body) {
  auto lang = body.FindMember("language");
  return lang == body.MemberEnd() || (lang->value.IsString() && json::View(lang->value) == "javascript");
}

// The views of `body` (lib aside), each an object by CheckFields.
template <typename Fn>
void ForEachView(const json::Value& body, Fn fn) {
  auto views = body.FindMember("views");
  if (views == body.MemberEnd() || !views->value.IsObject()) return;
  for (auto& view : views->value.GetObject()) {
    if (json::View(view.name) == "lib" || !view.value.IsObject()) continue;
    fn(json::View(view.name), view.value);
  }
}

}  // namespace

Status CheckFields(const json::Value& body) {
  const unsigned map_type = IsQueryLanguage(body) ? kObject : kString;
  const std::initializer_list<std::initializer_list<Step>> rules = {
      {{"filters", kObject}, {"", kObject | kString}},
      {{"language", kString}},
      {{"lists", kObject}, {"", kObject | kString}},
      {{"options", kObject}},
      {{"options", kObject}, {"include_design", kBoolean}},
      {{"options", kObject}, {"local_seq", kBoolean}},
      {{"options", kObject}, {"partitioned", kBoolean}},
      {{"rewrites", kString | kArray}},
      {{"shows", kObject}, {"", kObject | kString}},
      {{"updates", kObject}, {"", kObject | kString}},
      {{"validate_doc_update", kString}},
      {{"views", kObject}, {"lib", kObject}},
      {{"views", kObject}, {"", kObject}, {"map", map_type}},
      {{"views", kObject}, {"", kObject}, {"reduce", kString}},
  };
  std::string at;
  for (const auto& rule : rules) {
    Status s = Walk(body, rule.begin(), rule.end(), &at);
    if (!s.ok()) return s;
  }
  Status missing_map = Status::OK();
  ForEachView(body, [&](std::string_view name, const json::Value& view) {
    if (missing_map.ok() && !view.HasMember("map")) {
      missing_map = Status(Status::Code::kInvalidDesignDoc, "View `" + std::string(name) + "` must contain map function");
    }
  });
  if (!missing_map.ok()) return missing_map;
  // Built-in reduces are known by prefix, as CouchDB matches them.
  Status bad_reduce = Status::OK();
  ForEachView(body, [&](std::string_view, const json::Value& view) {
    auto r = view.FindMember("reduce");
    if (!bad_reduce.ok() || r == view.MemberEnd()) return;
    std::string_view reduce = json::View(r->value);
    if (reduce.empty() || reduce[0] != '_') return;
    for (std::string_view builtin : {"_sum", "_count", "_stats", "_approx_count_distinct"}) {
      if (reduce.substr(0, builtin.size()) == builtin) return;
    }
    bad_reduce = Status(Status::Code::kInvalidDesignDoc,
                        "`" + std::string(reduce) + "` is not a supported reduce function.");
  });
  return bad_reduce;
}

std::vector<FunctionToCompile> FunctionsToCompile(const json::Value& body) {
  std::vector<FunctionToCompile> out;
  if (!IsJavaScript(body)) return out;
  ForEachView(body, [&](std::string_view name, const json::Value& view) {
    auto map = view.FindMember("map");
    if (map != view.MemberEnd() && map->value.IsString()) {
      out.push_back({"map", std::string(name), std::string(json::View(map->value))});
    }
  });
  ForEachView(body, [&](std::string_view name, const json::Value& view) {
    auto reduce = view.FindMember("reduce");
    if (reduce == view.MemberEnd() || !reduce->value.IsString()) return;
    std::string_view source = json::View(reduce->value);
    if (!source.empty() && source[0] == '_') return;
    out.push_back({"reduce", std::string(name), std::string(source)});
  });
  return out;
}

Status CompilationError(const FunctionToCompile& f, const std::string& message) {
  return Status(Status::Code::kCompilationError,
                "Compilation of the " + f.kind + " function in the '" + f.view + "' view failed: " + message);
}

}  // namespace settee::design
