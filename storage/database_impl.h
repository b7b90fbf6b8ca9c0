// DatabaseImpl: the Database of include/settee/database.h over a KVStore.
//
// Writing
// -------
// On the memory backend (without sync) a document write is direct
// (WriteDirect), with no group-commit queue: the store's write there is a
// few microseconds of memory work with no fixed cost that a group could
// share. A writer alone (write_mu_ free, nothing in flight, no other writer
// met it lately) reads its records, edits their trees, assigns sequences,
// writes its batch to the store and publishes the counters under write_mu_;
// once writers contend (one had to wait for write_mu_), each only builds its
// batch under it and writes it through the pipeline below (the store's
// allocations and copies outside every lock, its pointer surgery in ticket
// order), so the next writer builds while it writes and nobody waits
// through another's allocations (a fresh huge page's fault among them). Everything else is as
// follows (LevelDB and sync stores: document writes too).
//
// All writes to one database go through write_mu_: each write batch reads the
// current records of its documents, edits their revision trees, assigns
// sequence numbers and builds one atomic KVWriteBatch (records, by-seq
// entries, moved bodies, counters). It then releases write_mu_ and writes
// the batch to the KVStore in the order the batches were built
// (write_pipeline.h), so the next batch is built while this one is written;
// a batch that reads a key an unwritten one writes waits for it first.
// Readers never take write_mu_: they read committed state straight from the
// KVStore (through a snapshot whenever they read more than one key), so a
// read never waits for a write.
//
// Document writes are group-committed, as LevelDB's DBImpl::Write does:
// callers queue a Writer; the one at the front becomes the leader, applies
// the documents of every writer queued behind it (in queue order, so the
// result equals applying them one by one) in one WriteContext, commits once
// (one fsync with sync on) and hands each its results. Under contention this
// turns N commits into one. A leader hands the front of the queue on as soon
// as its batch is built, before writing it, so the next leader builds its
// batch while this one is written (with sync, after writing it: writers that
// queue during an fsync then share the next one). A queued writer spins on its state before it sleeps (the leader's commit takes
// microseconds; spin_wait.h), and the leader wakes only sleepers, so a
// handoff between writers on two cores costs no futex call.
// Writers of different databases share no lock here (see docs/architecture.md,
// "What blocks what").
//
// Storage invariants (per document, see docs/storage_format.md):
//  - the record's winner_body is the body of the winning revision;
//  - every other revision whose node has has_body=true has its body under a
//    RevBody key; no RevBody key exists for the winner or for unknown revs;
//  - exactly one by-seq entry exists for the document, at record.seq.
//
// Thread safety: every public method may be called concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "settee/database.h"
#include "settee/kv.h"
#include "storage/attachment_store.h"
#include "storage/doc_record.h"
#include "storage/document.h"
#include "storage/keys.h"
#include "storage/spin_wait.h"
#include "storage/validate_functions.h"
#include "storage/view_reduce_cache.h"
#include "storage/id_gaps.h"
#include "storage/write_pipeline.h"

namespace settee {

class StoreImpl;

class DatabaseImpl final : public Database {
 public:
  // Loads counters and properties of database `db_id`; the catalog entry must
  // already exist. `owner` must outlive this object. The database's keys are
  // in `own_kv` (a KV store of its own, which it then owns) or, if that is
  // null, in the owner's.
  static Result<std::shared_ptr<DatabaseImpl>> Load(StoreImpl* owner, std::string name,
                                                    uint64_t db_id,
                                                    std::unique_ptr<KVStore> own_kv);
  // Writes the initial counters and properties of a new database into `batch`.
  static void InitializeNew(uint64_t db_id, uint32_t revs_limit, KVWriteBatch* batch);

  uint64_t db_id() const { return db_id_; }
  // The KV store that holds this database's keys (keys::DatabaseKeys), for
  // modules that keep data beside its documents (views) and for tests.
  KVStore* kv() const { return kv_; }

  // Makes every later call fail with kNotFound and wakes waiting readers.
  // Waits for an in-flight write to finish first.
  void MarkDeleted();

