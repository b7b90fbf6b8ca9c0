#include "storage/document.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <rapidjson/internal/dtoa.h>
#include <rapidjson/internal/itoa.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <simdjson.h>

#include "storage/doc_record.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

}  // namespace

SpecialMember Classify(std::string_view name) {
  if (name == "_id") return SpecialMember::kId;
  if (name == "_rev") return SpecialMember::kRev;
  if (name == "_deleted") return SpecialMember::kDeleted;
  if (name == "_revisions") return SpecialMember::kRevisions;
  if (name == "_attachments") return SpecialMember::kAttachments;
  if (name == "_revs_info" || name == "_conflicts" || name == "_deleted_conflicts" ||
      name == "_local_seq") {
    return SpecialMember::kIgnored;
  }
  if (name == "_access" || StartsWith(name, "_replication_")) return SpecialMember::kKept;
  return SpecialMember::kBad;
}

namespace {

// couch_doc:validate_docid's answer to an _id of another type.
Status IdNotAString() { return {Status::Code::kIllegalDocId, "Document id must be a string"}; }

Status ParseRevisions(const json::Value& v, Revisions* out) {
  if (!v.IsObject()) return Status::BadRequest("_revisions must be an object");
  auto start = v.FindMember("start");
  auto ids = v.FindMember("ids");
  if (start == v.MemberEnd() || !start->value.IsUint64() || start->value.GetUint64() < 1) {
    return Status::BadRequest("_revisions.start must be a positive integer");
  }
  if (ids == v.MemberEnd() || !ids->value.IsArray() || ids->value.Empty()) {
    return Status::BadRequest("_revisions.ids must be a non-empty array");
  }
  out->start = start->value.GetUint64();
  if (out->start < ids->value.Size()) {
    return Status::BadRequest("_revisions.start is smaller than the number of ids");
  }
  out->ids.clear();
  for (auto& id : ids->value.GetArray()) {
    if (!id.IsString() || id.GetStringLength() == 0) {
      return Status::BadRequest("_revisions.ids must be non-empty strings");
    }
    out->ids.emplace_back(json::View(id));
  }
  return Status::OK();
}

// A _local/ document has no history, only a counter, so its _revisions is
// read as CouchDB 3 reads it (couch_doc:transfer_fields, then
// couch_db_updater:increment_local_doc_revs): checked for shape, then taken
// as the revision it names, {start: 0, ids: ["N", ...]} being "0-N" (what
// GET ?revs=true gives for a local document), in place of any _rev.
Status LocalRevFromRevisions(const json::Value& v, std::optional<std::string>* rev_text) {
  auto start = v.FindMember("start");
  auto ids = v.FindMember("ids");
  if (start == v.MemberEnd() || !(start->value.IsInt64() || start->value.IsUint64())) {
    return {Status::Code::kDocValidation, "_revisions.start isn't an integer."};
  }
  if (ids == v.MemberEnd() || !ids->value.IsArray()) {
    return {Status::Code::kDocValidation, "_revisions.ids isn't a array."};
  }
  for (const auto& id : ids->value.GetArray()) {
    if (!id.IsString()) return {Status::Code::kDocValidation, "RevId isn't a string"};
    std::string_view text = json::View(id);
    if (text.size() == 32 && text.find_first_not_of("0123456789abcdefABCDEF") != text.npos) {
      return {Status::Code::kDocValidation, "RevId isn't a valid hexadecimal"};
    }
  }
  const bool at_zero = start->value.IsUint64() && start->value.GetUint64() == 0;
  if (at_zero && ids->value.Empty()) return Status::OK();  // names no revision: _rev counts
  if (!at_zero) return Status::BadRequest("Invalid rev format");
  *rev_text = "0-" + std::string(json::View(ids->value[0]));
  return Status::OK();
}

}  // namespace

