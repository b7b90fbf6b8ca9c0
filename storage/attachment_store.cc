#include "storage/attachment_store.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <memory>

#include <zlib.h>

#include "util/coding.h"
#include "util/digest.h"

namespace settee {

namespace {

// DO NOT CHANGE: embedded in stored headers. Format 2 is format 1 plus the
// name a streamed body's chunks are keyed under.
constexpr uint8_t kBodyFormat = 1;
constexpr uint8_t kBodyFormatNamedChunks = 2;
constexpr uint8_t kFlagGzip = 1;

std::string EncodeHeader(const AttachmentBodyInfo& info) {
  std::string out;
  out.push_back(static_cast<char>(info.chunk_name.empty() ? kBodyFormat : kBodyFormatNamedChunks));
  out.push_back(static_cast<char>(info.gzip ? kFlagGzip : 0));
  coding::PutVarint64(&out, info.length);
  coding::PutVarint64(&out, info.encoded_length);
  coding::PutVarint64(&out, info.chunk_bytes);
  coding::PutLengthPrefixed(&out, info.content_hash);
  if (!info.chunk_name.empty()) coding::PutLengthPrefixed(&out, info.chunk_name);
  return out;
}

Status DecodeHeader(std::string_view in, AttachmentBodyInfo* info) {
  const uint8_t format = in.empty() ? 0 : static_cast<uint8_t>(in[0]);
  if (in.size() < 2 || (format != kBodyFormat && format != kBodyFormatNamedChunks)) {
    return Status::Corruption("bad attachment header");
  }
  info->gzip = (static_cast<uint8_t>(in[1]) & kFlagGzip) != 0;
  in.remove_prefix(2);
  uint64_t chunk = 0;
  std::string_view hash;
  if (!coding::GetVarint64(&in, &info->length) || !coding::GetVarint64(&in, &info->encoded_length) ||
      !coding::GetVarint64(&in, &chunk) || chunk == 0 || chunk > (1u << 30) ||
      !coding::GetLengthPrefixed(&in, &hash)) {
    return Status::Corruption("bad attachment header");
  }
  info->chunk_bytes = static_cast<uint32_t>(chunk);
  info->content_hash.assign(hash);
  info->chunk_name.clear();
  if (format == kBodyFormatNamedChunks) {
    std::string_view name;
    if (!coding::GetLengthPrefixed(&in, &name) || name.empty()) {
      return Status::Corruption("bad attachment header");
    }
    info->chunk_name.assign(name);
  }
  return Status::OK();
}

}  // namespace

struct GzipInflater::State {
  z_stream z{};
  bool ok = false;
  // The last member seen has ended (more may follow).
  bool done = false;
  // What followed a member was not another one: ignored, as gzip -d and
  // node's zlib do with trailing bytes.
  bool trailer = false;
  char buf[64 << 10];
};

GzipInflater::GzipInflater() : st_(std::make_unique<State>()) {
  st_->ok = inflateInit2(&st_->z, 15 + 16) == Z_OK;  // gzip wrapper
}

GzipInflater::~GzipInflater() {
  if (st_->ok) inflateEnd(&st_->z);
}

bool GzipInflater::done() const { return st_->done; }

bool GzipInflater::Feed(std::string_view in, const std::function<bool(std::string_view)>& out,
                        bool* stopped) {
  State& st = *st_;
  z_stream& z = st.z;
  if (!st.ok) return false;
  if (st.trailer) return true;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  while (true) {
    if (st.done) {
      // A member ended: another one starting here (gzip's magic 0x1f 0x8b,
      // as `cat a.gz b.gz` makes) is decoded as well; anything else ends
      // the stream.
      if (z.avail_in == 0) return true;
      if (*z.next_in != 0x1f) {
        st.trailer = true;
        return true;
      }
      if (inflateReset(&z) != Z_OK) return false;
      st.done = false;
    }
    z.next_out = reinterpret_cast<Bytef*>(st.buf);
    z.avail_out = sizeof(st.buf);
    const int r = inflate(&z, Z_NO_FLUSH);
    if (r != Z_OK && r != Z_STREAM_END && r != Z_BUF_ERROR) return false;
    const size_t n = sizeof(st.buf) - z.avail_out;
    if (n > 0 && !out(std::string_view(st.buf, n))) {
      *stopped = true;
      return false;
    }
    if (r == Z_STREAM_END) {
      st.done = true;
      continue;
    }
    if (r == Z_BUF_ERROR) break;  // no progress possible: needs more input
    if (z.avail_out != 0 && z.avail_in == 0) break;
  }
  return true;
}


bool IsCompressibleType(std::string_view type) {
  // Parameters (";charset=...") do not count.
  type = type.substr(0, type.find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  auto lower_eq = [](std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    }
    return true;
  };
  return (type.size() > 5 && lower_eq(type.substr(0, 5), "text/")) ||
         lower_eq(type, "application/javascript") || lower_eq(type, "application/json") ||
         lower_eq(type, "application/xml");
}

bool GzipCompress(std::string_view data, std::string* out) {
  z_stream z{};
  // Level 1: CouchDB's default is 8, but a write pays for this in full while
  // the ratio on text differs by a few percent.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out->resize(deflateBound(&z, data.size()));
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out->data());
  z.avail_out = static_cast<uInt>(out->size());
  const int r = deflate(&z, Z_FINISH);
  out->resize(z.total_out);
  deflateEnd(&z);
  return r == Z_STREAM_END;
}

