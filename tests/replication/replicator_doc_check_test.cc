// CheckReplicatorDoc (replication/replicator_doc_check.h): CouchDB 3's
// _replicator validate_doc_update. The HTTP writes that run it (PUT, POST,
// COPY, multipart PUT, _bulk_docs) are tested in
// tests/runtime/endpoints_replication_test.cc.
#include "replication/replicator_doc_check.h"

#include <gtest/gtest.h>

namespace settee::replication {
namespace {

const UserContext kAdmin{"", {"_admin"}};
const UserContext kBob{"bob", {"ops", "dev"}};
const UserContext kAnonymous{"", {}};

// `old_json`, when given, is the stored revision the write edits.
Status Check(std::string_view json, const UserContext& user = kAdmin, std::string_view docid = "r",
             std::string_view old_json = {}) {
  json::Document doc, old;
  // Not an object: the write refuses it itself (the endpoints skip the check).
  if (!json::Parse(json, &doc).ok() || !doc.IsObject()) return Status::OK();
  if (!old_json.empty() && !json::Parse(old_json, &old).ok()) return Status::Internal("bad old_json");
  return CheckReplicatorDoc(docid, doc, user, old.IsObject() ? &old : nullptr);
}

// The reason a forbidden check gives, or "OK" / the unexpected status.
std::string Refusal(std::string_view json, const UserContext& user = kAdmin) {
  Status s = Check(json, user);
  if (s.ok()) return "OK";
  if (s.code() != Status::Code::kForbidden) return "not forbidden: " + s.ToString();
  return s.reason();
}

TEST(ReplicatorDocCheck, AcceptsWhatTheReplicatorRuns) {
  for (const char* doc : {
           R"({"source":"a","target":"b"})",
           R"({"source":"http://h:5984/a","target":"b","create_target":true,"continuous":true})",
           R"({"source":{"url":"http://h/a","headers":{"Authorization":"Basic eDp5"}},)"
           R"("target":{"url":"http://h/b","auth":{"basic":{"username":"x","password":"y"}}}})",
           R"({"source":"a","target":"b","doc_ids":["x","y"],"since_seq":"5-g1AAAA"})",
           R"({"source":"a","target":"b","filter":"f/keep","query_params":{"k":"v"}})",
           R"({"source":"a","target":"b","selector":{"type":"x"},"since_seq":7})",
           R"({"source":"a","target":"b","selector":null})",  // typeof null is 'object'
           R"({"source":"a","target":"b","worker_batch_size":10,"unknown":[1]})",
           R"({"source":"a","target":"b","user_ctx":{"name":"joe","roles":["_admin","x"]}})",
           R"({"source":"a","target":"b","user_ctx":null})",
           R"({"source":"a","target":"b","_replication_state":"completed"})",
       }) {
    EXPECT_TRUE(Check(doc).ok()) << doc << ": " << Check(doc).ToString();
  }
}

TEST(ReplicatorDocCheck, RefusesMalformedDocumentsWithCouchDBsReasons) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"target":"b"})", "The `source' property must exist and be either a string or an object."},
      {R"({"source":null,"target":"b"})",
       "The `source' property must exist and be either a string or an object."},
      {R"({"source":1,"target":"b"})", "The `source' property must exist and be either a string or an object."},
      {R"({"source":"a"})", "The `target' property must exist and be either a string or an object."},
      {R"({"source":{},"target":"b"})",
       "The url property must exist in the `source' field and must be a non-empty string."},
      {R"({"source":"a","target":{"url":""}})",
       "The url property must exist in the `target' field and must be a non-empty string."},
      {R"({"source":["http://h/a"],"target":"b"})",
       "The url property must exist in the `source' field and must be a non-empty string."},
      {R"({"source":{"url":"http://h/a","auth":"x"},"target":"b"})", "`source.auth' must be a non-null object."},
      {R"({"source":"a","target":{"url":"http://h/b","headers":null}})",
       "`target.headers' must be a non-null object."},
      {R"({"source":"a","target":"b","create_target":"true"})", "The `create_target' field must be a boolean."},
      {R"({"source":"a","target":"b","continuous":1})", "The `continuous' field must be a boolean."},
      {R"({"source":"a","target":"b","doc_ids":"x"})", "The `doc_ids' field must be an array of strings."},
      {R"({"source":"a","target":"b","doc_ids":null})", "The `doc_ids' field must be an array of strings."},
      {R"({"source":"a","target":"b","selector":"x"})", "The `selector' field must be an object."},
      {R"({"source":"a","target":"b","filter":""})", "The `filter' field must be a non-empty string."},
      {R"({"source":"a","target":"b","filter":{"f":1}})", "The `filter' field must be a non-empty string."},
      {R"({"source":"a","target":"b","doc_ids":[],"selector":{}})",
       "`doc_ids' field is incompatible with `selector'."},
      {R"({"source":"a","target":"b","doc_ids":["x"],"filter":"f/g"})",
       "`filter' field is incompatible with `selector' and `doc_ids'."},
      {R"({"source":"a","target":"b","selector":{},"filter":"f/g"})",
       "`filter' field is incompatible with `selector' and `doc_ids'."},
      {R"({"source":"a","target":"b","query_params":"k=v"})", "The `query_params' field must be an object."},
      {R"({"source":"a","target":"b","user_ctx":"bob"})", "The `user_ctx' property must be a non-null object."},
      {R"({"source":"a","target":"b","user_ctx":{"name":""}})",
       "The `user_ctx.name' property must be a non-empty string or null."},
      {R"({"source":"a","target":"b","user_ctx":{"roles":"x"}})",
       "The `user_ctx.roles' property must be an array of strings."},
      // The first broken rule is the one reported, in CouchDB's order.
      {R"({"continuous":"yes","source":"a"})", "The `target' property must exist and be either a string or an object."},
  };
  for (const auto& [doc, reason] : cases) EXPECT_EQ(Refusal(doc), reason) << doc;
}

