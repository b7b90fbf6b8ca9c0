#include "replication/replication_id.h"

#include <algorithm>

#include "replication/selector_normal_form.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee::replication {

ErlTerm LocalEndpointTerm(std::string_view db_name) {
  return ErlTerm::Tuple().Add(ErlTerm::Atom("local")).Add(ErlTerm::Binary(db_name));
}

ErlTerm RemoteEndpointTerm(const Url& url) {
  // get_non_default_port: the scheme's own port and CouchDB's 5984 are
  // "default".
  int port = url.port;
  bool default_port = port == 0 || (url.scheme == "http" && (port == 80 || port == 5984)) ||
                      (url.scheme == "https" && port == 443);
  return ErlTerm::Tuple()
      .Add(ErlTerm::Atom("remote"))
      .Add(url.user.empty() ? ErlTerm::Atom("undefined") : ErlTerm::String(url.user))
      .Add(ErlTerm::String(url.host))
      .Add(default_port ? ErlTerm::Atom("default") : ErlTerm::Integer(port))
      .Add(ErlTerm::String(url.path))
      .Add(ErlTerm::Nil())  // extra headers: none
      .Add(ErlTerm::Atom("undefined"));  // OAuth, kept so ids stay stable
}

namespace {

ErlTerm Ejson(const json::Value& v, bool sort_keys) {
  if (v.IsObject()) {
    std::vector<std::pair<std::string_view, const json::Value*>> members;
    for (const auto& m : v.GetObject()) members.emplace_back(json::View(m.name), &m.value);
    if (sort_keys) {
      std::stable_sort(members.begin(), members.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    ErlTerm list = ErlTerm::List();
    for (const auto& [k, value] : members) {
      list.Add(ErlTerm::Tuple().Add(ErlTerm::Binary(k)).Add(Ejson(*value, sort_keys)));
    }
    return ErlTerm::Tuple().Add(list);
  }
  if (v.IsArray()) {
    ErlTerm list = ErlTerm::List();
    for (const auto& e : v.GetArray()) list.Add(Ejson(e, sort_keys));
    return list;
  }
  if (v.IsString()) return ErlTerm::Binary(json::View(v));
  if (v.IsBool()) return ErlTerm::Atom(v.GetBool() ? "true" : "false");
  if (v.IsNull()) return ErlTerm::Atom("null");
  if (v.IsInt64()) return ErlTerm::Integer(v.GetInt64());
  if (v.IsUint64()) return ErlTerm::Integer(static_cast<int64_t>(v.GetUint64()));
  return ErlTerm::Float(v.GetDouble());
}

}  // namespace

Result<ErlTerm> EjsonTerm(std::string_view json_text, bool sort_keys) {
  json::Document d;
  Status s = json::Parse(json_text, &d);
  if (!s.ok()) return s;
  return Ejson(d, sort_keys);
}

std::string TrimFilterCode(std::string_view code) {
  const char* ws = " \t\r\n\f\v";
  size_t begin = code.find_first_not_of(ws);
  if (begin == std::string_view::npos) return {};
  size_t end = code.find_last_not_of(ws);
  return std::string(code.substr(begin, end - begin + 1));
}

std::string ReplicationId(std::string_view server_uuid, const ErlTerm& source,
                          const ErlTerm& target,
                          const std::optional<std::vector<std::string>>& doc_ids,
                          const std::optional<std::string>& since_seq,
                          const ChangesFilterSpec* filter, std::string_view filter_code) {
  ErlTerm base = ErlTerm::List();
  base.Add(ErlTerm::Binary(server_uuid)).Add(source).Add(target);
  if (doc_ids) {
    std::vector<std::string> sorted = *doc_ids;
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    ErlTerm ids = ErlTerm::List();
    for (const std::string& id : sorted) ids.Add(ErlTerm::Binary(id));
    base.Add(ids);
  }
  if (filter != nullptr && (!filter->filter.empty() || !filter->function.empty())) {
    // A function given directly (PouchDB's replicate({filter: fn})) is
    // told apart by its source, as PouchDB's replication id does: else a
    // later unfiltered replication would resume at the filtered one's
    // checkpoint and never copy what the filter left behind.
    base.Add(ErlTerm::Binary(filter_code));
    auto params = EjsonTerm(filter->query_params, false);
    base.Add(params.ok() ? *params : ErlTerm::Tuple().Add(ErlTerm::List()));
  } else if (filter != nullptr && !filter->selector.empty()) {
    // A selector CouchDB would refuse gets an id all the same (the job
    // then fails on it): its members sorted, as given.
    auto selector = NormalSelectorTerm(filter->selector);
    if (!selector.ok()) selector = EjsonTerm(filter->selector, true);
    if (selector.ok()) base.Add(*selector);
  }
  if (since_seq) base.Add(ErlTerm::Binary(*since_seq));
  return Md5Hex(ErlTerm::Encode(base));
}

std::string JobId(std::string_view replication_id, bool continuous, bool create_target) {
  std::string id(replication_id);
  if (continuous) id += "+continuous";
  if (create_target) id += "+create_target";
  return id;
}

}  // namespace settee::replication