Status AttachmentStore::Put(const KVWriteOptions& wo, std::string_view digest,
                            std::string_view stored, bool gzip, uint64_t length,
                            std::string_view content_hash) {
  AttachmentBodyInfo existing;
  Status s = Stat(KVReadOptions(), digest, &existing);
  if (s.ok()) {
    if (existing.content_hash != content_hash || existing.length != length) {
      return Status::BadRequest("Attachment digest " + std::string(digest) +
                                " does not match the data");
    }
    return Status::OK();
  }
  if (!s.IsNotFound()) return s;
  AttachmentBodyInfo info;
  info.gzip = gzip;
  info.length = length;
  info.encoded_length = stored.size();
  info.chunk_bytes = kChunkBytes;
  info.content_hash.assign(content_hash);
  KVWriteBatch batch;
  uint32_t index = 0;
  for (size_t off = 0; off < stored.size(); off += kChunkBytes, ++index) {
    batch.Put(keys_->AttachmentChunk(digest, index), stored.substr(off, kChunkBytes));
    if ((index + 1) % kChunksPerBatch == 0) {
      s = kv_->WriteOwned(wo, std::move(batch));
      if (!s.ok()) return s;
      batch = KVWriteBatch();
    }
  }
  batch.Put(keys_->Attachment(digest), EncodeHeader(info));
  return kv_->WriteOwned(wo, std::move(batch));
}

Status AttachmentStore::Stat(const KVReadOptions& ro, std::string_view digest,
                             AttachmentBodyInfo* info) {
  std::string bytes;
  Status s = kv_->Get(ro, keys_->Attachment(digest), &bytes);
  if (!s.ok()) return s;
  return DecodeHeader(bytes, info);
}

Status AttachmentStore::ReadStored(const KVReadOptions& ro, std::string_view digest,
                                   const AttachmentBodyInfo& info, const AttachmentSink& sink,
                                   std::string* scratch) {
  const uint64_t chunks = (info.encoded_length + info.chunk_bytes - 1) / info.chunk_bytes;
  std::string own;
  std::string& chunk = scratch != nullptr ? *scratch : own;
  for (uint64_t i = 0; i < chunks; ++i) {
    Status s = kv_->Get(ro, ChunkKey(digest, info, static_cast<uint32_t>(i)), &chunk);
    if (s.IsNotFound()) return Status::Corruption("attachment chunk missing");
    if (!s.ok()) return s;
    if (!sink(chunk)) return Status::OK();
  }
  return Status::OK();
}