Status ParseAttachmentsJson(const json::Value& value, std::vector<IncomingAttachment>* out) {
  out->clear();
  if (!value.IsObject()) return Status::BadRequest("_attachments must be an object");
  for (const auto& member : value.GetObject()) {
    IncomingAttachment& att = out->emplace_back();
    att.name.assign(json::View(member.name));
    if (!att.name.empty() && att.name[0] == '_') {
      return Status::BadRequest("Attachment name '" + att.name +
                                "' starts with prohibited character '_'");
    }
    if (att.name.empty()) return Status::BadRequest("Attachment name can't be empty");
    const json::Value& v = member.value;
    if (!v.IsObject()) return Status::BadRequest("Bad attachment: " + att.name);
    auto str = [&v](const char* key, std::string* into) {
      auto it = v.FindMember(key);
      if (it != v.MemberEnd() && it->value.IsString()) into->assign(json::View(it->value));
    };
    auto flag = [&v](const char* key) {
      auto it = v.FindMember(key);
      return it != v.MemberEnd() && it->value.IsBool() && it->value.GetBool();
    };
    str("content_type", &att.content_type);
    str("digest", &att.digest);
    str("encoding", &att.encoding);
    if (auto it = v.FindMember("revpos"); it != v.MemberEnd() && it->value.IsUint64()) {
      att.revpos = it->value.GetUint64();
    }
    if (auto it = v.FindMember("length"); it != v.MemberEnd() && it->value.IsUint64()) {
      att.length = it->value.GetUint64();
    }
    auto data = v.FindMember("data");
    if (data != v.MemberEnd()) {
      // CouchDB's couch_att:inline_from_json: data wins over stub/follows.
      if (!data->value.IsString() || !Base64Decode(json::View(data->value), &att.data)) {
        return Status::BadRequest("Invalid attachment data for " + att.name);
      }
      att.encoding.clear();  // inline data is always the decoded bytes
      continue;
    }
    if (flag("stub")) {
      att.stub = true;
    } else if (flag("follows")) {
      att.follows = true;
    } else {
      return Status::BadRequest("Invalid attachment stub in document for " + att.name);
    }
  }
  return Status::OK();
}

Status CheckAttachmentSizes(const IncomingDoc& doc, uint64_t max_bytes) {
  if (!doc.attachments) return Status::OK();
  for (const IncomingAttachment& att : *doc.attachments) {
    if (att.stub || att.staged) continue;
    // Inline data is the decoded bytes (ParseAttachmentsJson); staged
    // bodies were bounded as they were written.
    if (att.data.size() > max_bytes) return {Status::Code::kAttachmentTooLarge, att.name};
  }
  return Status::OK();
}

Status ValidateDocId(std::string_view id) {
  if (id.empty()) return {Status::Code::kIllegalDocId, "Document id must not be empty"};
  if (id[0] != '_') return Status::OK();
  if (StartsWith(id, kDesignPrefix) && id.size() > kDesignPrefix.size()) return Status::OK();
  if (StartsWith(id, kLocalPrefix) && id.size() > kLocalPrefix.size()) return Status::OK();
  return {Status::Code::kIllegalDocId, "Only reserved document ids may start with underscore."};
}

namespace {

// Parses a client document in one SAX pass: members of the top-level object
// stream straight into the body writer, except the special ones, which are
// captured (or skipped, or rejected) instead. No DOM is built, which roughly
// halves the cost of a write's parse compared to DOM + re-serialization.
class DocHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, DocHandler> {
 public:
  // The body is written into a reusable buffer through `body` (reset by the
  // caller), then copied out once.
  using BodyWriter = rapidjson::Writer<rapidjson::StringBuffer>;
  DocHandler(IncomingDoc* out, BodyWriter& body) : out_(out), body_(body) {}

  const Status& status() const { return status_; }
  const std::optional<std::string>& rev_text() const { return rev_text_; }
  bool saw_id() const { return saw_id_; }
  // The serialized _revisions value, when there was one.
  const std::string& revisions_json() const { return revisions_json_; }
  bool has_revisions() const { return has_revisions_; }
  // The serialized _attachments value, when there was one.
  const std::string& attachments_json() const { return attachments_json_; }
  bool has_attachments() const { return has_attachments_; }

  bool Null() { return Scalar([](auto& w) { return w.Null(); }, Kind::kNull); }
  bool Bool(bool b) {
    if (depth_ == 1 && mode_ == Mode::kDeleted) {
      out_->deleted = b;  // CouchDB treats only the literal true as a deletion
      return true;
    }
    return Scalar([b](auto& w) { return w.Bool(b); }, Kind::kOther);
  }
  bool Int(int i) { return Scalar([i](auto& w) { return w.Int(i); }, Kind::kOther); }
  bool Uint(unsigned u) { return Scalar([u](auto& w) { return w.Uint(u); }, Kind::kOther); }
  bool Int64(int64_t i) { return Scalar([i](auto& w) { return w.Int64(i); }, Kind::kOther); }
  bool Uint64(uint64_t u) {
    return Scalar([u](auto& w) { return w.Uint64(u); }, Kind::kOther);
  }
  bool Double(double d) { return Scalar([d](auto& w) { return w.Double(d); }, Kind::kOther); }
  bool String(const char* str, rapidjson::SizeType len, bool) {
    if (depth_ == 1 && (mode_ == Mode::kId || mode_ == Mode::kRev)) {
      (mode_ == Mode::kId ? out_->id : rev_text_.emplace()).assign(str, len);
      return true;
    }
    return Scalar([&](auto& w) { return w.String(str, len); }, Kind::kOther);
  }

