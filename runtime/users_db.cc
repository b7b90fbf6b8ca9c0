#include "runtime/users_db.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "runtime/couch_rev.h"
#include "util/digest.h"
#include "util/js_value.h"
#include "util/json.h"

namespace settee {

namespace {

const EVP_MD* Pbkdf2Md(std::string_view prf) {
  if (prf == "sha256") return EVP_sha256();
  if (prf == "sha") return EVP_sha1();
  if (prf == "sha512") return EVP_sha512();
  if (prf == "sha384") return EVP_sha384();
  if (prf == "sha224") return EVP_sha224();
  return nullptr;
}

// PBKDF2 over `md`, `key_bytes` long, as lowercase hex.
std::string Pbkdf2Hex(std::string_view password, std::string_view salt, int iterations,
                      const EVP_MD* md, size_t key_bytes) {
  std::string out(key_bytes, '\0');
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()),
                    iterations, md, static_cast<int>(key_bytes), reinterpret_cast<unsigned char*>(out.data()));
  return HexEncode(out);
}

std::string Sha256(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), len);
}

std::string Member(const json::Value& doc, const char* key) {
  auto it = doc.FindMember(key);
  if (it == doc.MemberEnd() || !it->value.IsString()) return {};
  return std::string(json::View(it->value));
}

// userCtx.name == oldDoc.name, the validate function's owner test for a
// deletion: an anonymous writer's null equals a missing or null name.
bool NameMatchesLoosely(const UserCtx& user, const json::Value& old) {
  auto name = old.FindMember("name");
  if (user.name.empty()) return name == old.MemberEnd() || name->value.IsNull();
  return name != old.MemberEnd() && json::JsLooselyEqualsString(user.name, name->value);
}

}  // namespace

bool IsKnownPbkdf2Prf(std::string_view prf) { return Pbkdf2Md(prf) != nullptr; }

bool Pbkdf2Matches(std::string_view password, std::string_view salt, int iterations,
                   std::string_view prf, std::string_view derived_key_hex) {
  const EVP_MD* md = Pbkdf2Md(prf);
  if (md == nullptr || derived_key_hex.empty() || derived_key_hex.size() % 2 != 0) return false;
  std::string computed = Pbkdf2Hex(password, salt, iterations, md, derived_key_hex.size() / 2);
  std::string stored(derived_key_hex);
  for (char& c : stored) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return CRYPTO_memcmp(computed.data(), stored.data(), stored.size()) == 0;
}

Result<PasswordKey> NewPasswordKey(std::string_view password) {
  unsigned char salt_bytes[16];
  if (RAND_bytes(salt_bytes, sizeof(salt_bytes)) != 1) return Status::Internal("no randomness");
  PasswordKey out;
  out.salt = HexEncode(std::string_view(reinterpret_cast<char*>(salt_bytes), sizeof(salt_bytes)));
  out.derived_key = Pbkdf2Hex(password, out.salt, kPbkdf2Iterations, EVP_sha256(), 32);
  return out;
}

Status CheckUserDocRead(const UserCtx& user, std::string_view docid) {
  if (docid.substr(0, 7) == "_local/") return Status::OK();  // no user docs, no rules
  if (docid.substr(0, 8) == "_design/") {
    return Status::Forbidden("Only administrators can view design docs in the users database.");
  }
  // after_doc_read strips another user's doc to the public_fields, none
  // unless configured, and answers an empty doc as not found.
  if (!user.name.empty() && docid.substr(0, kUserDocPrefix.size()) == kUserDocPrefix &&
      docid.substr(kUserDocPrefix.size()) == user.name) {
    return Status::OK();
  }
  return Status::NotFound("missing");
}

