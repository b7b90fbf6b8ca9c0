// Digests and random identifiers (OpenSSL and xxHash underneath).
#pragma once

#include <string>
#include <string_view>

namespace settee {

// Lowercase hex of the MD5 of `data` (32 chars).
std::string Md5Hex(std::string_view data);
// Raw 16-byte MD5.
std::string Md5Raw(std::string_view data);
// Lowercase hex of the XXH3 128-bit hash of `data` in xxHash's canonical
// (big-endian) byte order, as `xxhsum -H2` prints it (32 chars). Not
// cryptographic: for identifiers that must be deterministic and fast.
std::string Xxh128Hex(std::string_view data);
// Standard base64 (with padding), as CouchDB puts in attachment digests.
std::string Base64Encode(std::string_view data);
// Base64Encode() appended to *out, without a string of its own.
void AppendBase64(std::string* out, std::string_view data);
// Decodes standard base64; false on malformed input.
bool Base64Decode(std::string_view in, std::string* out);
// Lowercase hex of bytes.
std::string HexEncode(std::string_view bytes);
// 32 lowercase hex chars from a cryptographically strong random source.
std::string RandomUuidHex();

// CouchDB's "sequential" uuid algorithm, for generated document ids: 26 hex
// chars of strong randomness, fixed per thread until it wraps, then a 6-hex
// counter that grows by a random step. Ids are unique across processes and
// mostly ascending, so inserts land at the end of ordered indexes instead of
// at random places, and cost no OpenSSL call per id.
std::string SequentialUuidHex();

// Incremental MD5 for data that arrives in pieces.
class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(const Md5&) = delete;
  Md5& operator=(const Md5&) = delete;
  // Starts over, as if newly constructed.
  void Reset();
  void Update(std::string_view data);
  std::string FinishHex();
  std::string FinishRaw();

 private:
  void* ctx_;  // EVP_MD_CTX
};

// Incremental Xxh128Hex for data that arrives in pieces.
class Xxh128 {
 public:
  Xxh128();
  ~Xxh128();
  Xxh128(const Xxh128&) = delete;
  Xxh128& operator=(const Xxh128&) = delete;
  // Starts over, as if newly constructed.
  void Reset();
  void Update(std::string_view data);
  std::string FinishHex();

 private:
  void* state_;  // XXH3_state_t
};

}  // namespace settee
