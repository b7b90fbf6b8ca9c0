// Eight bytes of JSON text at a time: the word tests behind json::FirstEscape
// and js/doc_shapes' string scan, kept apart from util/json.h so the scanners
// share them without every includer of json.h seeing them.
#pragma once

#include <cstdint>

namespace settee::json::scan {

inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighBits = 0x8080808080808080ULL;

// The high bit of every byte of `w` that ends a JSON string's plain run: '"',
// '\\' or a control character (below 0x20, allowed in a string only escaped).
// Zero exactly when `w` has none. A borrow runs only upwards, so the mark of
// the lowest such byte is exact and bytes above it may be marked falsely;
// which byte is lowest depends on how `w` was loaded (memcpy: the first byte
// of the text is the lowest on a little-endian machine).
inline uint64_t StringStops(uint64_t w) {
  const uint64_t quote = w ^ (kOnes * '"');
  const uint64_t backslash = w ^ (kOnes * '\\');
  return (((quote - kOnes) & ~quote) | ((backslash - kOnes) & ~backslash) | ((w - kOnes * 0x20) & ~w)) &
         kHighBits;
}

}  // namespace settee::json::scan
