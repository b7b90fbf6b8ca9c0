// DatabaseImpl, attachments: staging new bodies before a write, resolving
// stubs inside it, the attachment options of reads, the standalone
// attachment operations, and compaction's collection of unreferenced bodies.
// Layout and invariants: storage/attachment_store.h, storage/attachments.h,
// docs/storage_format.md.
#include <algorithm>
#include <optional>
#include <unordered_set>


#include "storage/attachments.h"
#include "storage/database_impl.h"
#include "storage/store_impl.h"
#include "util/base64.h"
#include "util/digest.h"
#include "util/json.h"

namespace settee {

namespace {

constexpr std::string_view kDefaultContentType = "application/octet-stream";

Status MissingAttachment() { return Status::NotFound("Document is missing attachment"); }

class AttachmentReaderImpl final : public AttachmentReader {
 public:
  AttachmentReaderImpl(std::shared_ptr<const KVSnapshot> snapshot, AttachmentStore* store,
                       AttachmentInfo info, AttachmentBodyInfo body)
      : snapshot_(std::move(snapshot)), store_(store), info_(std::move(info)),
        body_(std::move(body)) {}

  const AttachmentInfo& info() const override { return info_; }
  Status Read(uint64_t offset, uint64_t count,
              const std::function<bool(std::string_view)>& sink) override {
    return store_->ReadDecoded(KVReadOptions{snapshot_.get()}, info_.digest, body_, offset, count,
                               sink);
  }
  Status ReadEncoded(const std::function<bool(std::string_view)>& sink) override {
    return store_->ReadStored(KVReadOptions{snapshot_.get()}, info_.digest, body_, sink);
  }