  // Database:
  const std::string& name() const override { return name_; }
  Result<DocUpdateResult> Put(std::string_view docid, std::string_view json,
                              const UpdateOptions& options) override;
  Result<DocUpdateResult> Delete(std::string_view docid, std::string_view rev,
                                 const UpdateOptions& options) override;
  Status BulkDocs(const std::vector<std::string_view>& docs, const UpdateOptions& options,
                  std::vector<DocUpdateResult>* results) override;
  Result<BulkDocsBody> ParseBulkDocsBody(std::string_view body) override;
  Status BulkDocs(BulkDocsBody body, const UpdateOptions& options,
                  std::vector<DocUpdateResult>* results) override;
  Status BulkDocsArray(std::string_view docs, const UpdateOptions& options,
                       std::vector<DocUpdateResult>* results) override;
  Result<std::string> Get(std::string_view docid, const GetOptions& options) override;
  Status GetWinner(std::string_view docid, WinnerBuffers* buffers, std::string_view* rev,
                   std::string_view* body) override;
  Result<std::string> GetWithAttachments(std::string_view docid, const GetOptions& options,
                                         AttachmentBodySink* sink) override;
  Status GetOpenRevs(std::string_view docid, const std::vector<std::string>& revs,
                     const GetOptions& options, std::vector<OpenRevResult>* out) override;
  Status AllDocs(const AllDocsOptions& options, AllDocsResult* out) override;
  Status LocalDocs(const AllDocsOptions& options, AllDocsResult* out) override;
  Status Changes(const ChangesOptions& options, const std::function<bool(const ChangeRow&)>& each,
                 uint64_t* last_seq) override;
  Result<uint64_t> CountChanges(uint64_t after, uint64_t upto) override;
  Status RevsDiff(const std::vector<RevsDiffRequest>& request,
                  std::vector<RevsDiffResult>* out) override;
  Status BulkGet(const std::vector<BulkGetRequest>& request, const BulkGetOptions& options,
                 std::vector<BulkGetResult>* out) override;
  Result<DatabaseInfo> Info() override;
  uint64_t UpdateSeq() const override { return update_seq_.load(std::memory_order_acquire); }
  uint64_t AddChangeListener(ChangeListener listener) override;
  void RemoveChangeListener(uint64_t id) override;
  uint64_t WaitForChange(uint64_t since, std::chrono::milliseconds timeout) override;
  Status Compact() override;
  Status CompactDocuments(const std::vector<std::string>& ids) override;
  uint32_t RevsLimit() const override { return revs_limit_.load(std::memory_order_relaxed); }
  Status SetRevsLimit(uint32_t limit) override;
  std::string Security() const override;
  Status SetSecurity(std::string_view json) override;
  Result<DocUpdateResult> PutAttachment(std::string_view docid, std::string_view name,
                                        std::string_view rev, std::string_view content_type,
                                        std::string data, const UpdateOptions& options) override;
  Result<std::unique_ptr<AttachmentWriter>> NewAttachmentWriter(
      std::string_view docid, std::string_view name, std::string_view rev,
      std::string_view content_type, const UpdateOptions& options) override;
  Result<DocUpdateResult> DeleteAttachment(std::string_view docid, std::string_view name,
                                           std::string_view rev,
                                           const UpdateOptions& options) override;
  Result<std::unique_ptr<AttachmentReader>> OpenAttachment(std::string_view docid,
                                                           std::string_view name,
                                                           std::string_view rev) override;
  Result<DocUpdateResult> PutWithBodies(std::string_view docid, std::string_view json,
                                        std::vector<std::string> bodies,
                                        const UpdateOptions& options) override;
  Result<std::unique_ptr<DocBodiesWriter>> NewDocBodiesWriter(
      std::string_view docid, std::string_view json, const UpdateOptions& options) override;

  // Purge (database_purge.cc):
  Status Purge(const std::vector<PurgeRequest>& request, std::vector<PurgeResult>* out) override;
  uint64_t PurgeSeq() const override { return purge_seq_.load(std::memory_order_acquire); }
  uint64_t PurgedInfosLimit() const override {
    return purged_infos_limit_.load(std::memory_order_relaxed);
  }
  Status SetPurgedInfosLimit(uint64_t limit) override;

