// AttachmentStore: the bodies of one database's attachments, outside the
// document records (docs/storage_format.md, 'a' keys).
//
// A body is stored once per database under the digest its attachment entries
// carry ("md5-<base64>"), however many documents and revisions refer to it,
// as a header key followed by chunk keys of at most kChunkBytes each, so that
// no read or write of a large body needs it whole in one value. Bodies carry
// no reference count: compaction (DatabaseImpl::Compact) collects the digests
// every stored revision names and deletes the rest (CollectGarbage).
//
// The digest is the dedup key, so a second body stored under a digest that is
// there already must be the same bytes: the header keeps XXH3-128 of the
// decoded bytes and Put() refuses a different body with kBadRequest (a peer
// that sends a digest not matching its data cannot replace another body).
//
// Bodies are written in their own KV batches, before the document write that
// refers to them commits (a body can be far bigger than a document batch
// should be); the header goes last, so a header means a complete body. A crash
// in between leaves chunks no header or revision names: garbage that the next
// compaction deletes. The caller keeps compaction from deleting a body between
// its Put() and the commit of the revision naming it (DatabaseImpl's pending
// digests).
//
// Thread safety: all methods may be called concurrently; readers pass a
// snapshot in KVReadOptions to read one consistent body while compaction runs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "settee/kv.h"
#include "settee/status.h"
#include "storage/keys.h"

namespace settee {

// What a body's header says.
struct AttachmentBodyInfo {
  bool gzip = false;            // the stored bytes are gzip (CouchDB's "encoding")
  uint64_t length = 0;          // decoded length
  uint64_t encoded_length = 0;  // stored length
  uint32_t chunk_bytes = 0;
  std::string content_hash;     // XXH3-128 hex of the decoded bytes
  // The name the chunks are keyed under: empty for the digest itself, else
  // the name a streamed body's chunks were written under.
  std::string chunk_name;
};

class AttachmentStore;

// Writes one body a piece at a time, as it arrives: the stored bytes go to
// the KV store a chunk at a time (gzip-encoded as they come when `gzip`),
// and the MD5 digest and content hash are computed on the way, so memory
// stays at a few chunks whatever the body's size. Finish() stores the header;
// a writer destroyed before a successful Finish() deletes the chunks it wrote,
// so an interrupted upload leaves nothing behind. Not thread-safe; must not
// outlive the store.
class AttachmentBodyWriter {
 public:
  // `chunk_wo` for the chunks (the durability of the body comes with its
  // header's write, `header_wo`: on LevelDB a synced write also makes the
  // log before it durable). `chunk_name` must be unique to this writer.
  AttachmentBodyWriter(AttachmentStore* store, KVWriteOptions header_wo, std::string chunk_name,
                       bool gzip);
  ~AttachmentBodyWriter();
  AttachmentBodyWriter(const AttachmentBodyWriter&) = delete;
  AttachmentBodyWriter& operator=(const AttachmentBodyWriter&) = delete;

  // Appends decoded bytes.
  Status Write(std::string_view piece);
  // Ends the body: its last chunks are written and *digest is
  // "md5-<base64>" of the decoded bytes.
  Status Close(std::string* digest, uint64_t* length);
  // After Close(): stores the header under the digest, or, when a body is
  // there already under it, drops the streamed chunks (kBadRequest if that
  // body has other bytes). The caller pins the digest first (compaction).
  Status Finish();
  // Finish() under `digest` instead of the computed one: a replicated body
  // keeps the digest its peer gave it (digests are opaque across peers).
  Status Finish(std::string_view digest);
  // Deletes the chunks written so far (the destructor does this unless
  // Finish() succeeded).
  void Abort();

  const std::string& chunk_name() const { return chunk_name_; }
  uint64_t length() const { return length_; }

 private:
  Status Store(std::string_view stored);  // stored bytes into chunks
  Status FlushChunk(bool last);
  Status Deflate(std::string_view in, bool finish);

  AttachmentStore* const store_;
  const KVWriteOptions header_wo_;
  const std::string chunk_name_;
  const bool gzip_;
  struct State;
  std::unique_ptr<State> state_;  // hashes, deflater, pending chunk and batch
  uint64_t length_ = 0;
  uint64_t stored_length_ = 0;
  uint32_t chunks_ = 0;
  bool failed_ = false;
  bool closed_ = false;
  bool finished_ = false;
  std::string digest_;
  AttachmentBodyInfo info_;
};

// Called with consecutive pieces of a body; returns false to stop early.
using AttachmentSink = std::function<bool(std::string_view piece)>;

// Receives the bodies AttachmentStore::ReadMany() reads, in the order asked.
class AttachmentBodyVisitor {
 public:
  virtual ~AttachmentBodyVisitor() = default;
  // Body `i`'s header. Its decoded bytes follow (Piece() calls, then End())
  // only if this sets *read.
  virtual Status Begin(size_t i, const AttachmentBodyInfo& info, bool* read) = 0;
  // Consecutive decoded bytes of body `i`: a view into the store (or the
  // inflater), valid during the call only. An error stops the read and is
  // what ReadMany() returns.
  virtual Status Piece(size_t i, std::string_view bytes) = 0;
  virtual Status End(size_t i) = 0;
};

class AttachmentStore {
 public:
  static constexpr uint32_t kChunkBytes = 256 << 10;
  // Chunks per KV batch while a body is written.
  static constexpr uint32_t kChunksPerBatch = 16;

