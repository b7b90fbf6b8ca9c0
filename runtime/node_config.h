// NodeConfig: the node's effective configuration under CouchDB's section and
// key names, for GET/PUT/DELETE /_node/{node}/_config[/section[/key]]
// (runtime/endpoints_node.cc). Values are strings, as CouchDB's config
// holds them.
//
// settee's configuration comes from the command line, the environment or
// `--config FILE` (runtime/serve_command.h). What it means in CouchDB's
// terms is defined here at setup: a section's current values and, for the
// sections settee can change while running, a handler that applies a new
// value (or a deletion) live: server admins, the log level, the purge
// limits. A change to anything else is refused with a CouchDB-style
// bad_request naming what settee would need (a restart with an option).
// An applied change is handed to the persister, if one is set (`settee
// serve --config FILE` writes admins and the log level back into FILE),
// unless the request said not to (CouchDB's X-Couch-Persist: false).
//
// Thread safety: Define*() during setup only; every other method may be
// called concurrently. A handler runs under the config's lock, so changes
// to one node are applied one at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "settee/status.h"

namespace settee {

class NodeConfig {
 public:
  using Section = std::map<std::string, std::string>;
  // Applies `value` to `key` of the handler's section (nullptr: deletes the
  // key) and sets *shown to what GET shows afterwards (an admin's password
  // hash instead of the password). An error leaves the value as it was.
  using Handler =
      std::function<Status(const std::string& key, const std::string* value, std::string* shown)>;

  // Setup: `section` shows `values`; with a handler its keys can be set and
  // deleted (the handler decides which), else it is read-only.
  void DefineSection(const std::string& section, Section values, Handler handler = nullptr);
  // Setup: one more read-only key.
  void Define(const std::string& section, const std::string& key, std::string value);
  // Setup: makes applied changes last beyond the process: called with the
  // value as shown (the handler's *shown: an admin's password hash, never
  // the password; nullptr: deleted) after the section's handler applied it.
  // Its error is returned to the caller, the live change staying made.
  // `check`, if given, runs before the handler on a change to be persisted,
  // with the value as given: its error refuses the change with nothing
  // applied (a value the file cannot hold).
  using Persister = std::function<Status(const std::string& section, const std::string& key,
                                         const std::string* value)>;
  void SetPersister(Persister persister, Persister check = nullptr) {
    persister_ = std::move(persister);
    check_ = std::move(check);
  }

  // Every section (GET /_node/{node}/_config).
  std::map<std::string, Section> All() const;
  // One section; empty when unknown (CouchDB answers {} too).
  Section GetSection(const std::string& section) const;
  std::optional<std::string> Get(const std::string& section, const std::string& key) const;
  // The value as an unsigned integer, or `fallback` when it is missing or
  // not one.
  uint64_t GetUInt(const std::string& section, const std::string& key, uint64_t fallback) const;

  // PUT: the previous value ("" when none). kForbidden for sections CouchDB
  // never lets HTTP change; kBadRequest (with why) for what settee cannot
  // change live.
  // `persist` false: live only (X-Couch-Persist: false).
  Result<std::string> Set(const std::string& section, const std::string& key,
                          const std::string& value, bool persist = true);
  // DELETE: the previous value; kNotFound "unknown_config_value" when none.
  Result<std::string> Delete(const std::string& section, const std::string& key,
                             bool persist = true);

 private:
  Status Change(const std::string& section, const std::string& key, const std::string* value,
                bool persist, std::string* old);

  mutable std::mutex mu_;
  std::map<std::string, Section> values_;     // GUARDED_BY(mu_)
  std::map<std::string, Handler> handlers_;   // setup only
  Persister persister_;                       // setup only
  Persister check_;                           // setup only
};

}  // namespace settee
