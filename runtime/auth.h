// Authentication and per-database authorization, as CouchDB 3 does them.
//
// Identity comes from HTTP Basic credentials or an AuthSession cookie (made
// by POST /_session). Server admins are configured at startup (--admin,
// SETTEE_ADMINS, the --config file), each with its password or, as CouchDB's
// local.ini holds them, a PBKDF2 hash of it; with none configured the server
// is in "admin party" mode, where every request is an admin, which
// serve_command.cc allows only on loopback.
//
// Database access follows the _security object:
//   {"admins":{"names":[],"roles":[]},"members":{"names":[],"roles":[]}}
// Server admins and db admins may do anything in the db; members may read and
// write documents (not design docs or _security); if members are empty the db
// is public. New databases get CouchDB 3's admin-only object
// (members and admins role "_admin").
//
// Thread safety: all methods may be called concurrently. The server admins
// may change while serving (SetAdmin/RemoveAdmin: PUT and DELETE of
// /_node/_local/_config/admins/{name}); each check sees them before or
// after a change, never half of it.
#pragma once

#include <cstdint>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/http_message.h"
#include "settee/database.h"
#include "settee/status.h"

namespace settee {

// The requester. Its name and roles (UserContext, settee/database.h) are
// what a write passes to validate_doc_update.
struct UserCtx : UserContext {
  bool authenticated_by_cookie = false;

  bool IsAdmin() const;
  bool HasRole(std::string_view role) const;
};

// The _security object's content, parsed.
struct SecurityObject {
  std::vector<std::string> admin_names, admin_roles, member_names, member_roles;

  // kBadRequest if `json` is not an object of the expected shape.
  static Status Parse(std::string_view json, SecurityObject* out);
  bool IsDbAdmin(const UserCtx& user) const;
  bool IsMember(const UserCtx& user) const;  // true for admins and for public dbs
};

// The _security object CouchDB 3 gives a new database (admin_only).
constexpr std::string_view kDefaultSecurityJson =
    R"({"members":{"roles":["_admin"]},"admins":{"roles":["_admin"]}})";

class UserStore;

class Authenticator {
 public:
  // `admins`: name/password pairs, a password possibly given as its hash
  // (IsPasswordHash; one CheckPasswordHash refuses makes an admin no password
  // logs in as, so callers check first). `secret`: key for session cookies (random
  // when empty; cookies then die with the process). `session_timeout_s`: how
  // long a cookie stays valid after it was issued or last refreshed.
  // `users`, when given, resolves non-admin accounts from the _users database
  // (runtime/users_db.h); it must outlive the Authenticator.
  Authenticator(const std::vector<std::pair<std::string, std::string>>& admins,
                std::string secret, int64_t session_timeout_s, UserStore* users = nullptr);

  bool admin_party() const;

  // Adds server admin `name`, or gives it a new password (live: the next
  // request sees it; the first admin ends an admin party). `password` may be
  // a hash of it (IsPasswordHash), kept as given. With nothing changed:
  // kBadRequest for a hash CheckPasswordHash refuses, kInternal when no
  // random salt can be drawn.
  Status SetAdmin(std::string_view name, std::string_view password);
  // Removes server admin `name`; false if there is none of that name.
  // Its session cookies stop verifying.
  bool RemoveAdmin(std::string_view name);
  // Each admin's name and its password hash as CouchDB's config shows it:
  // the hash it was given, else "-pbkdf2:sha256-<derived key hex>,<salt>,
  // <iterations>" (PBKDF2-SHA256 in CouchDB 3.4+'s notation; a bare
  // "-pbkdf2-" is SHA-1 there), computed when the admin was set. Logins
  // check a keyed hash of the password instead, which costs one HMAC, not
  // thousands; for an admin given by hash that keyed hash is made at its
  // first login, which runs the PBKDF2 (on the calling thread: ~5 ms at
  // 10,000 iterations, CouchDB 3.4's 600,000 take ~0.3 s).
  std::vector<std::pair<std::string, std::string>> AdminHashes() const;
  size_t admin_count() const;

  // Whether an admin's configured value is a hash of its password rather
  // than the password: it starts "-pbkdf2" or "-hashed-", as CouchDB tells
  // them apart (so no password may start so).
  static bool IsPasswordHash(std::string_view value);
  // OK if passwords can be checked against `hash`: CouchDB's
  // "-pbkdf2-<derived key hex>,<salt>,<iterations>" (PBKDF2-HMAC-SHA1) or
  // "-pbkdf2:<prf>-..." (prf sha, sha224, sha256, sha384 or sha512), at
  // most 10 million iterations. kBadRequest saying what is wrong otherwise
  // (CouchDB 1's "-hashed-" SHA-1 scheme included).
  static Status CheckPasswordHash(std::string_view hash);
  // A new hash of `password` in AdminHashes()'s form (fresh salt,
  // kPbkdf2Iterations); kInternal when no random salt can be drawn.
  static Result<std::string> HashPassword(std::string_view password);

  // Identifies the requester. Anonymous (empty name) when no credentials are
  // sent; every request is an admin in admin party. Bad Basic credentials are
  // kUnauthorized "Name or password is incorrect."; an invalid or expired
  // cookie counts as anonymous, as in CouchDB. When the cookie should be
  // refreshed, *refreshed_cookie gets a new Set-Cookie value.
  Result<UserCtx> Authenticate(const http::HttpRequest& req, std::string* refreshed_cookie) const;

  // Checks a name/password pair (POST /_session): server admins first, then
  // _users accounts.
  Result<UserCtx> CheckPassword(std::string_view name, std::string_view password) const;

  // A Set-Cookie header value for a new session of `name`. The cookie's MAC
  // also covers the user's password salt, so changing the password ends
  // existing sessions.
  std::string MakeSessionCookie(std::string_view name) const;
  // The Set-Cookie value that clears the session.
  static std::string ClearSessionCookie();

 private:
  std::string PasswordHash(std::string_view password) const;
  std::string Sign(std::string_view data) const;
  // The identity a session cookie for `name` stands for, and the salt its MAC
  // covers. kNotFound for unknown names.
  Result<UserCtx> SessionUser(std::string_view name, std::string* salt) const;
  // Validates an AuthSession value; fills *user and *issued.
  bool VerifyCookie(std::string_view value, UserCtx* user, int64_t* issued) const;

  struct Admin {
    std::string name;
    // Keyed hash of the password (the password is not kept); empty for an
    // admin given by hash until a login proves its password.
    std::string hash;
    std::string shown;  // AdminHashes()'s form
    // What the admin's session cookies' MAC covers: the keyed hash, or for
    // an admin given by hash that hash (so cookies outlive a restart, as
    // they do for one given its password, when the cookie secret is kept).
    std::string session_salt;
  };
  Result<Admin> MakeAdmin(std::string_view name, std::string_view password) const;
  mutable std::shared_mutex admins_mu_;
  // Mutable for CheckPassword, which fills in the keyed hash of an admin
  // given by hash at its first login.
  mutable std::vector<Admin> admins_;  // GUARDED_BY(admins_mu_)
  std::string secret_;
  int64_t session_timeout_s_;
  UserStore* const users_;
};

}  // namespace settee