Status AttachmentStore::ReadDecoded(const KVReadOptions& ro, std::string_view digest,
                                    const AttachmentBodyInfo& info, uint64_t offset,
                                    uint64_t count, const AttachmentSink& sink,
                                    std::string* scratch) {
  if (offset >= info.length) return Status::OK();
  count = std::min(count, info.length - offset);
  if (!info.gzip) {
    // Identity bodies: only the chunks the range touches.
    uint64_t first = offset / info.chunk_bytes;
    uint64_t skip = offset % info.chunk_bytes;
    std::string own;
    std::string& chunk = scratch != nullptr ? *scratch : own;
    for (uint64_t i = first; count > 0; ++i) {
      Status s = kv_->Get(ro, ChunkKey(digest, info, static_cast<uint32_t>(i)), &chunk);
      if (s.IsNotFound()) return Status::Corruption("attachment chunk missing");
      if (!s.ok()) return s;
      if (skip >= chunk.size()) return Status::Corruption("attachment chunk short");
      const uint64_t n = std::min<uint64_t>(count, chunk.size() - skip);
      if (!sink(std::string_view(chunk).substr(skip, n))) return Status::OK();
      count -= n;
      skip = 0;
    }
    return Status::OK();
  }
  // gzip: decode from the start, dropping what precedes the range.
  auto inflater = std::make_unique<GzipInflater>();
  uint64_t pos = 0;
  bool corrupt = false, stopped = false;
  auto out = [&](std::string_view piece) {
    const uint64_t end = pos + piece.size();
    if (end > offset && count > 0) {
      const uint64_t from = offset > pos ? offset - pos : 0;
      const uint64_t n = std::min<uint64_t>(count, piece.size() - from);
      count -= n;
      if (!sink(piece.substr(from, n))) return false;
    }
    pos = end;
    return count > 0;
  };
  Status s = ReadStored(ro, digest, info, [&](std::string_view chunk) {
    if (!inflater->Feed(chunk, out, &stopped)) {
      corrupt = !stopped;
      return false;
    }
    return true;
  }, scratch);
  if (!s.ok()) return s;
  if (corrupt) return Status::Corruption("attachment body is not valid gzip");
  return Status::OK();
}