 private:
  std::shared_ptr<const KVSnapshot> snapshot_;
  AttachmentStore* store_;
  AttachmentInfo info_;
  AttachmentBodyInfo body_;
};

}  // namespace

DatabaseImpl::AttachmentPins::~AttachmentPins() {
  if (digests_.empty()) return;
  std::lock_guard<std::mutex> lock(db_->att_mu_);
  for (const std::string& d : digests_) {
    auto it = db_->pending_digests_.find(d);
    if (it != db_->pending_digests_.end()) db_->pending_digests_.erase(it);
  }
}

void DatabaseImpl::AttachmentPins::Pin(const std::string& digest) {
  std::lock_guard<std::mutex> lock(db_->att_mu_);
  db_->pending_digests_.insert(digest);
  digests_.push_back(digest);
}

Status DatabaseImpl::StageAttachments(IncomingDoc& doc, bool new_edits, AttachmentPins* pins) {
  if (!doc.attachments) return Status::OK();
  if (IsLocalDocId(doc.id)) {
    // CouchDB keeps no attachments on _local documents.
    doc.attachments.reset();
    return Status::OK();
  }
  for (IncomingAttachment& att : *doc.attachments) {
    if (att.stub || att.staged) continue;  // staged: the writer pinned it
    if (att.follows) {
      return Status::BadRequest("Attachment " + att.name + " follows, but no body was sent");
    }
    if (att.content_type.empty()) att.content_type.assign(kDefaultContentType);
    // Inline data is always the decoded bytes (ParseAttachmentsJson drops
    // an entry's encoding when it has data, as CouchDB does); gzip bodies
    // come only as "follows" parts, which their writer stages.
    const std::string_view decoded = att.data;
    // New data gets settee's own digest; a replicated one keeps its peer's
    // (docs/storage_format.md: digests are opaque across peers).
    if (new_edits || att.digest.empty()) att.digest = "md5-" + Base64Encode(Md5Raw(decoded));
    const std::string content_hash = Xxh128Hex(decoded);
    std::string gz;
    std::string_view stored = att.data;
    bool gzip = false;
    if (!decoded.empty() && IsCompressibleType(att.content_type) && GzipCompress(decoded, &gz) &&
        gz.size() < decoded.size()) {
      stored = gz;
      gzip = true;
    }
    pins->Pin(att.digest);
    Status s = attachment_store_.Put(owner_->write_options(), att.digest, stored, gzip,
                                     decoded.size(), content_hash);
    if (!s.ok()) return s;
    att.length = decoded.size();
    std::string().swap(att.data);
  }
  return Status::OK();
}

Status DatabaseImpl::FinishAttachments(IncomingDoc& doc, const std::string* parent_body,
                                       uint64_t gen, bool new_edits) {
  if (!doc.attachments) return Status::OK();
  std::vector<AttachmentEntry> parent;
  if (parent_body != nullptr) {
    Status s = ParseStoredAttachments(*parent_body, &parent);
    if (!s.ok()) return s;
  }
  std::vector<AttachmentEntry> entries;
  entries.reserve(doc.attachments->size());
  for (const IncomingAttachment& att : *doc.attachments) {
    if (att.stub) {
      auto it = std::find_if(parent.begin(), parent.end(),
                             [&](const AttachmentEntry& e) { return e.name == att.name; });
      if (it == parent.end()) {
        return {Status::Code::kMissingStub,
                "Invalid attachment stub in " + doc.id + " for " + att.name};
      }
      entries.push_back(*it);
      continue;
    }
    AttachmentEntry& e = entries.emplace_back();
    e.name = att.name;
    e.content_type = att.content_type;
    e.digest = att.digest;
    e.length = att.length;
    e.revpos = (!new_edits && att.revpos > 0) ? att.revpos : gen;
  }
  AppendAttachmentsMember(&doc.body, entries);
  return Status::OK();
}

Result<DocUpdateResult> DatabaseImpl::WriteOneDoc(IncomingDoc doc, const UpdateOptions& options) {
  std::vector<IncomingDoc> docs;
  docs.push_back(std::move(doc));
  std::vector<Status> statuses(1);
  std::vector<DocUpdateResult> results;
  Status s = WriteParsed(docs, statuses, options, &results);
  if (!s.ok()) return s;
  if (!results[0].status.ok()) return results[0].status;
  return std::move(results[0]);
}

uint64_t DatabaseImpl::AttsSincePos(const DocRecord& record, int index,
                                    const GetOptions& options) {
  // The newest of those revisions in this one's history.
  if (!options.attachments || options.atts_since.empty()) return 0;
  std::unordered_set<std::string> since(options.atts_since.begin(), options.atts_since.end());
  for (int i : record.tree.Ancestry(index)) {
    if (since.count(record.tree.RevString(i)) != 0) return record.tree.node(i).gen;
  }
  return 0;
}

namespace {

// Writes the _attachments member of ExpandAttachments() as the store hands
// out the bodies: entry JSON, then the body's base64 straight into the
// answer, chunk by chunk.
class InlineAttachmentWriter final : public AttachmentBodyVisitor {
 public:
  InlineAttachmentWriter(std::string* out, const std::vector<AttachmentEntry>& entries,
                         const std::vector<size_t>& read_index, const std::vector<bool>& inline_data,
                         const GetOptions& options)
      : out_(out), entries_(entries), read_index_(read_index), inline_data_(inline_data),
        options_(options) {}

  Status Begin(size_t i, const AttachmentBodyInfo& info, bool* read) override {
    const size_t e = read_index_[i];
    StubsUpTo(e);
    const AttachmentEntry& entry = entries_[e];
    Separator();
    json::AppendQuoted(out_, entry.name);
    out_->push_back(':');
    next_ = e + 1;
    const std::string_view encoding = options_.att_encoding_info && info.gzip ? "gzip" : "";
    if (!inline_data_[e]) {
      AppendAttachmentJson(out_, entry, /*stub=*/true, encoding, info.encoded_length);
      return Status::OK();
    }
    if (options_.attachments_follow) {
      // The body follows decoded, so no encoding is named.
      AppendAttachmentJson(out_, entry, false, {}, 0);
      out_->append(",\"length\":");
      out_->append(std::to_string(info.length));
      out_->append(",\"follows\":true}");
      return Status::OK();
    }
    AppendAttachmentJson(out_, entry, false, encoding, info.encoded_length);
    out_->append(",\"data\":\"");
    data_at_ = out_->size();
    data_end_ = data_at_ + Base64Length(info.length);
    out_->resize(data_end_);
    writer_.emplace(out_->data() + data_at_);
    *read = true;
    return Status::OK();
  }
  Status Piece(size_t, std::string_view bytes) override {
    writer_->Add(bytes);
    return Status::OK();
  }
  Status End(size_t) override {
    if (writer_->Finish() != out_->data() + data_end_) {
      return Status::Corruption("attachment body has the wrong length");
    }
    writer_.reset();
    out_->append("\"}");
    return Status::OK();
  }
  // The stubs after the last body read.
  void Finish() { StubsUpTo(entries_.size()); }