TEST(ReplicatorDocCheck, NonAdminsRunAsThemselvesWithTheirOwnRoles) {
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b"})", kBob),
            "The `user_ctx' property is missing (it is optional for admins only).");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":false})", kBob),
            "The `user_ctx' property is missing (it is optional for admins only).");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob","roles":["dev"]}})", kBob), "OK");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob"}})", kBob), "OK");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"joe"}})", kBob),
            "The given `user_ctx.name' is not valid");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"roles":["dev"]}})", kBob),
            "The given `user_ctx.name' is not valid");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob","roles":["_admin"]}})", kBob),
            "Invalid role (`_admin') in the `user_ctx'");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob","roles":["dev",""]}})", kBob),
            "Roles must be non-empty strings.");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob","roles":[7]}})", kBob),
            "Roles must be non-empty strings.");
  // An anonymous writer's name is null.
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":null}})", kAnonymous), "OK");
  EXPECT_EQ(Refusal(R"({"source":"a","target":"b","user_ctx":{"name":"bob"}})", kAnonymous),
            "The given `user_ctx.name' is not valid");
  // The document's own fields are checked before user_ctx.
  EXPECT_EQ(Refusal(R"({"source":"a"})", kBob),
            "The `target' property must exist and be either a string or an object.");
}

TEST(ReplicatorDocCheck, ExemptsWhatCouchDBDoesNotCheck) {
  const char* bad = R"({"source":1})";
  EXPECT_TRUE(Check(bad, kAdmin, "_design/x").ok());
  EXPECT_TRUE(Check(bad, kAdmin, "_local/x").ok());
  EXPECT_TRUE(Check(R"({"_deleted":true})").ok());
  // A deletion is not checked as a replication; a rev-less one is the
  // write's conflict to answer.
  EXPECT_TRUE(Check(R"({"_deleted":true,"source":1})", kBob).ok());
  // The replicator's own writes, and documents it has marked failed.
  EXPECT_TRUE(Check(bad, UserContext{"", {"_admin", "_replicator"}}).ok());
  EXPECT_TRUE(Check(R"({"source":1,"_replication_state":"failed"})", kBob).ok());
  EXPECT_FALSE(Check(R"({"source":1,"_replication_state":"completed"})").ok());
  EXPECT_FALSE(Check(R"({"source":1,"_deleted":false})").ok());
  // Not an object: the write refuses it itself.
  EXPECT_TRUE(Check("[1]").ok());
  EXPECT_TRUE(Check("not json").ok());
}

