// Byte encodings used in storage keys and records.
//
// Big-endian fixed-width integers sort bytewise in numeric order, so they are
// used inside keys (sequence numbers). Varints (LEB128, as LevelDB) are used
// inside values, where order does not matter and size does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace settee::coding {

inline void PutFixed64BE(std::string* dst, uint64_t v) {
  char buf[8];
  for (int i = 7; i >= 0; --i) {
    buf[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  dst->append(buf, 8);
}

inline void PutFixed32BE(std::string* dst, uint32_t v) {
  const char buf[4] = {static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  dst->append(buf, 4);
}

// REQUIRES: src.size() >= 8
inline uint64_t DecodeFixed64BE(std::string_view src) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(src[i]);
  return v;
}

// The longest varint64.
constexpr size_t kMaxVarint64Bytes = 10;

// Writes `v` as a varint at `dst` (room for kMaxVarint64Bytes); returns the
// end of what it wrote.
inline char* EncodeVarint64(char* dst, uint64_t v) {
  while (v >= 0x80) {
    *dst++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<char>(v);
  return dst;
}

inline void PutVarint64(std::string* dst, uint64_t v) {
  char buf[kMaxVarint64Bytes];
  dst->append(buf, EncodeVarint64(buf, v) - buf);
}

// Reads a varint from the front of *in and advances it. False if malformed.
inline bool GetVarint64(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    uint64_t byte = static_cast<unsigned char>((*in)[0]);
    in->remove_prefix(1);
    result |= (byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *v = result;
      return true;
    }
  }
  return false;
}

// A varint length followed by the bytes.
inline void PutLengthPrefixed(std::string* dst, std::string_view s) {
  PutVarint64(dst, s.size());
  dst->append(s);
}

inline bool GetLengthPrefixed(std::string_view* in, std::string_view* out) {
  uint64_t len;
  if (!GetVarint64(in, &len) || len > in->size()) return false;
  *out = in->substr(0, len);
  in->remove_prefix(len);
  return true;
}

}  // namespace settee::coding
