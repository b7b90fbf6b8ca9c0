#include "storage/mango_selector.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include "storage/collation.h"

namespace settee::mango {

namespace {

// $regex. CouchDB matches with Erlang's re (PCRE), and PouchDB with JS
// RegExp; ICU's engine takes that Perl syntax ((?i), \d, lookaround, ...).
// std::regex, used before, recursed once per character matched: a pattern
// such as ^(a|b)*c on a 100 KB string overflowed the thread's stack and
// killed the server. ICU backtracks on a heap stack with a size limit and
// stops after a time limit; a match that hits either counts as no match, as
// mango_selector:match turns re:run's match_limit error into false.
class Regex {
 public:
  // Null when ICU refuses the pattern.
  static std::shared_ptr<const Regex> Compile(std::string_view pattern) {
    UErrorCode status = U_ZERO_ERROR;
    UParseError where;
    std::unique_ptr<icu::RegexPattern> p(icu::RegexPattern::compile(
        icu::UnicodeString::fromUTF8(icu::StringPiece(pattern.data(), static_cast<int32_t>(pattern.size()))),
        0, where, status));
    if (U_FAILURE(status) || p == nullptr) return nullptr;
    auto r = std::make_shared<Regex>();
    r->pattern_ = std::move(p);
    return r;
  }

  // Whether the pattern matches somewhere in `text` (UTF-8).
  bool Search(std::string_view text) const {
    // A RegexPattern may be shared by threads; each search has its matcher.
    const icu::UnicodeString input =
        icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> m(pattern_->matcher(input, status));
    if (U_FAILURE(status) || m == nullptr) return false;
    m->setTimeLimit(kTimeLimit, status);
    m->setStackLimit(kStackLimitBytes, status);
    if (U_FAILURE(status)) return false;
    const bool found = m->find(status);
    return U_SUCCESS(status) && found;
  }

