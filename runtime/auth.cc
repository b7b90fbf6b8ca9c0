#include "runtime/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
#include <charconv>
#include <ctime>

#include "runtime/users_db.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// Base64url without padding (cookie-safe).
std::string Base64Url(std::string_view data) {
  std::string s = Base64Encode(data);
  for (char& c : s) {
    if (c == '+') c = '-';
    else if (c == '/') c = '_';
  }
  while (!s.empty() && s.back() == '=') s.pop_back();
  return s;
}

bool Base64UrlDecode(std::string_view in, std::string* out) {
  std::string s(in);
  for (char& c : s) {
    if (c == '-') c = '+';
    else if (c == '_') c = '/';
  }
  while (s.size() % 4 != 0) s.push_back('=');
  return Base64Decode(s, out);
}

Status ReadNameList(const json::Value& obj, const char* key, std::vector<std::string>* out) {
  auto it = obj.FindMember(key);
  if (it == obj.MemberEnd()) return Status::OK();
  if (!it->value.IsArray()) return Status::BadRequest(std::string(key) + " must be an array");
  for (auto& v : it->value.GetArray()) {
    if (!v.IsString()) return Status::BadRequest(std::string(key) + " must contain strings");
    out->emplace_back(json::View(v));
  }
  return Status::OK();
}

// A PBKDF2 password hash in CouchDB's notation, parsed (views into it).
struct ParsedPasswordHash {
  std::string_view prf;  // IsKnownPbkdf2Prf's names
  std::string_view derived_key;
  std::string_view salt;
  int iterations = 0;
};

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  });
}

// "-pbkdf2-KEY,SALT,ITERATIONS" (SHA-1) or "-pbkdf2:PRF-KEY,SALT,ITERATIONS"
// (couch_passwords in CouchDB 3.4 writes the latter; 2.x and 3.3 the former).
Status ParsePasswordHash(std::string_view h, ParsedPasswordHash* out) {
  if (h.rfind("-hashed-", 0) == 0) {
    return Status::BadRequest("settee checks admin password hashes of CouchDB's pbkdf2 scheme only, "
                              "not its older \"-hashed-\" SHA-1 one: set the password itself");
  }
  if (h.rfind("-pbkdf2", 0) != 0) return Status::BadRequest("not a password hash");
  h.remove_prefix(7);
  out->prf = "sha";
  if (!h.empty() && h.front() == ':') {
    const size_t dash = h.find('-');
    if (dash == std::string_view::npos) return Status::BadRequest("a password hash \"-pbkdf2:PRF-...\" has no '-' after its PRF");
    out->prf = h.substr(1, dash - 1);
    h.remove_prefix(dash + 1);
  } else if (!h.empty() && h.front() == '-') {
    h.remove_prefix(1);
  } else {
    return Status::BadRequest("a password hash starts \"-pbkdf2-\" or \"-pbkdf2:PRF-\"");
  }
  if (!IsKnownPbkdf2Prf(out->prf)) {
    return Status::BadRequest("unknown PBKDF2 PRF \"" + std::string(out->prf) +
                              "\" in a password hash (sha, sha224, sha256, sha384 or sha512)");
  }
  const size_t c1 = h.find(',');
  const size_t c2 = c1 == std::string_view::npos ? c1 : h.find(',', c1 + 1);
  if (c2 == std::string_view::npos || h.find(',', c2 + 1) != std::string_view::npos) {
    return Status::BadRequest("a password hash is \"-pbkdf2...-KEY,SALT,ITERATIONS\"");
  }
  out->derived_key = h.substr(0, c1);
  out->salt = h.substr(c1 + 1, c2 - c1 - 1);
  const std::string_view iterations = h.substr(c2 + 1);
  if (out->derived_key.empty() || out->derived_key.size() % 2 != 0 || out->derived_key.size() > 128 ||
      !IsHex(out->derived_key)) {
    return Status::BadRequest("a password hash's derived key must be hex, 1 to 64 bytes");
  }
  if (out->salt.empty()) return Status::BadRequest("a password hash's salt is empty");
  int n = 0;
  const auto [end, error] = std::from_chars(iterations.data(), iterations.data() + iterations.size(), n);
  if (error != std::errc() || end != iterations.data() + iterations.size() || n < 1 ||
      n > kMaxPbkdf2Iterations) {
    return Status::BadRequest("a password hash's iterations must be a number from 1 to 10000000");
  }
  out->iterations = n;
  return Status::OK();
}