// validate_doc_update's rule for deletions: a non-admin deletes only a
// document whose stored user_ctx.name is their own.
TEST(ReplicatorDocCheck, OnlyAdminsOrTheOwnerDelete) {
  const char* del = R"({"_deleted":true,"_rev":"1-a"})";
  const char* bobs = R"({"source":"a","target":"b","user_ctx":{"name":"bob","roles":["ops"]}})";
  const char* joes = R"({"source":"a","target":"b","user_ctx":{"name":"joe"}})";
  const std::string reason =
      "Replication documents can only be deleted by admins or by the users who created them.";
  EXPECT_EQ(Check(del, kBob, "r", bobs).ToString(), Status::OK().ToString());
  EXPECT_EQ(Check(del, kBob, "r", joes).reason(), reason);
  EXPECT_EQ(Check(del, kBob, "r", joes).code(), Status::Code::kForbidden);
  // No user_ctx stored (an admin's document), or a name that is not a string.
  EXPECT_EQ(Check(del, kBob, "r", R"({"source":"a","target":"b"})").reason(), reason);
  EXPECT_EQ(Check(del, kBob, "r", R"({"user_ctx":{"name":["bob"]}})").reason(), reason);
  // The revision edited is not known: refused, never taken as the owner's.
  EXPECT_EQ(Check(del, kBob).reason(), reason);
  // An anonymous writer deletes a document that runs as nobody (name null).
  EXPECT_TRUE(Check(del, kAnonymous, "r", R"({"user_ctx":{"name":null}})").ok());
  EXPECT_EQ(Check(del, kAnonymous, "r", R"({"user_ctx":{}})").reason(), reason);
  // Admins, the replicator, failed documents and design documents are exempt.
  EXPECT_TRUE(Check(del, kAdmin, "r", joes).ok());
  EXPECT_TRUE(Check(del, UserContext{"", {"_replicator"}}, "r", joes).ok());
  EXPECT_TRUE(Check(R"({"_deleted":true,"_rev":"1-a","_replication_state":"failed"})", kBob, "r", joes).ok());
  EXPECT_TRUE(Check(del, kBob, "_design/x", joes).ok());
}

// before_doc_update's "owner": stamped with the writer's name, another
// user's refused unless a database admin writes.
TEST(ReplicatorDocCheck, StampsTheOwner) {
  auto stamp = [](std::string_view json, const UserContext& user, bool db_admin, std::string* out,
                  std::string_view docid = "r") {
    json::Document doc;
    EXPECT_TRUE(json::Parse(json, &doc).ok());
    bool changed = true;
    Status s = StampReplicatorOwner(docid, &doc, doc.GetAllocator(), user, db_admin, &changed);
    *out = json::Serialize(doc);
    if (!changed) *out += " (unchanged)";
    return s;
  };
  const std::string other = "Can't update replication documents from other users.";
  std::string out;
  EXPECT_TRUE(stamp(R"({"source":"a"})", kBob, false, &out).ok());
  EXPECT_EQ(out, R"({"source":"a","owner":"bob"})");
  EXPECT_TRUE(stamp(R"({"owner":"bob"})", kBob, false, &out).ok());
  EXPECT_EQ(out, R"({"owner":"bob"} (unchanged))");
  EXPECT_EQ(stamp(R"({"owner":"carol"})", kBob, false, &out).reason(), other);
  EXPECT_EQ(stamp(R"({"owner":null})", kBob, false, &out).reason(), other);
  EXPECT_EQ(stamp(R"({"owner":7})", kBob, false, &out).code(), Status::Code::kForbidden);
  // An anonymous writer's name is null.
  EXPECT_TRUE(stamp("{}", kAnonymous, false, &out).ok());
  EXPECT_EQ(out, R"({"owner":null})");
  EXPECT_TRUE(stamp(R"({"owner":null})", kAnonymous, false, &out).ok());
  EXPECT_EQ(stamp(R"({"owner":"bob"})", kAnonymous, false, &out).reason(), other);
  // A database admin keeps another owner and replaces a null one.
  const UserContext admin{"admin", {"_admin"}};
  EXPECT_TRUE(stamp(R"({"owner":"carol"})", admin, true, &out).ok());
  EXPECT_EQ(out, R"({"owner":"carol"} (unchanged))");
  EXPECT_TRUE(stamp(R"({"owner":null})", admin, true, &out).ok());
  EXPECT_EQ(out, R"({"owner":"admin"})");
  EXPECT_TRUE(stamp("{}", admin, true, &out).ok());
  EXPECT_EQ(out, R"({"owner":"admin"})");
  // Design documents and the replicator's own writes pass untouched;
  // _local documents are stamped (CouchDB's fabric runs it over them).
  EXPECT_TRUE(stamp(R"({"owner":"carol"})", kBob, false, &out, "_design/x").ok());
  EXPECT_EQ(out, R"({"owner":"carol"} (unchanged))");
  EXPECT_TRUE(stamp(R"({"owner":"carol"})", UserContext{"", {"_replicator"}}, false, &out).ok());
  EXPECT_TRUE(stamp("{}", kBob, false, &out, "_local/x").ok());
  EXPECT_EQ(out, R"({"owner":"bob"})");
}

