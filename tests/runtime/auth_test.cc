// Authentication and authorization over HTTP: server admins via Basic auth
// and AuthSession cookies, /_session, per-database _security with CouchDB 3's
// admin-only default, and the 401/403 split.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include "runtime/multipart.h"
#include "runtime/users_db.h"
#include "tests/runtime/couch_test_util.h"
#include "util/digest.h"

namespace settee::testing {
namespace {

class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TestServerConfig cfg;
    cfg.couch.admins = {{"admin", "s3cret"}};
    server_ = std::make_unique<TestServer>(cfg);
    client_ = std::make_unique<TestClient>(server_->port());
  }
  ClientResponse Req(const std::string& method, const std::string& path,
                     const std::string& body = {}, Headers headers = {}) {
    return client_->Request(method, path, body, std::move(headers));
  }
  ClientResponse Admin(const std::string& method, const std::string& path,
                       const std::string& body = {}) {
    return Req(method, path, body, {{"Authorization", BasicAuth("admin", "s3cret")}});
  }

  std::unique_ptr<TestServer> server_;
  std::unique_ptr<TestClient> client_;
};

TEST_F(AuthTest, AnonymousMayReachPublicServerEndpointsOnly) {
  EXPECT_EQ(Req("GET", "/").status, 200);
  EXPECT_EQ(Req("GET", "/_up").status, 200);
  auto r = Req("GET", "/_all_dbs");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "unauthorized");
  EXPECT_EQ(Req("PUT", "/db").status, 401);
  EXPECT_EQ(Req("GET", "/_active_tasks").status, 401);
}

TEST_F(AuthTest, BasicAuthChecksPassword) {
  EXPECT_EQ(Admin("GET", "/_all_dbs").status, 200);
  auto r = Req("GET", "/_all_dbs", "", {{"Authorization", BasicAuth("admin", "wrong")}});
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Name or password is incorrect.");
  EXPECT_EQ(Req("GET", "/", "", {{"Authorization", BasicAuth("nobody", "x")}}).status, 401);
  EXPECT_EQ(Req("GET", "/", "", {{"Authorization", "Basic !!!notbase64"}}).status, 401);
}

TEST_F(AuthTest, CookieSessionLifecycle) {
  auto r = Req("POST", "/_session", "name=admin&password=s3cret",
               {{"Content-Type", "application/x-www-form-urlencoded"}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_TRUE(d["ok"].GetBool());
  EXPECT_EQ(Str(d, "name"), "admin");
  std::string set_cookie = r.HeaderOr("set-cookie");
  ASSERT_EQ(set_cookie.rfind("AuthSession=", 0), 0u);
  EXPECT_NE(set_cookie.find("HttpOnly"), std::string::npos);
  std::string cookie = set_cookie.substr(0, set_cookie.find(';'));

  r = Req("GET", "/_session", "", {{"Cookie", cookie}});
  d = ParseJson(r.body);
  EXPECT_EQ(Str(d["userCtx"], "name"), "admin");
  EXPECT_EQ(Str(d["info"], "authenticated"), "cookie");
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Cookie", cookie}}).status, 200);

  // A tampered cookie is just anonymous.
  // Tamper inside the value (the last base64 character may only carry
  // padding bits, so it is not a reliable place to flip).
  std::string bad = cookie;
  char& c = bad[std::string("AuthSession=").size() + 2];
  c = c == 'A' ? 'B' : 'A';
  EXPECT_EQ(Req("GET", "/_all_dbs", "", {{"Cookie", bad}}).status, 401);
  d = ParseJson(Req("GET", "/_session").body);
  EXPECT_TRUE(d["userCtx"]["name"].IsNull());

  r = Req("POST", "/_session", R"({"name":"admin","password":"bad"})");
  EXPECT_EQ(r.status, 401);
  r = Req("POST", "/_session", "x", {{"Content-Type", "text/plain"}});
  EXPECT_EQ(r.status, 415);
  r = Req("DELETE", "/_session", "", {{"Cookie", cookie}});
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.HeaderOr("set-cookie").find("AuthSession=;"), std::string::npos);

  r = Req("POST", "/_session?next=/db", R"({"name":"admin","password":"s3cret"})");
  EXPECT_EQ(r.status, 302);
  EXPECT_EQ(r.HeaderOr("location"), "/db");
}

TEST_F(AuthTest, NewDatabasesAreAdminOnly) {
  ASSERT_EQ(Admin("PUT", "/db").status, 201);
  auto r = Req("GET", "/db");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "You are not authorized to access this db.");
  EXPECT_EQ(Req("GET", "/db/_all_docs").status, 401);
  EXPECT_EQ(Req("GET", "/db/_changes").status, 401);
  EXPECT_EQ(Req("PUT", "/db/doc", "{}").status, 401);
  EXPECT_EQ(Admin("GET", "/db").status, 200);
  EXPECT_EQ(Admin("PUT", "/db/doc", "{}").status, 201);
}

TEST_F(AuthTest, PublicDatabaseAllowsMembersButNotDesignOrSecurityWrites) {
  ASSERT_EQ(Admin("PUT", "/pub").status, 201);
  ASSERT_EQ(Admin("PUT", "/pub/_security", R"({"admins":{"names":[],"roles":[]},"members":{"names":[],"roles":[]}})").status, 200);
  EXPECT_EQ(Req("GET", "/pub").status, 200);
  EXPECT_EQ(Req("PUT", "/pub/doc", "{}").status, 201);
  EXPECT_EQ(Req("GET", "/pub/doc").status, 200);
  EXPECT_EQ(Req("PUT", "/pub/_design/x", "{}").status, 401);
  EXPECT_EQ(Req("POST", "/pub/_bulk_docs", R"({"docs":[{"_id":"_design/y"}]})").status, 401);
  EXPECT_EQ(Req("PUT", "/pub/_security", "{}").status, 401);
  EXPECT_EQ(Req("DELETE", "/pub").status, 401);
  EXPECT_EQ(Req("POST", "/pub/_compact", "", {{"Content-Type", "application/json"}}).status, 401);
}

TEST_F(AuthTest, RestrictedDatabaseDeniesAnonymousWith401) {
  ASSERT_EQ(Admin("PUT", "/priv").status, 201);
  ASSERT_EQ(Admin("PUT", "/priv/_security", R"({"members":{"names":["alice"]}})").status, 200);
  EXPECT_EQ(Req("GET", "/priv").status, 401);
  EXPECT_EQ(Admin("GET", "/priv").status, 200);
}

// ---- _users accounts

class UsersTest : public AuthTest {
 protected:
  void SetUp() override {
    AuthTest::SetUp();
    CreateUser("bob", "bobpw", R"(["dev"])");
    CreateUser("carol", "carolpw", "[]");
    ASSERT_EQ(Admin("PUT", "/team").status, 201);
    ASSERT_EQ(Admin("PUT", "/team/_security",
                    R"({"admins":{"roles":["ops"]},"members":{"names":["bob"]}})")
                  .status,
              200);
  }
  void CreateUser(const std::string& name, const std::string& pw, const std::string& roles) {
    auto r = Admin("PUT", "/_users/org.couchdb.user:" + name,
                   R"({"name":")" + name + R"(","password":")" + pw +
                       R"(","roles":)" + roles + R"(,"type":"user"})");
    ASSERT_EQ(r.status, 201) << r.body;
  }
  ClientResponse As(const std::string& user, const std::string& pw, const std::string& method,
                    const std::string& path, const std::string& body = {}) {
    return Req(method, path, body, {{"Authorization", BasicAuth(user, pw)}});
  }
};

TEST_F(UsersTest, PasswordIsHashedNotStored) {
  auto r = Admin("GET", "/_users/org.couchdb.user:bob");
  ASSERT_EQ(r.status, 200);
  auto d = ParseJson(r.body);
  EXPECT_FALSE(d.HasMember("password"));
  EXPECT_EQ(Str(d, "password_scheme"), "pbkdf2");
  EXPECT_EQ(Str(d, "derived_key").size(), 64u);
  EXPECT_EQ(r.body.find("bobpw"), std::string::npos);
}