  bool StartObject() { return Open(/*object=*/true); }
  bool StartArray() { return Open(/*object=*/false); }
  bool EndObject(rapidjson::SizeType) { return Close(/*object=*/true); }
  bool EndArray(rapidjson::SizeType) { return Close(/*object=*/false); }

  bool Key(const char* str, rapidjson::SizeType len, bool) {
    if (depth_ > 1) return Forward([&](auto& w) { return w.Key(str, len); });
    std::string_view name(str, len);
    mode_ = Mode::kBody;
    if (!name.empty() && name[0] == '_') {
      switch (Classify(name)) {
        case SpecialMember::kId: mode_ = Mode::kId; saw_id_ = true; return true;
        case SpecialMember::kRev: mode_ = Mode::kRev; return true;
        case SpecialMember::kDeleted: mode_ = Mode::kDeleted; return true;
        case SpecialMember::kRevisions:
          mode_ = Mode::kRevisions;
          has_revisions_ = true;
          revisions_json_.clear();
          return true;
        case SpecialMember::kIgnored: mode_ = Mode::kSkip; return true;
        case SpecialMember::kAttachments:
          mode_ = Mode::kAttachments;
          has_attachments_ = true;
          attachments_json_.clear();
          return true;
        case SpecialMember::kKept: break;
        case SpecialMember::kBad:
          return Fail({Status::Code::kDocValidation,
                       "Bad special document member: " + std::string(name)});
      }
    }
    return body_.Key(str, len);
  }

 private:
  enum class Mode { kBody, kId, kRev, kDeleted, kRevisions, kAttachments, kSkip };
  enum class Kind { kNull, kOther };

  bool Fail(Status s) {
    status_ = std::move(s);
    return false;
  }

  // Sends an event to wherever the current member goes.
  template <typename F>
  bool Forward(F&& emit) {
    switch (mode_) {
      case Mode::kBody: return emit(body_);
      case Mode::kRevisions: return emit(*revisions_);
      case Mode::kAttachments: return emit(*attachments_);
      case Mode::kSkip: return true;
      case Mode::kId: return Fail(IdNotAString());
      case Mode::kRev: return Fail(Status::BadRequest("Invalid rev format"));
      case Mode::kDeleted: return true;  // a non-boolean _deleted is not a deletion
    }
    return true;
  }

  template <typename F>
  bool Scalar(F&& emit, Kind kind) {
    if (depth_ == 0) return Fail(Status::BadRequest("Document must be a JSON object"));
    if (depth_ == 1 && mode_ == Mode::kRevisions) {
      return Fail(Status::BadRequest("_revisions must be an object"));
    }
    if (depth_ == 1 && mode_ == Mode::kAttachments) {
      return Fail(Status::BadRequest("_attachments must be an object"));
    }
    if (depth_ == 1 && mode_ == Mode::kId && kind == Kind::kNull) {
      return Fail(IdNotAString());
    }
    return Forward(emit);
  }

  bool Open(bool object) {
    // The parser and writer are iterative, but later consumers of stored
    // bodies (collation, V8 conversion) recurse: bound the depth here.
    if (depth_ >= json::kMaxNestingDepth) {
      return Fail(Status::BadRequest("JSON nesting is deeper than " +
                                     std::to_string(json::kMaxNestingDepth)));
    }
    if (depth_ == 0) {
      if (!object) return Fail(Status::BadRequest("Document must be a JSON object"));
      depth_ = 1;
      return body_.StartObject();
    }
    if (depth_ == 1 && mode_ == Mode::kRevisions) {
      if (!object) return Fail(Status::BadRequest("_revisions must be an object"));
      revisions_out_.emplace(&revisions_json_);
      revisions_.emplace(*revisions_out_);
    }
    if (depth_ == 1 && mode_ == Mode::kAttachments) {
      if (!object) return Fail(Status::BadRequest("_attachments must be an object"));
      attachments_out_.emplace(&attachments_json_);
      attachments_.emplace(*attachments_out_);
    }
    ++depth_;
    return Forward([object](auto& w) { return object ? w.StartObject() : w.StartArray(); });
  }