  // `kv` and `keys` must outlive the store.
  AttachmentStore(KVStore* kv, const keys::DatabaseKeys* keys) : kv_(kv), keys_(keys) {}

  // Stores `stored` (gzip bytes when `gzip`, else the body itself) under
  // `digest`, unless a body is there already. `length` is the decoded length
  // and `content_hash` XXH3-128 hex of the decoded bytes. kBadRequest if a
  // different body is stored under `digest`.
  Status Put(const KVWriteOptions& wo, std::string_view digest, std::string_view stored, bool gzip,
             uint64_t length, std::string_view content_hash);

  // The header of the body under `digest`; kNotFound if none.
  Status Stat(const KVReadOptions& ro, std::string_view digest, AttachmentBodyInfo* info);

  // Sends the stored bytes (gzip ones as they are) to `sink`, chunk by chunk.
  // `scratch`, when given, holds each chunk (a caller reading many bodies
  // keeps one buffer instead of allocating one per chunk); `sink` must not
  // use it.
  Status ReadStored(const KVReadOptions& ro, std::string_view digest,
                    const AttachmentBodyInfo& info, const AttachmentSink& sink,
                    std::string* scratch = nullptr);
  // Sends decoded bytes [offset, offset + count) to `sink` (count is clipped
  // to the body), decompressing gzip bodies as it goes: memory stays at a
  // chunk or two whatever the body's size.
  Status ReadDecoded(const KVReadOptions& ro, std::string_view digest,
                     const AttachmentBodyInfo& info, uint64_t offset, uint64_t count,
                     const AttachmentSink& sink, std::string* scratch = nullptr);
  // The order ReadMany() visits bodies in.
  enum class BodyOrder {
    kAsAsked,   // the order of `digests`
    kKeyOrder,  // the order they are stored in: one forward pass, stepping
                // from one body to the next where they are adjacent
  };
  // Reads the bodies under `digests` through one iterator on `ro`'s
  // snapshot: at most one seek per body, and the bytes reach `visitor` as
  // views of the stored chunks, copied nowhere before it (a document read
  // with its attachments). Each body's Begin(), Piece()s and End() come
  // together, whatever the order. kNotFound if a digest has no body.
  Status ReadMany(const KVReadOptions& ro, const std::vector<std::string_view>& digests,
                  AttachmentBodyVisitor* visitor, BodyOrder order = BodyOrder::kAsAsked);
  // The whole decoded body.
  Status ReadAll(const KVReadOptions& ro, std::string_view digest, std::string* out);

  // Deletes every body (and stray chunk) whose digest is in neither set.
  // The caller must keep new references from being committed meanwhile.
  Status CollectGarbage(const KVWriteOptions& wo, const std::unordered_set<std::string>& live,
                        const std::unordered_set<std::string>& pending);

  // Bytes of every stored body, chunks and headers (KVStore::ApproximateSize).
  uint64_t ApproximateSize();
  // Keys under the attachment kind (headers and chunks): for tests that check
  // nothing was left behind.
  uint64_t CountKeys();

 private:
  friend class AttachmentBodyWriter;
  // The key of chunk `index` of the body under `digest`.
  std::string ChunkKey(std::string_view digest, const AttachmentBodyInfo& info,
                       uint32_t index) const {
    return keys_->AttachmentChunk(info.chunk_name.empty() ? digest : info.chunk_name, index);
  }
  // Deletes chunks [0, count) under `name`.
  Status DeleteChunks(std::string_view name, uint32_t count);

  KVStore* const kv_;
  const keys::DatabaseKeys* const keys_;
};

// Streams gzip bytes in, decoded bytes out through a fixed 64 KiB buffer (a
// stored gzip body read, a peer's gzip body written). Not thread-safe.
class GzipInflater {
 public:
  GzipInflater();
  ~GzipInflater();
  GzipInflater(const GzipInflater&) = delete;
  GzipInflater& operator=(const GzipInflater&) = delete;
  // Feeds `in`; calls `out` with each decoded piece. False on corrupt data or
  // when `out` asks to stop (*stopped then set). Members one after another
  // (`cat a.gz b.gz`) decode to their contents joined, as gzip -d and node
  // do; bytes after a member that do not start another are ignored.
  bool Feed(std::string_view in, const std::function<bool(std::string_view)>& out, bool* stopped);
  // Every gzip member begun has been decoded whole (false before the first
  // ends, or while a later one is cut short).
  bool done() const;

 private:
  struct State;
  std::unique_ptr<State> st_;
};

// CouchDB's default compressible_types: text/*, application/javascript,
// application/json, application/xml.
bool IsCompressibleType(std::string_view content_type);

// gzip of `data` (zlib, fast level). False on a zlib failure.
bool GzipCompress(std::string_view data, std::string* out);

}  // namespace settee