TEST_F(UsersTest, UsersAuthenticateWithTheirRoles) {
  auto r = As("bob", "bobpw", "GET", "/_session");
  ASSERT_EQ(r.status, 200);
  auto d = ParseJson(r.body);
  EXPECT_EQ(Str(d["userCtx"], "name"), "bob");
  ASSERT_EQ(d["userCtx"]["roles"].Size(), 1u);
  EXPECT_EQ(std::string(d["userCtx"]["roles"][0].GetString()), "dev");
  EXPECT_EQ(As("bob", "wrong", "GET", "/").status, 401);
  EXPECT_EQ(As("bob", "bobpw", "GET", "/").status, 200);  // again: the cached check
  // Users are not server admins: chttpd:verify_is_server_admin's 401, even
  // for a signed-in user.
  for (const char* path : {"/_all_dbs", "/_active_tasks", "/_node/_local/_config"}) {
    r = As("bob", "bobpw", "GET", path);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_EQ(Str(ParseJson(r.body), "error"), "unauthorized") << path;
    EXPECT_EQ(Str(ParseJson(r.body), "reason"), "You are not a server admin.") << path;
  }
  EXPECT_EQ(As("bob", "bobpw", "PUT", "/newdb").status, 401);
  EXPECT_EQ(As("bob", "bobpw", "DELETE", "/_users").status, 401);
}

// Users as CouchDB stores them, come by replication: before 3.4 with no
// pbkdf2_prf (SHA-1, a 20-byte key), 3.4's "sha256". The keys are PBKDF2
// test vectors of "password" over "salt" (RFC 6070; SHA-256's published
// one), not settee's own output.
// CouchDB 3's validate function lets a user doc hold _metrics, the one
// system role it allows (for the node's statistics); the user then has it.
// Others still refused; and only admins set roles at all.
TEST_F(UsersTest, MetricsIsTheOneSystemRoleAUserMayHold) {
  CreateUser("mia", "miapw", R"(["_metrics"])");
  auto r = As("mia", "miapw", "GET", "/_session");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  ASSERT_EQ(d["userCtx"]["roles"].Size(), 1u) << r.body;
  EXPECT_EQ(std::string(d["userCtx"]["roles"][0].GetString()), "_metrics");
  EXPECT_EQ(As("mia", "miapw", "GET", "/_all_dbs").status, 401);  // not an admin
  r = Admin("PUT", "/_users/org.couchdb.user:max",
            R"({"name":"max","password":"m","roles":["_metrics","_admin"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"No system roles (starting with underscore) in users db."})" "\n");
  ASSERT_EQ(Admin("PUT", "/_users/_security", R"({"members":{"roles":[]},"admins":{"roles":["_admin"]}})").status,
            200);
  r = Req("PUT", "/_users/org.couchdb.user:max", R"({"name":"max","password":"m","roles":["_metrics"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Only _admin may set roles");
}

TEST_F(UsersTest, UsersHashedByCouchDbLogIn) {
  auto put = [&](const std::string& name, const std::string& fields) {
    auto r = Admin("PUT", "/_users/org.couchdb.user:" + name,
                   R"({"name":")" + name + R"(","type":"user","roles":[],"password_scheme":"pbkdf2",)" +
                       R"("salt":"salt",)" + fields + "}");
    ASSERT_EQ(r.status, 201) << r.body;
  };
  put("dave", R"("iterations":2,"derived_key":"ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957")");
  put("erin", R"("pbkdf2_prf":"sha256","iterations":1,)"
              R"("derived_key":"120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b")");
  put("fred", R"("pbkdf2_prf":"md5","iterations":1,"derived_key":"ab")");
  put("gina", R"("iterations":100000000,"derived_key":"ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957")");
  for (const char* user : {"dave", "erin"}) {
    auto r = As(user, "password", "GET", "/_session");
    ASSERT_EQ(r.status, 200) << user << ": " << r.body;
    EXPECT_EQ(Str(ParseJson(r.body)["userCtx"], "name"), user);
    EXPECT_EQ(As(user, "passwore", "GET", "/_session").status, 401) << user;
  }
  // A PRF settee does not know, and more iterations than it computes: refused.
  EXPECT_EQ(As("fred", "password", "GET", "/_session").status, 401);
  EXPECT_EQ(As("gina", "password", "GET", "/_session").status, 401);
}

TEST_F(UsersTest, MembersReadAndWriteOthersGet403) {
  EXPECT_EQ(As("bob", "bobpw", "GET", "/team").status, 200);
  EXPECT_EQ(As("bob", "bobpw", "PUT", "/team/doc", "{}").status, 201);
  EXPECT_EQ(As("bob", "bobpw", "GET", "/team/doc").status, 200);
  auto r = As("carol", "carolpw", "GET", "/team/doc");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "forbidden");
  EXPECT_EQ(Req("GET", "/team/doc").status, 401);
  // Members may not change design docs or the security object.
  EXPECT_EQ(As("bob", "bobpw", "PUT", "/team/_design/x", "{}").status, 403);
  EXPECT_EQ(As("bob", "bobpw", "PUT", "/team/_security", "{}").status, 403);
}

TEST_F(UsersTest, RoleGrantsDbAdmin) {
  CreateUser("dan", "danpw", R"(["ops"])");
  EXPECT_EQ(As("dan", "danpw", "PUT", "/team/_design/x", "{}").status, 201);
  EXPECT_EQ(As("dan", "danpw", "GET", "/team/_security").status, 200);
}

TEST_F(UsersTest, CookieSessionsForUsersEndWithPasswordChange) {
  auto r = Req("POST", "/_session", R"({"name":"bob","password":"bobpw"})");
  ASSERT_EQ(r.status, 200) << r.body;
  auto d = ParseJson(r.body);
  EXPECT_EQ(std::string(d["roles"][0].GetString()), "dev");
  std::string cookie = r.HeaderOr("set-cookie");
  cookie = cookie.substr(0, cookie.find(';'));
  EXPECT_EQ(Req("GET", "/team", "", {{"Cookie", cookie}}).status, 200);
  auto doc = ParseJson(Admin("GET", "/_users/org.couchdb.user:bob").body);
  ASSERT_EQ(Admin("PUT", "/_users/org.couchdb.user:bob?rev=" + Str(doc, "_rev"),
                  R"({"name":"bob","password":"newpw","roles":["dev"],"type":"user"})")
                .status,
            201);
  EXPECT_EQ(Req("GET", "/team", "", {{"Cookie", cookie}}).status, 401);
  EXPECT_EQ(As("bob", "bobpw", "GET", "/").status, 401);
  EXPECT_EQ(As("bob", "newpw", "GET", "/team").status, 200);
}