 private:
  // ICU's time limit counts steps of its engine, "on the order of
  // milliseconds" each; kStackLimitBytes bounds its backtracking stack.
  static constexpr int32_t kTimeLimit = 1000;
  static constexpr int32_t kStackLimitBytes = 8 << 20;
  std::unique_ptr<icu::RegexPattern> pattern_;
};

}  // namespace

struct Selector::Node {
  enum Kind { kAnd, kOr, kNor, kNot, kField, kOp } kind = kAnd;
  std::vector<std::shared_ptr<Node>> children;  // kAnd/kOr/kNor/kNot; kField: its one condition
  std::vector<std::string> path;                // kField
  std::string field;                            // kField: dotted
  std::string op;                               // kOp
  const json::Value* arg = nullptr;             // kOp
  std::shared_ptr<Node> sub;                    // kOp $elemMatch/$allMatch/$keyMapMatch
  std::shared_ptr<const Regex> regex;          // kOp $regex
};

namespace {

using Node = Selector::Node;
using NodeP = std::shared_ptr<Node>;

Status Invalid(std::string op) { return Status(Status::Code::kInvalidOperator, "Invalid operator: " + op); }
Status Bad(std::string reason) { return Status::BadRequest(std::move(reason)); }

std::string JoinPath(const std::vector<std::string>& path) {
  std::string s;
  for (size_t i = 0; i < path.size(); ++i) {
    if (i) s += '.';
    for (char c : path[i]) {
      if (c == '.') s += '\\';
      s += c;
    }
  }
  return s;
}

Result<NodeP> ParseSelector(const json::Value& sel, const std::vector<std::string>& path);

NodeP FieldNode(const std::vector<std::string>& path, NodeP cond) {
  auto n = std::make_shared<Node>();
  n->kind = Node::kField;
  n->path = path;
  n->field = JoinPath(path);
  n->children.push_back(std::move(cond));
  return n;
}

// One operator `op` with argument `arg` on the field at `path`.
Result<NodeP> ParseOperator(std::string_view op, const json::Value& arg,
                            const std::vector<std::string>& path) {
  auto combine = [&](Node::Kind kind) -> Result<NodeP> {
    if (!arg.IsArray()) return Bad("Invalid argument: " + std::string(op) + " requires an array");
    auto n = std::make_shared<Node>();
    n->kind = kind;
    for (auto& s : arg.GetArray()) {
      if (!s.IsObject()) return Bad("Invalid argument: " + std::string(op) + " requires an array of objects");
      auto c = ParseSelector(s, path);
      if (!c.ok()) return c.status();
      n->children.push_back(*c);
    }
    return n;
  };
  if (op == "$and") return combine(Node::kAnd);
  if (op == "$or") return combine(Node::kOr);
  if (op == "$nor") return combine(Node::kNor);
  if (op == "$not") {
    if (!arg.IsObject()) return Bad("Invalid argument: $not requires an object");
    auto c = ParseSelector(arg, path);
    if (!c.ok()) return c.status();
    auto n = std::make_shared<Node>();
    n->kind = Node::kNot;
    n->children.push_back(*c);
    return n;
  }
  auto n = std::make_shared<Node>();
  n->kind = Node::kOp;
  n->op = std::string(op);
  n->arg = &arg;
  if (op == "$eq" || op == "$ne" || op == "$gt" || op == "$gte" || op == "$lt" || op == "$lte") {
  } else if (op == "$in" || op == "$nin" || op == "$all") {
    if (!arg.IsArray()) return Bad("Invalid argument: " + std::string(op) + " requires an array");
  } else if (op == "$exists") {
    if (!arg.IsBool()) return Bad("Invalid argument: $exists requires a boolean");
  } else if (op == "$type") {
    static const char* kTypes[] = {"null", "boolean", "number", "string", "array", "object"};
    bool known = false;
    if (arg.IsString()) {
      for (const char* t : kTypes) known = known || json::View(arg) == t;
    }
    if (!known) return Bad("Invalid argument: $type requires one of null, boolean, number, string, array, object");
  } else if (op == "$size") {
    if (!arg.IsNumber() || arg.GetDouble() < 0 || arg.GetDouble() != std::floor(arg.GetDouble())) {
      return Bad("Invalid argument: $size requires a non-negative integer");
    }
  } else if (op == "$mod") {
    if (!arg.IsArray() || arg.Size() != 2 || !arg[0].IsInt64() || !arg[1].IsInt64() || arg[0].GetInt64() == 0) {
      return Bad("Invalid argument: $mod requires [divisor, remainder] with a non-zero integer divisor");
    }
  } else if (op == "$regex") {
    if (!arg.IsString()) return Bad("Invalid argument: $regex requires a string");
    n->regex = Regex::Compile(json::View(arg));
    if (n->regex == nullptr) return Bad("Invalid argument: bad regular expression: " + std::string(json::View(arg)));
  } else if (op == "$beginsWith") {
    if (!arg.IsString()) return Bad("Invalid argument: $beginsWith requires a string");
  } else if (op == "$elemMatch" || op == "$allMatch" || op == "$keyMapMatch") {
    if (!arg.IsObject()) return Bad("Invalid argument: " + std::string(op) + " requires an object");
    auto sub = ParseSelector(arg, {});
    if (!sub.ok()) return sub.status();
    n->sub = *sub;
  } else {
    return Invalid(std::string(op));
  }
  return FieldNode(path, n);
}

Result<NodeP> ParseSelector(const json::Value& sel, const std::vector<std::string>& path) {
  auto all = std::make_shared<Node>();
  all->kind = Node::kAnd;
  if (!sel.IsObject()) {
    // A bare value under a field is an equality.
    auto r = ParseOperator("$eq", sel, path);
    if (!r.ok()) return r.status();
    return *r;
  }
  for (auto& m : sel.GetObject()) {
    std::string_view name = json::View(m.name);
    Result<NodeP> c = NodeP();
    if (!name.empty() && name[0] == '$') {
      c = ParseOperator(name, m.value, path);
    } else {
      std::vector<std::string> sub = path;
      for (auto& part : SplitField(name)) sub.push_back(part);
      if (m.value.IsObject() && m.value.MemberCount() > 0) {
        c = ParseSelector(m.value, sub);
      } else {
        c = ParseOperator("$eq", m.value, sub);
      }
    }
    if (!c.ok()) return c.status();
    all->children.push_back(*c);
  }
  if (all->children.size() == 1) return all->children[0];
  return all;
}

int Cmp(const json::Value& a, const json::Value& b, bool raw) {
  return raw ? collation::CompareRaw(a, b) : collation::Compare(a, b);
}

bool MatchNode(const Node& n, const json::Value& v, bool raw);

// Operator `n` applied to the field's value `v`.
bool MatchOp(const Node& n, const json::Value& v, bool raw) {
  const std::string& op = n.op;
  const json::Value& a = *n.arg;
  if (op == "$eq") return Cmp(v, a, raw) == 0;
  if (op == "$ne") return Cmp(v, a, raw) != 0;
  if (op == "$gt") return Cmp(v, a, raw) > 0;
  if (op == "$gte") return Cmp(v, a, raw) >= 0;
  if (op == "$lt") return Cmp(v, a, raw) < 0;
  if (op == "$lte") return Cmp(v, a, raw) <= 0;
  if (op == "$in" || op == "$nin") {
    bool found = false;
    for (auto& x : a.GetArray()) {
      if (Cmp(v, x, raw) == 0) found = true;
      if (v.IsArray()) {
        for (auto& e : v.GetArray()) found = found || Cmp(e, x, raw) == 0;
      }
      if (found) break;
    }
    return op == "$in" ? found : !found;
  }
  if (op == "$exists") return a.GetBool();
  if (op == "$type") {
    std::string_view t = json::View(a);
    if (t == "null") return v.IsNull();
    if (t == "boolean") return v.IsBool();
    if (t == "number") return v.IsNumber();
    if (t == "string") return v.IsString();
    if (t == "array") return v.IsArray();
    return v.IsObject();
  }
  // Compared as doubles: a size past SizeType's range (1e300) must match
  // nothing, not wrap to some small count.
  if (op == "$size") return v.IsArray() && static_cast<double>(v.Size()) == a.GetDouble();
  if (op == "$mod") {
    if (!v.IsInt64()) return false;
    int64_t d = a[0].GetInt64(), r = a[1].GetInt64();
    // INT64_MIN % -1 traps (SIGFPE) in C++; Erlang's rem, with bignums,
    // gives 0, as every x rem -1 does.
    if (d == -1) return r == 0;
    return v.GetInt64() % d == r;
  }
  if (op == "$regex") {
    return v.IsString() && n.regex->Search(json::View(v));
  }
  if (op == "$beginsWith") {
    return v.IsString() && json::View(v).substr(0, a.GetStringLength()) == json::View(a);
  }
  if (op == "$all") {
    if (!v.IsArray()) return false;
    for (auto& x : a.GetArray()) {
      bool has = false;
      for (auto& e : v.GetArray()) has = has || Cmp(e, x, raw) == 0;
      if (!has) return false;
    }
    return a.Size() > 0;
  }
  if (op == "$elemMatch") {
    if (!v.IsArray()) return false;
    for (auto& e : v.GetArray()) {
      if (MatchNode(*n.sub, e, false)) return true;
    }
    return false;
  }
  if (op == "$allMatch") {
    if (!v.IsArray() || v.Empty()) return false;
    for (auto& e : v.GetArray()) {
      if (!MatchNode(*n.sub, e, false)) return false;
    }
    return true;
  }
  if (op == "$keyMapMatch") {
    if (!v.IsObject()) return false;
    for (auto& m : v.GetObject()) {
      if (MatchNode(*n.sub, m.name, false)) return true;
    }
    return false;
  }
  return false;
}

bool MatchNode(const Node& n, const json::Value& v, bool raw) {
  switch (n.kind) {
    case Node::kAnd:
      for (auto& c : n.children) {
        if (!MatchNode(*c, v, raw)) return false;
      }
      return true;
    case Node::kOr:
      for (auto& c : n.children) {
        if (MatchNode(*c, v, raw)) return true;
      }
      return false;
    case Node::kNor:
      for (auto& c : n.children) {
        if (MatchNode(*c, v, raw)) return false;
      }
      return true;
    case Node::kNot:
      return !MatchNode(*n.children[0], v, raw);
    case Node::kField: {
      const Node& cond = *n.children[0];
      const json::Value* sub = n.path.empty() ? &v : GetField(v, n.path);
      if (sub == nullptr) return cond.kind == Node::kOp && cond.op == "$exists" && !cond.arg->GetBool();
      // Doc ids compare by code point, as CouchDB's cmp_raw.
      const bool id = n.path.size() == 1 && n.path[0] == "_id";
      return MatchNode(cond, *sub, raw || id);
    }
    case Node::kOp:
      return MatchOp(n, v, raw);
  }
  return false;
}

void ToJsonNode(const Node& n, json::Writer& w) {
  auto list = [&](const char* op) {
    w.StartObject();
    w.Key(op);
    w.StartArray();
    for (auto& c : n.children) ToJsonNode(*c, w);
    w.EndArray();
    w.EndObject();
  };
  switch (n.kind) {
    case Node::kAnd: list("$and"); break;
    case Node::kOr: list("$or"); break;
    case Node::kNor: list("$nor"); break;
    case Node::kNot:
      w.StartObject();
      w.Key("$not");
      ToJsonNode(*n.children[0], w);
      w.EndObject();
      break;
    case Node::kField:
      w.StartObject();
      w.Key(n.field.c_str(), static_cast<rapidjson::SizeType>(n.field.size()));
      ToJsonNode(*n.children[0], w);
      w.EndObject();
      break;
    case Node::kOp:
      w.StartObject();
      w.Key(n.op.c_str(), static_cast<rapidjson::SizeType>(n.op.size()));
      if (n.sub) ToJsonNode(*n.sub, w); else n.arg->Accept(w);
      w.EndObject();
      break;
  }
}

}  // namespace

std::vector<std::string> SplitField(std::string_view dotted) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < dotted.size(); ++i) {
    if (dotted[i] == '\\' && i + 1 < dotted.size() && dotted[i + 1] == '.') {
      parts.back() += '.';
      ++i;
    } else if (dotted[i] == '.') {
      parts.emplace_back();
    } else {
      parts.back() += dotted[i];
    }
  }
  return parts;
}