// Whether `password` is the one `hash` (which passed ParsePasswordHash) was
// made from.
bool PasswordMatchesHash(std::string_view hash, std::string_view password) {
  ParsedPasswordHash p;
  return ParsePasswordHash(hash, &p).ok() &&
         Pbkdf2Matches(password, p.salt, p.iterations, p.prf, p.derived_key);
}

}  // namespace

bool UserCtx::IsAdmin() const { return HasRole("_admin"); }

bool UserCtx::HasRole(std::string_view role) const { return Contains(roles, role); }

Status SecurityObject::Parse(std::string_view text, SecurityObject* out) {
  *out = SecurityObject();
  json::Document doc;
  Status s = json::Parse(text, &doc);
  if (!s.ok()) return s;
  if (!doc.IsObject()) return Status::BadRequest("Security object must be a JSON object");
  struct Section {
    const char* name;
    std::vector<std::string>* names;
    std::vector<std::string>* roles;
  };
  const Section sections[] = {{"admins", &out->admin_names, &out->admin_roles},
                              {"members", &out->member_names, &out->member_roles}};
  for (const Section& sec : sections) {
    auto it = doc.FindMember(sec.name);
    if (it == doc.MemberEnd()) continue;
    if (!it->value.IsObject()) {
      return Status::BadRequest(std::string(sec.name) + " must be a JSON object");
    }
    s = ReadNameList(it->value, "names", sec.names);
    if (s.ok()) s = ReadNameList(it->value, "roles", sec.roles);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

bool SecurityObject::IsDbAdmin(const UserCtx& user) const {
  if (user.IsAdmin()) return true;
  if (!user.name.empty() && Contains(admin_names, user.name)) return true;
  for (const std::string& r : user.roles) {
    if (Contains(admin_roles, r)) return true;
  }
  return false;
}

bool SecurityObject::IsMember(const UserCtx& user) const {
  if (IsDbAdmin(user)) return true;
  if (member_names.empty() && member_roles.empty()) return true;  // public db
  if (!user.name.empty() && Contains(member_names, user.name)) return true;
  for (const std::string& r : user.roles) {
    if (Contains(member_roles, r)) return true;
  }
  return false;
}

Authenticator::Authenticator(const std::vector<std::pair<std::string, std::string>>& admins,
                             std::string secret, int64_t session_timeout_s, UserStore* users)
    : secret_(secret.empty() ? RandomUuidHex() + RandomUuidHex() : std::move(secret)),
      session_timeout_s_(session_timeout_s),
      users_(users) {
  for (const auto& [name, password] : admins) {
    auto admin = MakeAdmin(name, password);
    if (admin.ok()) {
      admins_.push_back(std::move(*admin));
    } else if (IsPasswordHash(password)) {
      // A hash that cannot be checked: the admin still counts (dropping it
      // could open an admin party) but no password matches it.
      admins_.push_back(Admin{name, "", password, password});
    } else {
      // Without randomness for the shown hash's salt the admin still counts;
      // only AdminHashes() shows "".
      std::string hash = PasswordHash(password);
      admins_.push_back(Admin{name, hash, "", hash});
    }
  }
}

bool Authenticator::IsPasswordHash(std::string_view value) {
  return value.rfind("-pbkdf2", 0) == 0 || value.rfind("-hashed-", 0) == 0;
}

Status Authenticator::CheckPasswordHash(std::string_view hash) {
  ParsedPasswordHash parsed;
  return ParsePasswordHash(hash, &parsed);
}

Result<std::string> Authenticator::HashPassword(std::string_view password) {
  auto key = NewPasswordKey(password);
  if (!key.ok()) return key.status();
  // CouchDB 3.4+'s form for a PBKDF2-SHA256 admin hash (couch_passwords:
  // hash_admin_password); a bare "-pbkdf2-" would mean SHA-1.
  return "-pbkdf2:sha256-" + key->derived_key + "," + key->salt + "," + std::to_string(kPbkdf2Iterations);
}

Result<Authenticator::Admin> Authenticator::MakeAdmin(std::string_view name,
                                                      std::string_view password) const {
  if (IsPasswordHash(password)) {
    Status s = CheckPasswordHash(password);
    if (!s.ok()) return s;
    return Admin{std::string(name), "", std::string(password), std::string(password)};
  }
  auto shown = HashPassword(password);
  if (!shown.ok()) return shown.status();
  std::string hash = PasswordHash(password);
  return Admin{std::string(name), hash, std::move(*shown), hash};
}

bool Authenticator::admin_party() const {
  std::shared_lock<std::shared_mutex> lock(admins_mu_);
  return admins_.empty();
}

size_t Authenticator::admin_count() const {
  std::shared_lock<std::shared_mutex> lock(admins_mu_);
  return admins_.size();
}

Status Authenticator::SetAdmin(std::string_view name, std::string_view password) {
  auto admin = MakeAdmin(name, password);  // outside the lock: PBKDF2 is slow
  if (!admin.ok()) return admin.status();
  std::unique_lock<std::shared_mutex> lock(admins_mu_);
  for (Admin& a : admins_) {
    if (a.name == name) {
      a = std::move(*admin);
      return Status::OK();
    }
  }
  admins_.push_back(std::move(*admin));
  return Status::OK();
}

bool Authenticator::RemoveAdmin(std::string_view name) {
  std::unique_lock<std::shared_mutex> lock(admins_mu_);
  auto it = std::find_if(admins_.begin(), admins_.end(), [&](const Admin& a) { return a.name == name; });
  if (it == admins_.end()) return false;
  admins_.erase(it);
  return true;
}

std::vector<std::pair<std::string, std::string>> Authenticator::AdminHashes() const {
  std::shared_lock<std::shared_mutex> lock(admins_mu_);
  std::vector<std::pair<std::string, std::string>> out;
  for (const Admin& a : admins_) out.emplace_back(a.name, a.shown);
  return out;
}

std::string Authenticator::Sign(std::string_view data) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), mac, &len);
  return std::string(reinterpret_cast<char*>(mac), len);
}