TEST_F(UsersTest, UsersDbIsGuardedAndValidated) {
  EXPECT_EQ(As("bob", "bobpw", "PUT", "/_users/org.couchdb.user:eve",
               R"({"name":"eve","password":"x","roles":[],"type":"user"})")
                .status,
            403);
  EXPECT_EQ(Req("GET", "/_users/org.couchdb.user:bob").status, 401);
  auto r = Admin("PUT", "/_users/org.couchdb.user:mallory",
                 R"({"name":"mallory","password":"x","roles":["_admin"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  r = Admin("PUT", "/_users/org.couchdb.user:x", R"({"name":"y","password":"x","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  r = Admin("PUT", "/_users/wrongprefix", R"({"name":"wrongprefix","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403);
}

// _bulk_docs into _users reads each _rev as chttpd_db does (couch_doc:
// parse_rev) before any document is checked: malformed is 400 for the
// request, "+1-h" is 1-h, one no stored revision can be is its document's
// conflict (which CouchDB finds before validate_doc_update's refusal).
TEST_F(UsersTest, BulkDocsReadsRevsAsCouchDBParsesThem) {
  const std::string zs = "1-" + std::string(32, 'z');
  auto r = Admin("POST", "/_users/_bulk_docs",
                 R"({"docs":[{"_id":"org.couchdb.user:ann","name":"ann","password":"a","roles":[],"type":"user"},)"
                 R"({"_id":"org.couchdb.user:cy","_rev":")" + zs + R"(","name":"cy","roles":[],"type":"user"}]})");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Invalid rev format");
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:ann").status, 404);
  r = Admin("POST", "/_users/_bulk_docs",
            R"({"docs":[{"_id":"org.couchdb.user:ann","_rev":"1-","name":"ann","roles":[],"type":"user"},)"
            R"({"_id":"org.couchdb.user:cy","_rev":"0-abc","name":"not-cy","roles":[],"type":"user"},)"
            R"({"_id":"org.couchdb.user:dee","name":"dee","password":"d","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  json::Document rows = ParseJson(r.body);
  ASSERT_TRUE(rows.IsArray() && rows.Size() == 3) << r.body;
  EXPECT_EQ(Str(rows[0], "error"), "conflict") << r.body;
  EXPECT_EQ(Str(rows[1], "error"), "conflict") << r.body;  // not validate's forbidden
  EXPECT_TRUE(rows[2].HasMember("ok")) << r.body;
  const std::string rev = Str(ParseJson(Admin("GET", "/_users/org.couchdb.user:dee").body), "_rev");
  r = Admin("POST", "/_users/_bulk_docs",
            R"({"docs":[{"_id":"org.couchdb.user:dee","_rev":"+)" + rev +
                R"(","name":"dee","password":"d2","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_TRUE(ParseJson(r.body)[0].HasMember("ok")) << r.body;
  EXPECT_EQ(As("dee", "d2", "GET", "/_session").status, 200);
  // new_edits=false: one settee cannot store is answered in its place.
  r = Admin("POST", "/_users/_bulk_docs",
            R"({"new_edits":false,"docs":[{"_id":"org.couchdb.user:eve","_rev":"0-abc","name":"eve","roles":[],)"
            R"("type":"user"},{"_id":"org.couchdb.user:fay","_rev":"+3-abc","name":"fay","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  rows = ParseJson(r.body);
  ASSERT_TRUE(rows.IsArray() && rows.Size() == 1) << r.body;
  EXPECT_EQ(Str(rows[0], "id"), "org.couchdb.user:eve");
  EXPECT_EQ(Str(rows[0], "rev"), "0-abc");
  EXPECT_EQ(Str(rows[0], "error"), "bad_request");
  EXPECT_EQ(Str(ParseJson(Admin("GET", "/_users/org.couchdb.user:fay").body), "_rev"), "3-abc");
}

// CouchDB 3 keeps _users admin-only until an admin empties its members (as
// CouchDB's docs say to, for sign-up); then its per-document rules apply:
// anyone signs up with no roles, users read and edit their own doc only.
class OpenUsersTest : public UsersTest {
 protected:
  void SetUp() override {
    UsersTest::SetUp();
    // The default first: nobody but admins.
    auto r = Req("PUT", "/_users/org.couchdb.user:zoe", R"({"name":"zoe","password":"z","roles":[],"type":"user"})");
    ASSERT_EQ(r.status, 401) << r.body;
    ASSERT_EQ(Admin("PUT", "/_users/_security", R"({"members":{"roles":[]},"admins":{"roles":["_admin"]}})").status,
              200);
  }
  std::string Rev(const std::string& name) {
    return Str(ParseJson(Admin("GET", "/_users/org.couchdb.user:" + name).body), "_rev");
  }
  // A server admin deletes `name`'s user doc: its tombstone's revision
  // ("" when the delete failed, which the test reports).
  std::string DeleteUser(const std::string& name) {
    auto r = Admin("DELETE", "/_users/org.couchdb.user:" + name + "?rev=" + Rev(name));
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? Str(ParseJson(r.body), "rev") : "";
  }
  static std::string Reason(const ClientResponse& r) { return Str(ParseJson(r.body), "reason"); }
};

TEST_F(OpenUsersTest, AnyoneSignsUpWithoutRolesAndLogsIn) {
  auto r = Req("PUT", "/_users/org.couchdb.user:zoe", R"({"name":"zoe","password":"zoepw","roles":[],"type":"user"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("POST", "/_session", R"({"name":"zoe","password":"zoepw"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(ParseJson(r.body)["roles"].Size(), 0u);
  // POST /_users as pouchdb-authentication's signUp may, and _bulk_docs.
  r = Req("POST", "/_users", R"({"_id":"org.couchdb.user:yan","name":"yan","password":"y","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 201) << r.body;
  r = Req("PUT", "/_users/org.couchdb.user:mal", R"({"name":"mal","password":"m","roles":["dev"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "forbidden");
  EXPECT_EQ(Reason(r), "Only _admin may set roles");
  // _bulk_docs answers a refused document in its place and writes the rest.
  r = Req("POST", "/_users/_bulk_docs",
          R"({"docs":[{"_id":"org.couchdb.user:mal","name":"mal","password":"m","roles":["ops"],"type":"user"},)"
          R"({"_id":"org.couchdb.user:val","name":"val","password":"v","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  {
    json::Document rows = ParseJson(r.body);
    ASSERT_TRUE(rows.IsArray() && rows.Size() == 2) << r.body;
    EXPECT_EQ(Str(rows[0], "id"), "org.couchdb.user:mal");
    EXPECT_EQ(Str(rows[0], "error"), "forbidden");
    EXPECT_EQ(Str(rows[0], "reason"), "Only _admin may set roles");
    EXPECT_TRUE(rows[1].HasMember("ok")) << r.body;
  }
  EXPECT_EQ(Req("POST", "/_session", R"({"name":"val","password":"v"})").status, 200);
  EXPECT_EQ(Req("POST", "/_session", R"({"name":"mal","password":"m"})").status, 401);
  // An existing name: a conflict, not a takeover; and no edits of it.
  r = Req("PUT", "/_users/org.couchdb.user:bob", R"({"name":"bob","password":"mine","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 409) << r.body;
  r = Req("PUT", "/_users/org.couchdb.user:bob?rev=" + Rev("bob"),
          R"({"name":"bob","password":"mine","roles":["dev"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "You may only update your own user document.");
  r = Req("DELETE", "/_users/org.couchdb.user:bob?rev=" + Rev("bob"));
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "Only admins may delete other user docs.");
  // Nobody's doc is readable anonymously.
  EXPECT_EQ(Req("GET", "/_users/org.couchdb.user:zoe").status, 404);
  EXPECT_EQ(As("bob", "bobpw", "GET", "/").status, 200);
}

TEST_F(OpenUsersTest, UsersEditTheirOwnDocButNotTheirRoles) {
  auto r = As("bob", "bobpw", "GET", "/_users/org.couchdb.user:bob");
  ASSERT_EQ(r.status, 200) << r.body;
  const std::string rev = Str(ParseJson(r.body), "_rev");
  r = As("bob", "bobpw", "PUT", "/_users/org.couchdb.user:bob?rev=" + rev,
         R"({"name":"bob","password":"bobpw","roles":["dev","ops"],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "Only _admin may edit roles");
  r = As("bob", "bobpw", "PUT", "/_users/org.couchdb.user:bob?rev=" + rev,
         R"({"name":"bob","password":"bobpw","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  // A password change (and a field of one's own): the new password logs in
  // right away, by Basic auth and /_session; the old one no longer does.
  r = As("bob", "bobpw", "PUT", "/_users/org.couchdb.user:bob?rev=" + rev,
         R"({"name":"bob","password":"newpw","roles":["dev"],"type":"user","email":"b@x"})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(As("bob", "bobpw", "GET", "/_session").status, 401);
  EXPECT_EQ(As("bob", "newpw", "GET", "/team").status, 200);
  r = Req("POST", "/_session", R"({"name":"bob","password":"newpw"})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Req("POST", "/_session", R"({"name":"bob","password":"bobpw"})").status, 401);
  r = As("bob", "newpw", "GET", "/_users/org.couchdb.user:bob");
  EXPECT_EQ(Str(ParseJson(r.body), "email"), "b@x");
  EXPECT_EQ(r.body.find("newpw"), std::string::npos);
  // The revision edited before is no leaf now: CouchDB's update finds the
  // conflict before the validate function would refuse the roles.
  r = As("bob", "newpw", "PUT", "/_users/org.couchdb.user:bob?rev=" + rev,
         R"({"name":"bob","password":"newpw","roles":["dev","ops"],"type":"user"})");
  EXPECT_EQ(r.status, 409) << r.body;
  // The user deletes their own doc.
  r = As("bob", "newpw", "DELETE", "/_users/org.couchdb.user:bob?rev=" + Rev("bob"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(As("bob", "newpw", "GET", "/").status, 401);
}

TEST_F(OpenUsersTest, OthersDocsAndListingsStayHidden) {
  const std::string carol = "/_users/org.couchdb.user:carol";
  auto r = As("bob", "bobpw", "GET", carol);
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Str(ParseJson(r.body), "error"), "not_found");
  EXPECT_EQ(As("bob", "bobpw", "GET", carol + "?open_revs=all").status, 404);
  r = As("bob", "bobpw", "PUT", carol + "?rev=" + Rev("carol"),
         R"({"name":"carol","password":"stolen","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(As("bob", "bobpw", "DELETE", carol + "?rev=" + Rev("carol")).status, 404);
  r = As("bob", "bobpw", "POST", "/_users/_bulk_docs",
         R"({"docs":[{"_id":"org.couchdb.user:carol","_rev":")" + Rev("carol") +
             R"(","name":"carol","password":"stolen","roles":[],"type":"user"}]})");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(As("carol", "carolpw", "GET", "/").status, 200);
  // _all_docs and _changes are the server admins' (CouchDB: 401 for all).
  for (const char* path : {"/_users/_all_docs", "/_users/_changes"}) {
    r = As("bob", "bobpw", "GET", path);
    EXPECT_EQ(r.status, 401) << path;
    EXPECT_EQ(Reason(r), "You are not a server admin.") << path;
    EXPECT_EQ(Req("GET", path).status, 401) << path;
    EXPECT_EQ(Admin("GET", path).status, 200) << path;
  }
  EXPECT_EQ(As("bob", "bobpw", "POST", "/_users/_bulk_get", R"({"docs":[{"id":"org.couchdb.user:carol"}]})").status,
            403);
  r = As("bob", "bobpw", "GET", "/_users/_design/_auth");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "Only administrators can view design docs in the users database.");
  // Admins are unaffected: any doc, any roles.
  EXPECT_EQ(Admin("GET", carol).status, 200);
  r = Admin("PUT", carol + "?rev=" + Rev("carol"), R"({"name":"carol","password":"c2","roles":["ops"],"type":"user"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(As("carol", "c2", "PUT", "/team/_design/x", "{}").status, 201);
}

// A name that is not a string, as CouchDB's validate function takes it: an
// array passes when the id spells it ('org.couchdb.user:' + ["ann"] is
// ...:ann), so anyone may sign up so and log in by the id's name; such a
// doc can never be updated (oldDoc.name !== newDoc.name for two arrays),
// but its owner deletes it (userCtx.name == oldDoc.name).
TEST_F(OpenUsersTest, ArrayNamesAreTakenAsJavaScriptTakesThem) {
  const std::string ann = "/_users/org.couchdb.user:ann";
  auto r = Req("PUT", ann, R"({"name":["ann"],"password":"annpw","roles":[],"type":"user"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = As("ann", "annpw", "GET", "/_session");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body)["userCtx"], "name"), "ann");
  r = As("ann", "annpw", "GET", ann);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_TRUE(ParseJson(r.body)["name"].IsArray()) << r.body;
  r = As("ann", "annpw", "PUT", ann + "?rev=" + Rev("ann"), R"({"name":["ann"],"password":"new","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "Usernames can not be changed.");
  r = Req("PUT", "/_users/org.couchdb.user:bo", R"({"name":["bob"],"password":"x","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Reason(r), "Doc ID must be of the form org.couchdb.user:name");
  r = Req("PUT", "/_users/org.couchdb.user:5", R"({"name":5,"password":"x","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(r.body, R"({"error":"unknown_error","reason":"TypeError: newDoc.name.indexOf is not a function"})" "\n");
  EXPECT_EQ(As("carol", "carolpw", "DELETE", ann + "?rev=" + Rev("ann")).status, 404);
  r = As("ann", "annpw", "DELETE", ann + "?rev=" + Rev("ann"));
  EXPECT_EQ(r.status, 200) << r.body;
}

// Who may delete a user doc, as CouchDB's _auth validate function decides
// it: a server admin ('_admin' among the roles) or the user the edited
// revision names. An admin of _users by its _security (named, or by role)
// is an admin to before_doc_update and may edit others' docs and roles
// (is_server_or_database_admin), but deletes only their own doc.
TEST_F(OpenUsersTest, OnlyServerAdminsAndOwnersDeleteUserDocs) {
  CreateUser("dan", "danpw", "[]");
  CreateUser("erin", "erinpw", R"(["ops"])");
  CreateUser("fay", "faypw", "[]");
  ASSERT_EQ(Admin("PUT", "/_users/_security",
                  R"({"members":{"roles":[]},"admins":{"names":["dan"],"roles":["ops"]}})")
                .status,
            200);
  const std::string bob = "/_users/org.couchdb.user:bob";
  // The _security admins, by name and by role: whole docs to read, others'
  // docs and roles to edit, but not others' docs to delete, by any route.
  for (const auto& [who, pw] : {std::pair{"dan", "danpw"}, std::pair{"erin", "erinpw"}}) {
    ASSERT_EQ(As(who, pw, "GET", bob).status, 200) << who;
    auto r = As(who, pw, "DELETE", bob + "?rev=" + Rev("bob"));
    EXPECT_EQ(r.status, 403) << who << ": " << r.body;
    EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"Only admins may delete other user docs."})" "\n") << who;
    r = As(who, pw, "PUT", bob + "?rev=" + Rev("bob"), R"({"_deleted":true})");
    EXPECT_EQ(r.status, 403) << who << ": " << r.body;
    EXPECT_EQ(Reason(r), "Only admins may delete other user docs.") << who;
    r = As(who, pw, "POST", "/_users/_bulk_docs",
           R"({"docs":[{"_id":"org.couchdb.user:bob","_rev":")" + Rev("bob") + R"(","_deleted":true}]})");
    ASSERT_EQ(r.status, 201) << who << ": " << r.body;
    auto rows = ParseJson(r.body);
    ASSERT_TRUE(rows.IsArray() && rows.Size() == 1) << r.body;
    EXPECT_EQ(Str(rows[0], "error"), "forbidden") << who;
    EXPECT_EQ(Str(rows[0], "reason"), "Only admins may delete other user docs.") << who;
    // A stale _rev is the write's conflict, as before.
    EXPECT_EQ(As(who, pw, "DELETE", bob + "?rev=1-00000000000000000000000000000000").status, 409) << who;
  }
  auto r = As("dan", "danpw", "PUT", bob + "?rev=" + Rev("bob"),
              R"({"name":"bob","password":"bobpw","roles":["dev","qa"],"type":"user"})");
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(As("bob", "bobpw", "GET", "/team").status, 200);
  // Their own doc they delete.
  r = As("erin", "erinpw", "DELETE", "/_users/org.couchdb.user:erin?rev=" + Rev("erin"));
  EXPECT_EQ(r.status, 200) << r.body;
  // Another user: their doc is not found to them (after_doc_read).
  EXPECT_EQ(As("fay", "faypw", "DELETE", bob + "?rev=" + Rev("bob")).status, 404);
  // The owner and a server admin delete.
  r = As("bob", "bobpw", "DELETE", bob + "?rev=" + Rev("bob"));
  EXPECT_EQ(r.status, 200) << r.body;
  r = Admin("DELETE", "/_users/org.couchdb.user:fay?rev=" + Rev("fay"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(As("fay", "faypw", "GET", "/").status, 401);
}

// _local documents in _users: CouchDB's couch_db:update_docs sets them
// apart before before_doc_update and validate_doc_update, and chttpd_db
// checks no admin for them, so what decides is membership of _users alone
// (chttpd_auth_request's db_authorization_check). With CouchDB 3's default
// _security a logged-in non-admin is refused (403) and an anonymous one
// told to log in (401); once the members are opened, any member writes
// and deletes them, with any body. settee already did so: this pins it.
TEST_F(UsersTest, LocalDocsInUsersFollowMembershipOnly) {
  auto r = As("bob", "bobpw", "PUT", "/_users/_local/x", R"({"a":1})");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"You are not allowed to access this db."})" "\n");
  r = As("bob", "bobpw", "DELETE", "/_users/_local/x?rev=0-1");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "You are not allowed to access this db.");
  r = Req("PUT", "/_users/_local/x", R"({"a":1})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.body, R"({"error":"unauthorized","reason":"You are not authorized to access this db."})" "\n");
  EXPECT_EQ(Admin("GET", "/_users/_local/x").status, 404);

  ASSERT_EQ(Admin("PUT", "/_users/_security", R"({"members":{"roles":[]},"admins":{"roles":["_admin"]}})").status,
            200);
  r = As("bob", "bobpw", "PUT", "/_users/_local/x", R"({"a":1})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(r.body, R"({"ok":true,"id":"_local/x","rev":"0-1"})" "\n");
  r = As("bob", "bobpw", "GET", "/_users/_local/x");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(Str(ParseJson(r.body), "_rev"), "0-1");
  r = As("carol", "carolpw", "PUT", "/_users/_local/x", R"({"type":"not a user"})");
  EXPECT_EQ(r.status, 201) << r.body;
  r = As("bob", "bobpw", "DELETE", "/_users/_local/x?rev=0-2");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Admin("GET", "/_users/_local/x").status, 404);
  EXPECT_EQ(Req("PUT", "/_users/_local/y", "{}").status, 201);
}

// validate_doc_update compares the edited revision's name with the new
// one before its non-admin rules: a deleted user's tombstone has none, so
// a sign-up that names the tombstone's rev is "Usernames can not be
// changed." (the one without a rev is a new document, and welcome).
TEST_F(OpenUsersTest, EditingATombstoneIsARenaming) {
  const std::string tombstone = DeleteUser("carol");
  ASSERT_FALSE(tombstone.empty());
  auto r = Req("PUT", "/_users/org.couchdb.user:carol?rev=" + tombstone,
          R"({"name":"carol","password":"mine","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Usernames can not be changed.");
  r = Req("PUT", "/_users/org.couchdb.user:carol", R"({"name":"carol","password":"mine","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 201) << r.body;
}

// A multipart/related PUT's JSON part is a user document like a JSON
// PUT's body: couch_users_db's before_doc_update hashes its password and
// the _auth validate function checks it whoever writes (settee stored an
// admin's as sent, plaintext password and all, and refused non-admins).
TEST_F(OpenUsersTest, MultipartPutsMeetTheRulesOfAJsonPut) {
  const auto multipart = [&](const std::string& who, const std::string& pw, const std::string& id,
                             const std::string& doc) {
    const std::string body = MultipartPartHead("XYZ", {{"Content-Type", "application/json"}}) + doc + "\r\n" +
                             MultipartPartHead("XYZ", {}) + "pixels" + MultipartClose("XYZ");
    Headers h = {{"Content-Type", "multipart/related; boundary=\"XYZ\""}};
    if (!who.empty()) h.emplace_back("Authorization", BasicAuth(who, pw));
    return Req("PUT", "/_users/" + id, body, h);
  };
  const std::string photo = R"("_attachments":{"photo":{"content_type":"text/plain","length":6,"follows":true}})";
  auto r = multipart("admin", "s3cret", "org.couchdb.user:gus",
                     R"({"name":"gus","password":"guspw","roles":[],"type":"user",)" + photo + "}");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Admin("GET", "/_users/org.couchdb.user:gus");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("guspw"), std::string::npos) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "derived_key").size(), 64u) << r.body;
  EXPECT_EQ(As("gus", "guspw", "GET", "/_session").status, 200);
  r = Req("POST", "/_session", R"({"name":"gus","password":"guspw"})", {{"Content-Type", "application/json"}});
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:gus/photo").body, "pixels");
  r = multipart("admin", "s3cret", "org.couchdb.user:hal",
                R"({"name":"gus","password":"x","roles":[],"type":"user",)" + photo + "}");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Doc ID must be of the form org.couchdb.user:name");
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:hal").status, 404);

  // A _security admin of _users deletes only their own doc, this way too.
  CreateUser("dan", "danpw", "[]");
  ASSERT_EQ(Admin("PUT", "/_users/_security", R"({"members":{"roles":[]},"admins":{"names":["dan"]}})").status, 200);
  r = multipart("dan", "danpw", "org.couchdb.user:bob",
                R"({"_rev":")" + Rev("bob") + R"(","_deleted":true,)" + photo + "}");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"Only admins may delete other user docs."})" "\n");
  EXPECT_EQ(As("bob", "bobpw", "GET", "/_session").status, 200);

  // A user edits their own doc so, and another's is not found to them.
  r = multipart("carol", "carolpw", "org.couchdb.user:carol",
                R"({"_rev":")" + Rev("carol") + R"(","name":"carol","password":"newpw","roles":[],"type":"user",)" +
                    photo + "}");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(As("carol", "newpw", "GET", "/_session").status, 200);
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:carol").body.find("newpw"), std::string::npos);
  r = multipart("carol", "newpw", "org.couchdb.user:gus",
                R"({"_rev":")" + Rev("gus") + R"(","name":"gus","password":"mine","roles":[],"type":"user",)" + photo + "}");
  EXPECT_EQ(r.status, 404) << r.body;
}

// The validate function compares every update with the revision it edits
// ("Usernames can not be changed."), an admin's too: settee read that
// revision for non-admins alone. A replicated revision (new_edits=false)
// is compared with its nearest stored ancestor.
TEST_F(OpenUsersTest, AdminsCannotRenameUsersEither) {
  CreateUser("dan", "danpw", "[]");
  ASSERT_EQ(Admin("PUT", "/_users/_security", R"({"members":{"roles":[]},"admins":{"names":["dan"]}})").status, 200);
  const std::string bob = "/_users/org.couchdb.user:bob";
  // ["bob"] is spelt by the id as "bob" is, but !== it.
  const std::string renamed = R"({"name":["bob"],"roles":[],"type":"user"})";
  auto r = Admin("PUT", bob + "?rev=" + Rev("bob"), renamed);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"Usernames can not be changed."})" "\n");
  r = As("dan", "danpw", "PUT", bob + "?rev=" + Rev("bob"), renamed);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Usernames can not be changed.");
  r = Admin("POST", "/_users/_bulk_docs",
            R"({"docs":[{"_id":"org.couchdb.user:bob","_rev":")" + Rev("bob") + R"(","name":["bob"],"roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body)[0], "reason"), "Usernames can not be changed.") << r.body;
  // A tombstone has no name.
  const std::string tombstone = DeleteUser("carol");
  ASSERT_FALSE(tombstone.empty());
  r = Admin("PUT", "/_users/org.couchdb.user:carol?rev=" + tombstone,
            R"({"name":"carol","password":"carolpw","roles":[],"type":"user"})");
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Usernames can not be changed.");

  // Replicated: the parent named in _revisions is the old document.
  const std::string parent = Rev("bob");
  const std::string child = "2-" + std::string(32, 'a');
  const auto replicated = [&](const std::string& name) {
    return R"({"_rev":")" + child + R"(","_revisions":{"start":2,"ids":[")" + std::string(32, 'a') + R"(",")" +
           parent.substr(2) + R"("]},"name":)" + name + R"(,"roles":["dev"],"type":"user"})";
  };
  r = Admin("PUT", bob + "?new_edits=false", replicated(R"(["bob"])"));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Usernames can not be changed.");
  // The owner may replicate their own doc (was: a conflict, the new
  // revision taken for the edited one), and the same revision again is no
  // write, so nothing to refuse.
  r = As("bob", "bobpw", "PUT", bob + "?new_edits=false", replicated(R"("bob")"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Rev("bob"), child);
  r = Admin("PUT", bob + "?new_edits=false", replicated(R"(["bob"])"));
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Str(ParseJson(Admin("GET", bob).body), "name"), "bob");
}

// An attachment written into _users makes a document the _auth validate
// function checks like any other: without a rev, where no user is live, a
// document of nothing but the attachment, which is no user (settee stored
// it); with one, the user doc as it was, which passes.
TEST_F(OpenUsersTest, AttachmentWritesMakeUserDocsToo) {
  const Headers admin = {{"Authorization", BasicAuth("admin", "s3cret")}, {"Content-Type", "text/plain"}};
  auto r = Req("PUT", "/_users/org.couchdb.user:zed/photo", "pixels", admin);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(r.body, R"({"error":"forbidden","reason":"doc.type must be user"})" "\n");
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:zed").status, 404);
  ASSERT_FALSE(DeleteUser("carol").empty());
  r = Req("PUT", "/_users/org.couchdb.user:carol/photo", "pixels", admin);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "doc.type must be user");
  // A live user's: a conflict without a rev, written with one.
  EXPECT_EQ(Req("PUT", "/_users/org.couchdb.user:bob/photo", "pixels", admin).status, 409);
  r = Req("PUT", "/_users/org.couchdb.user:bob/photo?rev=" + Rev("bob"), "pixels", admin);
  ASSERT_EQ(r.status, 201) << r.body;
  r = Req("PUT", "/_users/org.couchdb.user:bob/avatar?rev=" + Rev("bob"), "more",
          {{"Authorization", BasicAuth("bob", "bobpw")}, {"Content-Type", "text/plain"}});
  ASSERT_EQ(r.status, 201) << r.body;
  r = As("bob", "bobpw", "DELETE", "/_users/org.couchdb.user:bob/photo?rev=" + Rev("bob"));
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(As("bob", "bobpw", "GET", "/_session").status, 200);
}