  bool Close(bool object) {
    --depth_;
    if (depth_ == 0) return body_.EndObject();
    return Forward([object](auto& w) { return object ? w.EndObject() : w.EndArray(); });
  }

  IncomingDoc* out_;
  BodyWriter& body_;
  std::optional<json::StringOutput> revisions_out_;
  std::optional<json::Writer> revisions_;
  std::string revisions_json_;
  bool has_revisions_ = false;
  std::optional<json::StringOutput> attachments_out_;
  std::optional<json::Writer> attachments_;
  std::string attachments_json_;
  bool has_attachments_ = false;
  bool saw_id_ = false;
  std::optional<std::string> rev_text_;
  Status status_;
  int depth_ = 0;
  Mode mode_ = Mode::kBody;
};

}  // namespace

namespace {

// What follows either parser: the URL's id wins over the body's, and the id
// and rev are checked.
Status FinishIncomingDoc(std::string_view id_override, bool saw_id,
                         const std::optional<std::string>& rev_text, IncomingDoc* out) {
  if (!id_override.empty()) out->id.assign(id_override);
  if (!out->id.empty() || saw_id) {
    Status s = ValidateDocId(out->id);
    if (!s.ok()) return s;
  }
  if (rev_text) {
    out->rev_text = *rev_text;
    // _local/ documents carry "0-N" revisions, checked by the writer.
    if (!IsLocalDocId(out->id)) {
      RevId rev;
      if (!RevId::Parse(out->rev_text, &rev)) return Status::BadRequest("Invalid rev format");
      out->rev = std::move(rev);
    }
  }
  return Status::OK();
}

}  // namespace

Status FinishSplitDoc(bool saw_id, const std::optional<std::string>& rev_text, IncomingDoc* out) {
  return FinishIncomingDoc({}, saw_id, rev_text, out);
}

namespace {

// The fast path: simdjson validates the whole text (structure, UTF-8) with
// SIMD and builds a tape, from which the body is written out. It takes only
// plain documents — an object whose special members are a string _id, a
// string _rev and _deleted — and the numbers simdjson holds exactly (not
// integers past 64 bits). It returns false, having changed nothing the
// caller keeps, for everything else, which the RapidJSON path below then
// accepts or rejects with its precise error. Both write byte-identical
// bodies (json::AppendQuoted and RapidJSON's number formatting), so a
// document's revision id does not depend on which path parsed it.
bool HasBackslash(std::string_view text) {
  return !text.empty() && std::memchr(text.data(), '\\', text.size()) != nullptr;
}

// Writes JSON from a simdjson tape through a cursor into the string's own
// buffer, which grows per value (when a value may not fit), not per byte.
class TapeWriter {
 public:
  // Writes into `out` (replacing its contents), expecting about `expected`
  // bytes; Finish() trims it to what was written. `escapes_possible`: the
  // source text has a backslash. Without one no string in it can need
  // escaping, as JSON strings hold '"', '\\' and control characters only
  // escaped (simdjson refuses them raw), so the per-string check is skipped.
  TapeWriter(std::string* out, size_t expected, bool escapes_possible)
      : out_(out), escapes_possible_(escapes_possible) {
    out_->resize(std::max<size_t>(expected, 32));
    p_ = out_->data();
    end_ = p_ + out_->size();
  }
  void Finish() { out_->resize(p_ - out_->data()); }

