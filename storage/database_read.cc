// DatabaseImpl, reading: Get, open_revs, _all_docs, _changes, _revs_diff,
// _bulk_get. Readers never take the writer lock; whenever one answer needs
// more than one key they read through a snapshot.
#include <algorithm>
#include <unordered_set>

#include "storage/database_impl.h"
#include "storage/store_impl.h"
#include "util/coding.h"
#include "util/couch_json.h"
#include "util/json.h"

namespace settee {

namespace {

using couch_json::OpenDocJson;

void AppendRevList(std::string* out, std::string_view name, const RevTree& tree,
                   const std::vector<int>& indices) {
  out->append(",\"");
  out->append(name);
  out->append("\":[");
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) out->push_back(',');
    json::AppendQuoted(out, tree.RevString(indices[i]));
  }
  out->push_back(']');
}

struct KeyRange {
  std::string lower;  // inclusive
  std::string upper;  // exclusive
};

}  // namespace

//////// Single documents

Status DatabaseImpl::ReadRecord(const KVReadOptions& ro, std::string_view docid,
                                DocRecord* record) {
  std::string bytes;
  Status s = kv_->Get(ro, keys_.Doc(docid), &bytes);
  if (!s.ok()) return s;
  return DecodeDocRecord(bytes, record);
}

Status DatabaseImpl::ReadBody(const KVReadOptions& ro, std::string_view docid,
                              const DocRecord& record, int index, std::string* body) {
  if (index == record.tree.Winner()) {
    *body = record.winner_body;
    return Status::OK();
  }
  if (!record.tree.node(index).has_body) return Status::NotFound("missing");
  return kv_->Get(ro, keys_.RevBody(docid, record.tree.RevString(index)), body);
}

std::string DatabaseImpl::RevisionJson(std::string_view docid, const DocRecord& record, int index,
                                       std::string_view body, const GetOptions& options) const {
  const RevTree& tree = record.tree;
  const RevTree::Node& node = tree.node(index);
  std::string out;
  OpenDocJson(&out, docid, tree.RevString(index), node.deleted, body);
  if (options.revs) {
    out.append(",\"_revisions\":{\"start\":");
    out.append(std::to_string(node.gen));
    out.append(",\"ids\":[");
    bool first = true;
    for (int i : tree.Ancestry(index)) {
      if (!first) out.push_back(',');
      first = false;
      json::AppendQuoted(&out, tree.node(i).hash);
    }
    out.append("]}");
  }
  if (options.revs_info) {
    out.append(",\"_revs_info\":[");
    bool first = true;
    for (int i : tree.Ancestry(index)) {
      if (!first) out.push_back(',');
      first = false;
      out.append("{\"rev\":");
      json::AppendQuoted(&out, tree.RevString(i));
      const RevTree::Node& n = tree.node(i);
      out.append(n.deleted ? ",\"status\":\"deleted\"}"
                           : n.has_body ? ",\"status\":\"available\"}" : ",\"status\":\"missing\"}");
    }
    out.push_back(']');
  }
  if (options.conflicts || options.deleted_conflicts) {
    std::vector<int> live, dead;
    for (int leaf : tree.Leaves()) {
      if (leaf == index) continue;
      (tree.node(leaf).deleted ? dead : live).push_back(leaf);
    }
    if (options.conflicts && !live.empty()) AppendRevList(&out, "_conflicts", tree, live);
    if (options.deleted_conflicts && !dead.empty()) {
      AppendRevList(&out, "_deleted_conflicts", tree, dead);
    }
  }
  if (options.local_seq) {
    out.append(",\"_local_seq\":");
    out.append(std::to_string(record.seq));
  }
  out.push_back('}');
  return out;
}

