#include "replication/checkpoint.h"

#include <ctime>

#include "util/json.h"

namespace settee::replication {

namespace {

constexpr size_t kMaxHistory = 50;  // CouchDB keeps 50 entries

// JSON text of member `name` of `obj` (nullopt when absent).
std::optional<std::string> MemberText(const json::Value& obj, const char* name) {
  if (!obj.IsObject()) return std::nullopt;
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) return std::nullopt;
  return json::Serialize(it->value);
}

std::string SessionOf(const json::Value& obj) {
  if (!obj.IsObject()) return {};
  auto it = obj.FindMember("session_id");
  return it != obj.MemberEnd() && it->value.IsString() ? std::string(json::View(it->value)) : "";
}

// recorded_seq, or PouchDB's last_seq.
std::string RecordedSeq(const json::Value& entry) {
  if (auto s = MemberText(entry, "recorded_seq")) return *s;
  if (auto s = MemberText(entry, "last_seq")) return *s;
  return "0";
}

bool HasSession(const std::string& session, const json::Value& history, size_t from) {
  for (size_t i = from; i < history.Size(); ++i) {
    if (SessionOf(history[i]) == session) return true;
  }
  return false;
}

const json::Value& HistoryOf(const json::Document& doc) {
  static const json::Value kEmpty(rapidjson::kArrayType);
  if (!doc.IsObject()) return kEmpty;
  auto it = doc.FindMember("history");
  return it != doc.MemberEnd() && it->value.IsArray() ? it->value : kEmpty;
}

void WriteEntry(json::Writer& w, const CheckpointEntry& e) {
  auto raw = [&w](const std::string& text) {
    w.RawValue(text.data(), text.size(), rapidjson::kNumberType);
  };
  w.StartObject();
  w.Key("session_id");
  w.String(e.session_id);
  w.Key("start_time");
  w.String(e.start_time);
  w.Key("end_time");
  w.String(e.end_time);
  w.Key("start_last_seq");
  raw(e.start_last_seq);
  w.Key("end_last_seq");
  raw(e.recorded_seq);
  w.Key("recorded_seq");
  raw(e.recorded_seq);
  w.Key("missing_checked");
  w.Uint64(e.missing_checked);
  w.Key("missing_found");
  w.Uint64(e.missing_found);
  w.Key("docs_read");
  w.Uint64(e.docs_read);
  w.Key("docs_written");
  w.Uint64(e.docs_written);
  w.Key("doc_write_failures");
  w.Uint64(e.doc_write_failures);
  w.EndObject();
}

}  // namespace

std::string StartSeqFromCheckpoints(const std::optional<std::string>& source_doc,
                                    const std::optional<std::string>& target_doc,
                                    std::string* history) {
  *history = "[]";
  if (!source_doc || !target_doc) return "0";
  json::Document src, tgt;
  if (!json::Parse(*source_doc, &src).ok() || !json::Parse(*target_doc, &tgt).ok()) return "0";
  if (!src.IsObject() || !tgt.IsObject()) return "0";
  const json::Value& src_history = HistoryOf(src);
  std::string src_session = SessionOf(src);
  if (!src_session.empty() && src_session == SessionOf(tgt)) {
    *history = json::Serialize(src_history);
    if (auto s = MemberText(src, "source_last_seq")) return *s;
    if (auto s = MemberText(src, "last_seq")) return *s;
    return "0";
  }
  // compare_rep_history: walk both histories newest first.
  const json::Value& tgt_history = HistoryOf(tgt);
  size_t si = 0, ti = 0;
  while (si < src_history.Size() && ti < tgt_history.Size()) {
    std::string s = SessionOf(src_history[si]);
    if (HasSession(s, tgt_history, ti)) {
      json::Document rest(rapidjson::kArrayType);
      for (size_t i = si + 1; i < src_history.Size(); ++i) {
        rest.PushBack(json::Value(src_history[i], rest.GetAllocator()), rest.GetAllocator());
      }
      *history = json::Serialize(rest);
      return RecordedSeq(src_history[si]);
    }
    std::string t = SessionOf(tgt_history[ti]);
    if (HasSession(t, src_history, si + 1)) {
      json::Document rest(rapidjson::kArrayType);
      for (size_t i = ti + 1; i < tgt_history.Size(); ++i) {
        rest.PushBack(json::Value(tgt_history[i], rest.GetAllocator()), rest.GetAllocator());
      }
      *history = json::Serialize(rest);
      return RecordedSeq(tgt_history[ti]);
    }
    ++si;
    ++ti;
  }
  return "0";
}

CheckpointHistory::CheckpointHistory(std::string_view earlier) {
  json::Document old;
  if (!json::Parse(earlier, &old).ok() || !old.IsArray()) return;
  for (size_t i = 0; i < old.Size() && i + 1 < kMaxHistory; ++i) {
    earlier_.push_back(json::Serialize(old[i]));
  }
}

std::string CheckpointHistory::Add(const CheckpointEntry& entry) {
  std::string current;
  {
    json::StringOutput stream(&current);
    json::Writer w(stream);
    WriteEntry(w, entry);
  }
  std::string out = "[" + current;
  size_t kept = 1;
  if (!previous_.empty()) {
    out += ',';
    out += previous_;
    ++kept;
  }
  for (size_t i = 0; i < earlier_.size() && kept < kMaxHistory; ++i, ++kept) {
    out += ',';
    out += earlier_[i];
  }
  out += ']';
  previous_ = std::move(current);
  return out;
}

std::string PrependHistory(const CheckpointEntry& entry, const std::string& history) {
  return CheckpointHistory(history).Add(entry);
}

std::string BuildCheckpoint(const CheckpointEntry& entry, const std::string& history) {
  std::string out = "{\"session_id\":";
  json::AppendQuoted(&out, entry.session_id);
  out += ",\"source_last_seq\":";
  out += entry.recorded_seq;
  out += ",\"replication_id_version\":4,\"history\":";
  out += history;
  out += '}';
  return out;
}

std::string Rfc1123Now() {
  std::time_t now = std::time(nullptr);
  std::tm tm;
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S GMT", &tm);
  return buf;
}

}  // namespace settee::replication