// couch_users_db:after_doc_read with [chttpd_auth] public_fields set: a
// user reads another's document stripped to those fields (the special
// members kept), and one with none of them stays not found. Listings stay
// the server admins' (chttpd_auth_request), design docs the admins'.
TEST_F(OpenUsersTest, PublicFieldsShowOthersDocsStripped) {
  EXPECT_EQ(Admin("GET", "/_node/_local/_config/chttpd_auth/public_fields").status, 404);
  auto r = Admin("PUT", "/_users/org.couchdb.user:carol?rev=" + Rev("carol"),
                 R"({"name":"carol","password":"carolpw","roles":[],"type":"user","city":"Lyon"})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Admin("PUT", "/_node/_local/_config/chttpd_auth/public_fields", R"("name, city")");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "\"\"\n");
  const std::string carol = "/_users/org.couchdb.user:carol";
  r = As("bob", "bobpw", "GET", carol);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, R"({"_id":"org.couchdb.user:carol","_rev":")" + Rev("carol") + R"(","name":"carol","city":"Lyon"})" "\n");
  r = As("bob", "bobpw", "GET", carol + "?open_revs=all");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body.find("derived_key"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("Lyon"), std::string::npos) << r.body;
  // One's own document and an admin's read stay whole.
  EXPECT_NE(As("carol", "carolpw", "GET", carol).body.find("derived_key"), std::string::npos);
  EXPECT_NE(Admin("GET", carol).body.find("derived_key"), std::string::npos);
  // Anonymous readers too get the public fields.
  EXPECT_EQ(Str(ParseJson(Req("GET", carol).body), "city"), "Lyon");
  // None of the fields: not found, as before.
  ASSERT_EQ(Admin("PUT", "/_node/_local/_config/chttpd_auth/public_fields", R"("nickname")").status, 200);
  r = As("bob", "bobpw", "GET", carol);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Reason(r), "missing");
  EXPECT_EQ(As("bob", "bobpw", "GET", carol + "?open_revs=all").status, 404);
  // Unset again: nothing is public.
  ASSERT_EQ(Admin("DELETE", "/_node/_local/_config/chttpd_auth/public_fields").status, 200);
  ASSERT_EQ(Admin("PUT", "/_node/_local/_config/chttpd_auth/public_fields", R"("name")").status, 200);
  EXPECT_EQ(As("bob", "bobpw", "GET", carol).status, 200);
  ASSERT_EQ(Admin("DELETE", "/_node/_local/_config/chttpd_auth/public_fields").status, 200);
  EXPECT_EQ(As("bob", "bobpw", "GET", carol).status, 404);
  EXPECT_EQ(As("bob", "bobpw", "GET", "/_users/_all_docs").status, 401);
  // The startup settings of the section stay read-only.
  EXPECT_EQ(Admin("PUT", "/_node/_local/_config/chttpd_auth/timeout", R"("5")").status, 400);
}

