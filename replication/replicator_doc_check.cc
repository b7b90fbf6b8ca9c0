#include "replication/replicator_doc_check.h"

#include <algorithm>
#include <string>

namespace settee::replication {

namespace {

// The rules are JavaScript's: a member left out is `undefined`, JSON null is
// an object to `typeof` but not a "non-null object", arrays are objects, and
// `if (x)` tests truthiness.

// typeof v === 'object' && v !== null
bool IsNonNullObject(const json::Value& v) { return v.IsObject() || v.IsArray(); }

const json::Value* Member(const json::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;  // an array's members are undefined
  auto it = object.FindMember(name);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

bool HasRole(const UserContext& user, std::string_view role) {
  return std::find(user.roles.begin(), user.roles.end(), role) != user.roles.end();
}

Status Refuse(std::string reason) { return Status::Forbidden(std::move(reason)); }

// CouchDB's validateEndpoint(endpoint, fieldName).
Status CheckEndpoint(const json::Value* endpoint, const std::string& field) {
  if (endpoint == nullptr || !(endpoint->IsString() || IsNonNullObject(*endpoint))) {
    return Refuse("The `" + field + "' property must exist and be either a string or an object.");
  }
  if (endpoint->IsString()) return Status::OK();
  const json::Value* url = Member(*endpoint, "url");
  if (url == nullptr || !url->IsString() || url->GetStringLength() == 0) {
    return Refuse("The url property must exist in the `" + field + "' field and must be a non-empty string.");
  }
  const json::Value* auth = Member(*endpoint, "auth");
  if (auth != nullptr && !IsNonNullObject(*auth)) {
    return Refuse("`" + field + ".auth' must be a non-null object.");
  }
  const json::Value* headers = Member(*endpoint, "headers");
  if (headers != nullptr && !IsNonNullObject(*headers)) {
    return Refuse("`" + field + ".headers' must be a non-null object.");
  }
  return Status::OK();
}

// user_ctx.name === userCtx.name, an anonymous writer's name being null.
bool IsWritersName(const json::Value* name, const UserContext& user) {
  if (name == nullptr) return false;  // undefined
  return user.name.empty() ? name->IsNull() : name->IsString() && json::View(*name) == user.name;
}

bool IsDeletion(const json::Value& doc) {
  const json::Value* deleted = Member(doc, "_deleted");
  return deleted != nullptr && json::JsTruthy(*deleted);
}

bool IsExemptId(std::string_view docid) { return docid.starts_with("_design/") || docid.starts_with("_local/"); }

// The "user_ctx" rules: what a non-admin may claim to run as.
Status CheckUserCtx(const json::Value* user_ctx, const UserContext& user, bool is_admin) {
  if (user_ctx == nullptr || !json::JsTruthy(*user_ctx)) {
    if (is_admin) return Status::OK();
    return Refuse("The `user_ctx' property is missing (it is optional for admins only).");
  }
  if (!IsNonNullObject(*user_ctx)) return Refuse("The `user_ctx' property must be a non-null object.");
  const json::Value* name = Member(*user_ctx, "name");
  if (name != nullptr && !name->IsNull() && !(name->IsString() && name->GetStringLength() != 0)) {
    return Refuse("The `user_ctx.name' property must be a non-empty string or null.");
  }
  if (!is_admin && !IsWritersName(name, user)) return Refuse("The given `user_ctx.name' is not valid");
  const json::Value* roles = Member(*user_ctx, "roles");
  if (roles == nullptr || !json::JsTruthy(*roles)) return Status::OK();
  if (!roles->IsArray()) return Refuse("The `user_ctx.roles' property must be an array of strings.");
  if (is_admin) return Status::OK();
  for (const json::Value& role : roles->GetArray()) {
    if (!role.IsString() || role.GetStringLength() == 0) return Refuse("Roles must be non-empty strings.");
    if (!HasRole(user, json::View(role))) {
      return Refuse("Invalid role (`" + std::string(json::View(role)) + "') in the `user_ctx'");
    }
  }
  return Status::OK();
}

}  // namespace

bool ReplicatorCheckNeedsOld(const json::Value& doc) {
  const json::Value* rev = Member(doc, "_rev");
  return IsDeletion(doc) && rev != nullptr && rev->IsString();
}

Status StampReplicatorOwner(std::string_view docid, json::Value* doc, json::Allocator& a, const UserContext& user,
                            bool db_admin, bool* changed) {
  if (changed != nullptr) *changed = false;
  // before_doc_update skips design documents only: fabric_doc_update runs it
  // over every document of the request, _local ones too.
  if (docid.starts_with("_design/") || !doc->IsObject() || HasRole(user, "_replicator")) return Status::OK();
  auto owner = doc->FindMember("owner");
  json::Value name = user.name.empty() ? json::Value() : json::StringValue(user.name, a);
  if (owner == doc->MemberEnd()) {
    doc->AddMember("owner", name, a);
    if (changed != nullptr) *changed = true;
    return Status::OK();
  }
  if (IsWritersName(&owner->value, user)) return Status::OK();
  if (!db_admin) return Refuse("Can't update replication documents from other users.");
  if (owner->value.IsNull() && !name.IsNull()) {
    owner->value = name;
    if (changed != nullptr) *changed = true;
  }
  return Status::OK();
}

Status CheckReplicatorDoc(std::string_view docid, const json::Value& doc, const UserContext& user,
                          const json::Value* old) {
  if (IsExemptId(docid)) return Status::OK();
  if (!doc.IsObject() || HasRole(user, "_replicator")) return Status::OK();
  const json::Value* state = Member(doc, "_replication_state");
  if (state != nullptr && state->IsString() && json::View(*state) == "failed") return Status::OK();
  if (IsDeletion(doc)) {
    // Only the user the stored document runs as, or an admin, deletes it:
    // !oldDoc.user_ctx || oldDoc.user_ctx.name !== userCtx.name. A rev-less
    // deletion (no oldDoc here) is left to the write's own conflict check.
    if (HasRole(user, "_admin") || !ReplicatorCheckNeedsOld(doc)) return Status::OK();
    const json::Value* user_ctx = old != nullptr ? Member(*old, "user_ctx") : nullptr;
    if (user_ctx == nullptr || !json::JsTruthy(*user_ctx) || !IsWritersName(Member(*user_ctx, "name"), user)) {
      return Refuse("Replication documents can only be deleted by admins or by the users who created them.");
    }
    return Status::OK();
  }

  Status s = CheckEndpoint(Member(doc, "source"), "source");
  if (s.ok()) s = CheckEndpoint(Member(doc, "target"), "target");
  if (!s.ok()) return s;
  for (const char* flag : {"create_target", "continuous"}) {
    const json::Value* v = Member(doc, flag);
    if (v != nullptr && !v->IsBool()) return Refuse(std::string("The `") + flag + "' field must be a boolean.");
  }
  const json::Value* doc_ids = Member(doc, "doc_ids");
  if (doc_ids != nullptr && !doc_ids->IsArray()) return Refuse("The `doc_ids' field must be an array of strings.");
  // typeof null is 'object': a null selector passes.
  const json::Value* selector = Member(doc, "selector");
  if (selector != nullptr && !(selector->IsNull() || IsNonNullObject(*selector))) {
    return Refuse("The `selector' field must be an object.");
  }
  const json::Value* filter = Member(doc, "filter");
  if (filter != nullptr && !(filter->IsString() && filter->GetStringLength() != 0)) {
    return Refuse("The `filter' field must be a non-empty string.");
  }
  if (doc_ids != nullptr && selector != nullptr) return Refuse("`doc_ids' field is incompatible with `selector'.");
  if ((doc_ids != nullptr || selector != nullptr) && filter != nullptr) {
    return Refuse("`filter' field is incompatible with `selector' and `doc_ids'.");
  }
  const json::Value* query_params = Member(doc, "query_params");
  if (query_params != nullptr && !IsNonNullObject(*query_params)) {
    return Refuse("The `query_params' field must be an object.");
  }
  return CheckUserCtx(Member(doc, "user_ctx"), user, HasRole(user, "_admin"));
}

bool ReplicatorReadIsStripped(std::string_view docid, const json::Value& doc, const UserContext& user,
                              bool db_admin) {
  if (db_admin || IsExemptId(docid) || !doc.IsObject()) return false;
  return !IsWritersName(Member(doc, "owner"), user);
}

std::string StripUrlCredentials(std::string_view url) {
  // CouchDB's re:replace(Url, "http(s)?://(?:[^:]+):[^@]+@(.*)$",
  // "http\\1://\\2"): unanchored, so the first place the pattern matches.
  // [^:]+ can only run to the first ':', [^@]+ to the first '@' after it,
  // and (.*)$ needs the rest free of newlines but a final one.
  for (size_t at = url.find("http"); at != std::string_view::npos; at = url.find("http", at + 1)) {
    size_t p = at + 4;
    bool s_used;
    if (url.substr(p, 4) == "s://") {
      s_used = true;
      p += 4;
    } else if (url.substr(p, 3) == "://") {
      s_used = false;
      p += 3;
    } else {
      continue;
    }
    const size_t colon = url.find(':', p);
    if (colon == std::string_view::npos || colon == p) continue;
    const size_t ampersat = url.find('@', colon + 1);
    if (ampersat == std::string_view::npos || ampersat == colon + 1) continue;
    std::string_view rest = url.substr(ampersat + 1);
    size_t newline = rest.find('\n');
    std::string_view tail;
    if (newline != std::string_view::npos) {
      if (newline != rest.size() - 1) continue;
      tail = rest.substr(newline);
      rest = rest.substr(0, newline);
    }
    std::string out(url.substr(0, at));
    out += s_used ? "https://" : "http://";
    out += rest;
    out += tail;
    return out;
  }
  return std::string(url);
}

bool StripReplicatorCredentials(json::Value* doc, json::Allocator& a) {
  if (!doc->IsObject()) return false;
  bool changed = false;
  for (const char* field : {"source", "target"}) {
    auto it = doc->FindMember(field);
    if (it == doc->MemberEnd()) continue;
    json::Value& endpoint = it->value;
    if (endpoint.IsString()) {
      std::string stripped = StripUrlCredentials(json::View(endpoint));
      if (stripped.size() != endpoint.GetStringLength()) {
        endpoint = json::StringValue(stripped, a);
        changed = true;
      }
    } else if (endpoint.IsObject()) {
      changed |= endpoint.RemoveMember("headers");
      changed |= endpoint.RemoveMember("auth");
    }
  }
  return changed;
}

}  // namespace settee::replication
