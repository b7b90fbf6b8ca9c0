// The _users database: non-admin accounts, as CouchDB keeps them.
//
// A user is the document "org.couchdb.user:<name>" with
//   {"name", "type":"user", "roles":[..], "password_scheme":"pbkdf2",
//    "pbkdf2_prf":"sha256", "iterations", "salt", "derived_key"}.
// A client writes it with a plaintext "password" member; PrepareUserDoc()
// replaces that with the salted PBKDF2 fields before the document is stored,
// so the password itself is never kept.
//
// Thread safety: free functions; UserStore is safe for concurrent use.
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/auth.h"
#include "settee/database.h"
#include "settee/store.h"
#include "util/json.h"

namespace settee {

constexpr std::string_view kUsersDbName = "_users";
constexpr std::string_view kUserDocPrefix = "org.couchdb.user:";
// The one system role a user doc may grant (CouchDB 3's read-only role for
// _node/{node}/_stats and _system; settee serves neither yet).
constexpr std::string_view kMetricsRole = "_metrics";

// PBKDF2 iterations for new password hashes. Verification takes the count
// stored in each user doc, and successful checks are cached (UserStore), so
// this cost is paid once per password, not per request.
constexpr int kPbkdf2Iterations = 10000;
// The most iterations a stored hash may ask for (an admin's, a user's):
// above it the hash is refused, not computed for seconds a login.
constexpr int kMaxPbkdf2Iterations = 10'000'000;

// A new password's salted PBKDF2-SHA256 hash, as _users documents and the
// admins' shown hashes hold it: 16 random bytes as hex (the salt, used as
// its hex text) and the derived key as hex, over kPbkdf2Iterations.
// kInternal when the system cannot supply random bytes for the salt.
struct PasswordKey {
  std::string salt;
  std::string derived_key;
};
Result<PasswordKey> NewPasswordKey(std::string_view password);

// Whether `prf` names a PBKDF2 PRF settee computes (CouchDB's pbkdf2_prf
// names: "sha" for SHA-1, "sha224", "sha256", "sha384", "sha512").
bool IsKnownPbkdf2Prf(std::string_view prf);
// Whether `password` over `salt` gives `derived_key_hex` (either case; the
// key as long as the one given), by PBKDF2 with HMAC over `prf`; false for
// an unknown PRF. Compares in constant time.
bool Pbkdf2Matches(std::string_view password, std::string_view salt, int iterations,
                   std::string_view prf, std::string_view derived_key_hex);

// Who writes to _users, as CouchDB's rules tell writers apart. A server
// admin (role _admin) may do anything the _auth validate function allows
// any writer. An admin of _users by its _security (named, or by role) is
// an admin to couch_users_db:before_doc_update (couch_db:check_is_admin)
// and to the validate function's is_server_or_database_admin, which lets
// them edit others' docs and roles; but its deletion rule looks for
// '_admin' in userCtx.roles alone, so they delete only their own doc.
// Anyone else may sign up (create a user doc, anonymously too) and edit
// or delete their own doc, under before_doc_update and the rules the
// validate function adds for non-admins.
struct UsersWriter {
  enum class Kind { kServerAdmin, kDbAdmin, kOther };
  Kind kind = Kind::kServerAdmin;
  // The requester; may be null for a server admin.
  const UserCtx* user = nullptr;
  // _users, to read the revision a write edits (its _rev) for those rules;
  // null: none is read (every write is then taken for a creation).
  Database* db = nullptr;
  // The write's new_edits: false for a replicated revision, whose _rev is
  // the new one, not the one edited.
  bool new_edits = true;
};
// The writer `user` is to `db` (_users), `db_admin` telling whether they
// are a server admin or one of its _security admins.
UsersWriter UsersWriterOf(const UserCtx& user, bool db_admin, Database& db);

// The revision a write of `doc` to `docid` edits, as validate_doc_update's
// oldDoc, into *old (left null when there is none: a creation). With
// new_edits, the one its _rev names (none without a _rev); kConflict when
// no stored revision has that _rev (the write would fail so too). Without
// (a replicated revision: its _rev is the new one), the nearest stored
// ancestor its _revisions list, as CouchDB's make_first_doc_on_disk; and
// *stored is set when the revision itself is stored already, which makes
// the write none at all (CouchDB validates nothing then).
Status ReadEditedRevision(Database& db, std::string_view docid, const json::Value& doc, bool new_edits,
                          json::Document* old, bool* stored);

// Validates a user document about to be written to _users by `writer` and
// hashes its "password" member if present (a string; null is left as it
// is, as CouchDB's before_doc_update leaves it). `docid` is the target id.
// kForbidden with the messages of CouchDB's _auth validate_doc_update, in
// its order ("doc.type must be user" first, then "doc.name is required",
// the roles, "Doc ID must be of the form org.couchdb.user:name", ...), for
// malformed user docs; design and _local docs pass unchanged (CouchDB runs
// no validate_doc_update on either). The revision a write edits is read
// (ReadEditedRevision, with writer.new_edits) for every writer but a
// server admin deleting: an update must keep its name, else kForbidden
// "Usernames can not be changed." (a tombstone has none), and a deletion
// by anyone but a server admin must edit a revision whose name is the
// writer's, else "Only admins may delete other user docs.". A replicated
// revision already stored is only hashed. For kOther, also CouchDB's
// rules for such a writer: kNotFound "missing" for another user's doc,
// kForbidden "Only _admin may set roles" / "Only _admin may edit roles" /
// "You may only update your own user document.". kConflict when a
// revision must be read and the _rev given names no stored revision.
// A "name" that is not a string is read as JavaScript reads it there: an
// array whose String() the id spells passes (["ann"] at ...:ann); a
// number, boolean or object whose id matches ends on the function's
// TypeError, kInternal "TypeError: newDoc.name.indexOf is not a function"
// (500 unknown_error, as settee answers any validate function's error).
Status PrepareUserDoc(std::string_view docid, std::string* body, const UsersWriter& writer = {});

// Whether a requester who is not an admin of _users may read `docid` there
// (couch_users_db:after_doc_read with no public_fields configured): their
// own user doc and _local docs only. kForbidden for design docs,
// kNotFound "missing" for anything else, as CouchDB.
Status CheckUserDocRead(const UserCtx& user, std::string_view docid);

// CouchDB's [chttpd_auth] public_fields, split as couch_users_db does
// (re:split on \s*,\s*: spaces around commas go, those at either end stay).
// Empty for an empty value: no field is public.
std::vector<std::string> ParsePublicFields(std::string_view config);

// couch_users_db:after_doc_read for a reader who may read `docid` only
// stripped (CheckUserDocRead's kNotFound: another's doc): *doc_json keeps
// the special members (_id, _rev, _attachments, ...) and, of the body, the
// members named in `public_fields`. kNotFound "missing" when no body member
// is left, as CouchDB answers an empty body.
Status StripToPublicFields(const std::vector<std::string>& public_fields, std::string* doc_json);

// Looks up and verifies _users accounts.
class UserStore {
 public:
  explicit UserStore(Store* store) : store_(store) {}

  // The user's context if `name` exists in _users and `password` matches;
  // kUnauthorized otherwise.
  Result<UserCtx> CheckPassword(std::string_view name, std::string_view password);
  // The user's context (for a valid session cookie); kNotFound if the user
  // no longer exists. *salt gets the user's salt (cookies are bound to it).
  Result<UserCtx> Lookup(std::string_view name, std::string* salt);

 private:
  Store* const store_;
  std::mutex mu_;
  // name -> token of the last verified (password, derived_key) pair.
  std::unordered_map<std::string, std::string> verified_;  // guarded by mu_
};

}  // namespace settee
