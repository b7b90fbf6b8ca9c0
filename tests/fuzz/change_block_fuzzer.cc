// libFuzzer target: change blocks (storage/doc_record.h).
//
// 1. DecodeChangeBlock on arbitrary bytes, under several key seqs (0, 1, a
//    small one, one from the input, the largest): nothing may crash or read
//    out of bounds (ASan), and whatever decodes must be well formed: entries
//    ascending by seq, all >= 1, the last at the key seq, non-empty ids, every
//    view inside the input. Whatever decodes must also re-encode (builder) and
//    decode to the same entries.
// 2. The input, read as a recipe of entries, goes through ChangeBlockBuilder
//    and must decode back to exactly those entries.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/doc_record.h"

namespace {

using settee::ChangeBlockBuilder;
using settee::ChangeEntry;

[[noreturn]] void Fail(const char* what, std::string_view input) {
  std::fprintf(stderr, "\n*** change_block_fuzzer: %s (input %zu bytes)\n", what, input.size());
  std::abort();
}

bool Inside(std::string_view part, std::string_view whole) {
  return part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size();
}

bool SameEntries(const std::vector<ChangeEntry>& a, const std::vector<ChangeEntry>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].seq != b[i].seq || a[i].docid != b[i].docid || a[i].deleted != b[i].deleted ||
        a[i].rev != b[i].rev) {
      return false;
    }
  }
  return true;
}

void CheckDecode(uint64_t key_seq, std::string_view bytes) {
  // Decode from an exactly sized heap copy so ASan sees any read past the end.
  std::unique_ptr<char[]> copy(new char[bytes.size() ? bytes.size() : 1]);
  if (!bytes.empty()) std::memcpy(copy.get(), bytes.data(), bytes.size());
  std::string_view in(copy.get(), bytes.size());
  settee::BlockCounters stored;
  bool has_counters = false;
  (void)settee::ChangeBlockCountersOf(in, &stored, &has_counters);  // must not crash
  std::vector<ChangeEntry> entries;
  if (!settee::DecodeChangeBlock(key_seq, in, &entries).ok()) return;
  if (entries.empty()) Fail("decoded block is empty", bytes);
  if (entries.back().seq != key_seq) Fail("last entry is not at the key seq", bytes);
  for (size_t i = 0; i < entries.size(); ++i) {
    const ChangeEntry& e = entries[i];
    // Seqs start at 1; only a legacy entry decoded under key 0 (no such key
    // exists in a store) takes the key's 0.
    if (e.seq == 0 && key_seq != 0) Fail("entry with seq 0", bytes);
    if (i > 0 && e.seq <= entries[i - 1].seq) Fail("entries not ascending", bytes);
    if (e.docid.empty()) Fail("entry with an empty docid", bytes);
    if (!Inside(e.docid, in) || !Inside(e.rev, in)) Fail("entry views outside the block", bytes);
  }
  // Re-encode and decode again.
  ChangeBlockBuilder builder;
  for (const ChangeEntry& e : entries) builder.Add(e.seq, e.docid, e.deleted, e.rev);
  if (builder.last_seq() != key_seq) Fail("builder last_seq", bytes);
  std::string block = builder.Finish();
  std::vector<ChangeEntry> again;
  if (!settee::DecodeChangeBlock(key_seq, block, &again).ok()) Fail("re-encoded block does not decode", bytes);
  if (!SameEntries(entries, again)) Fail("re-encoded block decodes differently", bytes);
  // Counted (a batch's last block): the same entries, and its counters back.
  const settee::BlockCounters counters{key_seq, entries.size(), bytes.size()};
  for (const ChangeEntry& e : entries) builder.Add(e.seq, e.docid, e.deleted, e.rev);
  const std::string counted = builder.Finish(&counters);
  settee::BlockCounters read;
  bool found = false;
  if (!settee::ChangeBlockCountersOf(counted, &read, &found).ok() || !found || !(read == counters)) {
    Fail("counted block's counters", bytes);
  }
  if (!settee::DecodeChangeBlock(key_seq, counted, &again).ok() || !SameEntries(entries, again)) {
    Fail("counted block decodes differently", bytes);
  }
}

// Reads a few bytes of the recipe; zeros once it runs out.
struct Reader {
  std::string_view in;
  uint8_t Byte() {
    if (in.empty()) return 0;
    uint8_t b = static_cast<uint8_t>(in[0]);
    in.remove_prefix(1);
    return b;
  }
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      uint8_t b = Byte();
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    return v;
  }
  std::string_view Bytes(size_t n) {
    n = std::min(n, in.size());
    std::string_view out = in.substr(0, n);
    in.remove_prefix(n);
    return out;
  }
};

void CheckBuild(std::string_view recipe) {
  Reader r{recipe};
  size_t count = 1 + r.Byte() % 40;
  uint64_t seq = r.Varint();  // the first entry's seq - 1
  std::vector<std::string> ids, revs;
  std::vector<ChangeEntry> expected;
  ids.reserve(count);
  revs.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t gap = r.Varint();
    if (gap == UINT64_MAX) break;
    const uint64_t step = gap + 1;
    if (seq > UINT64_MAX - step) break;
    seq += step;
    uint8_t shape = r.Byte();
    std::string id(r.Bytes(shape & 0x0f));
    if (id.empty()) id = "d";  // ids are never empty
    if (shape & 0x40) id.append(200, 'x');  // multi-byte varint lengths
    std::string rev(r.Bytes((shape >> 4) & 0x03));
    ids.push_back(std::move(id));
    revs.push_back(std::move(rev));
    expected.push_back({seq, ids.back(), (shape & 0x80) != 0, revs.back()});
  }
  if (expected.empty()) return;
  ChangeBlockBuilder builder;
  for (const ChangeEntry& e : expected) builder.Add(e.seq, e.docid, e.deleted, e.rev);
  const uint64_t key_seq = builder.last_seq();
  if (builder.count() != expected.size() || key_seq != expected.back().seq) Fail("builder counts", recipe);
  std::string block = builder.Finish();
  if (builder.count() != 0) Fail("builder not left empty", recipe);
  std::vector<ChangeEntry> decoded;
  if (!settee::DecodeChangeBlock(key_seq, block, &decoded).ok()) Fail("built block does not decode", recipe);
  if (!SameEntries(expected, decoded)) Fail("built block decodes differently", recipe);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  uint64_t from_input = 0;
  if (size >= 8) std::memcpy(&from_input, data + size - 8, 8);
  for (uint64_t key_seq : {uint64_t{0}, uint64_t{1}, uint64_t{7}, uint64_t{1000}, from_input,
                           from_input >> 40, UINT64_MAX}) {
    CheckDecode(key_seq, in);
  }
  CheckBuild(in);
  return 0;
}