// The other reads of another's document meet after_doc_read too, as
// CouchDB opens the document with the reader's user_ctx on each: GET as
// multipart/related (the stripped JSON, then the attachments), COPY (the
// stripped body is what is written, under the write's own rules) and an
// attachment's GET (served when a public field is left).
TEST_F(OpenUsersTest, PublicFieldsApplyToMultipartCopyAndAttachments) {
  const std::string carol = "/_users/org.couchdb.user:carol";
  auto r = Admin("PUT", carol + "?rev=" + Rev("carol"),
                 R"({"name":"carol","password":"carolpw","roles":[],"type":"user","city":"Lyon"})");
  ASSERT_EQ(r.status, 201) << r.body;
  const Headers bob = {{"Authorization", BasicAuth("bob", "bobpw")}};
  const auto copy = [&](const Headers& who, const std::string& dest) {
    Headers h = who;
    h.emplace_back("Destination", dest);
    return Req("COPY", carol, "", h);
  };
  // None configured: not found on each path.
  EXPECT_EQ(copy(bob, "_local/copied").status, 404);
  ASSERT_EQ(Admin("PUT", "/_node/_local/_config/chttpd_auth/public_fields", R"("name, type, roles, city")").status,
            200);
  // COPY writes what the requester read: anonymous (before_doc_update lets
  // a null name write) into a _local document, which no validation meets.
  r = copy({}, "_local/copied");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Admin("GET", "/_users/_local/copied");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(Str(ParseJson(r.body), "city"), "Lyon");
  for (const char* secret : {"derived_key", "salt", "password"}) {
    EXPECT_EQ(r.body.find(secret), std::string::npos) << r.body;
  }
  // Bob's copy onto his own document is carol's name under his id.
  r = copy(bob, "org.couchdb.user:bob?rev=" + Rev("bob"));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_EQ(Reason(r), "Doc ID must be of the form org.couchdb.user:name");

  r = Req("PUT", carol + "/photo?rev=" + Rev("carol"), "pixels",
          {{"Authorization", BasicAuth("admin", "s3cret")}, {"Content-Type", "text/plain"}});
  ASSERT_EQ(r.status, 201) << r.body;
  Headers related = bob;
  related.emplace_back("Accept", "multipart/related");
  r = Req("GET", carol + "?attachments=true", "", related);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_NE(r.HeaderOr("content-type").find("multipart/related"), std::string::npos);
  EXPECT_EQ(r.HeaderOr("etag"), "\"" + Rev("carol") + "\"");
  EXPECT_NE(r.body.find("\"city\":\"Lyon\""), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("pixels"), std::string::npos) << r.body;
  EXPECT_EQ(r.body.find("derived_key"), std::string::npos) << r.body;
  r = As("bob", "bobpw", "GET", carol + "/photo");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.body, "pixels");
  EXPECT_EQ(Req("GET", carol + "/photo").status, 200);
  // Writes of another's attachments stay refused (before_doc_update).
  EXPECT_EQ(As("bob", "bobpw", "DELETE", carol + "/photo?rev=" + Rev("carol")).status, 404);

  // None of the public fields left: not found on each path again.
  ASSERT_EQ(Admin("PUT", "/_node/_local/_config/chttpd_auth/public_fields", R"("nickname")").status, 200);
  r = Req("GET", carol + "?attachments=true", "", related);
  EXPECT_EQ(r.status, 404) << r.body;
  EXPECT_EQ(Reason(r), "missing");
  EXPECT_EQ(As("bob", "bobpw", "GET", carol + "/photo").status, 404);
  EXPECT_EQ(copy({}, "_local/again").status, 404);
  // One's own attachments stay readable.
  ASSERT_EQ(Admin("DELETE", "/_node/_local/_config/chttpd_auth/public_fields").status, 200);
  EXPECT_EQ(As("carol", "carolpw", "GET", carol + "/photo").body, "pixels");
  EXPECT_EQ(As("bob", "bobpw", "GET", carol + "/photo").status, 404);
}

