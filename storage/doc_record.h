// Binary encodings of the per-document values stored under 'd' and 's' keys
// (storage/keys.h, docs/storage_format.md).
//
// A document record keeps what every read needs first, so that _all_docs,
// _changes and a plain GET decode only a small header:
//
//   u8      format            (kDocRecordFormat)
//   u8      flags             bit 0: the winning revision is deleted
//   varint  seq               sequence of the document's latest change
//   lenpref winner_rev        "N-hash"
//   lenpref winner_body       JSON object without _ members ("" if not stored)
//   ...     revision tree     (storage/rev_tree.h encoding) to the end
//
// A by-sequence entry: lenpref docid | u8 flags (bit 0 deleted) | lenpref rev.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "settee/status.h"
#include "storage/rev_tree.h"

namespace settee {

// DO NOT CHANGE: embedded in stored records. A new layout gets a new number.
constexpr uint8_t kDocRecordFormat = 1;

// A zero-copy view of a record's header; valid while the bytes live.
struct DocRecordView {
  uint64_t seq = 0;
  bool deleted = false;
  std::string_view winner_rev;
  std::string_view winner_body;
  std::string_view tree_bytes;
};

// A decoded record, the unit the writer reads, edits and writes back.
struct DocRecord {
  uint64_t seq = 0;
  bool deleted = false;
  std::string winner_rev;
  std::string winner_body;
  RevTree tree;
};

Status DecodeDocRecordView(std::string_view bytes, DocRecordView* out);
Status DecodeDocRecord(std::string_view bytes, DocRecord* out);
void EncodeDocRecord(const DocRecord& record, std::string* out);

struct SeqEntryView {
  std::string_view docid;
  bool deleted = false;
  std::string_view rev;
};

void EncodeSeqEntry(std::string_view docid, bool deleted, std::string_view rev, std::string* out);
Status DecodeSeqEntry(std::string_view bytes, SeqEntryView* out);

}  // namespace settee