 private:
  void Separator() {
    if (!first_) out_->push_back(',');
    first_ = false;
  }
  // Entries before `end` that needed nothing from the store.
  void StubsUpTo(size_t end) {
    for (; next_ < end; ++next_) {
      Separator();
      json::AppendQuoted(out_, entries_[next_].name);
      out_->push_back(':');
      AppendAttachmentJson(out_, entries_[next_], /*stub=*/true, {}, 0);
    }
  }

  std::string* out_;
  const std::vector<AttachmentEntry>& entries_;
  const std::vector<size_t>& read_index_;
  const std::vector<bool>& inline_data_;
  const GetOptions& options_;
  size_t next_ = 0;
  bool first_ = true;
  size_t data_at_ = 0, data_end_ = 0;
  std::optional<Base64Writer> writer_;
};

}  // namespace

Status DatabaseImpl::ExpandAttachments(const KVReadOptions& ro, const DocRecord& record, int index,
                                       const GetOptions& options, std::string* body) {
  if (!MayHaveAttachments(*body)) return Status::OK();
  std::vector<AttachmentEntry> entries;
  std::string rest;
  Status s = ParseStoredAttachments(*body, &entries, &rest);
  if (!s.ok() || entries.empty()) return s;
  const uint64_t since_pos = AttsSincePos(record, index, options);
  // The entries that need their body's header (all with att_encoding_info),
  // and room for the inline bodies' base64 up front: one allocation.
  std::vector<bool> inline_data(entries.size());
  std::vector<size_t> read_index;
  std::vector<std::string_view> digests;
  size_t inline_bytes = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const AttachmentEntry& e = entries[i];
    inline_data[i] = options.attachments && e.revpos > since_pos;
    if (inline_data[i] && !options.attachments_follow) {
      inline_bytes += Base64Length(e.length) + 128 + e.name.size();
    }
    if (inline_data[i] || options.att_encoding_info) {
      read_index.push_back(i);
      digests.push_back(e.digest);
    }
  }
  std::string out = std::move(rest);
  out.reserve(out.size() + inline_bytes + 128 * entries.size());
  out.pop_back();
  if (out.size() > 1) out.push_back(',');
  out.append("\"_attachments\":{");
  InlineAttachmentWriter writer(&out, entries, read_index, inline_data, options);
  s = attachment_store_.ReadMany(ro, digests, &writer);
  if (s.IsNotFound()) return Status::Corruption("attachment body missing");
  if (!s.ok()) return s;
  writer.Finish();
  out.append("}}");
  *body = std::move(out);
  return Status::OK();
}

namespace {

// Hands GetWithAttachments()'s bodies on to the caller's sink.
class SinkForwarder final : public AttachmentBodyVisitor {
 public:
  SinkForwarder(AttachmentBodySink* sink, const std::vector<AttachmentInfo>& infos,
                const std::vector<size_t>& index)
      : sink_(sink), infos_(infos), index_(index) {}
  Status Begin(size_t i, const AttachmentBodyInfo& info, bool* read) override {
    if (info.length != infos_[index_[i]].length) {
      return Status::Corruption("attachment body has the wrong length");
    }
    *read = true;
    return Status::OK();
  }
  Status Piece(size_t i, std::string_view bytes) override { return sink_->Piece(index_[i], bytes); }
  Status End(size_t) override { return Status::OK(); }

 private:
  AttachmentBodySink* sink_;
  const std::vector<AttachmentInfo>& infos_;
  const std::vector<size_t>& index_;
};

// Fills in gzip and encoded_length from each body's header.
class EncodingReader final : public AttachmentBodyVisitor {
 public:
  explicit EncodingReader(std::vector<AttachmentInfo>* infos) : infos_(infos) {}
  Status Begin(size_t i, const AttachmentBodyInfo& info, bool*) override {
    (*infos_)[i].gzip = info.gzip;
    (*infos_)[i].encoded_length = info.encoded_length;
    return Status::OK();
  }
  Status Piece(size_t, std::string_view) override { return Status::OK(); }
  Status End(size_t) override { return Status::OK(); }