Status AttachmentStore::ReadMany(const KVReadOptions& ro,
                                 const std::vector<std::string_view>& digests,
                                 AttachmentBodyVisitor* visitor, BodyOrder order) {
  if (digests.empty()) return Status::OK();
  const std::string kind = keys_->KindPrefix(keys::kAttachmentKind);
  KVIteratorOptions io;
  io.snapshot = ro.snapshot;
  io.lower_bound = kind;
  io.upper_bound = keys::PrefixEnd(kind);
  auto it = kv_->NewIterator(io);
  std::vector<std::string> headers(digests.size());
  for (size_t i = 0; i < digests.size(); ++i) headers[i] = keys_->Attachment(digests[i]);
  std::vector<size_t> sequence(digests.size());
  for (size_t i = 0; i < sequence.size(); ++i) sequence[i] = i;
  if (order == BodyOrder::kKeyOrder) {
    std::stable_sort(sequence.begin(), sequence.end(),
                     [&headers](size_t a, size_t b) { return headers[a] < headers[b]; });
  }
  // In key order, a body's header often follows the previous body's last
  // chunk (the bodies of a document written together, with nothing stored
  // between them): a step there instead of a seek skips the seek's search
  // of every table file and the memtable (many-attachments-binary on
  // LevelDB: a seek per body was a sixth of a get). The first step that
  // lands elsewhere ends the stepping: interleaved bodies cost that one
  // wasted step per call, not one per body.
  bool stepping = order == BodyOrder::kKeyOrder;
  bool below_next = false;  // the iterator stands on the last key of the body before
  std::string key;
  std::unique_ptr<GzipInflater> inflater;
  for (size_t k = 0; k < sequence.size(); ++k) {
    const size_t i = sequence[k];
    const std::string& header = headers[i];
    bool found = false;
    if (stepping && below_next && header != headers[sequence[k - 1]]) {
      it->Next();
      if (!it->status().ok()) return it->status();
      // Every key of the body before is below this header, so one above it
      // (or none) means there is no such body.
      if (!it->Valid() || it->key() > header) return Status::NotFound("attachment body missing");
      found = it->key() == header;
      stepping = found;
    }
    below_next = false;
    if (!found) {
      it->Seek(header);
      if (!it->Valid() || it->key() != header) {
        if (!it->status().ok()) return it->status();
        return Status::NotFound("attachment body missing");
      }
    }
    AttachmentBodyInfo info;
    Status s = DecodeHeader(it->value(), &info);
    if (!s.ok()) return s;
    bool read = false;
    s = visitor->Begin(i, info, &read);
    if (!s.ok()) return s;
    if (!read) continue;
    if (info.gzip) inflater = std::make_unique<GzipInflater>();
    // A streamed body's chunks are under a name of their own.
    const bool named = !info.chunk_name.empty();
    key = named ? keys_->Attachment(info.chunk_name) : header;
    const size_t header_size = key.size();
    const uint64_t chunks = (info.encoded_length + info.chunk_bytes - 1) / info.chunk_bytes;
    uint64_t decoded = 0;
    bool stopped = false, corrupt = false;
    Status piece_status;
    auto out = [&](std::string_view piece) {
      decoded += piece.size();
      piece_status = visitor->Piece(i, piece);
      return piece_status.ok();
    };
    for (uint64_t c = 0; c < chunks && !stopped; ++c) {
      key.resize(header_size);
      if (named && c == 0) {
        coding::PutFixed32BE(&key, 0);
        it->Seek(key);
        key.resize(header_size);
      } else {
        it->Next();
      }
      coding::PutFixed32BE(&key, static_cast<uint32_t>(c));
      if (!it->Valid() || it->key() != key) {
        if (!it->status().ok()) return it->status();
        return Status::Corruption("attachment chunk missing");
      }
      if (!info.gzip) {
        stopped = !out(it->value());
      } else if (!inflater->Feed(it->value(), out, &stopped)) {
        corrupt = !stopped;
        stopped = true;
      }
    }
    if (corrupt) return Status::Corruption("attachment body is not valid gzip");
    if (!piece_status.ok()) return piece_status;
    if (decoded != info.length) return Status::Corruption("attachment body has the wrong length");
    s = visitor->End(i);
    if (!s.ok()) return s;
    below_next = !named;
  }
  return Status::OK();
}

Status AttachmentStore::ReadAll(const KVReadOptions& ro, std::string_view digest,
                                std::string* out) {
  AttachmentBodyInfo info;
  Status s = Stat(ro, digest, &info);
  if (!s.ok()) return s;
  out->clear();
  out->reserve(info.length);
  return ReadDecoded(ro, digest, info, 0, info.length, [out](std::string_view piece) {
    out->append(piece);
    return true;
  });
}

Status AttachmentStore::CollectGarbage(const KVWriteOptions& wo,
                                       const std::unordered_set<std::string>& live,
                                       const std::unordered_set<std::string>& pending) {
  const std::string kind = keys_->KindPrefix(keys::kAttachmentKind);
  KVIteratorOptions io;
  io.lower_bound = kind;
  io.upper_bound = keys::PrefixEnd(kind);
  auto it = kv_->NewIterator(io);
  // The chunks of streamed bodies are kept under the names their (kept)
  // headers give.
  std::unordered_set<std::string> named_chunks;
  it->SeekToFirst();
  while (it->Valid()) {
    std::string_view rest = keys_->Suffix(it->key());
    std::string_view digest;
    if (!coding::GetLengthPrefixed(&rest, &digest)) {
      it->Next();
      continue;
    }
    const std::string d(digest);
    const std::string header = keys_->Attachment(digest);
    if (rest.empty() && (live.count(d) != 0 || pending.count(d) != 0)) {
      AttachmentBodyInfo info;
      Status s = DecodeHeader(it->value(), &info);
      if (!s.ok()) return s;
      if (!info.chunk_name.empty()) named_chunks.insert(std::move(info.chunk_name));
    }
    it->Seek(keys::PrefixEnd(header));
  }
  if (!it->status().ok()) return it->status();
  KVWriteBatch batch;
  it->SeekToFirst();
  while (it->Valid()) {
    std::string_view rest = keys_->Suffix(it->key());
    std::string_view digest;
    if (!coding::GetLengthPrefixed(&rest, &digest)) {
      batch.Delete(it->key());  // not a key this store writes
      it->Next();
      continue;
    }
    const std::string header = keys_->Attachment(digest);
    const std::string d(digest);
    if (live.count(d) != 0 || pending.count(d) != 0 || named_chunks.count(d) != 0) {
      it->Seek(keys::PrefixEnd(header));  // past its chunks
      continue;
    }
    batch.Delete(it->key());
    if (batch.count() >= 1024) {
      Status s = kv_->WriteOwned(wo, std::move(batch));
      if (!s.ok()) return s;
      batch = KVWriteBatch();
    }
    it->Next();
  }
  if (!it->status().ok()) return it->status();
  if (batch.count() == 0) return Status::OK();
  return kv_->WriteOwned(wo, std::move(batch));
}