// _bulk_docs into _users hashes each password and validates each user
// document like a PUT, and its body errors are those of any _bulk_docs.
TEST_F(UsersTest, BulkDocsIntoUsersHashesAndValidates) {
  auto r = Admin("POST", "/_users/_bulk_docs",
                 R"({"docs":[{"_id":"org.couchdb.user:dan","name":"dan","password":"danpw","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  r = Admin("GET", "/_users/org.couchdb.user:dan");
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.body.find("danpw"), std::string::npos);
  EXPECT_EQ(Str(ParseJson(r.body), "derived_key").size(), 64u);
  EXPECT_EQ(As("dan", "danpw", "GET", "/_session").status, 200);

  // A refused document is answered in its place ({"id","error","reason"}, as
  // CouchDB's validate_doc_update refusals), the others are written, and a
  // stale _rev is that document's conflict.
  r = Admin("POST", "/_users/_bulk_docs",
            R"({"docs":[{"_id":"org.couchdb.user:x","name":"y","password":"x","roles":[],"type":"user"},)"
            R"({"_id":"org.couchdb.user:eve","name":"eve","password":"evepw","roles":[],"type":"user"},)"
            R"({"_id":"org.couchdb.user:dan","name":"dan","roles":[],"type":"user"}]})");
  ASSERT_EQ(r.status, 201) << r.body;
  json::Document rows = ParseJson(r.body);
  ASSERT_TRUE(rows.IsArray() && rows.Size() == 3) << r.body;
  EXPECT_EQ(Str(rows[0], "id"), "org.couchdb.user:x");
  EXPECT_EQ(Str(rows[0], "error"), "forbidden");
  EXPECT_EQ(Str(rows[0], "reason"), "Doc ID must be of the form org.couchdb.user:name");
  EXPECT_EQ(Str(rows[1], "id"), "org.couchdb.user:eve");
  EXPECT_TRUE(rows[1].HasMember("ok")) << r.body;
  EXPECT_EQ(Str(rows[2], "error"), "conflict");
  EXPECT_EQ(Admin("GET", "/_users/org.couchdb.user:x").status, 404);
  EXPECT_EQ(As("eve", "evepw", "GET", "/_session").status, 200);
  r = Admin("POST", "/_users/_bulk_docs", R"({"docs":[{"_id":"org.couchdb.user:z"},7]})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "Document must be a JSON object");
  r = Admin("POST", "/_users/_bulk_docs", R"({"docs":[],"new_edits":"no"})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(Str(ParseJson(r.body), "reason"), "`new_edits` parameter must be a boolean.");
}

// PrepareUserDoc refuses as the _auth design doc's validate_doc_update
// (CouchDB's couch_js_functions.hrl), check by check in its order: the
// type before the name, the name before the roles, the roles before the
// id, and the password fields, the system roles and the name's own rules
// after them; each case passes every check before the one it fails.
TEST(AuthUnitTest, UserDocsAreRefusedInCouchDBsOrder) {
  const std::string user = "org.couchdb.user:x";
  struct Case {
    std::string id;
    std::string body;
    const char* reason;  // nullptr: accepted
  };
  const Case cases[] = {
      {user, R"({})", "doc.type must be user"},
      {user, R"({"name":"y","roles":"no"})", "doc.type must be user"},
      {"wrongprefix", R"({"name":"wrongprefix"})", "doc.type must be user"},
      {user, R"({"type":"user"})", "doc.name is required"},
      {user, R"({"type":"user","name":"","roles":[]})", "doc.name is required"},
      {user, R"({"type":"user","name":null,"roles":[]})", "doc.name is required"},
      {user, R"({"type":"user","name":"x"})", "doc.roles must exist"},
      {user, R"({"type":"user","name":"x","roles":""})", "doc.roles must exist"},
      {user, R"({"type":"user","name":"x","roles":{}})", "doc.roles must be an array"},
      {user, R"({"type":"user","name":"x","roles":[1]})", "doc.roles can only contain strings"},
      {user, R"({"type":"user","name":"y","roles":[]})", "Doc ID must be of the form org.couchdb.user:name"},
      {"wrongprefix", R"({"type":"user","name":"wrongprefix","roles":[]})",
       "Doc ID must be of the form org.couchdb.user:name"},
      {user, R"({"type":"user","name":5,"roles":[]})", "Doc ID must be of the form org.couchdb.user:name"},
      {"org.couchdb.user:b", R"({"type":"user","name":["a"],"roles":[]})",
       "Doc ID must be of the form org.couchdb.user:name"},
      {user, R"({"type":"user","name":"x","roles":[],"password_sha":"ab"})",
       "Users with password_sha must have a salt.See /_utils/script/couch.js for example code."},
      {user, R"({"type":"user","name":"x","roles":[],"password_scheme":"bcrypt"})",
       "Password scheme `bcrypt` not supported."},
      {user, R"({"type":"user","name":"x","roles":[],"password_scheme":"pbkdf2","iterations":"9"})",
       "iterations must be a number."},
      {user, R"({"type":"user","name":"x","roles":[],"password_scheme":"pbkdf2","iterations":9})",
       "derived_key must be a string."},
      {user, R"({"type":"user","name":"x","roles":["_admin"]})",
       "No system roles (starting with underscore) in users db."},
      {user, R"({"type":"user","name":"x","roles":["_metrics","_reader"]})",
       "No system roles (starting with underscore) in users db."},
      {user, R"({"type":"user","name":"x","roles":["_metrics","dev"]})", nullptr},
      {"org.couchdb.user:_x", R"({"type":"user","name":"_x","roles":[]})", "Username may not start with underscore."},
      {"org.couchdb.user:a:b", R"({"type":"user","name":"a:b","roles":[]})",
       "Character `:` is not allowed in usernames."},
      // A password is hashed before the checks, as before_doc_update does:
      // the scheme it replaces is not the one checked.
      {user, R"({"type":"user","name":"x","roles":[],"password_scheme":"bcrypt","password":"p"})", nullptr},
      {user, R"({"type":"user","name":"x","roles":[],"password_scheme":"simple","password_sha":"ab","salt":"s"})",
       nullptr},
      {user, R"({"type":"user","name":"x","roles":[],"password":null})", nullptr},
      // A name that is not a string: 'org.couchdb.user:' + name is the id
      // it needs, name[0] and name.indexOf(':') an array's element and
      // search, an object's member "0".
      {user, R"({"type":"user","name":["x"],"roles":[]})", nullptr},
      {"org.couchdb.user:a,b", R"({"type":"user","name":["a","b"],"roles":[]})", nullptr},
      {user, R"({"type":"user","name":[["x"]],"roles":[]})", nullptr},
      {"org.couchdb.user:", R"({"type":"user","name":[],"roles":[]})", nullptr},
      {"org.couchdb.user:_", R"({"type":"user","name":["_"],"roles":[]})", "Username may not start with underscore."},
      {"org.couchdb.user:_a", R"({"type":"user","name":["_a"],"roles":[]})", nullptr},
      {"org.couchdb.user::", R"({"type":"user","name":[":"],"roles":[]})", "Character `:` is not allowed in usernames."},
      {"org.couchdb.user:a:b", R"({"type":"user","name":["a:b"],"roles":[]})", nullptr},
      {"org.couchdb.user:[object Object]", R"({"type":"user","name":{"0":"_"},"roles":[]})",
       "Username may not start with underscore."},
  };
  for (const Case& c : cases) {
    std::string body = c.body;
    Status s = PrepareUserDoc(c.id, &body);
    if (c.reason == nullptr) {
      EXPECT_TRUE(s.ok()) << c.id << " " << c.body << ": " << s.reason();
    } else {
      EXPECT_EQ(s.code(), Status::Code::kForbidden) << c.id << " " << c.body;
      EXPECT_EQ(s.reason(), c.reason) << c.id << " " << c.body;
    }
  }
  // Other names pass the id's check and stop the function on its
  // TypeError (name.indexOf), which CouchDB answers as the error it is.
  for (const auto& [id, name] : {std::pair{"org.couchdb.user:5", "5"}, std::pair{"org.couchdb.user:true", "true"},
                                 std::pair{"org.couchdb.user:1.5", "1.5"},
                                 std::pair{"org.couchdb.user:[object Object]", "{}"}}) {
    std::string body = std::string(R"({"type":"user","roles":[],"name":)") + name + "}";
    Status s = PrepareUserDoc(id, &body);
    EXPECT_EQ(s.code(), Status::Code::kInternal) << name;
    EXPECT_EQ(s.reason(), "TypeError: newDoc.name.indexOf is not a function") << name;
  }
  // before_doc_update leaves a null password in place (no hash to make).
  std::string body = R"({"type":"user","name":"x","roles":[],"password":null})";
  ASSERT_TRUE(PrepareUserDoc(user, &body).ok());
  EXPECT_EQ(body, R"({"type":"user","name":"x","roles":[],"password":null})");
}

TEST(AuthUnitTest, PublicFieldsSplitAsCouchDBsRegex) {
  using V = std::vector<std::string>;
  EXPECT_EQ(ParsePublicFields(""), V{});
  EXPECT_EQ(ParsePublicFields("name"), V{"name"});
  EXPECT_EQ(ParsePublicFields("name , type,\tcity"), (V{"name", "type", "city"}));
  // \s*,\s* eats spaces next to commas only.
  EXPECT_EQ(ParsePublicFields(" name,type "), (V{" name", "type "}));
  EXPECT_EQ(ParsePublicFields("a,,b"), (V{"a", "", "b"}));
}

TEST(AuthUnitTest, StripToPublicFieldsKeepsSpecialMembers) {
  std::string doc = R"({"_id":"org.couchdb.user:c","_rev":"1-a","name":"c","salt":"s","type":"user",)"
                    R"("_attachments":{"p":{"stub":true}}})";
  ASSERT_TRUE(StripToPublicFields({"name", "type"}, &doc).ok());
  EXPECT_EQ(doc, R"({"_id":"org.couchdb.user:c","_rev":"1-a","name":"c","type":"user","_attachments":{"p":{"stub":true}}})");
  doc = R"({"_id":"org.couchdb.user:c","_rev":"1-a","name":"c"})";
  Status s = StripToPublicFields({"city"}, &doc);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(s.reason(), "missing");
}

TEST(AuthUnitTest, SecurityObjectRules) {
  SecurityObject sec;
  ASSERT_TRUE(SecurityObject::Parse(
                  R"({"admins":{"names":["boss"],"roles":["ops"]},"members":{"names":["bob"],"roles":["dev"]}})",
                  &sec)
                  .ok());
  UserCtx anon, bob{"bob", {}}, dev{"carol", {"dev"}}, ops{"dan", {"ops"}}, boss{"boss", {}},
      admin{"root", {"_admin"}}, stranger{"eve", {"x"}};
  EXPECT_FALSE(sec.IsMember(anon));
  EXPECT_TRUE(sec.IsMember(bob));
  EXPECT_TRUE(sec.IsMember(dev));
  EXPECT_TRUE(sec.IsMember(ops));
  EXPECT_FALSE(sec.IsMember(stranger));
  EXPECT_TRUE(sec.IsDbAdmin(boss));
  EXPECT_TRUE(sec.IsDbAdmin(ops));
  EXPECT_TRUE(sec.IsDbAdmin(admin));
  EXPECT_FALSE(sec.IsDbAdmin(bob));
  EXPECT_FALSE(SecurityObject::Parse("[]", &sec).ok());
  EXPECT_FALSE(SecurityObject::Parse(R"({"members":{"names":"x"}})", &sec).ok());
  EXPECT_FALSE(SecurityObject::Parse(R"({"members":{"names":[1]}})", &sec).ok());
  ASSERT_TRUE(SecurityObject::Parse("{}", &sec).ok());
  EXPECT_TRUE(sec.IsMember(anon));  // explicit empty object: public
}

TEST(AuthUnitTest, AdminPartyWhenNoAdmins) {
  Authenticator a({}, "", 600);
  EXPECT_TRUE(a.admin_party());
  http::HttpRequest req;
  auto u = a.Authenticate(req, nullptr);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->IsAdmin());
}

// The shown hash is CouchDB's "-pbkdf2:sha256-key,salt,iterations" (a bare
// "-pbkdf2-" means SHA-1 there), and its key is PBKDF2-SHA256 of the
// password over the salt's text.
TEST(AuthUnitTest, AdminHashesUseCouchDbsSha256Notation) {
  Authenticator a({{"admin", "pw"}}, "", 600);
  ASSERT_TRUE(a.SetAdmin("second", "other").ok());
  for (const auto& [name, shown] : a.AdminHashes()) {
    const std::string prefix = "-pbkdf2:sha256-";
    ASSERT_EQ(shown.rfind(prefix, 0), 0u) << shown;
    const size_t c1 = shown.find(',');
    const size_t c2 = shown.find(',', c1 + 1);
    ASSERT_NE(c2, std::string::npos) << shown;
    const std::string key = shown.substr(prefix.size(), c1 - prefix.size());
    const std::string salt = shown.substr(c1 + 1, c2 - c1 - 1);
    const int iterations = std::stoi(shown.substr(c2 + 1));
    EXPECT_EQ(iterations, kPbkdf2Iterations);
    EXPECT_EQ(salt.size(), 32u);
    const std::string password = name == "admin" ? "pw" : "other";
    unsigned char out[32];
    ASSERT_EQ(PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                                reinterpret_cast<const unsigned char*>(salt.data()),
                                static_cast<int>(salt.size()), iterations, EVP_sha256(), sizeof(out), out),
              1);
    EXPECT_EQ(key, HexEncode(std::string_view(reinterpret_cast<char*>(out), sizeof(out))));
  }
  // One helper salts admins and _users alike: a fresh salt each time.
  auto k1 = NewPasswordKey("pw");
  auto k2 = NewPasswordKey("pw");
  ASSERT_TRUE(k1.ok() && k2.ok());
  EXPECT_NE(k1->salt, k2->salt);
  EXPECT_NE(k1->derived_key, k2->derived_key);
}

