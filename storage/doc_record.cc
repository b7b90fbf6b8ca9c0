#include "storage/doc_record.h"

#include "util/coding.h"

namespace settee {

namespace {
constexpr uint8_t kDeletedFlag = 1;
}  // namespace

Status DecodeDocRecordView(std::string_view in, DocRecordView* out) {
  if (in.size() < 2 || static_cast<uint8_t>(in[0]) != kDocRecordFormat) {
    return Status::Corruption("unknown document record format");
  }
  out->deleted = (static_cast<uint8_t>(in[1]) & kDeletedFlag) != 0;
  in.remove_prefix(2);
  if (!coding::GetVarint64(&in, &out->seq) || !coding::GetLengthPrefixed(&in, &out->winner_rev) ||
      !coding::GetLengthPrefixed(&in, &out->winner_body)) {
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
  out->winner_rev.assign(view.winner_rev);
  out->winner_body.assign(view.winner_body);
  return RevTree::Decode(view.tree_bytes, &out->tree);
}

void EncodeDocRecord(const DocRecord& r, std::string* out) {
  out->clear();
  // Header, body and roughly 40 bytes per revision node.
  out->reserve(16 + r.winner_rev.size() + r.winner_body.size() + 40 * r.tree.size());
  out->push_back(static_cast<char>(kDocRecordFormat));
  out->push_back(static_cast<char>(r.deleted ? kDeletedFlag : 0));
  coding::PutVarint64(out, r.seq);
  coding::PutLengthPrefixed(out, r.winner_rev);
  coding::PutLengthPrefixed(out, r.winner_body);
  r.tree.Encode(out);
}

void EncodeSeqEntry(std::string_view docid, bool deleted, std::string_view rev, std::string* out) {
  out->clear();
  out->reserve(docid.size() + rev.size() + 4);
  coding::PutLengthPrefixed(out, docid);
  out->push_back(static_cast<char>(deleted ? kDeletedFlag : 0));
  coding::PutLengthPrefixed(out, rev);
}

Status DecodeSeqEntry(std::string_view in, SeqEntryView* out) {
  if (!coding::GetLengthPrefixed(&in, &out->docid) || in.empty()) {
    return Status::Corruption("truncated sequence entry");
  }
  out->deleted = (static_cast<uint8_t>(in[0]) & kDeletedFlag) != 0;
  in.remove_prefix(1);
  if (!coding::GetLengthPrefixed(&in, &out->rev)) {
    return Status::Corruption("truncated sequence entry");
  }
  return Status::OK();
}

}  // namespace settee