std::vector<std::string> ParsePublicFields(std::string_view config) {
  std::vector<std::string> out;
  if (config.empty()) return out;
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  size_t start = 0;
  for (;;) {
    size_t comma = config.find(',', start);
    std::string_view piece = config.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    // Spaces next to a comma belong to the separator.
    if (start > 0) {
      while (!piece.empty() && is_space(piece.front())) piece.remove_prefix(1);
    }
    if (comma != std::string_view::npos) {
      while (!piece.empty() && is_space(piece.back())) piece.remove_suffix(1);
    }
    out.emplace_back(piece);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

Status StripToPublicFields(const std::vector<std::string>& public_fields, std::string* doc_json) {
  json::Document doc;
  if (!json::Parse(*doc_json, &doc).ok() || !doc.IsObject()) return Status::NotFound("missing");
  bool body_left = false;
  for (auto m = doc.MemberBegin(); m != doc.MemberEnd();) {
    std::string_view name = json::View(m->name);
    if (name.starts_with("_")) {
      ++m;
      continue;
    }
    if (std::find(public_fields.begin(), public_fields.end(), name) != public_fields.end()) {
      body_left = true;
      ++m;
      continue;
    }
    m = doc.EraseMember(m);
  }
  if (!body_left) return Status::NotFound("missing");
  *doc_json = json::Serialize(doc);
  return Status::OK();
}

namespace {

// The roles array's strings, sorted (validate_doc_update compares them so).
std::vector<std::string> SortedRoles(const json::Value& doc) {
  std::vector<std::string> out;
  auto roles = doc.FindMember("roles");
  if (roles != doc.MemberEnd() && roles->value.IsArray()) {
    for (const auto& r : roles->value.GetArray()) {
      if (r.IsString()) out.emplace_back(json::View(r));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// name[0], when it is a string: a string's first character (its first
// byte: '_' is ASCII), an array's first element, an object's member "0".
std::string_view NameAt0(const json::Value& name) {
  if (name.IsString()) return json::View(name).substr(0, 1);
  const json::Value* at0 = nullptr;
  if (name.IsArray() && !name.GetArray().Empty()) at0 = &name.GetArray()[0];
  if (name.IsObject()) {
    auto m = name.FindMember("0");
    if (m != name.MemberEnd()) at0 = &m->value;
  }
  return at0 != nullptr && at0->IsString() ? json::View(*at0) : std::string_view();
}

// before_doc_update's save_doc: a string "password" in `doc` becomes the
// salted PBKDF2 fields, and *body the document so changed; any other is
// left as it is.
Status HashPassword(json::Document* doc, std::string* body) {
  auto pw = doc->FindMember("password");
  if (pw == doc->MemberEnd() || !pw->value.IsString()) return Status::OK();
  auto hashed = NewPasswordKey(json::View(pw->value));
  if (!hashed.ok()) return hashed.status();
  auto& a = doc->GetAllocator();
  for (const char* k : {"password", "password_scheme", "pbkdf2_prf", "iterations", "salt", "derived_key"}) {
    doc->RemoveMember(k);
  }
  doc->AddMember("password_scheme", "pbkdf2", a);
  doc->AddMember("pbkdf2_prf", "sha256", a);
  doc->AddMember("iterations", kPbkdf2Iterations, a);
  doc->AddMember("salt", json::StringValue(hashed->salt, a), a);
  doc->AddMember("derived_key", json::StringValue(hashed->derived_key, a), a);
  *body = json::Serialize(*doc);
  return Status::OK();
}

}  // namespace

Status ReadEditedRevision(Database& db, std::string_view docid, const json::Value& doc, bool new_edits,
                          json::Document* old, bool* stored) {
  *stored = false;
  auto rev = doc.FindMember("_rev");
  std::string_view rev_text = rev != doc.MemberEnd() && rev->value.IsString() ? json::View(rev->value) : "";
  if (new_edits) {
    if (rev_text.empty()) return Status::OK();
    // Read as couch_doc:parse_rev reads it, as the write will: one that
    // parses but no stored revision can be ("1-", "0-abc") is the update's
    // conflict, "+1-h" edits 1-h.
    CouchRev parsed = ParseCouchRev(rev_text);
    if (parsed.kind == CouchRev::Kind::kMalformed) return Status::BadRequest("Invalid rev format");
    if (parsed.kind == CouchRev::Kind::kNamesNothing) return Status::Conflict();
    // Only a leaf can be edited: CouchDB's update finds any other revision
    // the write's conflict before validate_doc_update runs (a stored
    // ancestor too, whose body settee may still hold).
    std::vector<OpenRevResult> leaves;
    Status s = db.GetOpenRevs(docid, {}, GetOptions{}, &leaves);
    if (s.IsNotFound()) return Status::Conflict();
    if (!s.ok()) return s;
    for (const OpenRevResult& leaf : leaves) {
      if (!leaf.found || !SameCouchRev(ParseCouchRev(leaf.rev), parsed)) continue;
      if (!json::Parse(leaf.doc, old).ok() || !old->IsObject()) {
        return Status::Internal("stored document is not a JSON object");
      }
      return Status::OK();
    }
    return Status::Conflict();
  }
  // A replicated revision: its history, newest first, is _revisions's
  // {start, ids} (malformed: the write refuses it), else the _rev alone.
  std::vector<std::string> history;
  auto revisions = doc.FindMember("_revisions");
  if (revisions != doc.MemberEnd() && revisions->value.IsObject()) {
    auto start = revisions->value.FindMember("start");
    auto ids = revisions->value.FindMember("ids");
    if (start != revisions->value.MemberEnd() && start->value.IsUint64() && ids != revisions->value.MemberEnd() &&
        ids->value.IsArray()) {
      uint64_t gen = start->value.GetUint64();
      for (const auto& id : ids->value.GetArray()) {
        if (gen == 0 || !id.IsString()) break;
        history.push_back(std::to_string(gen--) + "-" + std::string(json::View(id)));
      }
    }
  }
  if (history.empty() && !rev_text.empty()) history.emplace_back(rev_text);
  if (history.empty()) return Status::OK();
  std::vector<OpenRevResult> found;
  Status s = db.GetOpenRevs(docid, history, GetOptions{}, &found);
  // A history settee cannot parse is the write's own error.
  if (s.code() == Status::Code::kBadRequest) return Status::OK();
  if (!s.ok()) return s;
  if (!found.empty() && found[0].found) {
    *stored = true;
    return Status::OK();
  }
  for (size_t k = 1; k < found.size(); ++k) {
    if (!found[k].found) continue;
    if (!json::Parse(found[k].doc, old).ok() || !old->IsObject()) {
      return Status::Internal("stored document is not a JSON object");
    }
    break;
  }
  return Status::OK();
}

UsersWriter UsersWriterOf(const UserCtx& user, bool db_admin, Database& db) {
  UsersWriter w;
  w.kind = user.IsAdmin() ? UsersWriter::Kind::kServerAdmin
           : db_admin     ? UsersWriter::Kind::kDbAdmin
                          : UsersWriter::Kind::kOther;
  w.user = &user;
  w.db = &db;
  return w;
}

Status PrepareUserDoc(std::string_view docid, std::string* body, const UsersWriter& writer) {
  if (docid.substr(0, 8) == "_design/" || docid.substr(0, 7) == "_local/") return Status::OK();
  json::Document doc;
  Status s = json::Parse(*body, &doc);
  if (!s.ok()) return Status::BadRequest("invalid UTF-8 JSON");
  if (!doc.IsObject()) return Status::BadRequest("Document must be a JSON object");
  const bool other = writer.kind == UsersWriter::Kind::kOther;
  if (other) {
    const std::string& me = writer.user->name;
    // before_doc_update: an anonymous writer may only be signing up (the
    // rules below refuse anything else); a named one may only touch their
    // own doc, and learns nothing of others' (404, as a read).
    if (!me.empty() && (docid.substr(0, kUserDocPrefix.size()) != kUserDocPrefix ||
                        docid.substr(kUserDocPrefix.size()) != me)) {
      return Status::NotFound("missing");
    }
  }
  auto deleted = doc.FindMember("_deleted");
  const bool deleting = deleted != doc.MemberEnd() && deleted->value.IsBool() && deleted->value.GetBool();
  // The validate function's first rule lets a server admin delete without
  // looking at the edited revision; every other write is compared with it.
  json::Document old;  // null: the write creates the doc
  if (writer.db != nullptr && !(deleting && writer.kind == UsersWriter::Kind::kServerAdmin)) {
    bool stored = false;
    s = ReadEditedRevision(*writer.db, docid, doc, writer.new_edits, &old, &stored);
    if (!s.ok()) return s;
    // A replicated revision already stored is no write: nothing to check
    // (before_doc_update still hashes, so no password is left in the text).
    if (stored) return HashPassword(&doc, body);
  }
  if (deleting) {
    // The validate function's first rule: '_admin' among the roles, or
    // the name the edited revision holds (==, so an anonymous writer's
    // null matches a revision with none). A _security admin of _users is
    // not an admin here.
    if (writer.kind == UsersWriter::Kind::kServerAdmin) return Status::OK();
    if (!old.IsObject() || !NameMatchesLoosely(*writer.user, old)) {
      return Status::Forbidden("Only admins may delete other user docs.");
    }
    return Status::OK();
  }
  // The _auth design doc's validate_doc_update, in its order (after
  // before_doc_update's hashing, which a string "password" stands for here).
  if (Member(doc, "type") != "user") return Status::Forbidden("doc.type must be user");
  auto name_it = doc.FindMember("name");
  if (name_it == doc.MemberEnd() || !json::JsTruthy(name_it->value)) return Status::Forbidden("doc.name is required");
  auto roles = doc.FindMember("roles");
  if (roles == doc.MemberEnd() || !json::JsTruthy(roles->value)) return Status::Forbidden("doc.roles must exist");
  if (!roles->value.IsArray()) return Status::Forbidden("doc.roles must be an array");
  for (const auto& r : roles->value.GetArray()) {
    if (!r.IsString()) return Status::Forbidden("doc.roles can only contain strings");
  }
  // The name as 'org.couchdb.user:' + name makes it: a name that is not a
  // string passes when the id spells its String() (["a"] for ...:a).
  const json::Value& name = name_it->value;
  if (docid.substr(0, kUserDocPrefix.size()) != kUserDocPrefix ||
      docid.substr(kUserDocPrefix.size()) != json::JsString(name)) {
    return Status::Forbidden("Doc ID must be of the form org.couchdb.user:name");
  }
  if (old.IsObject()) {
    // oldDoc.name !== newDoc.name: never equal for an array (two objects).
    auto old_name = old.FindMember("name");
    if (old_name == old.MemberEnd() || !json::JsStrictEquals(old_name->value, name)) {
      return Status::Forbidden("Usernames can not be changed.");
    }
  }
  auto pw = doc.FindMember("password");
  const bool hashing = pw != doc.MemberEnd() && !pw->value.IsNull();
  if (hashing && !pw->value.IsString()) return Status::Forbidden("doc.password must be a string");
  if (!hashing) {
    // What the hashing would replace is checked only when it does not.
    auto sha = doc.FindMember("password_sha");
    auto salt = doc.FindMember("salt");
    if (sha != doc.MemberEnd() && json::JsTruthy(sha->value) && (salt == doc.MemberEnd() || !json::JsTruthy(salt->value))) {
      return Status::Forbidden(
          "Users with password_sha must have a salt.See /_utils/script/couch.js for example code.");
    }
    auto scheme = doc.FindMember("password_scheme");
    if (scheme != doc.MemberEnd() && json::JsTruthy(scheme->value)) {
      std::string_view known[] = {"simple", "pbkdf2", "simple+pbkdf2"};
      if (!scheme->value.IsString() || std::find(std::begin(known), std::end(known), json::View(scheme->value)) == std::end(known)) {
        return Status::Forbidden("Password scheme `" + json::JsString(scheme->value) + "` not supported.");
      }
    }
    if (scheme != doc.MemberEnd() && scheme->value.IsString() && json::View(scheme->value) == "pbkdf2") {
      auto iterations = doc.FindMember("iterations");
      if (iterations == doc.MemberEnd() || !iterations->value.IsNumber()) {
        return Status::Forbidden("iterations must be a number.");
      }
      auto key = doc.FindMember("derived_key");
      if (key == doc.MemberEnd() || !key->value.IsString()) return Status::Forbidden("derived_key must be a string.");
    }
  }
  if (other) {
    // validate_doc_update for non-admins: roles are the admins' to grant.
    if (old.IsObject()) {
      if (!name.IsString() || writer.user->name != json::View(name)) {
        return Status::Forbidden("You may only update your own user document.");
      }
      if (SortedRoles(old) != SortedRoles(doc)) return Status::Forbidden("Only _admin may edit roles");
    } else if (!roles->value.GetArray().Empty()) {
      return Status::Forbidden("Only _admin may set roles");
    }
  }
  // _metrics, CouchDB 3's role for reading the node's statistics, is the
  // one system role a user doc may hold.
  for (const auto& r : roles->value.GetArray()) {
    if (json::View(r) != kMetricsRole && json::View(r).substr(0, 1) == "_") {
      return Status::Forbidden("No system roles (starting with underscore) in users db.");
    }
  }
  // newDoc.name[0] === '_' and newDoc.name.indexOf(':'): an array's are
  // its first element and a search of its elements; an object has only
  // the first, which it reads as its member "0"; a number or a boolean has
  // neither, and the function stops on the TypeError.
  if (NameAt0(name) == "_") return Status::Forbidden("Username may not start with underscore.");
  bool has_colon = false;
  if (name.IsString()) {
    has_colon = json::View(name).find(':') != std::string_view::npos;
  } else if (name.IsArray()) {
    for (const auto& e : name.GetArray()) has_colon = has_colon || (e.IsString() && json::View(e) == ":");
  } else {
    return Status::Internal("TypeError: newDoc.name.indexOf is not a function");
  }
  if (has_colon) return Status::Forbidden("Character `:` is not allowed in usernames.");
  if (!hashing) return Status::OK();
  return HashPassword(&doc, body);
}

Result<UserCtx> UserStore::Lookup(std::string_view name, std::string* salt) {
  auto db = store_->OpenDatabase(kUsersDbName);
  if (!db.ok()) return Status::NotFound("no users database");
  auto text = (*db)->Get(std::string(kUserDocPrefix) + std::string(name));
  if (!text.ok()) return Status::NotFound("no such user");
  json::Document doc;
  if (!json::Parse(*text, &doc).ok() || !doc.IsObject()) return Status::NotFound("bad user doc");
  UserCtx user;
  user.name = std::string(name);
  auto roles = doc.FindMember("roles");
  if (roles != doc.MemberEnd() && roles->value.IsArray()) {
    for (const auto& r : roles->value.GetArray()) {
      // System roles other than _metrics are never granted through _users
      // (PrepareUserDoc refuses them too, this guards docs replicated in).
      if (r.IsString() && (json::View(r) == kMetricsRole || json::View(r).substr(0, 1) != "_")) {
        user.roles.emplace_back(json::View(r));
      }
    }
  }
  if (salt != nullptr) *salt = Member(doc, "salt");
  return user;
}

Result<UserCtx> UserStore::CheckPassword(std::string_view name, std::string_view password) {
  auto db = store_->OpenDatabase(kUsersDbName);
  if (!db.ok()) return Status::Unauthorized("Name or password is incorrect.");
  auto text = (*db)->Get(std::string(kUserDocPrefix) + std::string(name));
  if (!text.ok()) return Status::Unauthorized("Name or password is incorrect.");
  json::Document doc;
  if (!json::Parse(*text, &doc).ok() || !doc.IsObject()) {
    return Status::Unauthorized("Name or password is incorrect.");
  }
  std::string salt = Member(doc, "salt");
  std::string derived = Member(doc, "derived_key");
  auto it = doc.FindMember("iterations");
  int iterations = it != doc.MemberEnd() && it->value.IsInt() ? it->value.GetInt() : 0;
  // CouchDB before 3.4 wrote no pbkdf2_prf and meant SHA-1 (its users
  // come here by replication); 3.4 writes "sha256", settee too. The key is
  // as long as the one stored (20 bytes for SHA-1 there, 32 here).
  std::string prf = Member(doc, "pbkdf2_prf");
  if (prf.empty() && doc.FindMember("pbkdf2_prf") == doc.MemberEnd()) prf = "sha";
  if (salt.empty() || derived.size() > 128 || iterations <= 0 || iterations > kMaxPbkdf2Iterations || Member(doc, "password_scheme") != "pbkdf2") {
    return Status::Unauthorized("Name or password is incorrect.");
  }
  // Cache key: binds name, password and the stored hash (a password change
  // or user recreation invalidates it).
  std::string token = Sha256(std::string(name) + '\0' + std::string(password) + '\0' + derived);
  bool cached = false;
  {
    std::lock_guard<std::mutex> lk(mu_);
    auto c = verified_.find(std::string(name));
    cached = c != verified_.end() && c->second == token;
  }
  if (!cached) {
    if (!Pbkdf2Matches(password, salt, iterations, prf, derived)) {
      return Status::Unauthorized("Name or password is incorrect.");
    }
    std::lock_guard<std::mutex> lk(mu_);
    if (verified_.size() > 10000) verified_.clear();  // bound memory
    verified_[std::string(name)] = token;
  }
  return Lookup(name, nullptr);
}

}  // namespace settee