 private:
  std::vector<AttachmentInfo>* infos_;
};

}  // namespace

Result<std::string> DatabaseImpl::GetWithAttachments(std::string_view docid,
                                                     const GetOptions& options,
                                                     AttachmentBodySink* sink) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  if (IsLocalDocId(docid)) return GetLocal(docid);
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  DocRecord record;
  int index;
  s = LocateRevision(ro, docid, options, &record, &index);
  if (!s.ok()) return s;
  std::string body;
  s = ReadBody(ro, docid, record, index, &body);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  std::vector<AttachmentEntry> entries;
  std::string rest;
  s = ParseStoredAttachments(body, &entries, &rest);
  if (!s.ok()) return s;
  const uint64_t since_pos = AttsSincePos(record, index, options);
  const std::string rev = record.tree.RevString(index);
  std::vector<AttachmentInfo> infos(entries.size());
  std::vector<std::string_view> all_digests, body_digests;
  std::vector<size_t> body_index;
  for (size_t i = 0; i < entries.size(); ++i) {
    AttachmentEntry& e = entries[i];
    AttachmentInfo& info = infos[i];
    info.docid.assign(docid);
    info.rev = rev;
    info.name = std::move(e.name);
    info.content_type = std::move(e.content_type);
    info.digest = std::move(e.digest);
    info.revpos = e.revpos;
    info.length = e.length;
    info.follows = options.attachments && e.revpos > since_pos;
  }
  for (size_t i = 0; i < infos.size(); ++i) {
    all_digests.push_back(infos[i].digest);
    if (infos[i].follows) {
      body_digests.push_back(infos[i].digest);
      body_index.push_back(i);
    }
  }
  if (options.att_encoding_info) {
    EncodingReader encodings(&infos);
    s = attachment_store_.ReadMany(ro, all_digests, &encodings);
    if (s.IsNotFound()) return Status::Corruption("attachment body missing");
    if (!s.ok()) return s;
  }
  s = sink->Entries(infos);
  if (!s.ok()) return s;
  SinkForwarder forward(sink, infos, body_index);
  s = attachment_store_.ReadMany(ro, body_digests, &forward, AttachmentStore::BodyOrder::kKeyOrder);
  if (s.IsNotFound()) return Status::Corruption("attachment body missing");
  if (!s.ok()) return s;
  return RevisionJson(docid, record, index, rest, options);
}

//////// Standalone attachment operations

namespace {

// The parsed current revision `rev` of `docid`, ready to be edited.
Status LoadForEdit(Database& db, std::string_view docid, std::string_view rev, size_t max_size,
                   IncomingDoc* doc) {
  GetOptions go;
  go.rev.assign(rev);
  auto current = db.Get(docid, go);
  if (!current.ok()) {
    // CouchDB: an attachment written at a revision that does not exist is
    // an update conflict.
    return current.status().IsNotFound() ? Status::Conflict() : current.status();
  }
  Status s = ParseIncomingDoc(*current, docid, max_size, doc);
  if (!s.ok()) return s;
  doc->deleted = false;
  if (!doc->attachments) doc->attachments.emplace();
  return Status::OK();
}

}  // namespace

Status DatabaseImpl::CheckAttachmentTarget(std::string_view docid, std::string_view name) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  s = ValidateDocId(docid);
  if (!s.ok()) return s;
  if (IsLocalDocId(docid)) return Status::BadRequest("_local documents do not accept attachments.");
  if (name.empty()) return Status::BadRequest("Attachment name can't be empty");
  if (name[0] == '_') {
    return Status::BadRequest("Attachment name '" + std::string(name) +
                              "' starts with prohibited character '_'");
  }
  if (!json::IsValidUtf8(name)) return Status::BadRequest("Attachment name is not UTF-8");
  return Status::OK();
}

