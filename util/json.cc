#include "util/json.h"

#include <algorithm>
#include <vector>

#include <rapidjson/error/en.h>

namespace settee::json {

bool NestingWithinLimit(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

void WriteCanonical(const Value& v, Writer& w) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    members.reserve(v.MemberCount());
    for (auto& m : v.GetObject()) members.push_back(&m);
    std::stable_sort(members.begin(), members.end(), [](auto* a, auto* b) {
      return View(a->name) < View(b->name);
    });
    w.StartObject();
    for (auto* m : members) {
      w.String(m->name.GetString(), m->name.GetStringLength());
      WriteCanonical(m->value, w);
    }
    w.EndObject();
  } else if (v.IsArray()) {
    w.StartArray();
    for (auto& e : v.GetArray()) WriteCanonical(e, w);
    w.EndArray();
  } else {
    v.Accept(w);
  }
}

namespace {

template <typename Doc>
Status ParseInto(std::string_view text, Doc* doc) {
  if (!NestingWithinLimit(text)) {
    return Status::BadRequest("JSON nesting is deeper than " + std::to_string(kMaxNestingDepth));
  }
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  doc->template Parse<kFlags>(text.data(), text.size());
  if (doc->HasParseError()) {
    return Status::BadRequest(std::string("invalid UTF-8 JSON: ") +
                              rapidjson::GetParseError_En(doc->GetParseError()) + " at offset " +
                              std::to_string(doc->GetErrorOffset()));
  }
  return Status::OK();
}

}  // namespace

Status Parse(std::string_view text, Document* doc) { return ParseInto(text, doc); }
Status Parse(std::string_view text, ScratchDoc* doc) { return ParseInto(text, doc); }

ScratchDoc& ScratchDocument() {
  // 16 KiB arenas cover typical documents without touching malloc; larger
  // ones spill into chunks that Clear() releases on the next call.
  struct Scratch {
    char value_arena[16 << 10];
    char stack_arena[4 << 10];
    rapidjson::MemoryPoolAllocator<> values{value_arena, sizeof value_arena};
    rapidjson::MemoryPoolAllocator<> stack{stack_arena, sizeof stack_arena};
    ScratchDoc doc{&values, 1024, &stack};
  };
  thread_local Scratch scratch;
  scratch.doc.SetNull();
  scratch.values.Clear();
  scratch.stack.Clear();
  return scratch.doc;
}

void SerializeTo(const Value& v, std::string* out) {
  StringOutput os(out);
  Writer w(os);
  v.Accept(w);
}

std::string Serialize(const Value& v) {
  std::string out;
  SerializeTo(v, &out);
  return out;
}

std::string Canonical(const Value& v) {
  std::string out;
  StringOutput os(&out);
  Writer w(os);
  WriteCanonical(v, w);
  return out;
}

void AppendQuoted(std::string* out, std::string_view s) {
  StringOutput os(out);
  Writer w(os);
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

std::string Quote(std::string_view s) {
  std::string out;
  AppendQuoted(&out, s);
  return out;
}

}  // namespace settee::json