const json::Value* GetField(const json::Value& doc, const std::vector<std::string>& path) {
  const json::Value* v = &doc;
  for (const std::string& p : path) {
    if (v->IsArray()) {
      // A name that is an integer indexes an array, as in CouchDB's
      // mango_doc:get_field (binary_to_integer: an optional sign, any
      // number of digits); a negative or out-of-range one matches nothing.
      size_t at = (!p.empty() && (p[0] == '+' || p[0] == '-')) ? 1 : 0;
      if (at == p.size() || p.find_first_not_of("0123456789", at) != std::string::npos) return nullptr;
      at = p.find_first_not_of('0', at);  // leading zeros
      if (at == std::string::npos) at = p.size() - 1;  // all zeros: index 0 ("-0" too)
      else if (p[0] == '-') return nullptr;
      if (p.size() - at > 9) return nullptr;  // beyond any array here
      const size_t i = std::stoul(p.substr(at));
      if (i >= v->Size()) return nullptr;
      v = &(*v)[static_cast<rapidjson::SizeType>(i)];
      continue;
    }
    if (!v->IsObject()) return nullptr;
    auto it = v->FindMember(json::Value(rapidjson::StringRef(p.data(), p.size())));
    if (it == v->MemberEnd()) return nullptr;
    v = &it->value;
  }
  return v;
}

