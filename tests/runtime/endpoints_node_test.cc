// /_membership and /_node/{node}/_config as a single CouchDB 3 node answers
// them (chttpd_misc, chttpd_node): shapes, the _local alias, unknown nodes,
// admin-only access, and the keys settee changes live (admins, log level)
// or refuses to.
#include <gtest/gtest.h>

#include "runtime/log.h"
#include "tests/runtime/couch_test_util.h"

namespace settee::testing {
namespace {

class NodeEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.couch.admins = {{"admin", "pw"}};
    cfg.setup = [this](CouchServer& couch) {
      couch.config().SetPersister([this](const std::string& section, const std::string& key,
                                         const std::string* value) {
        persisted_.push_back(section + "/" + key + "=" + (value ? *value : "<deleted>"));
        return Status::OK();
      });
    };
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  ClientResponse Req(const std::string& method, const std::string& path,
                     const std::string& body = {}, Headers headers = {}) {
    return client_->JsonRequest(method, path, body, std::move(headers));
  }
  ClientResponse Admin(const std::string& method, const std::string& path,
                       const std::string& body = {}) {
    return Req(method, path, body, {{"Authorization", BasicAuth("admin", "pw")}});
  }

  std::vector<std::string> persisted_;  // what the persister was handed
  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(NodeEndpointsTest, MembershipNamesTheNodeThatNodeLocalIs) {
  auto r = Admin("GET", "/_membership");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"all_nodes":["nonode@nohost"],"cluster_nodes":["nonode@nohost"]})" "\n");
  EXPECT_EQ(Admin("GET", "/_node/_local").body, R"({"name":"nonode@nohost"})" "\n");
  // The name works wherever _local does.
  EXPECT_EQ(Admin("GET", "/_node/nonode@nohost/_config/couchdb/single_node").body, "\"true\"\n");
  r = Admin("GET", "/_node/other@host/_config");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"not_found","reason":"no such node: other@host"})" "\n");
  // Server admins only.
  EXPECT_EQ(Req("GET", "/_membership").status, 401);
  EXPECT_EQ(Req("GET", "/_node/_local/_config").status, 401);
}

TEST_F(NodeEndpointsTest, ConfigShapes) {
  auto r = Admin("GET", "/_node/_local/_config");
  ASSERT_EQ(r.status, 200);
  auto all = ParseJson(r.body);
  ASSERT_TRUE(all.IsObject());
  EXPECT_TRUE(all["admins"].IsObject());
  EXPECT_EQ(Str(all["purge"], "max_document_id_number"), "100");
  EXPECT_EQ(Str(all["couchdb"], "max_document_size"), std::to_string(8u << 20));
  EXPECT_EQ(Str(all["couchdb"], "uuid"), server_->store()->uuid());
  // Every value is a string, as in CouchDB.
  for (auto& section : all.GetObject()) {
    for (auto& kv : section.value.GetObject()) EXPECT_TRUE(kv.value.IsString()) << kv.name.GetString();
  }
  // Admins are shown hashed, never in clear.
  const std::string hash = Str(all["admins"], "admin");
  // CouchDB's notation for PBKDF2-SHA256 (bare "-pbkdf2-" is SHA-1).
  EXPECT_EQ(hash.rfind("-pbkdf2:sha256-", 0), 0u) << hash;
  EXPECT_EQ(hash.find("pw,"), std::string::npos);
  r = Admin("GET", "/_node/_local/_config/purge");
  EXPECT_EQ(r.body, R"({"max_document_id_number":"100","max_revisions_number":"1000"})" "\n");
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/nosuch").body, "{}\n");
  r = Admin("GET", "/_node/_local/_config/purge/nosuch");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.body, R"({"error":"not_found","reason":"unknown_config_value"})" "\n");
}

TEST_F(NodeEndpointsTest, AdminsChangeLive) {
  auto r = Admin("PUT", "/_node/_local/_config/admins/second", R"("secret")");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "\"\"\n");  // no previous value
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("second", "secret")}}).status, 200);
  const std::string shown = Str(ParseJson(Admin("GET", "/_node/_local/_config/admins").body), "second");
  EXPECT_EQ(shown.rfind("-pbkdf2:sha256-", 0), 0u);
  // A new password replaces the old one; the answer is the old hash.
  r = Admin("PUT", "/_node/_local/_config/admins/second", R"("other")");
  EXPECT_EQ(r.body, "\"" + shown + "\"\n");
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("second", "secret")}}).status, 401);
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("second", "other")}}).status, 200);
  r = Admin("DELETE", "/_node/_local/_config/admins/second");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("second", "other")}}).status, 401);
  EXPECT_EQ(Admin("DELETE", "/_node/_local/_config/admins/second").status, 404);
  // A hash is taken as CouchDB takes it, kept and shown as given: the
  // password it was made from logs in (PBKDF2-HMAC-SHA1 of "password" over
  // "salt", 1 iteration: RFC 6070's vector).
  const std::string hash = "-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1";
  r = Admin("PUT", "/_node/_local/_config/admins/x", "\"" + hash + "\"");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/admins/x").body, "\"" + hash + "\"\n");
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("x", "password")}}).status, 200);
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("x", hash)}}).status, 401);
  // One settee cannot check is refused, and nothing changes.
  r = Admin("PUT", "/_node/_local/_config/admins/x", R"("-pbkdf2:md5-ab,cd,10")");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "bad_request");
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/admins/x", R"("-hashed-ab,cd")").status, 400);
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("x", "password")}}).status, 200);
  // The persister was handed the hashes, never a password.
  for (const std::string& p : persisted_) {
    if (p.rfind("admins/", 0) != 0 || p.find("<deleted>") != std::string::npos) continue;
    EXPECT_NE(p.find("=-pbkdf2"), std::string::npos) << p;
  }
  EXPECT_EQ(persisted_.back(), "admins/x=" + hash);
}

TEST_F(NodeEndpointsTest, LogLevelChangesLiveOthersAreRefused) {
  const LogLevel before = GetLogLevel();
  auto r = Admin("PUT", "/_node/_local/_config/log/level", R"("debug")");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(GetLogLevel(), LogLevel::kDebug);
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/log/level").body, "\"debug\"\n");
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/log/level", R"("loud")").status, 400);
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/log/level", R"("warning")").status, 200);
  SetLogLevel(before);
  // Fixed at startup: a CouchDB-style bad_request saying so.
  r = Admin("PUT", "/_node/_local/_config/couchdb/max_document_size", R"("10")");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "bad_request");
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/couchdb/max_document_size").body,
            "\"" + std::to_string(8u << 20) + "\"\n");
  // CouchDB's blacklist.
  r = Admin("PUT", "/_node/_local/_config/query_servers/js", R"("/bin/sh")");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"Config section blacklisted for modification over HTTP API."})" "\n");
  // Not a JSON string.
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/purge/max_revisions_number", "5").status, 400);
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/purge/max_revisions_number", "{").status, 400);
  // Anonymous: refused.
  EXPECT_EQ(Req("PUT", "/_node/_local/_config/log/level", R"("debug")").status, 401);
  SetLogLevel(before);
  // Applied changes go to the persister, unless X-Couch-Persist: false.
  EXPECT_EQ(persisted_, (std::vector<std::string>{"log/level=debug", "log/level=warning"}));
  r = Req("PUT", "/_node/_local/_config/purge/max_revisions_number", R"("7")",
          {{"Authorization", BasicAuth("admin", "pw")}, {"X-Couch-Persist", "false"}});
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(persisted_.size(), 2u);
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/purge/max_revisions_number").body, "\"7\"\n");
}

}  // namespace
}  // namespace settee::testing