Status DatabaseImpl::DocWithAttachment(std::string_view docid, std::string_view name,
                                       std::string_view rev, IncomingAttachment att,
                                       IncomingDoc* doc) {
  if (rev.empty()) {
    doc->id.assign(docid);
    doc->body = "{}";
    doc->attachments.emplace();
  } else {
    Status s = LoadForEdit(*this, docid, rev, std::numeric_limits<size_t>::max(), doc);
    if (!s.ok()) return s;
  }
  auto& atts = *doc->attachments;
  auto it = std::find_if(atts.begin(), atts.end(),
                         [&](const IncomingAttachment& a) { return a.name == name; });
  if (it == atts.end()) it = atts.insert(atts.end(), IncomingAttachment());
  *it = std::move(att);
  it->name.assign(name);
  if (it->content_type.empty()) it->content_type.assign(kDefaultContentType);
  return Status::OK();
}

Result<DocUpdateResult> DatabaseImpl::PutAttachment(std::string_view docid, std::string_view name,
                                                    std::string_view rev,
                                                    std::string_view content_type,
                                                    std::string data,
                                                    const UpdateOptions& options) {
  Status s = CheckAttachmentTarget(docid, name);
  if (!s.ok()) return s;
  IncomingAttachment att;
  att.content_type.assign(content_type);
  att.data = std::move(data);
  IncomingDoc doc;
  s = DocWithAttachment(docid, name, rev, std::move(att), &doc);
  if (!s.ok()) return s;
  UpdateOptions edit;
  edit.user = options.user;
  return WriteOneDoc(std::move(doc), edit);
}

// The AttachmentWriter of NewAttachmentWriter(): an AttachmentBodyWriter
// under a fresh chunk name, pinned (with, at the end, its digest) so that a
// compaction meanwhile leaves it alone, then the document's write.
class StreamedAttachmentWriter final : public AttachmentWriter {
 public:
  StreamedAttachmentWriter(DatabaseImpl* db, std::string docid, std::string name, std::string rev,
                           std::string content_type, const UpdateOptions& options,
                           std::string chunk_name)
      : db_(db), pins_(db), docid_(std::move(docid)), name_(std::move(name)),
        rev_(std::move(rev)), content_type_(std::move(content_type)), user_(options.user),
        body_(&db->attachment_store_, db->owner_->write_options(), chunk_name,
              IsCompressibleType(content_type_)) {
    pins_.Pin(chunk_name);
  }

  Status Write(std::string_view piece) override { return body_.Write(piece); }
  uint64_t length() const override { return body_.length(); }

  Result<DocUpdateResult> Commit() override {
    if (committed_) return Status(Status::Code::kInvalidOperation, "already committed");
    committed_ = true;
    Status s = db_->CheckAlive();
    if (!s.ok()) return s;
    IncomingAttachment att;
    att.content_type = content_type_;
    std::string digest;
    uint64_t length = 0;
    s = body_.Close(&digest, &length);
    if (!s.ok()) return s;
    // Pinned before its header is written: a compaction between the header
    // and the revision's commit must keep the body.
    pins_.Pin(digest);
    s = body_.Finish();
    if (!s.ok()) return s;
    att.digest = std::move(digest);
    att.length = length;
    att.staged = true;
    IncomingDoc doc;
    s = db_->DocWithAttachment(docid_, name_, rev_, std::move(att), &doc);
    if (!s.ok()) return s;
    UpdateOptions edit;
    edit.user = user_;
    return db_->WriteOneDoc(std::move(doc), edit);
  }

 private:
  DatabaseImpl* const db_;
  DatabaseImpl::AttachmentPins pins_;
  const std::string docid_, name_, rev_, content_type_;
  const UserContext* const user_;
  AttachmentBodyWriter body_;
  bool committed_ = false;
};

