#include "runtime/node_config.h"

#include <algorithm>
#include <array>

namespace settee {

namespace {

// CouchDB's couch_util:check_config_blacklist: sections that name code to
// run, which no HTTP request may change.
constexpr std::array<std::string_view, 8> kBlacklisted = {
    "daemons", "external", "httpd_design_handlers", "httpd_db_handlers",
    "httpd_global_handlers", "native_query_servers", "os_daemons", "query_servers"};

}  // namespace

void NodeConfig::DefineSection(const std::string& section, Section values, Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& s = values_[section];
  for (auto& [k, v] : values) s[k] = std::move(v);
  if (handler) handlers_[section] = std::move(handler);
}

void NodeConfig::Define(const std::string& section, const std::string& key, std::string value) {
  std::lock_guard<std::mutex> lock(mu_);
  values_[section][key] = std::move(value);
}

std::map<std::string, NodeConfig::Section> NodeConfig::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  return values_;
}

NodeConfig::Section NodeConfig::GetSection(const std::string& section) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(section);
  return it == values_.end() ? Section{} : it->second;
}

std::optional<std::string> NodeConfig::Get(const std::string& section,
                                           const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(section);
  if (it == values_.end()) return std::nullopt;
  auto k = it->second.find(key);
  if (k == it->second.end()) return std::nullopt;
  return k->second;
}

uint64_t NodeConfig::GetUInt(const std::string& section, const std::string& key,
                             uint64_t fallback) const {
  auto v = Get(section, key);
  if (!v || v->empty() || v->size() > 19 ||
      !std::all_of(v->begin(), v->end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return fallback;
  }
  return std::stoull(*v);
}

Status NodeConfig::Change(const std::string& section, const std::string& key,
                          const std::string* value, bool persist, std::string* old) {
  if (std::find(kBlacklisted.begin(), kBlacklisted.end(), section) != kBlacklisted.end()) {
    return Status::Forbidden("Config section blacklisted for modification over HTTP API.");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& s = values_[section];
  auto it = s.find(key);
  const bool had = it != s.end();
  old->assign(had ? it->second : std::string());
  if (value == nullptr && !had) {
    if (s.empty()) values_.erase(section);
    return Status::NotFound("unknown_config_value");
  }
  auto h = handlers_.find(section);
  if (h == handlers_.end()) {
    if (s.empty()) values_.erase(section);
    return Status::BadRequest("settee cannot change [" + section + "] " + key +
                              " while running: set it with `settee serve` options and restart");
  }
  if (persist && persister_ && check_) {
    Status st = check_(section, key, value);
    if (!st.ok()) return st;
  }
  std::string shown;
  Status st = h->second(key, value, &shown);
  if (!st.ok()) return st;
  const std::string* persisted = nullptr;
  if (value == nullptr) {
    s.erase(key);
  } else {
    std::string& kept = s[key];
    kept = std::move(shown);
    persisted = &kept;
  }
  if (persist && persister_) return persister_(section, key, persisted);
  return Status::OK();
}

Result<std::string> NodeConfig::Set(const std::string& section, const std::string& key,
                                    const std::string& value, bool persist) {
  std::string old;
  Status s = Change(section, key, &value, persist, &old);
  if (!s.ok()) return s;
  return old;
}

Result<std::string> NodeConfig::Delete(const std::string& section, const std::string& key,
                                       bool persist) {
  std::string old;
  Status s = Change(section, key, nullptr, persist, &old);
  if (!s.ok()) return s;
  return old;
}

}  // namespace settee