// Admins given as CouchDB's hashes (local.ini's [admins] after CouchDB
// hashed them; --admin name:HASH): the password they were made from logs in.
// The keys are published PBKDF2 test vectors of "password" over the salt
// "salt" (RFC 6070 for HMAC-SHA1, 1 and 2 iterations; HMAC-SHA256's from
// RFC 7914's companion vectors), so this checks the notation and the
// arithmetic against outside figures, not against settee's own hashing.
constexpr char kSha1Hash[] = "-pbkdf2-0c60c80f961f0e71f3a9b524af6012062fe037a6,salt,1";
constexpr char kSha1Hash2[] = "-pbkdf2:sha-ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957,salt,2";
constexpr char kSha256Hash[] =
    "-pbkdf2:sha256-120FB6CFFCF8B32C43E7225256C4F837A86548C92CCC35480805987CB70BE17B,salt,1";

TEST(AuthUnitTest, AdminsGivenByHashLogInWithTheirPassword) {
  Authenticator a({{"one", kSha1Hash}, {"two", kSha1Hash2}, {"three", kSha256Hash}}, "", 600);
  EXPECT_FALSE(a.admin_party());
  for (const char* name : {"one", "two", "three"}) {
    auto u = a.CheckPassword(name, "password");
    ASSERT_TRUE(u.ok()) << name << ": " << u.status().ToString();
    EXPECT_TRUE(u->IsAdmin());
    EXPECT_EQ(a.CheckPassword(name, "Password").status().code(), Status::Code::kUnauthorized) << name;
    // Again, now through the keyed hash the first login left.
    EXPECT_TRUE(a.CheckPassword(name, "password").ok()) << name;
    EXPECT_FALSE(a.CheckPassword(name, "passwordx").ok()) << name;
  }
  EXPECT_FALSE(a.CheckPassword("one", "password\n").ok());
  // Shown as given; the hash is not the password.
  auto shown = a.AdminHashes();
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].second, kSha1Hash);
  EXPECT_EQ(shown[2].second, kSha256Hash);
  EXPECT_FALSE(a.CheckPassword("one", kSha1Hash).ok());
  // SetAdmin takes a hash too, and a new one replaces a proven one.
  ASSERT_TRUE(a.SetAdmin("one", kSha256Hash).ok());
  EXPECT_TRUE(a.CheckPassword("one", "password").ok());
  ASSERT_TRUE(a.SetAdmin("one", "plain").ok());
  EXPECT_FALSE(a.CheckPassword("one", "password").ok());
  EXPECT_TRUE(a.CheckPassword("one", "plain").ok());
}

