// Standard base64 encoding (RFC 4648, with padding) at memory speed, for
// attachment bodies read with attachments=true: megabytes per document read,
// where OpenSSL's EVP_EncodeBlock runs at a fraction of that. An AVX2 kernel
// is chosen at run time where the CPU has it; other CPUs (and other
// architectures) use a table-driven scalar loop. Both give the same bytes.
//
// Thread safety: free functions are thread-safe; a Base64Writer is a plain
// single-threaded object.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace settee {

// Characters of the base64 text of `n` bytes.
constexpr size_t Base64Length(size_t n) { return 4 * ((n + 2) / 3); }

// Encodes `in` into `out`, which must have room for Base64Length(in.size())
// chars. Returns one past the last char written.
char* Base64EncodeTo(std::string_view in, char* out);

// Encodes a byte stream that arrives in pieces of any size (a body read a
// chunk at a time) into one buffer, as if it came whole.
class Base64Writer {
 public:
  // `out` must have room for Base64Length(total bytes added).
  explicit Base64Writer(char* out) : out_(out) {}
  void Add(std::string_view bytes);
  // Writes the last group (with its padding). Returns the end of the text.
  char* Finish();

 private:
  char* out_;
  uint8_t carry_[3] = {0, 0, 0};
  size_t carried_ = 0;  // bytes waiting for a full group of 3 (at most 2 between calls)
};

}  // namespace settee