  // One logged purge request (docs/storage_format.md, "Purge infos").
  struct PurgeInfo {
    uint64_t purge_seq = 0;
    uint64_t update_seq = 0;  // the database's update_seq after the purge's write
    std::string docid;
    std::vector<std::string> revs;  // as requested
  };
  // An update_seq and a purge_seq read so that every purge whose changes
  // lie at or below that update_seq is counted in that purge_seq (a purge
  // publishes its purge_seq before its update_seq), for index updates: an
  // index that applies the purges up to *purge_seq and the changes up to
  // *update_seq misses no purge of a change it maps.
  void IndexSeqs(uint64_t* update_seq, uint64_t* purge_seq) const {
    *update_seq = update_seq_.load(std::memory_order_acquire);
    *purge_seq = purge_seq_.load(std::memory_order_acquire);
  }
  // The logged purges with after < purge_seq <= upto, ascending. *complete
  // is false when compaction trimmed some of them (PurgedInfosLimit()): the
  // caller cannot follow them and rebuilds instead.
  Status PurgeInfos(uint64_t after, uint64_t upto, std::vector<PurgeInfo>* out, bool* complete);

  // The cached reductions of this database's view indexes
  // (storage/views.cc), dropped with the database.
  views::ReduceCaches& reduce_caches() { return reduce_caches_; }

  // The attachment bodies of this database (for tests and sizes).
  AttachmentStore& attachment_store() { return attachment_store_; }

 private:
  class WriteContext;  // one write batch in progress (database_write.cc)
  struct Writer;       // one caller's documents waiting in writers_
  struct Counters {
    uint64_t update_seq = 0;
    uint64_t doc_count = 0;
    uint64_t doc_del_count = 0;
    uint64_t external_size = 0;
  };

  DatabaseImpl(StoreImpl* owner, std::string name, uint64_t db_id,
               std::unique_ptr<KVStore> own_kv);

  Status CheckAlive() const;
  // Stores a numeric database property (revs_limit, purged_infos_limit)
  // under the writer lock with the pipeline drained, so no batch in flight
  // was built with the old value; `on_written` (publishing the new value)
  // runs under the lock too, and only if the write landed.
  // Reads a property WriteVarintProperty stored into *value, leaving it as
  // it is when the property was never set; Corruption unless it decodes to
  // a number in [1, max].
  Status ReadVarintProperty(std::string_view name, uint64_t max, uint64_t* value) const;
  template <typename OnWritten>
  Status WriteVarintProperty(std::string_view name, uint64_t value, OnWritten on_written);
  // The counters as of `snapshot` (null: the latest state): the newest
  // change block's, which a batch writes instead of the counters key
  // (docs/storage_format.md), or the counters key's where that is newer (a
  // database with no documents, or one whose blocks predate counted
  // blocks). NotFound if the database's keys are gone.
  Status ReadCounters(const KVSnapshot* snapshot, Counters* out) const;