TEST(AuthUnitTest, PasswordHashesSetteeCannotCheckAreRefused) {
  EXPECT_TRUE(Authenticator::IsPasswordHash("-hashed-abc,def"));
  EXPECT_TRUE(Authenticator::IsPasswordHash("-pbkdf2-"));
  EXPECT_FALSE(Authenticator::IsPasswordHash("pbkdf2-x"));
  EXPECT_TRUE(Authenticator::CheckPasswordHash(kSha1Hash).ok());
  for (const char* bad : {"-hashed-abc,def", "-pbkdf2", "-pbkdf2x-ab,salt,1", "-pbkdf2:md5-ab,salt,1",
                          "-pbkdf2:sha256", "-pbkdf2-zz,salt,1", "-pbkdf2-abc,salt,1", "-pbkdf2-,salt,1",
                          "-pbkdf2-ab,,1", "-pbkdf2-ab,salt", "-pbkdf2-ab,salt,1,2", "-pbkdf2-ab,salt,0",
                          "-pbkdf2-ab,salt,-1", "-pbkdf2-ab,salt,1x", "-pbkdf2-ab,salt,10000001",
                          "-pbkdf2-ab,salt,99999999999999999999"}) {
    Status s = Authenticator::CheckPasswordHash(bad);
    EXPECT_EQ(s.code(), Status::Code::kBadRequest) << bad;
    EXPECT_FALSE(s.reason().empty()) << bad;
  }
  // Nothing changes on a refused SetAdmin; an unusable hash given at
  // startup still makes an admin (no admin party), one nobody logs in as.
  Authenticator a({{"admin", "pw"}}, "", 600);
  EXPECT_EQ(a.SetAdmin("admin", "-pbkdf2:md5-ab,salt,1").code(), Status::Code::kBadRequest);
  EXPECT_TRUE(a.CheckPassword("admin", "pw").ok());
  Authenticator b({{"admin", "-pbkdf2-zz,salt,1"}}, "", 600);
  EXPECT_FALSE(b.admin_party());
  EXPECT_FALSE(b.CheckPassword("admin", "").ok());
}

// A session of an admin given by hash outlives a restart with the same
// cookie secret (its cookies are bound to the hash), and ends when the
// admin gets another password.
TEST(AuthUnitTest, SessionsOfAnAdminGivenByHashOutliveARestart) {
  std::string cookie;
  {
    Authenticator a({{"admin", kSha256Hash}}, "kept-secret", 600);
    ASSERT_TRUE(a.CheckPassword("admin", "password").ok());
    cookie = a.MakeSessionCookie("admin");
  }
  http::HttpRequest req;
  req.headers.emplace_back("cookie", cookie.substr(0, cookie.find(';')));
  Authenticator restarted({{"admin", kSha256Hash}}, "kept-secret", 600);
  auto u = restarted.Authenticate(req, nullptr);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->name, "admin");
  ASSERT_TRUE(restarted.SetAdmin("admin", kSha1Hash).ok());
  u = restarted.Authenticate(req, nullptr);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->name.empty());
}

TEST(AuthUnitTest, CookiesFromAnotherSecretAreRejected) {
  Authenticator a({{"admin", "pw"}}, "secret-one", 600);
  Authenticator b({{"admin", "pw"}}, "secret-two", 600);
  std::string cookie = a.MakeSessionCookie("admin");
  http::HttpRequest req;
  req.headers.emplace_back("cookie", cookie.substr(0, cookie.find(';')));
  auto ua = a.Authenticate(req, nullptr);
  ASSERT_TRUE(ua.ok());
  EXPECT_EQ(ua->name, "admin");
  auto ub = b.Authenticate(req, nullptr);
  ASSERT_TRUE(ub.ok());
  EXPECT_TRUE(ub->name.empty());
}

}  // namespace
}  // namespace settee::testing