  void Char(char c) {
    Room(1);
    *p_++ = c;
  }
  void Quoted(std::string_view s) {
    if (escapes_possible_ && NeedsEscape(s)) {
      std::string escaped;
      json::AppendQuoted(&escaped, s);
      Bytes(escaped);
      return;
    }
    Room(s.size() + 2);
    *p_++ = '"';
    if (!s.empty()) std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
    *p_++ = '"';
  }
  void Value(simdjson::dom::element e) {
    using Type = simdjson::dom::element_type;
    switch (e.type()) {
      case Type::OBJECT: {
        Char('{');
        bool first = true;
        for (simdjson::dom::key_value_pair member : simdjson::dom::object(e)) {
          if (!first) Char(',');
          first = false;
          Quoted(member.key);
          Char(':');
          Value(member.value);
        }
        Char('}');
        return;
      }
      case Type::ARRAY: {
        Char('[');
        bool first = true;
        for (simdjson::dom::element item : simdjson::dom::array(e)) {
          if (!first) Char(',');
          first = false;
          Value(item);
        }
        Char(']');
        return;
      }
      case Type::STRING:
        Quoted(std::string_view(e));
        return;
      case Type::INT64:
        Room(kNumberRoom);
        p_ = rapidjson::internal::i64toa(int64_t(e), p_);
        return;
      case Type::UINT64:
        Room(kNumberRoom);
        p_ = rapidjson::internal::u64toa(uint64_t(e), p_);
        return;
      case Type::DOUBLE:
        Room(kNumberRoom);
        p_ = rapidjson::internal::dtoa(double(e), p_);
        return;
      case Type::BOOL:
        Bytes(bool(e) ? "true" : "false");
        return;
      case Type::NULL_VALUE:
        Bytes("null");
        return;
    }
  }

 private:
  // The longest number text RapidJSON's writers produce (dtoa: 25 bytes).
  static constexpr size_t kNumberRoom = 32;

  void Bytes(std::string_view s) {
    Room(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  static bool NeedsEscape(std::string_view s) {
    // Keys and short values (most of them) are checked here, inline; longer
    // strings a word at a time.
    if (s.size() >= 16) return json::FirstEscape(s) != s.size();
    bool escape = false;
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      escape |= u < 0x20 || u == '"' || u == '\\';
    }
    return escape;
  }
  void Room(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) Grow(n);
  }
  [[gnu::noinline]] void Grow(size_t n) {
    const size_t used = p_ - out_->data();
    out_->resize(std::max(out_->size() * 2, used + n));
    p_ = out_->data() + used;
    end_ = out_->data() + out_->size();
  }

  std::string* out_;
  const bool escapes_possible_;
  char* p_;    // the next byte to write
  char* end_;  // the end of the room written so far
};

void WriteTapeValue(simdjson::dom::element e, std::string* out) {
  TapeWriter w(out, 64, /*escapes_possible=*/true);
  w.Value(e);
  w.Finish();
}

// simdjson's parser (its tape) and the padded copy of the input it parses
// (simdjson reads up to SIMDJSON_PADDING bytes past the end). Both keep the
// capacity of the largest input they have seen.
struct SimdjsonScratch {
  SimdjsonScratch() {
    // One level short of the RapidJSON path's bound, so that whatever this
    // path accepts, the other would too. Should this fail, parse() fails
    // too, and the RapidJSON path takes every document.
    [[maybe_unused]] simdjson::error_code ignored =
        parser.allocate(4096, json::kMaxNestingDepth - 1);
  }
  simdjson::dom::parser parser;
  std::string padded;
};

// Inputs up to this size reuse a per-thread scratch; a larger one gets its
// own, freed afterwards, so that one huge request does not leave every
// thread holding a tape its size (about ten times the input) for good.
constexpr size_t kThreadScratchMaxBytes = 256 << 10;

SimdjsonScratch& ThreadScratch() {
  thread_local SimdjsonScratch scratch;
  return scratch;
}

// The per-thread scratch for an input that fits it; else `own`, emplaced,
// which the caller frees when done.
SimdjsonScratch& ScratchFor(std::string_view text, std::optional<SimdjsonScratch>* own) {
  return text.size() <= kThreadScratchMaxBytes ? ThreadScratch() : own->emplace();
}

// Parses `text` with `scratch`; *root views the scratch's tape.
bool ParseWithSimdjson(std::string_view text, SimdjsonScratch& scratch,
                       simdjson::dom::element* root) {
  scratch.padded.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  scratch.padded.assign(text);
  return scratch.parser.parse(scratch.padded.data(), text.size(), false).get(*root) ==
         simdjson::SUCCESS;
}

// Splits a parsed plain document (see above) into `out`; false if it is not
// one, with `out` to be discarded.
bool SplitPlainDoc(simdjson::dom::element root, size_t expected_size, bool escapes_possible,
                   IncomingDoc* out,
                   bool* saw_id, std::optional<std::string>* rev_text) {
  simdjson::dom::object members;
  if (root.get_object().get(members) != simdjson::SUCCESS) return false;
  TapeWriter body(&out->body, expected_size, escapes_possible);
  body.Char('{');
  bool first = true;
  for (simdjson::dom::key_value_pair member : members) {
    std::string_view name = member.key;
    if (!name.empty() && name[0] == '_') {
      const SpecialMember kind = Classify(name);
      std::string_view value;
      if (kind == SpecialMember::kId && member.value.get_string().get(value) == simdjson::SUCCESS) {
        out->id.assign(value);
        *saw_id = true;
        continue;
      }
      if (kind == SpecialMember::kRev && member.value.get_string().get(value) == simdjson::SUCCESS) {
        rev_text->emplace(value);
        continue;
      }
      if (kind == SpecialMember::kDeleted) {
        bool deleted = false;
        // Only the literal true deletes; anything else is dropped.
        if (member.value.get_bool().get(deleted) == simdjson::SUCCESS) out->deleted = deleted;
        continue;
      }
      if (kind == SpecialMember::kIgnored) continue;
      if (kind != SpecialMember::kKept) return false;  // errors and _revisions
    }
    if (!first) body.Char(',');
    first = false;
    body.Quoted(name);
    body.Char(':');
    body.Value(member.value);
  }
  body.Char('}');
  body.Finish();
  return true;
}

Status TooLarge() { return {Status::Code::kDocumentTooLarge, "Document exceeds max_document_size"}; }

// The RapidJSON path (DocHandler) for one document.
Status ParseWithRapidJson(std::string_view text, std::string_view id_override, IncomingDoc* out);

}  // namespace