std::string Authenticator::PasswordHash(std::string_view password) const {
  return Sign(std::string("password:") + std::string(password));
}

Result<UserCtx> Authenticator::CheckPassword(std::string_view name,
                                             std::string_view password) const {
  std::string hash = PasswordHash(password);
  std::string unproven;  // the hash `name` was given, if no login has proven its password yet
  {
    std::shared_lock<std::shared_mutex> lock(admins_mu_);
    for (const Admin& a : admins_) {
      if (a.name != name) continue;
      if (a.hash.empty()) unproven = a.shown;
      else if (ConstantTimeEquals(a.hash, hash)) return UserCtx{{std::string(name), {"_admin"}}, false};
      break;
    }
  }
  // Outside the lock: PBKDF2 is slow. Once it matched, the keyed hash stands
  // in for it, unless the admin changed meanwhile.
  if (!unproven.empty() && PasswordMatchesHash(unproven, password)) {
    std::unique_lock<std::shared_mutex> lock(admins_mu_);
    for (Admin& a : admins_) {
      if (a.name == name && a.hash.empty() && a.shown == unproven) a.hash = hash;
    }
    return UserCtx{{std::string(name), {"_admin"}}, false};
  }
  if (users_ != nullptr) return users_->CheckPassword(name, password);
  return Status::Unauthorized("Name or password is incorrect.");
}

Result<UserCtx> Authenticator::SessionUser(std::string_view name, std::string* salt) const {
  {
    std::shared_lock<std::shared_mutex> lock(admins_mu_);
    for (const Admin& a : admins_) {
      if (a.name == name) {
        // The MAC covers the admin's password hash: a new password (or a
        // removal) ends its sessions, as a _users password change does.
        *salt = "admin:" + a.session_salt;
        return UserCtx{{std::string(name), {"_admin"}}, true};
      }
    }
  }
  if (users_ == nullptr) return Status::NotFound("no such user");
  auto user = users_->Lookup(name, salt);
  if (!user.ok()) return user.status();
  user->authenticated_by_cookie = true;
  return user;
}