  //////// Writing (database_write.cc)
  // Writes parsed documents; statuses[i] not OK marks parsed[i] as failed
  // (its status is moved into the result). `refusals` (may be null) are
  // answered in their documents' places (DocRefusal).
  Status WriteParsed(std::vector<IncomingDoc>& parsed, std::vector<Status>& statuses,
                     const UpdateOptions& options, std::vector<DocUpdateResult>* results,
                     std::vector<DocRefusal>* refusals = nullptr);
  // Queues `w` and returns once its documents are applied and committed.
  // REQUIRES: write_mu_ and queue_mu_ not held.
  Status WriteGrouped(Writer* w);
  // The memory backend's write (direct_writes_), with no queue: `w`'s
  // documents applied and written to the store in one section under
  // write_mu_ when the writer is alone, else built under it and written
  // through the pipeline. REQUIRES: write_mu_ not held.
  Status WriteDirect(Writer* w);
  // REQUIRES write_mu_, the store's write of `ctx` done: makes its counters
  // the current and committed ones, publishes them and notifies listeners.
  void Publish(const WriteContext& ctx);
  // Both paths' last step: counters `c`, just written, become what readers
  // see; listeners hear of a new seq.
  void PublishCommitted(const Counters& c, bool design_changed, bool seq_changed);
  // A batch built under write_mu_ and not yet written (WritePipeline's
  // stage B).
  struct StagedCommit {
    bool empty = true;  // nothing to write
    uint64_t ticket = 0;
    KVWriteBatch batch;
    Counters counters;  // as they are after the batch
    bool seq_changed = false;
    bool design_changed = false;
    // Set by whichever writer wrote the batch (it may be written together
    // with an earlier one) before that writer finishes its ticket.
    Status status;
  };
  // A staged batch prepared for the store (KVStore::Prepare) and waiting for
  // its turn, where the writer whose turn comes first can take it.
  struct ReadyWrite {
    uint64_t ticket;
    std::unique_ptr<KVPreparedWrite> prepared;
    StagedCommit* staged;  // on its writer's stack, which waits for it
  };
  // Applies the documents of `group` to one batch, under write_mu_.
  // REQUIRES: write_mu_ and queue_mu_ not held; the caller leads.
  Status StageGroup(const std::vector<Writer*>& group, StagedCommit* staged);
  // Moves the ids of `group`'s applied documents into their results.
  static void TakeResultIds(std::span<Writer* const> group);
  // REQUIRES write_mu_: the start of every batch: fails if the database is
  // deleted, and restores counters_ if a batch in the pipeline failed.
  Status BeginBatch();
  // The rest REQUIRE write_mu_ held.
  // Loads the records the group's documents name, in one ordered pass, and
  // marks those past largest_doc_id_ as new without reading anything.
  void PrefetchRecords(std::span<Writer* const> group, WriteContext& ctx);
  // After a commit: raises largest_doc_id_ to the largest id ctx wrote.
  void NoteWrittenDocIds(const WriteContext& ctx);
  // `slot`: the document's record slot if PrefetchRecords settled it, else
  // nullptr (the record is looked up by id).
  void ApplyDoc(IncomingDoc& doc, bool new_edits, WriteContext& ctx, DocUpdateResult* result,
                std::optional<DocRecord>* slot);
  Status ApplyNewEdit(IncomingDoc& doc, WriteContext& ctx, DocUpdateResult* result,
                      std::optional<DocRecord>* slot);
  // ApplyNewEdit for a document that does not exist (the empty `slot`): its
  // first revision, without an edit's bookkeeping (no previous winner,
  // nothing to stem or supersede).
  void CreateDoc(IncomingDoc& doc, std::optional<DocRecord>& slot, WriteContext& ctx,
                 DocUpdateResult* result);
  Status ApplyReplicated(IncomingDoc& doc, WriteContext& ctx, DocUpdateResult* result,
                         std::optional<DocRecord>* slot);
  Status ApplyLocal(IncomingDoc& doc, WriteContext& ctx, DocUpdateResult* result);
  // Sets check_local_rev on the _local documents of a write made with
  // options.check_local_revs (and new_edits).
  static void MarkLocalRevChecks(std::vector<IncomingDoc>& docs, const UpdateOptions& options);
  // Records that node `new_index` was added to `record` (of `docid`) with
  // `body`: moves bodies, stems, assigns the record's seq and by-seq entry.
  void CommitDocChange(const std::string& docid, std::optional<DocRecord>& slot,
                       DocRecord& record, int new_index, std::string body, uint64_t seq,
                       WriteContext& ctx);
  // Compaction's second pass: rewrites the change blocks that hold
  // superseded changes without them, and drops their markers.
  // REQUIRES: write_mu_ not held (taken per chunk).
  Status CompactChanges();
  // Under the writer lock: drops the non-leaf bodies of `ids` (Compact's
  // first pass, CompactDocuments).
  Status DropOldBodiesLocked(const std::vector<std::string>& ids);
  // REQUIRES write_mu_: finishes ctx into `staged` (its batch and ticket)
  // and makes counters_ and largest_doc_id_ what they are after it.
  void Stage(WriteContext& ctx, StagedCommit* staged);
  // REQUIRES write_mu_ not held: writes `staged` in its turn, then
  // publishes its counters and notifies listeners. In its turn it also
  // writes the batches of later turns that are ready (prepared and
  // waiting), in one store write: two writers of one database then share a
  // log write (LevelDB) instead of writing one after the other.
  Status WriteStaged(StagedCommit& staged);
  // Writes the batch `ctx` built, holding write_mu_ through *lock: inside
  // the section if the writer is `alone` (LockWriterDirect) and the
  // pipeline idle, else staged, *lock released, then WriteStaged.
  Status CommitBuilt(WriteContext& ctx, bool alone, std::unique_lock<std::mutex>* lock);
  // WriteStaged's end: `written` (n batches in ticket order, the store's
  // write of them done with `s`) get their status, and the last one's
  // counters are published and its ticket finished.
  Status FinishWritten(StagedCommit* const* written, size_t n, const Status& s);
  // Locks write_mu_ with no batch in flight: for work that reads and writes
  // the store directly (compaction, properties, deletion).
  std::unique_lock<std::mutex> LockWriterDrained();
  // The memory backend's document writes (direct_writes_): locks write_mu_
  // (spinning first) and returns true if the writer is alone, so may write
  // its batch under the lock (if the pipeline is idle too); false if it
  // met another writer or one did in the last kContendedWrites writes, so
  // it writes through the pipeline.
  bool LockWriterDirect();
  void NotifyListeners(uint64_t seq);

