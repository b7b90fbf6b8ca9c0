#include "storage/design_doc_check.h"

#include <initializer_list>
#include <iterator>
#include <string_view>
#include <utility>

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

// The views of `body` (lib aside), each an object by CheckFields, in
// document order.
std::vector<std::pair<std::string_view, const json::Value*>> ViewsOf(const json::Value& body) {
  std::vector<std::pair<std::string_view, const json::Value*>> out;
  auto views = body.FindMember("views");
  if (views == body.MemberEnd() || !views->value.IsObject()) return out;
  for (auto& view : views->value.GetObject()) {
    if (json::View(view.name) == "lib" || !view.value.IsObject()) continue;
    out.emplace_back(json::View(view.name), &view.value);
  }
  return out;
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
  const auto views = ViewsOf(body);
  for (const auto& [name, view] : views) {
    if (!view->HasMember("map")) {
      return Status(Status::Code::kInvalidDesignDoc, "View `" + std::string(name) + "` must contain map function");
    }
  }
  // Built-in reduces are known by prefix, as CouchDB matches them.
  for (const auto& [name, view] : views) {
    auto r = view->FindMember("reduce");
    if (r == view->MemberEnd()) continue;
    std::string_view reduce = json::View(r->value);
    if (reduce.empty() || reduce[0] != '_') continue;
    bool builtin = false;
    for (std::string_view b : {"_sum", "_count", "_stats", "_approx_count_distinct"}) {
      builtin = builtin || reduce.substr(0, b.size()) == b;
    }
    if (!builtin) {
      return Status(Status::Code::kInvalidDesignDoc, "`" + std::string(reduce) + "` is not a supported reduce function.");
    }
  }
  return Status::OK();
}

std::vector<FunctionToCompile> FunctionsToCompile(const json::Value& body) {
  std::vector<FunctionToCompile> maps, reduces;
  if (!IsJavaScript(body)) return maps;
  for (const auto& [name, view] : ViewsOf(body)) {
    auto map = view->FindMember("map");
    if (map != view->MemberEnd() && map->value.IsString()) {
      maps.push_back({"map", std::string(name), std::string(json::View(map->value))});
    }
    auto reduce = view->FindMember("reduce");
    if (reduce != view->MemberEnd() && reduce->value.IsString()) {
      std::string_view source = json::View(reduce->value);
      if (source.empty() || source[0] != '_') reduces.push_back({"reduce", std::string(name), std::string(source)});
    }
  }
  // Maps first, then reduces, as CouchDB compiles them.
  maps.insert(maps.end(), std::make_move_iterator(reduces.begin()), std::make_move_iterator(reduces.end()));
  return maps;
}

Status CompilationError(const FunctionToCompile& f, const std::string& message) {
  return Status(Status::Code::kCompilationError,
                "Compilation of the " + f.kind + " function in the '" + f.view + "' view failed: " + message);
}

}  // namespace settee::design