std::string Authenticator::MakeSessionCookie(std::string_view name) const {
  char hex[32];
  snprintf(hex, sizeof(hex), "%llX", static_cast<unsigned long long>(std::time(nullptr)));
  std::string payload = std::string(name) + ":" + hex;
  std::string salt;
  (void)SessionUser(name, &salt);  // unknown names get a cookie that never verifies
  std::string value = Base64Url(payload + ":" + Sign(salt + "\n" + payload));
  return "AuthSession=" + value + "; Version=1; Path=/; HttpOnly; SameSite=Lax; Max-Age=" +
         std::to_string(session_timeout_s_);
}

std::string Authenticator::ClearSessionCookie() {
  return "AuthSession=; Version=1; Path=/; HttpOnly; SameSite=Lax; Max-Age=0";
}

bool Authenticator::VerifyCookie(std::string_view value, UserCtx* user,
                                 int64_t* issued) const {
  std::string raw;
  if (!Base64UrlDecode(value, &raw)) return false;
  // name:HEXTIME:MAC, where the name may itself contain ':' but MAC is last
  // and fixed-size.
  constexpr size_t kMacBytes = 32;
  if (raw.size() < kMacBytes + 3) return false;
  std::string_view mac = std::string_view(raw).substr(raw.size() - kMacBytes);
  std::string_view payload = std::string_view(raw).substr(0, raw.size() - kMacBytes - 1);
  if (raw[raw.size() - kMacBytes - 1] != ':') return false;
  size_t colon = payload.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string salt;
  auto found = SessionUser(payload.substr(0, colon), &salt);
  if (!found.ok()) return false;
  if (!ConstantTimeEquals(mac, Sign(salt + "\n" + std::string(payload)))) return false;
  *user = std::move(*found);
  std::string hex(payload.substr(colon + 1));
  char* end = nullptr;
  *issued = static_cast<int64_t>(strtoll(hex.c_str(), &end, 16));
  return end != hex.c_str() && *end == '\0';
}

Result<UserCtx> Authenticator::Authenticate(const http::HttpRequest& req,
                                            std::string* refreshed_cookie) const {
  if (admin_party()) return UserCtx{{"", {"_admin"}}, false};
  if (const std::string* auth = req.Header("authorization")) {
    std::string_view v(*auth);
    if (v.size() > 6 && http::EqualsIgnoreCase(v.substr(0, 6), "basic ")) {
      std::string decoded;
      std::string_view b64 = v.substr(6);
      while (!b64.empty() && b64.front() == ' ') b64.remove_prefix(1);
      if (!Base64Decode(b64, &decoded)) {
        return Status::Unauthorized("Name or password is incorrect.");
      }
      size_t colon = decoded.find(':');
      if (colon == std::string::npos) return Status::Unauthorized("Name or password is incorrect.");
      return CheckPassword(std::string_view(decoded).substr(0, colon),
                           std::string_view(decoded).substr(colon + 1));
    }
  }
  if (const std::string* cookie = req.Header("cookie")) {
    std::string_view rest(*cookie);
    while (!rest.empty()) {
      size_t semi = rest.find(';');
      std::string_view pair = rest.substr(0, semi);
      rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      if (pair.substr(0, 12) != "AuthSession=") continue;
      UserCtx user;
      int64_t issued = 0;
      if (!VerifyCookie(pair.substr(12), &user, &issued)) break;
      int64_t now = std::time(nullptr);
      if (now - issued > session_timeout_s_ || issued > now + 60) break;
      if (now - issued > session_timeout_s_ / 2 && refreshed_cookie != nullptr) {
        *refreshed_cookie = MakeSessionCookie(user.name);
      }
      return user;
    }
  }
  return UserCtx{};
}

}  // namespace settee
