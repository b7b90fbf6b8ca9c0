#include "util/digest.h"

#include <openssl/evp.h>
#include <openssl/rand.h>
#include <xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <new>

#include "util/base64.h"

namespace settee {

namespace {
// OpenSSL 3 looks an algorithm up by name on every implicit EVP_md5() use;
// fetching it once keeps hashing of small inputs cheap.
const EVP_MD* FetchedMd5() {
  static const EVP_MD* md = EVP_MD_fetch(nullptr, "MD5", nullptr);
  return md;
}
}  // namespace

Md5::Md5() : ctx_(EVP_MD_CTX_new()) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), FetchedMd5(), nullptr);
}
Md5::~Md5() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Md5::Reset() {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), FetchedMd5(), nullptr);
}

void Md5::Update(std::string_view data) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data.data(), data.size());
}

std::string Md5::FinishRaw() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Md5::FinishHex() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), out, &len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(out), len));
}

std::string Md5Raw(std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), out, &len, FetchedMd5(), nullptr);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string Md5Hex(std::string_view data) { return HexEncode(Md5Raw(data)); }

namespace {
std::string CanonicalHex(XXH128_hash_t hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(canonical.digest),
                                    sizeof canonical.digest));
}
}  // namespace

std::string Xxh128Hex(std::string_view data) {
  return CanonicalHex(XXH3_128bits(data.data(), data.size()));
}

Xxh128::Xxh128() : state_(XXH3_createState()) {
  if (state_ == nullptr) throw std::bad_alloc();
  Reset();
}
Xxh128::~Xxh128() { XXH3_freeState(static_cast<XXH3_state_t*>(state_)); }
void Xxh128::Reset() { XXH3_128bits_reset(static_cast<XXH3_state_t*>(state_)); }
void Xxh128::Update(std::string_view data) {
  XXH3_128bits_update(static_cast<XXH3_state_t*>(state_), data.data(), data.size());
}
std::string Xxh128::FinishHex() {
  return CanonicalHex(XXH3_128bits_digest(static_cast<XXH3_state_t*>(state_)));
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    auto b = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHex[b >> 4];
    out[2 * i + 1] = kHex[b & 0xf];
  }
  return out;
}

std::string Base64Encode(std::string_view data) {
  std::string out;
  AppendBase64(&out, data);
  return out;
}

void AppendBase64(std::string* out, std::string_view data) {
  const size_t at = out->size();
  out->resize(at + Base64Length(data.size()));
  Base64EncodeTo(data, out->data() + at);
}

bool Base64Decode(std::string_view in, std::string* out) {
  // EVP_DecodeBlock ignores nothing and reports padding as zero bytes, so
  // validate length and strip the padding ourselves.
  // Whitespace is rare (CouchDB never writes it): only then is a cleaned
  // copy made, so decoding a big attachment body holds no second base64.
  auto is_space = [](char c) { return c == '\n' || c == '\r' || c == ' ' || c == '\t'; };
  std::string cleaned;
  std::string_view clean = in;
  if (std::any_of(in.begin(), in.end(), is_space)) {
    cleaned.reserve(in.size());
    for (char c : in) {
      if (!is_space(c)) cleaned.push_back(c);
    }
    clean = cleaned;
  }
  if (clean.size() % 4 != 0) return false;
  size_t pad = 0;
  if (!clean.empty() && clean.back() == '=') ++pad;
  if (clean.size() >= 2 && clean[clean.size() - 2] == '=') ++pad;
  for (size_t i = 0; i + pad < clean.size(); ++i) {
    char c = clean[i];
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '+' || c == '/';
    if (!ok) return false;
  }
  out->assign(3 * clean.size() / 4, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out->data()),
                          reinterpret_cast<const unsigned char*>(clean.data()),
                          static_cast<int>(clean.size()));
  if (n < 0) return false;
  out->resize(static_cast<size_t>(n) - pad);
  return true;
}

std::string RandomUuidHex() {
  unsigned char bytes[16];
  if (RAND_bytes(bytes, sizeof bytes) != 1) {
    // OpenSSL's DRBG failing means the process has no entropy at all; there
    // is no safe way to continue generating ids.
    std::abort();
  }
  return HexEncode(std::string_view(reinterpret_cast<char*>(bytes), sizeof bytes));
}

}  // namespace settee

namespace settee {

std::string SequentialUuidHex() {
  struct State {
    std::string prefix;  // 26 hex chars
    uint32_t counter = 0;
    uint64_t rng = 0;    // xorshift state for the step, seeded from OpenSSL
  };
  thread_local State state;
  constexpr uint32_t kCounterLimit = 0xfff000;  // leave room below 0xffffff
  auto refill = [] {
    std::string fresh = RandomUuidHex();
    state.prefix = fresh.substr(0, 26);
    state.counter = static_cast<uint32_t>(std::stoul(fresh.substr(26, 3), nullptr, 16));
    state.rng = std::stoull(fresh.substr(10, 16), nullptr, 16) | 1;
  };
  if (state.prefix.empty() || state.counter >= kCounterLimit) refill();
  state.rng ^= state.rng << 13;
  state.rng ^= state.rng >> 7;
  state.rng ^= state.rng << 17;
  state.counter += 1 + static_cast<uint32_t>(state.rng % 0xffe);
  if (state.counter >= kCounterLimit) {
    refill();
    state.counter += 1;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = state.prefix;
  id.resize(32);
  for (int i = 0; i < 6; ++i) id[31 - i] = kHex[(state.counter >> (4 * i)) & 0xf];
  return id;
}

}  // namespace settee