Result<Selector> Selector::Parse(const json::Value& selector) {
  if (!selector.IsObject()) return Bad("Selector must be a JSON object");
  Selector s;
  s.args_ = std::make_shared<json::Document>();
  s.args_->CopyFrom(selector, s.args_->GetAllocator());
  auto root = ParseSelector(*s.args_, {});
  if (!root.ok()) return root.status();
  s.root_ = *root;
  return s;
}

bool Selector::Matches(const json::Value& doc) const { return MatchNode(*root_, doc, false); }

std::vector<Selector::FieldCondition> Selector::TopLevelConditions() const {
  std::vector<FieldCondition> out;
  std::vector<const Node*> stack{root_.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (n->kind == Node::kAnd) {
      for (auto& c : n->children) stack.push_back(c.get());
    } else if (n->kind == Node::kField && n->children[0]->kind == Node::kOp) {
      out.push_back(FieldCondition{n->field, n->children[0]->op, n->children[0]->arg});
    } else if (n->kind == Node::kField && n->children[0]->kind == Node::kAnd) {
      for (auto& c : n->children[0]->children) {
        if (c->kind == Node::kField && c->path.empty() && c->children[0]->kind == Node::kOp) {
          out.push_back(FieldCondition{n->field, c->children[0]->op, c->children[0]->arg});
        }
      }
    }
  }
  return out;
}

std::vector<std::string> Selector::RequiredFields() const {
  std::vector<std::string> out;
  for (const FieldCondition& c : TopLevelConditions()) {
    if (c.op == "$exists" && !c.arg->GetBool()) continue;
    if (std::find(out.begin(), out.end(), c.field) == out.end()) out.push_back(c.field);
  }
  return out;
}

std::string Selector::ToJson() const {
  std::string out;
  json::StringOutput sink(&out);
  json::Writer w(sink);
  ToJsonNode(*root_, w);
  return out;
}

}  // namespace settee::mango