Status ParseIncomingDoc(std::string_view text, std::string_view id_override, size_t max_size,
                        IncomingDoc* out) {
  // The limit is on the body, as CouchDB's max_document_size: inline
  // attachment bodies are not part of it (a replicated write carries them).
  // Text over the limit without attachments is refused unparsed.
  const bool over = text.size() > max_size;
  if (over && text.find("\"_attachments\"") == std::string_view::npos) {
    return TooLarge();
  }
  *out = IncomingDoc();
  simdjson::dom::element root;
  // A document too big for the per-thread scratch takes the RapidJSON path,
  // which keeps nothing.
  Status s;
  if (text.size() <= kThreadScratchMaxBytes && ParseWithSimdjson(text, ThreadScratch(), &root)) {
    bool saw_id = false;
    std::optional<std::string> rev_text;
    if (SplitPlainDoc(root, text.size(), HasBackslash(text), out, &saw_id, &rev_text)) {
      s = FinishIncomingDoc(id_override, saw_id, rev_text, out);
      return s.ok() && over && BodySize(*out) > max_size ? TooLarge() : s;
    }
    *out = IncomingDoc();
  }
  s = ParseWithRapidJson(text, id_override, out);
  return s.ok() && over && BodySize(*out) > max_size ? TooLarge() : s;
}

namespace {

// Splits the documents of `items`, parsed from `text`, into out/statuses.
void SplitDocArray(simdjson::dom::array items, std::string_view text, size_t max_size,
                   std::vector<IncomingDoc>* out, std::vector<Status>* statuses) {
  const size_t text_size = text.size();
  const bool escapes_possible = HasBackslash(text);
  out->resize(items.size());
  statuses->resize(items.size());
  // Documents that are not plain take the one-document path, errors and
  // all, from their canonical text; after the loop, as that path may reuse
  // the per-thread parser whose tape the loop is reading.
  std::vector<std::pair<size_t, std::string>> others;
  const size_t expected_body = text_size / std::max<size_t>(items.size(), 1) + 16;
  size_t i = 0;
  for (simdjson::dom::element item : items) {
    IncomingDoc& doc = (*out)[i];
    Status& status = (*statuses)[i++];
    bool saw_id = false;
    std::optional<std::string> rev_text;
    if (SplitPlainDoc(item, expected_body, escapes_possible, &doc, &saw_id, &rev_text)) {
      status = doc.body.size() > max_size
                   ? Status(Status::Code::kDocumentTooLarge, "Document exceeds max_document_size")
                   : FinishIncomingDoc({}, saw_id, rev_text, &doc);
      continue;
    }
    others.emplace_back(i - 1, std::string());
    WriteTapeValue(item, &others.back().second);
  }
  for (auto& [index, text] : others) {
    (*statuses)[index] = ParseIncomingDoc(text, {}, max_size, &(*out)[index]);
  }
}

bool IsDesignDocId(std::string_view id) { return id.substr(0, 8) == "_design/"; }

// CouchDB's reasons for a malformed _bulk_docs body, from either parser.
Status BodyNotObject() { return Status::BadRequest("Request body must be a JSON object"); }
Status NoDocs() { return Status::BadRequest("POST body must include `docs` parameter."); }
Status DocsNotArray() { return Status::BadRequest("`docs` parameter must be an array."); }
Status NewEditsNotBool() { return Status::BadRequest("`new_edits` parameter must be a boolean."); }
Status DocNotObject() { return Status::BadRequest("Document must be a JSON object"); }

}  // namespace