  //////// validate_doc_update (database_validate.cc)
  // Before a write queues, outside every lock: runs the database's
  // validate_doc_update functions on docs[i] for each valid[i] (not design
  // or _local documents); a refused one gets valid[i] = false and its id and
  // error in results[i]. Gives documents without an id their generated id
  // (the functions see it). Non-OK only when the functions could not run
  // (nothing may be written then).
  Status ValidateWrite(std::vector<IncomingDoc>& docs, std::vector<bool>& valid,
                       std::vector<DocUpdateResult>& results, const UpdateOptions& options);
  // The validators as of the latest design-document write, loaded again
  // when one was written since.
  Result<std::shared_ptr<const validation::ValidatorSet>> Validators();
  // After a commit that wrote a design document: the validators are stale.
  void NoteDesignWrite();
  static bool IsDesignDoc(std::string_view id);

  //////// Attachments (database_attachments.cc)
  friend class StreamedAttachmentWriter;
  friend class StreamedDocBodiesWriter;
  // The checks PutAttachment() makes before reading the document.
  Status CheckAttachmentTarget(std::string_view docid, std::string_view name);
  // The document PutAttachment() writes: revision `rev` of `docid` (or a new
  // one when `rev` is empty) with attachment `name` replaced by `att`.
  Status DocWithAttachment(std::string_view docid, std::string_view name, std::string_view rev,
                           IncomingAttachment att, IncomingDoc* doc);
  // Digests whose bodies a write has stored (or found) and whose revisions
  // are not committed yet: compaction must not collect them. Released on
  // destruction, after the write's commit.
  class AttachmentPins {
   public:
    explicit AttachmentPins(DatabaseImpl* db) : db_(db) {}
    ~AttachmentPins();
    AttachmentPins(const AttachmentPins&) = delete;
    AttachmentPins& operator=(const AttachmentPins&) = delete;
    void Pin(const std::string& digest);

   private:
    DatabaseImpl* const db_;
    std::vector<std::string> digests_;
  };
  // Before the write queue, outside every lock: stores the bodies of `doc`'s
  // new attachments (digest, gzip, chunks) and leaves their entries holding
  // digest and length instead of data.
  Status StageAttachments(IncomingDoc& doc, bool new_edits, AttachmentPins* pins);
  // Under write_mu_: appends `doc`'s _attachments member to its body, stubs
  // resolved against `parent_body` (nullptr: no parent revision; kMissingStub
  // for any stub). New bodies get revpos `gen` (a replicated entry keeps
  // the revpos it came with).
  static Status FinishAttachments(IncomingDoc& doc, const std::string* parent_body, uint64_t gen,
                                  bool new_edits);
  // Stages and writes one document (Put() of an already parsed document).
  Result<DocUpdateResult> WriteOneDoc(IncomingDoc doc, const UpdateOptions& options);
  // include_docs: the winner's JSON with `options` (conflicts, attachments).
  Status WinnerJson(const KVReadOptions& ro, std::string_view docid, const DocRecord& record,
                    const GetOptions& options, std::string* out);
  // The revision Get() with `options` reads (rev, latest, the winner):
  // kNotFound "missing"/"deleted", kBadRequest for a bad rev.
  Status LocateRevision(const KVReadOptions& ro, std::string_view docid,
                        const GetOptions& options, DocRecord* record, int* index);
  // atts_since: the generation after which attachments get their bodies.
  static uint64_t AttsSincePos(const DocRecord& record, int index, const GetOptions& options);
  // `body` of revision `index` with the attachment options applied.
  Status ExpandAttachments(const KVReadOptions& ro, const DocRecord& record, int index,
                           const GetOptions& options, std::string* body);
  // Compaction's last pass: deletes the bodies no stored revision names.
  Status CollectAttachmentGarbage();

