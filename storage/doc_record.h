// Binary encodings of the per-document values stored under 'd' and 's' keys
// (storage/keys.h, docs/storage_format.md).
//
// A document record keeps what every read needs first, so that _all_docs,
// _changes and a plain GET decode only a small header:
//
//   u8      format            (kDocRecordFormat)
//   u8      flags             bit 0: the winning revision is deleted
//                             bit 1: the change at `seq` shares its change block
//   varint  seq               sequence of the document's latest change
//   lenpref winner_rev        "N-hash"
//   lenpref winner_body       JSON object without _ members ("" if not stored)
//   ...     revision tree     (storage/rev_tree.h encoding) to the end
//
// Format 2 is format 1 with winner_body Snappy-compressed (Snappy's own
// header carries the uncompressed length). Bodies from kCompressBodyBytes up
// are written so when that saves at least an eighth: a big body then costs
// its compressed size in every copy a write makes before it is stored (on
// LevelDB the write batch, the log record and the memtable each held all of
// a 40 MB batch of big documents) and in what a read copies out of the store.
//
// A change block (the 's' value): the by-sequence entries one write batch
// committed, keyed by the seq of its last entry, so that a seek to seq+1
// lands on the block holding the first change after seq:
//
//   u8      marker = 0        (a legacy single entry starts with its docid's
//                             length, never 0)
//   varint  count
//   count x { varint last_seq - seq | lenpref docid | u8 flags (bit 0 deleted)
//             | lenpref rev }, ascending by seq
//
// Stores written before change blocks hold one legacy entry per key:
// lenpref docid | u8 flags | lenpref rev, whose seq is the key's. Both decode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "settee/status.h"
#include "storage/rev_tree.h"

namespace settee {

// DO NOT CHANGE: embedded in stored records. A new layout gets a new number.
constexpr uint8_t kDocRecordFormat = 1;
constexpr uint8_t kDocRecordFormatSnappyBody = 2;

// Bodies from this size up are stored compressed (when that saves an eighth).
constexpr size_t kCompressBodyBytes = 16 << 10;

// A zero-copy view of a record's header; valid while the bytes live. The
// body is left as stored, so that readers of the header alone (_all_docs,
// _changes) never uncompress it: read it through Body().
struct DocRecordView {
  uint64_t seq = 0;
  bool deleted = false;
  bool change_shared = false;
  bool body_compressed = false;  // stored_body holds Snappy's bytes
  std::string_view winner_rev;
  std::string_view stored_body;
  std::string_view tree_bytes;

  // The winner's JSON body: stored_body itself, or uncompressed into
  // *scratch (which *body then views). kCorruption if it does not
  // uncompress.
  Status Body(std::string* scratch, std::string_view* body) const;
};

// A decoded record, the unit the writer reads, edits and writes back.
struct DocRecord {
  uint64_t seq = 0;
  bool deleted = false;
  // The change at `seq` sits in a block with other documents' changes, so
  // superseding it takes an obsolete marker ('o' key) rather than deleting
  // the block's key (docs/storage_format.md).
  bool change_shared = false;
  std::string winner_rev;
  std::string winner_body;
  // The writer's alternative to winner_body for a new big document whose
  // body arrived compressed (IncomingDoc::snappy_body): Snappy's bytes of
  // the body, winner_body then empty, written to the record as they are.
  // Never set on a record read back; ExpandWinnerBody() undoes it.
  std::string winner_body_snappy;
  RevTree tree;
};

// Snappy's bytes of `body` into *out, if it is kCompressBodyBytes or more
// and that saves at least an eighth; false (and *out untouched) otherwise.
bool CompressBody(std::string_view body, std::string* out);
// The inverse: kCorruption for bytes that do not uncompress.
Status UncompressBody(std::string_view snappy, std::string* out);
// Moves a body held compressed in *snappy back into *plain and frees
// *snappy's memory; nothing when *snappy is empty.
Status ExpandHeldBody(std::string* snappy, std::string* plain);
// Moves a held compressed body back into winner_body.
Status ExpandWinnerBody(DocRecord* record);

Status DecodeDocRecordView(std::string_view bytes, DocRecordView* out);
Status DecodeDocRecord(std::string_view bytes, DocRecord* out);
void EncodeDocRecord(const DocRecord& record, std::string* out);

// One change of a block; views into the block's bytes.
struct ChangeEntry {
  uint64_t seq = 0;
  std::string_view docid;
  bool deleted = false;
  std::string_view rev;
};

// The most changes one block holds: a write batch of more is stored as
// several blocks (docs/storage_format.md), so that reading a few seqs reads
// a few KiB, not a whole bulk write's block.
constexpr size_t kChangeBlockEntries = 128;

// The database's counters as they are after the write batch whose last
// block carries them (its update_seq is the block's key seq). A batch
// stores them in its block instead of rewriting a counters key of its own
// (docs/storage_format.md, "Change block"), so the newest block of a
// database always holds its current counters.
struct BlockCounters {
  uint64_t doc_count = 0;
  uint64_t doc_del_count = 0;
  uint64_t external_size = 0;
  bool operator==(const BlockCounters&) const = default;
};

// Builds one change block. Add entries in ascending seq order.
class ChangeBlockBuilder {
 public:
  void Add(uint64_t seq, std::string_view docid, bool deleted, std::string_view rev);
  size_t count() const { return entries_.size(); }
  // REQUIRES: count() > 0. The block's key seq.
  uint64_t last_seq() const { return entries_.back().seq; }
  // The encoded block; the builder is left empty. With `counters` the block
  // carries them (the counted encoding), else it has one of the encodings
  // that carry none.
  std::string Finish(const BlockCounters* counters = nullptr);

 private:
  std::vector<ChangeEntry> entries_;  // views into the caller's strings
};

// Decodes the block stored under `key_seq` (either encoding) into `out`,
// ascending by seq. The entries view `bytes`. Only the entries with seqs in
// [min_seq, max_seq] are kept, and those past max_seq are neither read nor
// checked: a reader of a few seqs of a big block (one bulk write's, read a
// share at a time by an index update) does not build the whole block's
// entries for each share.
Status DecodeChangeBlock(uint64_t key_seq, std::string_view bytes, std::vector<ChangeEntry>* out,
                         uint64_t min_seq = 0, uint64_t max_seq = UINT64_MAX);

// The counters a block carries (*found false: it has an encoding that
// carries none). Reads the head alone.
Status ChangeBlockCountersOf(std::string_view bytes, BlockCounters* out, bool* found);

// How many entries the block stored under `key_seq` holds and the seq of its
// first, read from its head alone (for counting changes without decoding
// them). A corrupt head gives kCorruption.
Status ChangeBlockSpan(uint64_t key_seq, std::string_view bytes, uint64_t* count,
                       uint64_t* first_seq);

}  // namespace settee