Result<std::unique_ptr<AttachmentWriter>> DatabaseImpl::NewAttachmentWriter(
    std::string_view docid, std::string_view name, std::string_view rev,
    std::string_view content_type, const UpdateOptions& options) {
  Status s = CheckAttachmentTarget(docid, name);
  if (!s.ok()) return s;
  // Fail before the body is read when the write could not succeed now.
  if (rev.empty()) {
    auto current = Get(docid, GetOptions());
    if (current.ok()) return Status::Conflict();
    if (!current.status().IsNotFound()) return current.status();
  } else {
    IncomingDoc doc;
    s = LoadForEdit(*this, docid, rev, std::numeric_limits<size_t>::max(), &doc);
    if (!s.ok()) return s;
  }
  // A chunk name no digest takes: '~' is not base64.
  return std::unique_ptr<AttachmentWriter>(new StreamedAttachmentWriter(
      this, std::string(docid), std::string(name), std::string(rev),
      std::string(content_type.empty() ? kDefaultContentType : content_type), options,
      "~" + RandomUuidHex()));
}

Result<DocUpdateResult> DatabaseImpl::DeleteAttachment(std::string_view docid,
                                                       std::string_view name,
                                                       std::string_view rev,
                                                       const UpdateOptions& options) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  if (rev.empty()) return Status::Conflict();
  IncomingDoc doc;
  s = LoadForEdit(*this, docid, rev, std::numeric_limits<size_t>::max(), &doc);
  if (!s.ok()) return s;
  auto& atts = *doc.attachments;
  auto it = std::find_if(atts.begin(), atts.end(),
                         [&](const IncomingAttachment& a) { return a.name == name; });
  if (it == atts.end()) return MissingAttachment();
  atts.erase(it);
  UpdateOptions edit;
  edit.user = options.user;
  return WriteOneDoc(std::move(doc), edit);
}

// The DocBodiesWriter of NewDocBodiesWriter(): one AttachmentBodyWriter per
// "follows" body under a fresh chunk name (pinned against compaction), each
// closed as its body ends; their headers are stored only at Commit(), so a
// writer dropped before then deletes every chunk it wrote.
class StreamedDocBodiesWriter final : public DocBodiesWriter {
 public:
  StreamedDocBodiesWriter(DatabaseImpl* db, IncomingDoc doc, const UpdateOptions& options)
      : db_(db), pins_(db), doc_(std::move(doc)), options_(options) {
    if (doc_.attachments) {
      for (size_t i = 0; i < doc_.attachments->size(); ++i) {
        if ((*doc_.attachments)[i].follows) follows_.push_back(i);
      }
    }
    // CouchDB keeps no attachments on _local documents: their bodies are
    // read and dropped.
    discard_ = IsLocalDocId(doc_.id);
  }

  Status BeginBody() override {
    if (current_) return Status::Internal("the previous body has not ended");
    if (bodies_.size() == follows_.size()) {
      return Status::BadRequest("More attachment bodies than entries");
    }
    IncomingAttachment& att = Entry(bodies_.size());
    if (att.content_type.empty()) att.content_type.assign(kDefaultContentType);
    if (!att.encoding.empty() && att.encoding != "gzip" && att.encoding != "identity") {
      return Status::BadRequest("Unsupported attachment encoding: " + att.encoding);
    }
    const std::string chunk_name = "~" + RandomUuidHex();
    pins_.Pin(chunk_name);
    bodies_.push_back(std::make_unique<AttachmentBodyWriter>(
        &db_->attachment_store_, db_->owner_->write_options(), chunk_name,
        IsCompressibleType(att.content_type)));
    if (att.encoding == "gzip") inflater_ = std::make_unique<GzipInflater>();
    decoded_bytes_ = 0;
    current_ = true;
    return Status::OK();
  }

  Status Write(std::string_view piece) override {
    if (!current_) return Status::Internal("no body has begun");
    if (discard_) return Status::OK();
    AttachmentBodyWriter& body = *bodies_.back();
    if (!inflater_) return body.Write(piece);
    Status s;
    bool stopped = false;
    // The bytes sent are bounded by the request's limit, not what they
    // decode to: a gzip of zeros would write a thousand times its size.
    const uint64_t max_bytes = db_->owner_->options().max_attachment_size;
    if (!inflater_->Feed(piece, [&](std::string_view decoded) {
          decoded_bytes_ += decoded.size();
          if (decoded_bytes_ > max_bytes) {
            s = Status(Status::Code::kAttachmentTooLarge, Entry(bodies_.size() - 1).name);
            return false;
          }
          s = body.Write(decoded);
          return s.ok();
        }, &stopped)) {
      return stopped ? s : NotGzip();
    }
    return Status::OK();
  }

