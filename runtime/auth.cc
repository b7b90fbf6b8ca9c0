#include "runtime/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <algorithm>
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
    // Without randomness for the shown hash's salt the admin still counts
    // (dropping it could open an admin party); only AdminHashes() shows "".
    admins_.push_back(admin.ok() ? std::move(*admin) : Admin{name, PasswordHash(password), ""});
  }
}

Result<Authenticator::Admin> Authenticator::MakeAdmin(std::string_view name,
                                                      std::string_view password) const {
  auto key = NewPasswordKey(password);
  if (!key.ok()) return key.status();
  // CouchDB 3.4+'s form for a PBKDF2-SHA256 admin hash (couch_passwords:
  // hash_admin_password); a bare "-pbkdf2-" would mean SHA-1.
  std::string shown = "-pbkdf2:sha256-" + key->derived_key + "," + key->salt + "," +
                      std::to_string(kPbkdf2Iterations);
  return Admin{std::string(name), PasswordHash(password), std::move(shown)};
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
  {
    std::shared_lock<std::shared_mutex> lock(admins_mu_);
    for (const Admin& a : admins_) {
      if (a.name == name && ConstantTimeEquals(a.hash, hash)) {
        return UserCtx{{std::string(name), {"_admin"}}, false};
      }
    }
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
        *salt = "admin:" + a.hash;
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