Status ParseIncomingDocArray(std::string_view text, size_t max_size, std::vector<IncomingDoc>* out,
                             std::vector<Status>* statuses) {
  out->clear();
  statuses->clear();
  std::optional<SimdjsonScratch> own_scratch;
  SimdjsonScratch& scratch = ScratchFor(text, &own_scratch);
  simdjson::dom::element root;
  simdjson::dom::array items;
  if (!ParseWithSimdjson(text, scratch, &root) ||
      root.get_array().get(items) != simdjson::SUCCESS) {
    // Not an array, or one simdjson declines (an integer past 64 bits, say):
    // RapidJSON splits it, and each document takes the one-document path.
    json::Document array;
    // The array is one level more: each document keeps the whole depth limit.
    Status s = json::Parse(text, &array, json::kMaxNestingDepth + 1);
    if (!s.ok()) return s;
    if (!array.IsArray()) return Status::BadRequest("Expected a JSON array of documents");
    out->resize(array.Size());
    statuses->resize(array.Size());
    for (rapidjson::SizeType i = 0; i < array.Size(); ++i) {
      (*statuses)[i] = ParseIncomingDoc(json::Serialize(array[i]), {}, max_size, &(*out)[i]);
    }
    return Status::OK();
  }
  SplitDocArray(items, text, max_size, out, statuses);
  return Status::OK();
}

namespace {

// ParseBulkDocsBody for bodies simdjson declines (an integer past 64 bits,
// say) or cannot parse: RapidJSON gives the verdict.
Status ParseBulkDocsBodyWithRapidJson(std::string_view text, size_t max_size,
                                      BulkDocsBodyInfo* info, std::vector<IncomingDoc>* out,
                                      std::vector<Status>* statuses) {
  json::Document body;
  if (!json::Parse(text, &body).ok()) return Status::BadRequest("invalid UTF-8 JSON");
  if (!body.IsObject()) return BodyNotObject();
  auto docs = body.FindMember("docs");
  if (docs == body.MemberEnd()) return NoDocs();
  if (!docs->value.IsArray()) return DocsNotArray();
  auto new_edits = body.FindMember("new_edits");
  if (new_edits != body.MemberEnd()) {
    if (!new_edits->value.IsBool()) return NewEditsNotBool();
    info->new_edits = new_edits->value.GetBool();
  }
  for (const auto& d : docs->value.GetArray()) {
    if (!d.IsObject()) return DocNotObject();
    auto id = d.FindMember("_id");
    if (id != d.MemberEnd() && id->value.IsString() && IsDesignDocId(json::View(id->value))) {
      info->has_design_docs = true;
    }
  }
  return ParseIncomingDocArray(json::Serialize(docs->value), max_size, out, statuses);
}

}  // namespace

