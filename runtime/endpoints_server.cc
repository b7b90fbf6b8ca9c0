// Server-level endpoints: /, /_all_dbs, /_dbs_info, /_uuids, /_up, /_active_tasks,
// /_session.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "runtime/couch_error.h"
#include "runtime/couch_server.h"
#include "runtime/endpoint_helpers.h"
#include "storage/view_query.h"
#include "util/digest.h"

namespace settee {

namespace {

// The CouchDB version settee answers as: replicators and clients check the
// major version for feature support.
constexpr std::string_view kCouchVersion = "3.3.3";

Status GetRoot(RequestContext& ctx) {
  std::string out = R"({"couchdb":"Welcome","version":")" + std::string(kCouchVersion) +
                    R"(","git_sha":"settee","uuid":)" + json::Quote(ctx.server.store()->uuid()) +
                    R"(,"features":["access-ready","pluggable-storage-engines","scheduler"],)"
                    R"("vendor":{"name":"settee","version":"0.1.0"}})";
  return ctx.SendJson(200, out);
}

Status GetUp(RequestContext& ctx) { return ctx.SendJson(200, R"({"status":"ok"})"); }

// The store's database names that /_all_dbs and GET /_dbs_info list, after
// their query options (startkey/endkey as JSON strings, descending, skip,
// limit).
Status ListDbNames(RequestContext& ctx, std::vector<std::string>* out) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  std::vector<std::string> names = ctx.server.store()->ListDatabases();
  bool descending = false;
  uint64_t skip = 0, limit = UINT64_MAX;
  std::optional<std::string> start, end;
  // couch_mrview_http:parse_params, which CouchDB runs for these as for
  // _all_docs: the parameters folded in order, the last value winning.
  for (const auto& [name, value] : ctx.req.params) {
    const bool is_start = name == "startkey" || name == "start_key";
    const bool is_end = name == "endkey" || name == "end_key";
    if (name == "descending") {
      s = views::ParseBooleanText(value, &descending);
    } else if (name == "skip") {
      s = views::ParsePosIntText(value, &skip);
    } else if (name == "limit") {
      s = views::ParsePosIntText(value, &limit);
    } else if (is_start || is_end) {
      json::Document d;
      if (!json::Parse(value, &d).ok()) {
        return Status(Status::Code::kQueryParseError, "Invalid JSON in parameter \"" + name + "\"");
      }
      if (!d.IsString()) return Status(Status::Code::kQueryParseError, name + " must be a string");
      (is_start ? start : end) = std::string(json::View(d));
    }
    if (!s.ok()) return s;
  }
  if (descending) std::reverse(names.begin(), names.end());
  out->clear();
  uint64_t skipped = 0;
  for (std::string& n : names) {
    if (start && (descending ? n > *start : n < *start)) continue;
    if (end && (descending ? n < *end : n > *end)) continue;
    if (skipped < skip) {
      ++skipped;
      continue;
    }
    if (out->size() >= limit) break;
    out->push_back(std::move(n));
  }
  return Status::OK();
}

Status GetAllDbs(RequestContext& ctx) {
  std::vector<std::string> names;
  Status s = ListDbNames(ctx, &names);
  if (!s.ok()) return s;
  std::string out = "[";
  for (const std::string& n : names) {
    if (out.size() > 1) out += ",";
    json::AppendQuoted(&out, n);
  }
  out += "]";
  return ctx.SendJson(200, out);
}

// One element of /_dbs_info: {"key","info"}, or {"key","error":"not_found"}
// for a database that does not exist (POST names it; a GET lists one
// deleted meanwhile, which CouchDB leaves out).
Status AppendDbsInfoRow(RequestContext& ctx, const std::string& name, bool missing_as_error,
                        std::string* out) {
  auto db = ctx.server.store()->OpenDatabase(name);
  std::string row = "{\"key\":" + json::Quote(name);
  if (!db.ok()) {
    if (!db.status().IsNotFound()) return db.status();
    if (!missing_as_error) return Status::OK();
    row += R"(,"error":"not_found"})";
  } else {
    auto info = (*db)->Info();
    if (!info.ok()) return info.status();
    row += ",\"info\":" + DbInfoJson(*info, ctx.server.TaskRunningOn(db->get())) + "}";
  }
  if (out->size() > 1) *out += ",";
  *out += row;
  return Status::OK();
}

Status GetDbsInfo(RequestContext& ctx) {
  std::vector<std::string> names;
  Status s = ListDbNames(ctx, &names);
  if (!s.ok()) return s;
  std::string out = "[";
  for (const std::string& n : names) {
    s = AppendDbsInfoRow(ctx, n, false, &out);
    if (!s.ok()) return s;
  }
  out += "]";
  return ctx.SendJson(200, out);
}

// CouchDB's [chttpd] max_db_number_for_dbs_info_req default.
constexpr size_t kMaxDbsInfoKeys = 100;