  //////// Purge (database_purge.cc)
  // Compaction's step: deletes the oldest purge infos beyond
  // PurgedInfosLimit(). REQUIRES: write_mu_ not held.
  Status TrimPurgeInfos();
  // Load's: purge_seq_ from the newest purge info, the limit property.
  Status LoadPurgeState();

  //////// Reading (database_read.cc)
  // Reads and decodes the record of `docid`; kNotFound "missing" if absent.
  Status ReadRecord(const KVReadOptions& ro, std::string_view docid, DocRecord* record);
  // GetOpenRevs on a record already read through `ro`.
  Status OpenRevsOf(const KVReadOptions& ro, std::string_view docid, const DocRecord& record,
                    const std::vector<std::string>& revs, const GetOptions& options,
                    std::vector<OpenRevResult>* out);
  // The stored body of revision `index` of `record`, or kNotFound.
  Status ReadBody(const KVReadOptions& ro, std::string_view docid, const DocRecord& record,
                  int index, std::string* body);
  // Builds the JSON of revision `index` of `record` with the extras asked.
  std::string RevisionJson(std::string_view docid, const DocRecord& record, int index,
                           std::string_view body, const GetOptions& options) const;
  Result<std::string> GetLocal(std::string_view local_id);
  Status AllDocsRows(const AllDocsOptions& options, AllDocsResult* out);
  // The changes with after < seq <= upto as of `snapshot`.
  Status CountChangesIn(const KVSnapshot* snapshot, uint64_t after, uint64_t upto,
                        uint64_t* count);
  Status AllDocsByKeys(const AllDocsOptions& options, AllDocsResult* out);
  Status LocalDocsByKeys(const AllDocsOptions& options, AllDocsResult* out);
  Status ForEachRequestedKey(
      const AllDocsOptions& options, AllDocsResult* out,
      const std::function<Status(const std::string& id, AllDocsRow& row)>& fill);

  // Constant after construction.
  StoreImpl* const owner_;
  const std::unique_ptr<KVStore> own_kv_;  // null: the keys are in the owner's
  KVStore* const kv_;                      // own_kv_ or the owner's
  const std::string name_;
  const uint64_t db_id_;
  const keys::DatabaseKeys keys_;

  std::atomic<bool> deleted_{false};
  // Document writes take WriteDirect instead of the group-commit queue and
  // the pipeline: the store's write is memory writes of a few microseconds
  // with no fixed cost to share (the memory backend, and no fsync), so
  // handing batches between threads costs more than it saves.
  const bool direct_writes_;
  // On LevelDB only: there a Get contends with the database's readers and
  // writer on LevelDB's mutex; the memory store's lookup costs less than
  // the seek that finds a gap.
  const bool use_id_gaps_;
  // Read by every write's stemming; changed rarely (SetRevsLimit).
  std::atomic<uint32_t> revs_limit_{1000};