Status ParseBulkDocsBody(std::string_view text, size_t max_size, BulkDocsBodyInfo* info,
                         std::vector<IncomingDoc>* out, std::vector<Status>* statuses) {
  *info = BulkDocsBodyInfo();
  out->clear();
  statuses->clear();
  std::optional<SimdjsonScratch> own_scratch;
  SimdjsonScratch& scratch = ScratchFor(text, &own_scratch);
  simdjson::dom::element root;
  if (!ParseWithSimdjson(text, scratch, &root)) {
    return ParseBulkDocsBodyWithRapidJson(text, max_size, info, out, statuses);
  }
  simdjson::dom::object body;
  if (root.get_object().get(body) != simdjson::SUCCESS) return BodyNotObject();
  // The first of repeated members counts, as with RapidJSON's FindMember.
  std::optional<simdjson::dom::element> docs, new_edits;
  for (simdjson::dom::key_value_pair member : body) {
    if (member.key == "docs" && !docs) docs = member.value;
    if (member.key == "new_edits" && !new_edits) new_edits = member.value;
  }
  if (!docs) return NoDocs();
  simdjson::dom::array items;
  if (docs->get_array().get(items) != simdjson::SUCCESS) return DocsNotArray();
  if (new_edits) {
    bool value = false;
    if (new_edits->get_bool().get(value) != simdjson::SUCCESS) return NewEditsNotBool();
    info->new_edits = value;
  }
  for (simdjson::dom::element item : items) {
    simdjson::dom::object doc;
    if (item.get_object().get(doc) != simdjson::SUCCESS) return DocNotObject();
    std::string_view id;
    if (doc["_id"].get_string().get(id) == simdjson::SUCCESS && IsDesignDocId(id)) {
      info->has_design_docs = true;
    }
  }
  SplitDocArray(items, text, max_size, out, statuses);
  return Status::OK();
}

namespace {

Status ParseWithRapidJson(std::string_view text, std::string_view id_override, IncomingDoc* out) {
  // Reused per thread: its buffer would otherwise be allocated and freed
  // for every document.
  thread_local rapidjson::StringBuffer body_buffer;
  thread_local DocHandler::BodyWriter body_writer(body_buffer);
  body_buffer.Clear();
  body_writer.Reset(body_buffer);
  DocHandler handler(out, body_writer);
  Status parsed = json::ParseSax(text, handler);
  if (!handler.status().ok()) return handler.status();
  if (!parsed.ok()) return parsed;
  out->body.assign(body_buffer.GetString(), body_buffer.GetSize());

  std::optional<std::string> rev_text = handler.rev_text();
  if (handler.has_revisions()) {
    json::Document revisions;
    Status s = json::Parse(handler.revisions_json(), &revisions);
    if (s.ok() && IsLocalDocId(id_override.empty() ? std::string_view(out->id) : id_override)) {
      s = LocalRevFromRevisions(revisions, &rev_text);
    } else if (s.ok()) {
      Revisions r;
      s = ParseRevisions(revisions, &r);
      out->revisions = std::move(r);
    }
    if (!s.ok()) return s;
  }
  if (handler.has_attachments()) {
    json::Document attachments;
    Status s = json::Parse(handler.attachments_json(), &attachments);
    if (!s.ok()) return s;
    s = ParseAttachmentsJson(attachments, &out->attachments.emplace());
    if (!s.ok()) return s;
  }
  return FinishIncomingDoc(id_override, handler.saw_id(), rev_text, out);
}

}  // namespace

std::string ComputeRevHash(std::string_view parent_rev, bool deleted, std::string_view body) {
  const std::string_view flag = deleted ? "\n1\n" : "\n0\n";
  // Small revisions (most) hash in one shot from a stack buffer: the same
  // digest as streaming the pieces, without the streaming state's setup.
  char buf[1024];
  const size_t total = parent_rev.size() + flag.size() + body.size();
  if (total <= sizeof(buf)) {
    char* p = buf;
    if (!parent_rev.empty()) std::memcpy(p, parent_rev.data(), parent_rev.size());
    p += parent_rev.size();
    std::memcpy(p, flag.data(), flag.size());
    p += flag.size();
    if (!body.empty()) std::memcpy(p, body.data(), body.size());
    return Xxh128Hex(std::string_view(buf, total));
  }
  // One streaming hasher per thread: its state is too big to build per
  // revision.
  thread_local Xxh128 hash;
  hash.Reset();
  hash.Update(parent_rev);
  hash.Update(flag);
  hash.Update(body);
  return hash.FinishHex();
}

}  // namespace settee

namespace settee {

bool HoldBodyCompressed(std::string_view body, IncomingDoc* doc) {
  if (!CompressBody(body, &doc->snappy_body)) return false;
  doc->body_size = body.size();
  doc->first_rev_hash = ComputeRevHash("", doc->deleted, body);
  doc->body.clear();
  return true;
}

Status ExpandBody(IncomingDoc* doc) {
  if (doc->snappy_body.empty()) return Status::OK();
  Status s = ExpandHeldBody(&doc->snappy_body, &doc->body);
  if (s.ok()) doc->first_rev_hash.clear();  // it goes with the held form only
  return s;
}

}  // namespace settee