  Status EndBody() override {
    if (!current_) return Status::Internal("no body has begun");
    current_ = false;
    IncomingAttachment& att = Entry(bodies_.size() - 1);
    const bool gzip = inflater_ != nullptr;
    if (gzip && !discard_ && !inflater_->done()) return NotGzip();
    inflater_.reset();
    std::string md5;
    uint64_t length = 0;
    Status s = bodies_.back()->Close(&md5, &length);
    if (!s.ok()) return s;
    if (discard_) return Status::OK();
    // A body as sent must be what its entry says; a gzip one carries its
    // peer's digest of the encoded bytes, so only its length is checked.
    if (att.length != 0 && att.length != length) {
      return Status::BadRequest("Attachment " + att.name + " has the wrong length");
    }
    if (!gzip && att.digest.rfind("md5-", 0) == 0 && att.digest != md5) {
      return Status::BadRequest("Attachment " + att.name + ": digest does not match the data");
    }
    // New data gets settee's own digest; a replicated one keeps its peer's
    // (docs/storage_format.md: digests are opaque across peers).
    if (options_.new_edits || att.digest.empty()) att.digest = std::move(md5);
    att.length = length;
    return Status::OK();
  }

  Result<DocUpdateResult> Commit() override {
    if (committed_) return Status(Status::Code::kInvalidOperation, "already committed");
    committed_ = true;
    if (current_) return Status::BadRequest("Attachment body cut short");
    if (bodies_.size() < follows_.size()) {
      return Status::BadRequest("Attachment " + Entry(bodies_.size()).name +
                                " follows, but no body was sent");
    }
    Status s = db_->CheckAlive();
    if (!s.ok()) return s;
    for (size_t i = 0; i < follows_.size(); ++i) {
      IncomingAttachment& att = Entry(i);
      att.follows = false;
      att.encoding.clear();
      if (discard_) continue;
      // Pinned before its header is written: a compaction between the
      // header and the revision's commit must keep the body.
      pins_.Pin(att.digest);
      s = bodies_[i]->Finish(att.digest);
      if (!s.ok()) return s;
      att.staged = true;
    }
    return db_->WriteOneDoc(std::move(doc_), options_);
  }

 private:
  IncomingAttachment& Entry(size_t body) { return (*doc_.attachments)[follows_[body]]; }
  Status NotGzip() {
    return Status::BadRequest("Attachment " + Entry(bodies_.size() - 1).name +
                              " is not valid gzip data");
  }

  DatabaseImpl* const db_;
  DatabaseImpl::AttachmentPins pins_;
  IncomingDoc doc_;
  const UpdateOptions options_;
  std::vector<size_t> follows_;  // indexes of the "follows" entries
  std::vector<std::unique_ptr<AttachmentBodyWriter>> bodies_;
  std::unique_ptr<GzipInflater> inflater_;  // for the current body, if gzip
  uint64_t decoded_bytes_ = 0;  // of the current gzip body, against max_attachment_size
  bool current_ = false;
  bool discard_ = false;
  bool committed_ = false;
};

Result<std::unique_ptr<DocBodiesWriter>> DatabaseImpl::NewDocBodiesWriter(
    std::string_view docid, std::string_view json, const UpdateOptions& options) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  IncomingDoc doc;
  s = ParseIncomingDoc(json, docid, std::numeric_limits<size_t>::max(), &doc);
  if (!s.ok()) return s;
  return std::unique_ptr<DocBodiesWriter>(new StreamedDocBodiesWriter(this, std::move(doc), options));
}

Result<DocUpdateResult> DatabaseImpl::PutWithBodies(std::string_view docid, std::string_view json,
                                                    std::vector<std::string> bodies,
                                                    const UpdateOptions& options) {
  auto writer = NewDocBodiesWriter(docid, json, options);
  if (!writer.ok()) return writer.status();
  for (std::string& body : bodies) {
    Status s = (*writer)->BeginBody();
    if (s.ok()) s = (*writer)->Write(body);
    if (s.ok()) s = (*writer)->EndBody();
    if (!s.ok()) return s;
    std::string().swap(body);
  }
  return (*writer)->Commit();
}