uint64_t AttachmentStore::CountKeys() {
  const std::string kind = keys_->KindPrefix(keys::kAttachmentKind);
  KVIteratorOptions io;
  io.lower_bound = kind;
  io.upper_bound = keys::PrefixEnd(kind);
  auto it = kv_->NewIterator(io);
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  return n;
}

Status AttachmentStore::DeleteChunks(std::string_view name, uint32_t count) {
  KVWriteBatch batch;
  for (uint32_t i = 0; i < count; ++i) {
    batch.Delete(keys_->AttachmentChunk(name, i));
    if (batch.count() >= 1024) {
      Status s = kv_->WriteOwned(KVWriteOptions(), std::move(batch));
      if (!s.ok()) return s;
      batch = KVWriteBatch();
    }
  }
  if (batch.count() == 0) return Status::OK();
  return kv_->WriteOwned(KVWriteOptions(), std::move(batch));
}

//////// AttachmentBodyWriter

struct AttachmentBodyWriter::State {
  Md5 md5;
  Xxh128 hash;
  z_stream z{};
  bool deflating = false;
  std::string chunk;        // stored bytes not yet in a chunk key
  KVWriteBatch batch;       // chunks not yet written
  uint32_t batched = 0;
  char out[64 << 10];       // deflate output
};

