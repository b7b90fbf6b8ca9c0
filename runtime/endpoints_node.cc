// Cluster and node endpoints, as a single CouchDB 3 node answers them
// (chttpd_misc, chttpd_node):
//   GET /_membership                          {"all_nodes":[name],"cluster_nodes":[name]}
//   GET /_node/{node}                         {"name":name}
//   GET /_node/{node}/_config[/{section}[/{key}]]
//   PUT|DELETE /_node/{node}/_config/{section}/{key}   the previous value, as a JSON string
//   (X-Couch-Persist: false: the running node only, not written back)
// {node} is settee's node name (CouchServerOptions::node_name) or "_local";
// any other is 404 "no such node". Server admins only, as in CouchDB 3.
// What the configuration holds and what may change live: runtime/node_config.h
// and CouchServer's constructor.
#include <string>

#include "runtime/couch_server.h"
#include "runtime/node_config.h"

namespace settee {

namespace {

// The node a request names: settee's own, else CouchDB's not_found.
Status CheckNode(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  const std::string& node = ctx.params.at(0);
  if (node == "_local" || node == ctx.server.options().node_name) return Status::OK();
  return Status::NotFound("no such node: " + node);
}

// CouchDB's X-Couch-Persist: "false" changes the running node only.
bool Persist(const RequestContext& ctx) {
  const std::string* h = ctx.req.Header("x-couch-persist");
  return h == nullptr || *h != "false";
}

std::string SectionJson(const NodeConfig::Section& section) {
  std::string out = "{";
  for (const auto& [k, v] : section) {
    if (out.size() > 1) out += ',';
    json::AppendQuoted(&out, k);
    out += ':';
    json::AppendQuoted(&out, v);
  }
  return out + "}";
}

Status GetMembership(RequestContext& ctx) {
  Status s = ctx.RequireServerAdmin();
  if (!s.ok()) return s;
  const std::string name = json::Quote(ctx.server.options().node_name);
  return ctx.SendJson(200, R"({"all_nodes":[)" + name + R"(],"cluster_nodes":[)" + name + "]}");
}

Status GetNode(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  return ctx.SendJson(200, R"({"name":)" + json::Quote(ctx.server.options().node_name) + "}");
}

Status GetConfig(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  std::string out = "{";
  for (const auto& [name, section] : ctx.server.config().All()) {
    if (out.size() > 1) out += ',';
    json::AppendQuoted(&out, name);
    out += ':';
    out += SectionJson(section);
  }
  return ctx.SendJson(200, out + "}");
}

Status GetConfigSection(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  return ctx.SendJson(200, SectionJson(ctx.server.config().GetSection(ctx.params.at(1))));
}

Status GetConfigKey(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  auto v = ctx.server.config().Get(ctx.params.at(1), ctx.params.at(2));
  if (!v) return Status::NotFound("unknown_config_value");
  return ctx.SendJson(200, json::Quote(*v));
}

Status PutConfigKey(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  json::Document body;
  s = ctx.ParseBody(&body, false);
  if (!s.ok()) return s;
  if (!body.IsString()) return Status::BadRequest("The config value must be a JSON string");
  // CouchDB trims the value (couch_util:trim).
  std::string value(json::View(body));
  const size_t b = value.find_first_not_of(" \t\r\n");
  value = b == std::string::npos ? std::string() : value.substr(b, value.find_last_not_of(" \t\r\n") - b + 1);
  auto old = ctx.server.config().Set(ctx.params.at(1), ctx.params.at(2), value, Persist(ctx));
  if (!old.ok()) return old.status();
  return ctx.SendJson(200, json::Quote(*old));
}

Status DeleteConfigKey(RequestContext& ctx) {
  Status s = CheckNode(ctx);
  if (!s.ok()) return s;
  auto old = ctx.server.config().Delete(ctx.params.at(1), ctx.params.at(2), Persist(ctx));
  if (!old.ok()) return old.status();
  return ctx.SendJson(200, json::Quote(*old));
}

}  // namespace

void RegisterNodeEndpoints(CouchServer& server) {
  Router& r = server.router();
  r.Add("GET,HEAD", "/_membership", GetMembership);
  r.Add("GET,HEAD", "/_node/{node}", GetNode);
  r.Add("GET,HEAD", "/_node/{node}/_config", GetConfig);
  r.Add("GET,HEAD", "/_node/{node}/_config/{section}", GetConfigSection);
  r.Add("GET,HEAD", "/_node/{node}/_config/{section}/{key}", GetConfigKey);
  r.Add("PUT", "/_node/{node}/_config/{section}/{key}", PutConfigKey);
  r.Add("DELETE", "/_node/{node}/_config/{section}/{key}", DeleteConfigKey);
}

}  // namespace settee
