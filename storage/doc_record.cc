#include "storage/doc_record.h"

#include <algorithm>
#include <cstring>

#include <snappy.h>

#include "util/coding.h"

namespace settee {

namespace {
constexpr uint8_t kDeletedFlag = 1;
constexpr uint8_t kChangeSharedFlag = 2;
constexpr char kChangeBlockMarker = 0;
}  // namespace

Status DecodeDocRecordView(std::string_view in, DocRecordView* out) {
  const uint8_t format = in.empty() ? 0 : static_cast<uint8_t>(in[0]);
  if (in.size() < 2 || (format != kDocRecordFormat && format != kDocRecordFormatSnappyBody)) {
    return Status::Corruption("unknown document record format");
  }
  out->body_compressed = format == kDocRecordFormatSnappyBody;
  out->deleted = (static_cast<uint8_t>(in[1]) & kDeletedFlag) != 0;
  out->change_shared = (static_cast<uint8_t>(in[1]) & kChangeSharedFlag) != 0;
  in.remove_prefix(2);
  if (!coding::GetVarint64(&in, &out->seq) || !coding::GetLengthPrefixed(&in, &out->winner_rev) ||
      !coding::GetLengthPrefixed(&in, &out->stored_body)) {
    return Status::Corruption("truncated document record");
  }
  out->tree_bytes = in;
  return Status::OK();
}

Status DecodeDocRecord(std::string_view bytes, DocRecord* out) {
  DocRecordView view;
  Status s = DecodeDocRecordView(bytes, &view);
  if (!s.ok()) return s;
  out->seq = view.seq;
  out->deleted = view.deleted;
  out->change_shared = view.change_shared;
  out->winner_rev.assign(view.winner_rev);
  if (view.body_compressed) {
    std::string_view body;
    s = view.Body(&out->winner_body, &body);
    if (!s.ok()) return s;
  } else {
    out->winner_body.assign(view.stored_body);
  }
  return RevTree::Decode(view.tree_bytes, &out->tree);
}

Status DocRecordView::Body(std::string* scratch, std::string_view* body) const {
  if (!body_compressed) {
    *body = stored_body;
    return Status::OK();
  }
  Status s = UncompressBody(stored_body, scratch);
  if (!s.ok()) return s;
  *body = *scratch;
  return Status::OK();
}

Status UncompressBody(std::string_view snappy, std::string* out) {
  size_t size = 0;
  // No Snappy element writes more than 64 bytes from 3 (a copy), so a
  // length past 32 times the stored bytes is corrupt: refused before it is
  // allocated.
  if (!snappy::GetUncompressedLength(snappy.data(), snappy.size(), &size) || size > 32 * snappy.size()) {
    return Status::Corruption("bad compressed document body");
  }
  // resize() zero-fills the room only to have it overwritten; for the
  // bodies that get here (16 KiB and up) that costs little beside Snappy.
  out->resize(size);
  if (!snappy::RawUncompress(snappy.data(), snappy.size(), out->data())) {
    out->clear();
    return Status::Corruption("bad compressed document body");
  }
  return Status::OK();
}

bool CompressBody(std::string_view body, std::string* out) {
  if (body.size() < kCompressBodyBytes) return false;
  // Compressed into a buffer the thread keeps (memory already touched; one
  // grown past kKeepScratchBytes is let go after), then copied out at its
  // size.
  constexpr size_t kKeepScratchBytes = 8 << 20;
  thread_local std::string kept;
  const size_t room = snappy::MaxCompressedLength(body.size());
  if (kept.size() < room) kept.resize(room);
  size_t n = 0;
  snappy::RawCompress(body.data(), body.size(), kept.data(), &n);
  const bool worth = n <= body.size() - body.size() / 8;
  if (worth) out->assign(kept.data(), n);
  if (kept.size() > kKeepScratchBytes) std::string().swap(kept);
  return worth;
}

Status ExpandHeldBody(std::string* snappy, std::string* plain) {
  if (snappy->empty()) return Status::OK();
  Status s = UncompressBody(*snappy, plain);
  if (!s.ok()) return s;
  std::string().swap(*snappy);
  return Status::OK();
}

Status ExpandWinnerBody(DocRecord* record) {
  return ExpandHeldBody(&record->winner_body_snappy, &record->winner_body);
}

void EncodeDocRecord(const DocRecord& r, std::string* out) {
  // The fields before the body go through a stack buffer and every part is
  // appended: sizing the string first and writing through a pointer would
  // zero-fill the body's room (std::string::resize) only to overwrite it,
  // which for big bodies cost as much as the copy itself, in page faults.
  std::string_view body = r.winner_body;
  bool compressed = !r.winner_body_snappy.empty();
  std::string snappy;
  if (compressed) {
    body = r.winner_body_snappy;
  } else if (CompressBody(body, &snappy)) {
    body = snappy;
    compressed = true;
  }
  char head[2 + 3 * coding::kMaxVarint64Bytes];
  char* p = head;
  *p++ = static_cast<char>(compressed ? kDocRecordFormatSnappyBody : kDocRecordFormat);
  *p++ = static_cast<char>((r.deleted ? kDeletedFlag : 0) | (r.change_shared ? kChangeSharedFlag : 0));
  p = coding::EncodeVarint64(p, r.seq);
  p = coding::EncodeVarint64(p, r.winner_rev.size());
  out->clear();
  // Roughly 40 bytes per revision node.
  out->reserve(sizeof(head) + r.winner_rev.size() + body.size() + 2 + 40 * r.tree.size());
  out->append(head, p - head);
  out->append(r.winner_rev);
  p = coding::EncodeVarint64(head, body.size());
  out->append(head, p - head);
  out->append(body);
  r.tree.Encode(out);
}

void ChangeBlockBuilder::Add(uint64_t seq, std::string_view docid, bool deleted,
                             std::string_view rev) {
  entries_.push_back({seq, docid, deleted, rev});
}

std::string ChangeBlockBuilder::Finish(const BlockCounters* counters) {
  std::string out;
  if (counters == nullptr && entries_.size() == 1) {
    // A batch of one (most PUTs) keeps the smaller single-entry encoding.
    const ChangeEntry& e = entries_[0];
    out.reserve(e.docid.size() + e.rev.size() + 4);
    coding::PutLengthPrefixed(&out, e.docid);
    out.push_back(static_cast<char>(e.deleted ? kDeletedFlag : 0));
    coding::PutLengthPrefixed(&out, e.rev);
    entries_.clear();
    return out;
  }
  size_t bytes = 8;
  for (const ChangeEntry& e : entries_) bytes += e.docid.size() + e.rev.size() + 8;
  out.reserve(bytes + (counters != nullptr ? 2 + 3 * 5 : 0));
  out.push_back(kChangeBlockMarker);
  if (counters != nullptr) {
    // A count of 0 never starts a block of several: it marks the counted
    // encoding, whose entries follow the counters as a block of several's.
    out.push_back(0);
    coding::PutVarint64(&out, counters->doc_count);
    coding::PutVarint64(&out, counters->doc_del_count);
    coding::PutVarint64(&out, counters->external_size);
  }
  coding::PutVarint64(&out, entries_.size());
  const uint64_t last = entries_.empty() ? 0 : entries_.back().seq;
  for (const ChangeEntry& e : entries_) {
    coding::PutVarint64(&out, last - e.seq);
    coding::PutLengthPrefixed(&out, e.docid);
    out.push_back(static_cast<char>(e.deleted ? kDeletedFlag : 0));
    coding::PutLengthPrefixed(&out, e.rev);
  }
  entries_.clear();
  return out;
}

namespace {

// After the marker byte of a block of several: skips the counted
// encoding's counters (into *counters if not null; *found says whether
// there were any). False if they are truncated.
bool SkipCounters(std::string_view* in, BlockCounters* counters, bool* found) {
  *found = !in->empty() && (*in)[0] == 0;
  if (!*found) return true;
  in->remove_prefix(1);
  BlockCounters c;
  if (!coding::GetVarint64(in, &c.doc_count) || !coding::GetVarint64(in, &c.doc_del_count) ||
      !coding::GetVarint64(in, &c.external_size)) {
    return false;
  }
  if (counters != nullptr) *counters = c;
  return true;
}

bool GetEntryTail(std::string_view* in, ChangeEntry* e) {
  if (!coding::GetLengthPrefixed(in, &e->docid) || e->docid.empty() || in->empty()) return false;
  e->deleted = (static_cast<uint8_t>((*in)[0]) & kDeletedFlag) != 0;
  in->remove_prefix(1);
  return coding::GetLengthPrefixed(in, &e->rev);
}

}  // namespace

Status DecodeChangeBlock(uint64_t key_seq, std::string_view in, std::vector<ChangeEntry>* out,
                         uint64_t min_seq, uint64_t max_seq) {
  out->clear();
  const auto corrupt = [] { return Status::Corruption("bad change block"); };
  if (in.empty()) return corrupt();
  if (in[0] != kChangeBlockMarker) {  // a legacy single entry
    ChangeEntry e;
    e.seq = key_seq;
    if (!GetEntryTail(&in, &e) || !in.empty()) return corrupt();
    if (e.seq >= min_seq && e.seq <= max_seq) out->push_back(e);
    return Status::OK();
  }
  in.remove_prefix(1);
  bool counted;
  if (!SkipCounters(&in, nullptr, &counted)) return corrupt();
  uint64_t count;
  // Each entry takes at least 4 bytes: bound the reservation by the input.
  if (!coding::GetVarint64(&in, &count) || count == 0 || count > in.size() / 4) return corrupt();
  // The block's seqs ascend from 1 up and end at key_seq: those in range
  // are at most this many.
  const uint64_t lo = std::max<uint64_t>(min_seq, 1), hi = std::min(max_seq, key_seq);
  if (hi >= lo) out->reserve(std::min<uint64_t>(count, hi - lo + 1));
  uint64_t previous = 0;
  for (uint64_t i = 0; i < count; ++i) {
    ChangeEntry e;
    uint64_t delta;
    // Sequences start at 1, ascend within the block and end at the key's.
    if (!coding::GetVarint64(&in, &delta) || delta >= key_seq || !GetEntryTail(&in, &e)) {
      return corrupt();
    }
    e.seq = key_seq - delta;
    if (i > 0 && e.seq <= previous) return corrupt();
    if (i + 1 == count && delta != 0) return corrupt();
    if (e.seq > max_seq) return Status::OK();
    previous = e.seq;
    if (e.seq >= min_seq) out->push_back(e);
  }
  if (!in.empty()) return corrupt();
  return Status::OK();
}

Status ChangeBlockSpan(uint64_t key_seq, std::string_view in, uint64_t* count,
                       uint64_t* first_seq) {
  if (in.empty()) return Status::Corruption("bad change block");
  if (in[0] != kChangeBlockMarker) {  // a single entry, at the key's seq
    *count = 1;
    *first_seq = key_seq;
    return Status::OK();
  }
  in.remove_prefix(1);
  bool counted;
  uint64_t delta;
  if (!SkipCounters(&in, nullptr, &counted) || !coding::GetVarint64(&in, count) || *count == 0 || !coding::GetVarint64(&in, &delta) ||
      delta >= key_seq) {
    return Status::Corruption("bad change block");
  }
  *first_seq = key_seq - delta;
  return Status::OK();
}

Status ChangeBlockCountersOf(std::string_view in, BlockCounters* out, bool* found) {
  *found = false;
  if (in.empty()) return Status::Corruption("bad change block");
  if (in[0] != kChangeBlockMarker) return Status::OK();  // a single entry: none
  in.remove_prefix(1);
  if (!SkipCounters(&in, out, found)) return Status::Corruption("bad change block");
  return Status::OK();
}

}  // namespace settee
