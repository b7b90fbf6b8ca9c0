#include "util/base64.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace settee {

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Two output chars per 12 input bits: one table load per half of a group.
struct PairTable {
  uint16_t pairs[4096];
  constexpr PairTable() : pairs() {
    for (int i = 0; i < 4096; ++i) {
      // Little-endian: the first char in the low byte.
      pairs[i] = static_cast<uint16_t>(static_cast<uint8_t>(kAlphabet[i >> 6]) |
                                       (static_cast<uint8_t>(kAlphabet[i & 63]) << 8));
    }
  }
};
constexpr PairTable kPairs;

// Whole groups of 3 bytes; `n` must be a multiple of 3.
char* EncodeGroupsScalar(const uint8_t* in, size_t n, char* out) {
  size_t i = 0;
  // Six bytes per step through one 8-byte load (while 8 can be read).
  for (; i + 8 <= n; i += 6) {
    uint64_t w;
    std::memcpy(&w, in + i, 8);
    w = __builtin_bswap64(w);
    const uint16_t a = kPairs.pairs[(w >> 52) & 0xfff], b = kPairs.pairs[(w >> 40) & 0xfff],
                   c = kPairs.pairs[(w >> 28) & 0xfff], d = kPairs.pairs[(w >> 16) & 0xfff];
    std::memcpy(out, &a, 2);
    std::memcpy(out + 2, &b, 2);
    std::memcpy(out + 4, &c, 2);
    std::memcpy(out + 6, &d, 2);
    out += 8;
  }
  for (; i < n; i += 3) {
    const uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    const uint16_t a = kPairs.pairs[v >> 12], b = kPairs.pairs[v & 0xfff];
    std::memcpy(out, &a, 2);
    std::memcpy(out + 2, &b, 2);
    out += 4;
  }
  return out;
}

#if defined(__x86_64__)
// Muła and Lemire, "Faster Base64 Encoding and Decoding Using AVX2
// Instructions" (2018): 24 bytes in, 32 chars out per step.
__attribute__((target("avx2"))) char* EncodeGroupsAvx2(const uint8_t* in, size_t n, char* out) {
  // Each 32-bit lane gets bytes [b1, b0, b2, b1] of its group of three.
  const __m256i shuffle = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,  //
                                           1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  // Offsets from a 6-bit value to its char, by class (A-Z, a-z, 0-9, +, /).
  const __m256i offsets = _mm256_setr_epi8(65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19,
                                           -16, 0, 0,  //
                                           65, 71, -4, -4, -4, -4, -4, -4, -4, -4, -4, -4, -19,
                                           -16, 0, 0);
  size_t i = 0;
  // The second 16-byte load reads 4 bytes past the 24 used.
  for (; i + 28 <= n; i += 24) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 12));
    __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
    v = _mm256_shuffle_epi8(v, shuffle);
    // The four 6-bit fields of each lane into its four bytes, in order.
    const __m256i t0 = _mm256_and_si256(v, _mm256_set1_epi32(0x0fc0fc00));
    const __m256i t1 = _mm256_mulhi_epu16(t0, _mm256_set1_epi32(0x04000040));
    const __m256i t2 = _mm256_and_si256(v, _mm256_set1_epi32(0x003f03f0));
    const __m256i t3 = _mm256_mullo_epi16(t2, _mm256_set1_epi32(0x01000010));
    const __m256i sextets = _mm256_or_si256(t1, t3);
    __m256i cls = _mm256_subs_epu8(sextets, _mm256_set1_epi8(51));
    cls = _mm256_sub_epi8(cls, _mm256_cmpgt_epi8(sextets, _mm256_set1_epi8(25)));
    const __m256i chars = _mm256_add_epi8(sextets, _mm256_shuffle_epi8(offsets, cls));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), chars);
    out += 32;
  }
  return EncodeGroupsScalar(in + i, n - i, out);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

char* EncodeGroups(const uint8_t* in, size_t n, char* out) {
#if defined(__x86_64__)
  if (HasAvx2()) return EncodeGroupsAvx2(in, n, out);
#endif
  return EncodeGroupsScalar(in, n, out);
}

// The last 1 or 2 bytes, padded.
char* EncodeTail(const uint8_t* in, size_t n, char* out) {
  if (n == 0) return out;
  const uint32_t v = (uint32_t{in[0]} << 16) | (n == 2 ? uint32_t{in[1]} << 8 : 0);
  out[0] = kAlphabet[v >> 18];
  out[1] = kAlphabet[(v >> 12) & 63];
  out[2] = n == 2 ? kAlphabet[(v >> 6) & 63] : '=';
  out[3] = '=';
  return out + 4;
}

}  // namespace

char* Base64EncodeTo(std::string_view in, char* out) {
  const auto* p = reinterpret_cast<const uint8_t*>(in.data());
  const size_t whole = in.size() - in.size() % 3;
  out = EncodeGroups(p, whole, out);
  return EncodeTail(p + whole, in.size() - whole, out);
}

void Base64Writer::Add(std::string_view bytes) {
  const auto* p = reinterpret_cast<const uint8_t*>(bytes.data());
  size_t n = bytes.size();
  // Complete the group the previous piece left open.
  while (carried_ > 0 && n > 0) {
    carry_[carried_++] = *p++;
    --n;
    if (carried_ == 3) {
      out_ = EncodeGroupsScalar(carry_, 3, out_);
      carried_ = 0;
    }
  }
  const size_t whole = n - n % 3;
  out_ = EncodeGroups(p, whole, out_);
  for (size_t i = whole; i < n; ++i) carry_[carried_++] = p[i];
}

char* Base64Writer::Finish() {
  out_ = EncodeTail(carry_, carried_, out_);
  carried_ = 0;
  return out_;
}

}  // namespace settee