Result<std::string> DatabaseImpl::GetLocal(std::string_view docid) {
  std::string value;
  Status s = kv_->Get(KVReadOptions(), keys_.Local(docid.substr(kLocalPrefix.size())), &value);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  std::string_view in(value);
  uint64_t n;
  if (!coding::GetVarint64(&in, &n)) return Status::Corruption("bad local document");
  std::string out;
  OpenDocJson(&out, docid, "0-" + std::to_string(n), false, in);
  out.push_back('}');
  return out;
}

Status DatabaseImpl::WinnerJson(const KVReadOptions& ro, std::string_view docid,
                                const DocRecord& record, const GetOptions& options,
                                std::string* out) {
  const int winner = record.tree.Winner();
  if (!options.attachments && !options.att_encoding_info) {
    *out = RevisionJson(docid, record, winner, record.winner_body, options);
    return Status::OK();
  }
  std::string body = record.winner_body;
  Status s = ExpandAttachments(ro, record, winner, options, &body);
  if (!s.ok()) return s;
  *out = RevisionJson(docid, record, winner, body, options);
  return Status::OK();
}

Status DatabaseImpl::LocateRevision(const KVReadOptions& ro, std::string_view docid,
                                    const GetOptions& options, DocRecord* record, int* index) {
  // A malformed rev is the request's fault whether or not the doc exists
  // (CouchDB parses the query before it opens the doc).
  RevId rev;
  if (!options.rev.empty() && !RevId::Parse(options.rev, &rev)) return Status::BadRequest("Invalid rev format");
  Status s = ReadRecord(ro, docid, record);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  if (options.rev.empty()) {
    if (record->deleted) return Status::NotFound("deleted");
    *index = record->tree.Winner();
    return Status::OK();
  }
  *index = record->tree.Find(rev);
  if (*index == RevTree::kNone) return Status::NotFound("missing");
  if (options.latest) *index = record->tree.LeavesUnder(*index).front();
  return Status::OK();
}

Result<std::string> DatabaseImpl::Get(std::string_view docid, const GetOptions& options) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  if (IsLocalDocId(docid)) return GetLocal(docid);
  const bool plain = options.rev.empty() && !options.revs && !options.revs_info &&
                     !options.conflicts && !options.deleted_conflicts && !options.local_seq &&
                     !options.attachments && !options.att_encoding_info;
  if (plain) {
    // The common case reads one key and decodes only the record header.
    WinnerBuffers buffers;
    std::string_view rev, body;
    s = GetWinner(docid, &buffers, &rev, &body);
    if (!s.ok()) return s;
    std::string out;
    OpenDocJson(&out, docid, rev, false, body);
    out.push_back('}');
    return out;
  }

  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  DocRecord record;
  int index;
  s = LocateRevision(ro, docid, options, &record, &index);
  if (!s.ok()) return s;
  std::string body;
  s = ReadBody(ro, docid, record, index, &body);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  if (options.attachments || options.att_encoding_info) {
    s = ExpandAttachments(ro, record, index, options, &body);
    if (!s.ok()) return s;
  }
  return RevisionJson(docid, record, index, body, options);
}

Status DatabaseImpl::GetWinner(std::string_view docid, WinnerBuffers* buffers, std::string_view* rev,
                               std::string_view* body) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  if (IsLocalDocId(docid)) return Status(Status::Code::kInvalidOperation, "GetWinner takes no _local id");
  // One key read; only the record header decoded (Get()'s plain path).
  keys_.DocInto(docid, &buffers->key);
  s = kv_->Get(KVReadOptions(), buffers->key, &buffers->record);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  DocRecordView view;
  s = DecodeDocRecordView(buffers->record, &view);
  if (!s.ok()) return s;
  if (view.deleted) return Status::NotFound("deleted");
  s = view.Body(&buffers->body, body);
  if (!s.ok()) return s;
  *rev = view.winner_rev;
  return Status::OK();
}