Result<std::unique_ptr<AttachmentReader>> DatabaseImpl::OpenAttachment(std::string_view docid,
                                                                       std::string_view name,
                                                                       std::string_view rev) {
  Status s = CheckAlive();
  if (!s.ok()) return s;
  if (IsLocalDocId(docid)) return Status::NotFound("missing");
  auto snapshot = kv_->GetSnapshot();
  KVReadOptions ro{snapshot.get()};
  DocRecord record;
  s = ReadRecord(ro, docid, &record);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  int index;
  if (rev.empty()) {
    if (record.deleted) return Status::NotFound("deleted");
    index = record.tree.Winner();
  } else {
    RevId r;
    if (!RevId::Parse(rev, &r)) return Status::BadRequest("Invalid rev format");
    index = record.tree.Find(r);
    if (index == RevTree::kNone) return Status::NotFound("missing");
  }
  std::string body;
  s = ReadBody(ro, docid, record, index, &body);
  if (!s.ok()) return s.IsNotFound() ? Status::NotFound("missing") : s;
  std::vector<AttachmentEntry> entries;
  s = ParseStoredAttachments(body, &entries);
  if (!s.ok()) return s;
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const AttachmentEntry& e) { return e.name == name; });
  if (it == entries.end()) return MissingAttachment();
  AttachmentBodyInfo body_info;
  s = attachment_store_.Stat(ro, it->digest, &body_info);
  if (s.IsNotFound()) return Status::Corruption("attachment body missing for " + it->name);
  if (!s.ok()) return s;
  AttachmentInfo info;
  info.docid.assign(docid);
  info.rev = record.tree.RevString(index);
  info.name = it->name;
  info.content_type = it->content_type;
  info.digest = it->digest;
  info.revpos = it->revpos;
  info.length = body_info.length;
  info.gzip = body_info.gzip;
  info.encoded_length = body_info.encoded_length;
  return std::unique_ptr<AttachmentReader>(new AttachmentReaderImpl(
      std::move(snapshot), &attachment_store_, std::move(info), std::move(body_info)));
}

//////// Compaction

Status DatabaseImpl::CollectAttachmentGarbage() {
  // Nothing to do (and no scan of every record) when no body is stored.
  {
    const std::string kind = keys_.KindPrefix(keys::kAttachmentKind);
    KVIteratorOptions io;
    io.lower_bound = kind;
    io.upper_bound = keys::PrefixEnd(kind);
    auto it = kv_->NewIterator(io);
    it->SeekToFirst();
    if (!it->status().ok()) return it->status();
    if (!it->Valid()) return Status::OK();
  }
  // Under the writer lock no revision is committed meanwhile, and under
  // att_mu_ no write pins a digest between the scan and the deletions.
  auto lock = LockWriterDrained();
  Status s = CheckAlive();
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> att_lock(att_mu_);
  std::unordered_set<std::string> live;
  std::vector<AttachmentEntry> entries;
  auto note = [&](std::string_view body) -> Status {
    if (!MayHaveAttachments(body)) return Status::OK();
    Status st = ParseStoredAttachments(body, &entries);
    if (!st.ok()) return st;
    for (AttachmentEntry& e : entries) live.insert(std::move(e.digest));
    return Status::OK();
  };
  std::string scratch;  // a compressed body, uncompressed
  for (char kind : {keys::kDocKind, keys::kRevBodyKind}) {
    const std::string prefix = keys_.KindPrefix(kind);
    KVIteratorOptions io;
    io.lower_bound = prefix;
    io.upper_bound = keys::PrefixEnd(prefix);
    auto it = kv_->NewIterator(io);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string_view body = it->value();
      DocRecordView view;
      if (kind == keys::kDocKind) {
        s = DecodeDocRecordView(body, &view);
        if (!s.ok()) return s;
        s = view.Body(&scratch, &body);
        if (!s.ok()) return s;
      }
      s = note(body);
      if (!s.ok()) return s;
    }
    if (!it->status().ok()) return it->status();
  }
  std::unordered_set<std::string> pending(pending_digests_.begin(), pending_digests_.end());
  return attachment_store_.CollectGarbage(owner_->write_options(), live, pending);
}

}  // namespace settee
