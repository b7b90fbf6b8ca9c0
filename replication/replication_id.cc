#include "replication/replication_id.h"

#include <algorithm>

#include "util/digest.h"

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

std::string ReplicationId(std::string_view server_uuid, const ErlTerm& source,
                          const ErlTerm& target,
                          const std::optional<std::vector<std::string>>& doc_ids,
                          const std::optional<std::string>& since_seq) {
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
