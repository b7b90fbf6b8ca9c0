// Replication ids as CouchDB 3 computes them (couch_replicator_ids.erl,
// REP_ID_VERSION 4): the lowercase hex MD5 of term_to_binary of
//   [ServerUUID, SourceTerm, TargetTerm | filter terms]
// where a remote endpoint's term is
//   {remote, User, Host, NonDefaultPort, Path, Headers, undefined}
// (credentials dropped, so changing a password keeps the checkpoints). The
// checkpoint documents are "_local/<id>" on both sides; a job id appends
// "+continuous" and "+create_target" as CouchDB's does.
//
// A local database has no URL in settee; its term is {local, <<"name">>},
// the form CouchDB 1.x and 2.x used for local endpoints.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "replication/endpoint.h"
#include "replication/erlang_term.h"
#include "replication/url.h"

namespace settee::replication {

ErlTerm LocalEndpointTerm(std::string_view db_name);
ErlTerm RemoteEndpointTerm(const Url& url);

// `doc_ids` are hashed sorted and deduplicated (the order a user lists them
// in does not make a new replication). `since_seq` (JSON text) is hashed
// when given, so a replication that starts elsewhere keeps its own
// checkpoints.
//
// A filtered replication appends what CouchDB 3's maybe_append_filters
// does: for a design-document filter its code (`filter_code`, the
// function's source trimmed, as fetched from the source) and query_params;
// for a selector the selector in mango's normal form with its members
// sorted (selector_normal_form.h), so that every way of writing one
// selector gets CouchDB's id. JSON crosses as jiffy's EJSON terms
// ({[{Key, Value}]} objects).
std::string ReplicationId(std::string_view server_uuid, const ErlTerm& source,
                          const ErlTerm& target,
                          const std::optional<std::vector<std::string>>& doc_ids,
                          const std::optional<std::string>& since_seq,
                          const ChangesFilterSpec* filter = nullptr,
                          std::string_view filter_code = {});

// JSON text as the EJSON term jiffy decodes it to (object members sorted
// by key when `sort_keys`). kBadRequest for text that is not JSON.
Result<ErlTerm> EjsonTerm(std::string_view json_text, bool sort_keys);

// A design document's filter function source as CouchDB hashes it: with
// leading and trailing whitespace removed.
std::string TrimFilterCode(std::string_view code);

std::string JobId(std::string_view replication_id, bool continuous, bool create_target);

}  // namespace settee::replication