AttachmentBodyWriter::AttachmentBodyWriter(AttachmentStore* store, KVWriteOptions header_wo,
                                           std::string chunk_name, bool gzip)
    : store_(store), header_wo_(header_wo), chunk_name_(std::move(chunk_name)), gzip_(gzip),
      state_(std::make_unique<State>()) {
  state_->chunk.reserve(AttachmentStore::kChunkBytes);
  if (gzip_) {
    // Level 1, as GzipCompress().
    state_->deflating =
        deflateInit2(&state_->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
    failed_ = !state_->deflating;
  }
}

AttachmentBodyWriter::~AttachmentBodyWriter() {
  if (!finished_) Abort();
  if (state_->deflating) deflateEnd(&state_->z);
}

void AttachmentBodyWriter::Abort() {
  if (finished_) return;
  finished_ = true;
  failed_ = true;
  state_->batch = KVWriteBatch();
  // Best effort: what a failed delete leaves, no header names, and the next
  // compaction deletes.
  store_->DeleteChunks(chunk_name_, chunks_).ok();
}

Status AttachmentBodyWriter::FlushChunk(bool last) {
  State& st = *state_;
  if (!st.chunk.empty()) {
    st.batch.Put(store_->keys_->AttachmentChunk(chunk_name_, chunks_), st.chunk);
    ++chunks_;
    ++st.batched;
    st.chunk.clear();
  }
  if (st.batched == 0 || (!last && st.batched < AttachmentStore::kChunksPerBatch)) {
    return Status::OK();
  }
  st.batched = 0;
  Status s = store_->kv_->WriteOwned(KVWriteOptions(), std::move(st.batch));
  st.batch = KVWriteBatch();
  return s;
}

Status AttachmentBodyWriter::Store(std::string_view stored) {
  State& st = *state_;
  stored_length_ += stored.size();
  while (!stored.empty()) {
    const size_t n = std::min(stored.size(), AttachmentStore::kChunkBytes - st.chunk.size());
    st.chunk.append(stored.substr(0, n));
    stored.remove_prefix(n);
    if (st.chunk.size() == AttachmentStore::kChunkBytes) {
      Status s = FlushChunk(false);
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

Status AttachmentBodyWriter::Deflate(std::string_view in, bool finish) {
  State& st = *state_;
  st.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  st.z.avail_in = static_cast<uInt>(in.size());
  for (;;) {
    st.z.next_out = reinterpret_cast<Bytef*>(st.out);
    st.z.avail_out = sizeof(st.out);
    const int r = deflate(&st.z, finish ? Z_FINISH : Z_NO_FLUSH);
    if (r == Z_STREAM_ERROR) return Status::Internal("gzip failed");
    Status s = Store(std::string_view(st.out, sizeof(st.out) - st.z.avail_out));
    if (!s.ok()) return s;
    if (finish ? r == Z_STREAM_END : (st.z.avail_in == 0 && st.z.avail_out != 0)) break;
  }
  return Status::OK();
}

Status AttachmentBodyWriter::Write(std::string_view piece) {
  if (finished_ || failed_) return Status::Internal("attachment writer is closed");
  State& st = *state_;
  st.md5.Update(piece);
  st.hash.Update(piece);
  length_ += piece.size();
  // zlib counts input in 32 bits.
  while (!piece.empty()) {
    const std::string_view part = piece.substr(0, 1u << 30);
    piece.remove_prefix(part.size());
    Status s = gzip_ ? Deflate(part, false) : Store(part);
    if (!s.ok()) {
      failed_ = true;
      return s;
    }
  }
  return Status::OK();
}

Status AttachmentBodyWriter::Close(std::string* digest, uint64_t* length) {
  if (closed_ || finished_ || failed_) return Status::Internal("attachment writer is closed");
  closed_ = true;
  State& st = *state_;
  // An empty body stays identity, as the whole-body path stores it.
  Status s = gzip_ && length_ > 0 ? Deflate({}, true) : Status::OK();
  if (s.ok()) s = FlushChunk(true);
  if (!s.ok()) {
    Abort();
    return s;
  }
  digest_ = "md5-" + Base64Encode(st.md5.FinishRaw());
  info_.gzip = gzip_ && length_ > 0;
  info_.length = length_;
  info_.encoded_length = stored_length_;
  info_.chunk_bytes = AttachmentStore::kChunkBytes;
  info_.content_hash = st.hash.FinishHex();
  info_.chunk_name = chunk_name_;
  *digest = digest_;
  *length = length_;
  return Status::OK();
}

Status AttachmentBodyWriter::Finish() { return Finish(digest_); }

Status AttachmentBodyWriter::Finish(std::string_view digest) {
  if (!closed_ || finished_ || failed_) return Status::Internal("attachment writer is not closed");
  if (digest.data() != digest_.data()) digest_.assign(digest);
  AttachmentBodyInfo existing;
  Status s = store_->Stat(KVReadOptions(), digest_, &existing);
  if (s.ok()) {
    // Stored once per digest: this copy's chunks go.
    Abort();
    if (existing.content_hash != info_.content_hash || existing.length != info_.length) {
      return Status::BadRequest("Attachment digest " + digest_ + " does not match the data");
    }
    return Status::OK();
  }
  if (!s.IsNotFound()) {
    Abort();
    return s;
  }
  KVWriteBatch batch;
  batch.Put(store_->keys_->Attachment(digest_), EncodeHeader(info_));
  s = store_->kv_->WriteOwned(header_wo_, std::move(batch));
  if (!s.ok()) {
    Abort();
    return s;
  }
  finished_ = true;
  return Status::OK();
}

uint64_t AttachmentStore::ApproximateSize() {
  const std::string kind = keys_->KindPrefix(keys::kAttachmentKind);
  return kv_->ApproximateSize(kind, keys::PrefixEnd(kind));
}

}  // namespace settee