// couch_replicator_docs's check_strip_credentials_test cases, and the
// regex's own edges: only "user:password@" goes, the first match anywhere.
TEST(ReplicatorDocCheck, StripsUrlCredentialsAsCouchDBsRegex) {
  const std::pair<const char*, const char*> cases[] = {
      {"https://foo:bar@remote_server/database", "https://remote_server/database"},
      {"http://u:p@h:5984/db", "http://h:5984/db"},
      {"http://u@h/db", "http://u@h/db"},                // no password: kept
      {"http://h:5984/db", "http://h:5984/db"},          // no '@'
      {"http://:p@h/db", "http://:p@h/db"},              // [^:]+ needs a character
      {"http://u:@h/db", "http://u:@h/db"},              // [^@]+ too
      {"http://u:p@q@h/db", "http://q@h/db"},            // to the first '@'
      {"HTTP://u:p@h/db", "HTTP://u:p@h/db"},            // case-sensitive
      {"db", "db"},
      {"x http://u:p@h/db", "x http://h/db"},            // unanchored
      {"http://u:p@h/a\nb", "http://u:p@h/a\nb"},      // (.*)$ stops at a newline
      {"http://u:p@h/db\n", "http://h/db\n"},          // but $ matches before a final one
      {"httpx http://u:p@h/db", "httpx http://h/db"},
  };
  for (const auto& [url, expected] : cases) EXPECT_EQ(StripUrlCredentials(url), expected) << url;
}

bool Strip(std::string_view json, std::string* out) {
  json::Document doc;
  EXPECT_TRUE(json::Parse(json, &doc).ok());
  bool changed = StripReplicatorCredentials(&doc, doc.GetAllocator());
  *out = json::Serialize(doc);
  return changed;
}

TEST(ReplicatorDocCheck, StripsEndpointsHeadersAuthAndUserinfo) {
  std::string out;
  EXPECT_TRUE(Strip(R"({"source":{"url":"http://u:p@h/a","headers":{"Authorization":"Basic eDp5"},"x":1},)"
                    R"("target":{"url":"http://h/b","auth":{"basic":{"username":"x","password":"y"}}},"owner":"al"})",
                    &out));
  // An object keeps its url as given: CouchDB strips only headers and auth.
  EXPECT_EQ(out, R"({"source":{"url":"http://u:p@h/a","x":1},"target":{"url":"http://h/b"},"owner":"al"})");
  EXPECT_TRUE(Strip(R"({"source":"http://u:p@h/a","target":"https://v:q@h/b"})", &out));
  EXPECT_EQ(out, R"({"source":"http://h/a","target":"https://h/b"})");
  EXPECT_FALSE(Strip(R"({"source":"a","target":{"url":"http://h/b"},"headers":{"k":"v"}})", &out));
  EXPECT_EQ(out, R"({"source":"a","target":{"url":"http://h/b"},"headers":{"k":"v"}})");
}

TEST(ReplicatorDocCheck, StripsForReadersOtherThanAdminsAndTheOwner) {
  json::Document doc;
  ASSERT_TRUE(json::Parse(R"({"source":"a","target":"b","owner":"bob"})", &doc).ok());
  EXPECT_FALSE(ReplicatorReadIsStripped("r", doc, kBob, false));
  EXPECT_TRUE(ReplicatorReadIsStripped("r", doc, UserContext{"al", {}}, false));
  EXPECT_TRUE(ReplicatorReadIsStripped("r", doc, kAnonymous, false));
  EXPECT_FALSE(ReplicatorReadIsStripped("r", doc, UserContext{"al", {}}, true));  // a db admin
  EXPECT_FALSE(ReplicatorReadIsStripped("_design/r", doc, kAnonymous, false));
  EXPECT_FALSE(ReplicatorReadIsStripped("_local/r", doc, kAnonymous, false));
  // An anonymous writer's documents (owner null) are an anonymous reader's.
  ASSERT_TRUE(json::Parse(R"({"source":"a","target":"b","owner":null})", &doc).ok());
  EXPECT_FALSE(ReplicatorReadIsStripped("r", doc, kAnonymous, false));
  EXPECT_TRUE(ReplicatorReadIsStripped("r", doc, kBob, false));
  // No owner (written before the stamp, or replicated in): nobody's.
  ASSERT_TRUE(json::Parse(R"({"source":"a","target":"b"})", &doc).ok());
  EXPECT_TRUE(ReplicatorReadIsStripped("r", doc, kAnonymous, false));
  EXPECT_TRUE(ReplicatorReadIsStripped("r", doc, kBob, false));
}

}  // namespace
}  // namespace settee::replication