Status DatabaseImpl::GetOpenRevs(std::string_view docid, const std::vector<std::string>& revs,
                                 const GetOptions& options, std::vector<OpenRevResult>* out) {
  out->clear();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  for (const std::string& text : revs) {
    RevId rev;
    if (!RevId::Parse(text, &rev)) return Status::BadRequest("Invalid rev format");
  }
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  DocRecord record;
  s = ReadRecord(ro, docid, &record);
  if (s.IsNotFound()) {
    if (revs.empty()) return Status::NotFound("missing");
    for (const std::string& rev : revs) out->push_back(OpenRevResult{rev, false, {}});
    return Status::OK();
  }
  if (!s.ok()) return s;
  return OpenRevsOf(ro, docid, record, revs, options, out);
}

Status DatabaseImpl::OpenRevsOf(const KVReadOptions& ro, std::string_view docid,
                                const DocRecord& record, const std::vector<std::string>& revs,
                                const GetOptions& options, std::vector<OpenRevResult>* out) {
  Status s;
  auto emit = [&](int index) -> Status {
    std::string rev = record.tree.RevString(index);
    for (const OpenRevResult& r : *out) {
      if (r.found && r.rev == rev) return Status::OK();  // `latest` can reach a leaf twice
    }
    std::string body;
    Status st = ReadBody(ro, docid, record, index, &body);
    if (st.IsNotFound()) {
      out->push_back(OpenRevResult{std::move(rev), false, {}});
      return Status::OK();
    }
    if (!st.ok()) return st;
    if (options.attachments || options.att_encoding_info) {
      st = ExpandAttachments(ro, record, index, options, &body);
      if (!st.ok()) return st;
    }
    out->push_back(OpenRevResult{rev, true, RevisionJson(docid, record, index, body, options)});
    return Status::OK();
  };

  if (revs.empty()) {
    for (int leaf : record.tree.Leaves()) {
      s = emit(leaf);
      if (!s.ok()) return s;
    }
    return Status::OK();
  }
  for (const std::string& text : revs) {
    RevId rev;
    int index = RevId::Parse(text, &rev) ? record.tree.Find(rev) : RevTree::kNone;
    if (index == RevTree::kNone) {
      out->push_back(OpenRevResult{text, false, {}});
      continue;
    }
    if (options.latest) {
      for (int leaf : record.tree.LeavesUnder(index)) {
        s = emit(leaf);
        if (!s.ok()) return s;
      }
    } else {
      s = emit(index);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

//////// _all_docs and _local_docs

Status DatabaseImpl::AllDocs(const AllDocsOptions& options, AllDocsResult* out) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  *out = AllDocsResult();
  out->total_rows = doc_count_.load(std::memory_order_relaxed);
  out->update_seq = UpdateSeq();
  out->offset = options.skip;
  if (options.keys) return AllDocsByKeys(options, out);
  return AllDocsRows(options, out);
}

Status DatabaseImpl::AllDocsRows(const AllDocsOptions& options, AllDocsResult* out) {
  const std::string kind = keys_.KindPrefix(keys::kDocKind);
  KeyRange range{kind, keys::PrefixEnd(kind)};
  auto after = [](std::string key) {
    key.push_back('\0');
    return key;
  };
  const auto& lo_key = options.descending ? options.end_key : options.start_key;
  const auto& hi_key = options.descending ? options.start_key : options.end_key;
  // An inverted range holds no rows. CouchDB 3 runs only validate_args/1
  // for _all_docs (couch_mrview:query_all_docs); the "No rows can match your
  // key range" query_parse_error of check_range is for views alone.
  if (options.start_key && options.end_key &&
      (options.descending ? *options.start_key < *options.end_key
                          : *options.start_key > *options.end_key)) {
    return Status::OK();
  }
  // inclusive_end applies to end_key, whichever side of the range it bounds.
  if (lo_key) {
    bool exclusive = options.descending && !options.inclusive_end;
    range.lower = exclusive ? after(keys_.Doc(*lo_key)) : keys_.Doc(*lo_key);
  }
  if (hi_key) {
    bool exclusive = !options.descending && !options.inclusive_end;
    range.upper = exclusive ? keys_.Doc(*hi_key) : after(keys_.Doc(*hi_key));
  }

  auto snapshot = kv_->GetSnapshot();
  KVIteratorOptions io;
  io.snapshot = snapshot.get();
  io.lower_bound = range.lower;
  io.upper_bound = range.upper;
  auto it = kv_->NewIterator(io);
  uint64_t skip = options.skip;
  GetOptions doc_options;
  doc_options.conflicts = options.conflicts;
  doc_options.attachments = options.attachments;
  doc_options.att_encoding_info = options.att_encoding_info;
  const KVReadOptions ro{snapshot.get()};
  std::string body_scratch;
  for (options.descending ? it->SeekToLast() : it->SeekToFirst();
       it->Valid() && out->rows.size() < options.limit;
       options.descending ? it->Prev() : it->Next()) {
    DocRecordView view;
    Status s = DecodeDocRecordView(it->value(), &view);
    if (!s.ok()) return s;
    if (view.deleted) continue;
    if (skip > 0) {
      --skip;
      continue;
    }
    AllDocsRow& row = out->rows.emplace_back();
    row.id.assign(keys_.Suffix(it->key()));
    row.rev.assign(view.winner_rev);
    if (options.include_docs) {
      if (options.conflicts || options.attachments || options.att_encoding_info) {
        DocRecord record;
        s = DecodeDocRecord(it->value(), &record);
        if (!s.ok()) return s;
        s = WinnerJson(ro, row.id, record, doc_options, &row.doc);
        if (!s.ok()) return s;
      } else {
        std::string_view body;
        s = view.Body(&body_scratch, &body);
        if (!s.ok()) return s;
        OpenDocJson(&row.doc, row.id, view.winner_rev, false, body);
        row.doc.push_back('}');
      }
    }
  }
  return it->status();
}

namespace {
Status MarkNotFound(AllDocsRow& row) {
  row.error = Status::NotFound("not_found");
  return Status::OK();
}
}  // namespace

// The walk `keys` queries share: request order (reversed when descending),
// skip and limit, a row per key. A key that is not a string names nothing; a
// string key's row gets its id and is filled by `fill` (which marks an unknown
// id a not_found row; any error it returns ends the query).
Status DatabaseImpl::ForEachRequestedKey(
    const AllDocsOptions& options, AllDocsResult* out,
    const std::function<Status(const std::string& id, AllDocsRow& row)>& fill) {
  uint64_t skip = options.skip;
  const std::vector<AllDocsKey>& keys = *options.keys;
  for (size_t n = 0; n < keys.size() && out->rows.size() < options.limit; ++n) {
    const AllDocsKey& key = keys[options.descending ? keys.size() - 1 - n : n];
    if (skip > 0) {
      --skip;
      continue;
    }
    AllDocsRow& row = out->rows.emplace_back();
    if (!key.is_string) {
      row.key_json = key.text;  // the row gives the key back as sent
      row.error = Status::NotFound("not_found");
      continue;
    }
    row.id = key.text;
    Status s = fill(row.id, row);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

Status DatabaseImpl::AllDocsByKeys(const AllDocsOptions& options, AllDocsResult* out) {
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  GetOptions doc_options;
  doc_options.conflicts = options.conflicts;
  doc_options.attachments = options.attachments;
  doc_options.att_encoding_info = options.att_encoding_info;
  return ForEachRequestedKey(options, out, [&](const std::string& id, AllDocsRow& row) {
    DocRecord record;
    Status s = ReadRecord(ro, id, &record);
    if (s.IsNotFound()) return MarkNotFound(row);
    if (!s.ok()) return s;
    row.rev = record.winner_rev;
    row.deleted = record.deleted;
    if (options.include_docs) {
      if (record.deleted) {
        row.doc = "null";
      } else {
        return WinnerJson(ro, id, record, doc_options, &row.doc);
      }
    }
    return Status::OK();
  });
}

Status DatabaseImpl::LocalDocs(const AllDocsOptions& options, AllDocsResult* out) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  *out = AllDocsResult();
  out->update_seq = UpdateSeq();
  out->offset = options.skip;
  auto strip = [](const std::string& id) {
    return IsLocalDocId(id) ? id.substr(kLocalPrefix.size()) : id;
  };
  if (options.keys) return LocalDocsByKeys(options, out);
  if (options.start_key && options.end_key &&
      (options.descending ? *options.start_key < *options.end_key
                          : *options.start_key > *options.end_key)) {
    return Status::OK();  // an inverted range, as in AllDocsRows
  }
  const std::string kind = keys_.KindPrefix(keys::kLocalKind);
  KVIteratorOptions io;
  io.lower_bound = kind;
  io.upper_bound = keys::PrefixEnd(kind);
  const auto& lo_key = options.descending ? options.end_key : options.start_key;
  const auto& hi_key = options.descending ? options.start_key : options.end_key;
  if (lo_key) {
    io.lower_bound = keys_.Local(strip(*lo_key));
    if (options.descending && !options.inclusive_end) io.lower_bound.push_back('\0');
  }
  if (hi_key) {
    io.upper_bound = keys_.Local(strip(*hi_key));
    if (options.descending || options.inclusive_end) io.upper_bound.push_back('\0');
  }
  auto it = kv_->NewIterator(io);
  uint64_t skip = options.skip;
  for (options.descending ? it->SeekToLast() : it->SeekToFirst();
       it->Valid() && out->rows.size() < options.limit;
       options.descending ? it->Prev() : it->Next()) {
    if (skip > 0) {
      --skip;
      continue;
    }
    std::string_view value = it->value();
    uint64_t n;
    if (!coding::GetVarint64(&value, &n)) return Status::Corruption("bad local document");
    AllDocsRow& row = out->rows.emplace_back();
    row.id = std::string(kLocalPrefix) + std::string(keys_.Suffix(it->key()));
    row.rev = "0-" + std::to_string(n);
    if (options.include_docs) {
      OpenDocJson(&row.doc, row.id, row.rev, false, value);
      row.doc.push_back('}');
    }
  }
  out->total_rows = out->rows.size();
  return it->status();
}

// CouchDB folds each requested key as a one-key range of the _local
// namespace, so keys come back in request order and an unknown (or non-local)
// key is a not_found row, as with _all_docs.
Status DatabaseImpl::LocalDocsByKeys(const AllDocsOptions& options, AllDocsResult* out) {
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  Status s = ForEachRequestedKey(options, out, [&](const std::string& id, AllDocsRow& row) {
    if (!IsLocalDocId(id)) return MarkNotFound(row);
    std::string value;
    Status s = kv_->Get(ro, keys_.Local(std::string_view(id).substr(kLocalPrefix.size())), &value);
    if (s.IsNotFound()) return MarkNotFound(row);
    if (!s.ok()) return s;
    std::string_view body(value);
    uint64_t version;
    if (!coding::GetVarint64(&body, &version)) return Status::Corruption("bad local document");
    row.rev = "0-" + std::to_string(version);
    if (options.include_docs) {
      OpenDocJson(&row.doc, row.id, row.rev, false, body);
      row.doc.push_back('}');
    }
    return Status::OK();
  });
  out->total_rows = out->rows.size();
  return s;
}

//////// _changes

Status DatabaseImpl::Changes(const ChangesOptions& options,
                             const std::function<bool(const ChangeRow&)>& each,
                             uint64_t* last_seq) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  Counters counters;
  s = ReadCounters(snapshot.get(), &counters);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("Database does not exist.") : s;
  const uint64_t end_seq = counters.update_seq;

  std::unordered_set<std::string_view> wanted;
  if (options.doc_ids) wanted.insert(options.doc_ids->begin(), options.doc_ids->end());

  // Change blocks in seq order, and beside them the markers of superseded
  // changes, walked in step (docs/storage_format.md).
  const bool all = options.since == UINT64_MAX;
  // The keys of a seq-keyed kind after `since`.
  auto after_since = [&](char kind) {
    KVIteratorOptions io;
    io.snapshot = snapshot.get();
    io.upper_bound = keys::PrefixEnd(keys_.KindPrefix(kind));
    io.lower_bound = all ? io.upper_bound : keys_.KindSeq(kind, options.since + 1);
    return kv_->NewIterator(io);
  };
  auto it = after_since(keys::kSeqKind);
  auto markers = after_since(keys::kObsoleteKind);
  const bool desc = options.descending;
  desc ? markers->SeekToLast() : markers->SeekToFirst();
  auto superseded = [&](uint64_t seq) {
    for (; markers->Valid(); desc ? markers->Prev() : markers->Next()) {
      uint64_t m = coding::DecodeFixed64BE(keys_.Suffix(markers->key()));
      if (m == seq) return true;
      if (desc ? m < seq : m > seq) return false;
    }
    return false;
  };

  GetOptions doc_options;
  doc_options.conflicts = options.conflicts;
  doc_options.attachments = options.attachments;
  doc_options.att_encoding_info = options.att_encoding_info;
  const bool need_record = options.all_docs_style || options.include_docs;
  uint64_t delivered = 0;
  uint64_t last = options.since;
  bool stopped = false;
  ChangeRow row;
  std::vector<ChangeEntry> entries;
  bool until_reached = false;
  for (desc ? it->SeekToLast() : it->SeekToFirst(); it->Valid() && !stopped && !until_reached;
       desc ? it->Prev() : it->Next()) {
    // Only the entries in (since, until]: the first block may start
    // earlier, and a big block (one bulk write's) may hold far more seqs
    // than a feed with an `until` reads.
    const uint64_t key_seq = coding::DecodeFixed64BE(keys_.Suffix(it->key()));
    s = DecodeChangeBlock(key_seq, it->value(), &entries, all ? 0 : options.since + 1, options.until);
    if (!s.ok()) return s;
    // The block's last seq is its key's: past `until`, no later block is read.
    if (!desc && key_seq > options.until) until_reached = true;
    const size_t n = entries.size();
    for (size_t k = 0; k < n; ++k) {
      const ChangeEntry& entry = entries[desc ? n - 1 - k : k];
      if (superseded(entry.seq)) continue;
      if (!wanted.empty() && !wanted.count(entry.docid)) continue;
      if (delivered >= options.limit) {
        stopped = true;
        break;
      }
      row.seq = entry.seq;
      row.id.assign(entry.docid);
      row.deleted = entry.deleted;
      row.revs.clear();
      row.doc.clear();
      if (need_record) {
        DocRecord record;
        s = ReadRecord(ro, entry.docid, &record);
        if (!s.ok()) return s;
        if (options.all_docs_style) {
          for (int leaf : record.tree.Leaves()) row.revs.push_back(record.tree.RevString(leaf));
        } else {
          row.revs.emplace_back(entry.rev);
        }
        if (options.include_docs) {
          s = WinnerJson(ro, row.id, record, doc_options, &row.doc);
          if (!s.ok()) return s;
        }
      } else {
        row.revs.emplace_back(entry.rev);
      }
      ++delivered;
      last = row.seq;
      if (!each(row)) {
        stopped = true;
        break;
      }
    }
  }
  if (!markers->status().ok()) return markers->status();
  if (!it->status().ok()) return it->status();
  // A feed that ran to the end has seen everything up to end_seq, even when a
  // filter hid the last rows: report that, so clients do not re-scan them.
  if (!stopped && !options.descending) last = std::max(std::min(end_seq, options.until), options.since);
  if (options.since == UINT64_MAX && !options.descending) last = end_seq;
  *last_seq = last;
  return Status::OK();
}

Result<uint64_t> DatabaseImpl::CountChanges(uint64_t after, uint64_t upto) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  auto snapshot = kv_->GetSnapshot();
  Counters counters;
  s = ReadCounters(snapshot.get(), &counters);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("Database does not exist.") : s;
  const uint64_t end_seq = counters.update_seq;
  upto = std::min(upto, end_seq);
  if (upto <= after) return uint64_t{0};
  uint64_t count = 0;
  if (upto < end_seq) {
    s = CountChangesIn(snapshot.get(), after, upto, &count);
    if (!s.ok()) return s;
    return count;
  }
  // Every change after `after`: from the memo when it counted from an
  // earlier seq of this same state and the gap is the smaller range.
  ChangesAfterMemo memo;
  {
    std::lock_guard<std::mutex> lock(memo_mu_);
    memo = changes_after_memo_;
  }
  if (memo.valid && memo.update_seq == end_seq && memo.after <= after &&
      after - memo.after <= end_seq - after) {
    uint64_t gap = 0;
    s = CountChangesIn(snapshot.get(), memo.after, after, &gap);
    if (!s.ok()) return s;
    if (gap > memo.count) return Status::Corruption("change counts disagree");
    count = memo.count - gap;
  } else {
    s = CountChangesIn(snapshot.get(), after, end_seq, &count);
    if (!s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(memo_mu_);
  changes_after_memo_ = {end_seq, after, count, true};
  return count;
}

Status DatabaseImpl::CountChangesIn(const KVSnapshot* snapshot, uint64_t after, uint64_t upto,
                                    uint64_t* count) {
  *count = 0;
  if (upto <= after) return Status::OK();
  // The blocks holding seqs after `after` are those keyed after it (a block
  // is keyed by its last seq); a block wholly inside the range is counted
  // from its head, one straddling an end is decoded.
  KVIteratorOptions io;
  io.snapshot = snapshot;
  io.lower_bound = keys_.KindSeq(keys::kSeqKind, after + 1);
  io.upper_bound = keys::PrefixEnd(keys_.KindPrefix(keys::kSeqKind));
  auto blocks = kv_->NewIterator(io);
  uint64_t total = 0;
  std::vector<ChangeEntry> entries;
  for (blocks->SeekToFirst(); blocks->Valid(); blocks->Next()) {
    const uint64_t key_seq = coding::DecodeFixed64BE(keys_.Suffix(blocks->key()));
    uint64_t n = 0, first = 0;
    Status s = ChangeBlockSpan(key_seq, blocks->value(), &n, &first);
    if (!s.ok()) return s;
    if (first > upto) break;
    if (first > after && key_seq <= upto) {
      total += n;
    } else {
      s = DecodeChangeBlock(key_seq, blocks->value(), &entries);
      if (!s.ok()) return s;
      for (const ChangeEntry& e : entries) total += e.seq > after && e.seq <= upto;
    }
    if (key_seq >= upto) break;
  }
  if (!blocks->status().ok()) return blocks->status();
  // Less the superseded entries among them (each has a marker until
  // compaction drops entry and marker together).
  io.lower_bound = keys_.KindSeq(keys::kObsoleteKind, after + 1);
  io.upper_bound = keys_.KindSeq(keys::kObsoleteKind, upto);
  io.upper_bound.push_back('\0');  // past the marker of `upto` itself
  auto markers = kv_->NewIterator(io);
  for (markers->SeekToFirst(); markers->Valid(); markers->Next()) {
    if (total == 0) return Status::Corruption("superseded changes outnumber changes");
    --total;
  }
  if (!markers->status().ok()) return markers->status();
  *count = total;
  return Status::OK();
}

//////// Replication helpers

Status DatabaseImpl::RevsDiff(const std::vector<RevsDiffRequest>& request,
                              std::vector<RevsDiffResult>* out) {
  out->clear();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  for (const RevsDiffRequest& req : request) {
    std::vector<RevId> revs(req.revs.size());
    for (size_t i = 0; i < req.revs.size(); ++i) {
      if (!RevId::Parse(req.revs[i], &revs[i])) {
        return Status::BadRequest("Invalid rev format");
      }
    }
    DocRecord record;
    s = ReadRecord(ro, req.id, &record);
    bool exists = s.ok();
    if (!exists && !s.IsNotFound()) return s;
    RevsDiffResult result;
    result.id = req.id;
    uint64_t max_missing_gen = 0;
    for (size_t i = 0; i < revs.size(); ++i) {
      if (exists && record.tree.Find(revs[i]) != RevTree::kNone) continue;
      if (std::find(result.missing.begin(), result.missing.end(), req.revs[i]) !=
          result.missing.end()) {
        continue;
      }
      result.missing.push_back(req.revs[i]);
      max_missing_gen = std::max(max_missing_gen, revs[i].gen);
    }
    if (result.missing.empty()) continue;
    if (exists) {
      for (int leaf : record.tree.Leaves()) {
        if (record.tree.node(leaf).gen < max_missing_gen) {
          result.possible_ancestors.push_back(record.tree.RevString(leaf));
        }
      }
    }
    out->push_back(std::move(result));
  }
  return Status::OK();
}

Status DatabaseImpl::BulkGet(const std::vector<BulkGetRequest>& request,
                             const BulkGetOptions& options, std::vector<BulkGetResult>* out) {
  out->clear();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  GetOptions get_options;
  get_options.revs = options.revs;
  get_options.latest = options.latest;
  get_options.attachments = options.attachments;
  get_options.att_encoding_info = options.att_encoding_info;
  // One snapshot for the whole request, and one record read per document.
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  for (const BulkGetRequest& req : request) {
    BulkGetResult& result = out->emplace_back();
    result.id = req.id;
    // CouchDB checks each item's id and rev and answers a bad one in its
    // place (chttpd_db:bulk_get_open_doc_revs1).
    Status valid = ValidateDocId(req.id);
    RevId parsed;
    if (valid.ok() && !req.rev.empty() && !RevId::Parse(req.rev, &parsed)) {
      valid = Status::BadRequest("Invalid rev format");
    }
    if (!valid.ok()) {
      result.docs.push_back(BulkGetItem{req.rev, std::move(valid), {}});
      continue;
    }
    DocRecord record;
    s = ReadRecord(ro, req.id, &record);
    if (!s.ok() && !s.IsNotFound()) return s;
    const bool exists = s.ok();
    if (req.rev.empty() && (!exists || (record.deleted && !req.all_leaves))) {
      BulkGetItem& item = result.docs.emplace_back();
      item.status = Status::NotFound(exists ? "deleted" : "missing");
      continue;
    }
    std::vector<OpenRevResult> revs;
    if (!exists) {
      revs.push_back(OpenRevResult{req.rev, false, {}});
    } else {
      // No revisions asked: every leaf.
      std::vector<std::string> asked;
      if (!req.rev.empty()) asked.push_back(req.rev);
      else if (!req.all_leaves) asked.push_back(record.winner_rev);
      if (req.atts_since.empty()) {
        s = OpenRevsOf(ro, req.id, record, asked, get_options, &revs);
      } else {
        GetOptions with_since = get_options;
        with_since.atts_since = req.atts_since;
        with_since.attachments = true;  // CouchDB: atts_since implies attachments
        s = OpenRevsOf(ro, req.id, record, asked, with_since, &revs);
      }
      if (!s.ok()) return s;
    }
    for (OpenRevResult& r : revs) {
      BulkGetItem& item = result.docs.emplace_back();
      item.rev = r.rev;
      if (r.found) item.doc = std::move(r.doc);
      else item.status = Status::NotFound("missing");
    }
  }
  return Status::OK();
}

}  // namespace settee