  // Serializes writers. Guards counters_ (the authoritative copy) and every
  // read-modify-write of this database's keys. The groups of fields that
  // different threads write at every write (this lock and what it guards,
  // the pipeline's progress, the published counters) each start a block of
  // their own (kNoFalseSharing): two writers of one database take turns at
  // them (through the pipeline, one builds while the other writes and
  // publishes), and the constants above are read by every read and write.
  alignas(kNoFalseSharing) std::mutex write_mu_;
  Counters counters_;  // GUARDED_BY(write_mu_); includes batches in flight
  // Memory backend: how many more writes go through the pipeline although
  // write_mu_ was free when they came (GUARDED_BY(write_mu_)). A writer that
  // finds write_mu_ held sets it to kContendedWrites: between two writers
  // taking turns, the one that finds the lock free has most often just
  // missed the other (which is preparing its batch), and writing its whole
  // batch under the lock would make the other wait through it again.
  uint32_t contended_writes_ = 0;
  static constexpr uint32_t kContendedWrites = 64;
  // Orders the writes of staged batches; see write_pipeline.h for which of
  // its methods need write_mu_.
  WritePipeline pipeline_;
  // The counters as of the last batch written: written by stage B in ticket
  // order, read under write_mu_ once the pipeline is drained (to restore
  // counters_ after a failed write).
  alignas(kNoFalseSharing) Counters committed_counters_;
  // Batches prepared and waiting for their turn, ascending tickets. Held for
  // a push or a take only (spun on, like queue_mu_).
  alignas(kNoFalseSharing) std::mutex ready_mu_;
  std::vector<ReadyWrite> ready_;  // GUARDED_BY(ready_mu_)
  std::atomic<int> ready_count_{0};  // ready_.size(), read without the lock
  // No document id sorts after largest_doc_id_ (ids that do are new). Read
  // from the store at the first write; only ever raised: deletion leaves a
  // tombstone record, and a purge, which removes records, only makes more
  // ids absent (the bound and the known gaps below stay true).
  alignas(kNoFalseSharing) std::string largest_doc_id_;  // GUARDED_BY(write_mu_)
  bool largest_doc_id_known_ = false;                    // GUARDED_BY(write_mu_)
  // Known-empty id ranges below largest_doc_id_ (storage/id_gaps.h), kept
  // if use_id_gaps_.
  IdGaps id_gaps_;  // GUARDED_BY(write_mu_)

  // The group-commit queue; the front writer is the leader. Held for a
  // push or a pop only, so contenders spin instead of sleeping.
  alignas(kNoFalseSharing) std::mutex queue_mu_;
  std::deque<Writer*> writers_;  // GUARDED_BY(queue_mu_)

  // Published copies of counters_, for lock-free readers.
  alignas(kNoFalseSharing) std::atomic<uint64_t> update_seq_{0};
  std::atomic<uint64_t> doc_count_{0};
  std::atomic<uint64_t> doc_del_count_{0};
  std::atomic<uint64_t> external_size_{0};

  // Purge requests logged (the newest 'u' key's seq); written under
  // write_mu_, published before update_seq_ (IndexSeqs).
  std::atomic<uint64_t> purge_seq_{0};
  std::atomic<uint64_t> purged_infos_limit_{1000};

  alignas(kNoFalseSharing) AttachmentStore attachment_store_;
  views::ReduceCaches reduce_caches_;
  // Taken alone, or inside write_mu_ (compaction), never the other way.
  std::mutex att_mu_;
  std::unordered_multiset<std::string> pending_digests_;  // GUARDED_BY(att_mu_)

  // The validate_doc_update functions of the design documents: design_gen_
  // counts commits that wrote a design document; validators_ was loaded at
  // validators_gen_. A write with both equal and no validator costs two
  // atomic loads.
  std::atomic<uint64_t> design_gen_{1};
  std::atomic<uint64_t> validators_gen_{0};
  std::atomic<bool> has_validators_{false};
  std::mutex validators_mu_;
  std::shared_ptr<const validation::ValidatorSet> validators_;  // GUARDED_BY(validators_mu_)

  mutable std::mutex security_mu_;
  std::string security_;  // GUARDED_BY(security_mu_)

  // The last count of every change after a seq (CountChanges with no upper
  // end), for the next such count: a replicator asks for the changes after
  // each batch it reads, and the previous count less the batch's changes is
  // that. Valid while the update_seq is the same, as the set of changes is
  // then the same (compaction drops only superseded entries).
  struct ChangesAfterMemo {
    uint64_t update_seq = 0;
    uint64_t after = 0;
    uint64_t count = 0;
    bool valid = false;
  };
  std::mutex memo_mu_;
  ChangesAfterMemo changes_after_memo_;  // GUARDED_BY(memo_mu_)

  // Change listeners and waiters.
  alignas(kNoFalseSharing) std::mutex listeners_mu_;
  std::condition_variable changed_cv_;                 // waits use listeners_mu_
  std::map<uint64_t, ChangeListener> listeners_;       // GUARDED_BY(listeners_mu_)
  uint64_t next_listener_id_ = 1;                      // GUARDED_BY(listeners_mu_)
  // Listeners plus WaitForChange calls in progress: a write that finds none
  // skips listeners_mu_ (a lock line every write would otherwise move
  // between the writers' cores). Read after update_seq_ is stored, raised
  // before a waiter reads it, with a fence on each side.
  std::atomic<int> watchers_{0};
};

}  // namespace settee