Status PostDbsInfo(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  json::Document body;
  s = ctx.ParseBody(&body);
  if (!s.ok()) return s;
  if (!body.IsObject() || !body.HasMember("keys") || !body["keys"].IsArray()) {
    return Status::BadRequest("`keys` member must exist.");
  }
  const auto& keys = body["keys"].GetArray();
  if (keys.Size() > kMaxDbsInfoKeys) return Status::BadRequest("`keys` member exceeds limit.");
  std::string out = "[";
  for (const auto& k : keys) {
    if (!k.IsString()) return Status::BadRequest("`keys` members must be strings.");
    s = AppendDbsInfoRow(ctx, std::string(json::View(k)), true, &out);
    if (!s.ok()) return s;
  }
  out += "]";
  return ctx.SendJson(200, out);
}

Status GetUuids(RequestContext& ctx) {
  uint64_t count = 1;
  Status s = ctx.UIntParam("count", &count);
  if (!s.ok()) return Status::BadRequest("Invalid count parameter");
  if (count > static_cast<uint64_t>(ctx.server.options().max_uuids)) {
    return Status::BadRequest("count parameter too large");
  }
  std::string out = R"({"uuids":[)";
  for (uint64_t i = 0; i < count; ++i) {
    if (i > 0) out += ",";
    json::AppendQuoted(&out, RandomUuidHex());
  }
  out += "]}";
  ctx.res.AddHeader("Cache-Control", "must-revalidate, no-cache");
  ctx.res.AddHeader("Pragma", "no-cache");
  ctx.res.Send(200, "application/json", out + "\n");
  return Status::OK();
}

Status GetActiveTasks(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  return ctx.SendJson(200, ctx.server.ActiveTasksJson());
}

std::string UserCtxJson(const UserCtx& user) {
  std::string out = R"({"name":)";
  out += user.name.empty() ? "null" : json::Quote(user.name);
  out += R"(,"roles":[)";
  for (size_t i = 0; i < user.roles.size(); ++i) {
    if (i > 0) out += ",";
    json::AppendQuoted(&out, user.roles[i]);
  }
  out += "]}";
  return out;
}

Status GetSession(RequestContext& ctx) {
  std::string out = R"({"ok":true,"userCtx":)" + UserCtxJson(ctx.user) +
                    R"(,"info":{"authentication_handlers":["cookie","default"])";
  if (!ctx.user.name.empty()) {
    out += ctx.user.authenticated_by_cookie ? R"(,"authenticated":"cookie")"
                                             : R"(,"authenticated":"default")";
  }
  out += "}}";
  return ctx.SendJson(200, out);
}

Status PostSession(RequestContext& ctx) {
  std::string name, password;
  std::string ct = ctx.req.ContentType();
  if (ct == "application/x-www-form-urlencoded") {
    http::HttpRequest form;
    form.url = "/?" + ctx.req.body;
    if (!form.ParseUrl()) return Status::BadRequest("Malformed form body");
    if (auto* v = form.Param("name")) name = *v;
    if (auto* v = form.Param("password")) password = *v;
  } else if (ct == "application/json") {
    json::Document doc;
    Status s = ctx.ParseObjectBody(&doc);
    if (!s.ok()) return s;
    auto n = doc.FindMember("name");
    auto p = doc.FindMember("password");
    if (n != doc.MemberEnd() && n->value.IsString()) name = std::string(json::View(n->value));
    if (p != doc.MemberEnd() && p->value.IsString()) password = std::string(json::View(p->value));
  } else {
    return Status(Status::Code::kBadContentType,
                  "Content-Type must be application/x-www-form-urlencoded or application/json");
  }
  auto user = ctx.server.auth().CheckPassword(name, password);
  if (!user.ok()) return user.status();
  ctx.res.AddHeader("Set-Cookie", ctx.server.auth().MakeSessionCookie(name));
  if (const std::string* next = ctx.Param("next")) {
    // Only local redirects: an absolute URL here would be an open redirect.
    if (!next->empty() && (*next)[0] == '/' && (next->size() < 2 || (*next)[1] != '/')) {
      ctx.res.AddHeader("Location", *next);
      return ctx.SendJson(302, R"({"ok":true})");
    }
  }
  std::string roles = UserCtxJson(*user);
  roles = roles.substr(roles.find("\"roles\""));  // "roles":[...]}
  std::string out = R"({"ok":true,"name":)" + json::Quote(name) + "," + roles;
  return ctx.SendJson(200, out);
}

Status DeleteSession(RequestContext& ctx) {
  ctx.res.AddHeader("Set-Cookie", Authenticator::ClearSessionCookie());
  return ctx.SendJson(200, R"({"ok":true})");
}

}  // namespace

void RegisterServerEndpoints(CouchServer& server) {
  Router& r = server.router();
  r.Add("GET,HEAD", "/", GetRoot);
  r.Add("GET,HEAD", "/_up", GetUp);
  r.Add("GET,HEAD", "/_all_dbs", GetAllDbs);
  r.Add("GET,HEAD", "/_dbs_info", GetDbsInfo);
  r.Add("POST", "/_dbs_info", PostDbsInfo);
  r.Add("GET,HEAD", "/_uuids", GetUuids);
  r.Add("GET,HEAD", "/_active_tasks", GetActiveTasks);
  r.Add("GET,HEAD", "/_session", GetSession);
  r.Add("POST", "/_session", PostSession);
  r.Add("DELETE", "/_session", DeleteSession);
}

}  // namespace settee
