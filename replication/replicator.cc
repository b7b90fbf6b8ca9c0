#include "replication/replicator.h"

#include <charconv>
#include <ctime>

#include "replication/checkpoint.h"
#include "replication/replication_id.h"
#include "util/digest.h"

namespace settee::replication {

namespace {

int64_t NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

// Errors no retry can fix. A continuous job, like one of CouchDB 3's
// scheduler, keeps retrying with backoff ("crashing") through a missing
// database, refused credentials or an unreachable peer, which an operator
// may fix while it waits; only a request that can never work (a bad
// filter, seq or name) ends it.
bool IsFatal(const Status& s, bool continuous) {
  if (continuous) {
    return s.code() == Status::Code::kBadRequest || s.code() == Status::Code::kIllegalDatabaseName;
  }
  switch (s.code()) {
    case Status::Code::kNotFound:  // a database that does not exist
    case Status::Code::kUnauthorized:
    case Status::Code::kForbidden:
    case Status::Code::kBadRequest:
    case Status::Code::kIllegalDatabaseName:
      return true;
    default:
      return false;
  }
}

// The number a seq starts with (42 for 42, "42" or "42-g1AA..."), for
// changes_pending; nullopt for opaque seqs.
std::optional<uint64_t> SeqNumber(std::string_view text) {
  if (!text.empty() && text.front() == '"') text.remove_prefix(1);
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc()) return std::nullopt;
  return n;
}

}  // namespace

std::string_view StateName(ReplicationState state) {
  switch (state) {
    case ReplicationState::kInitializing: return "initializing";
    case ReplicationState::kRunning: return "running";
    case ReplicationState::kPaused: return "running";
    case ReplicationState::kRetrying: return "crashing";
    case ReplicationState::kCompleted: return "completed";
    case ReplicationState::kFailed: return "failed";
    case ReplicationState::kCancelled: return "cancelled";
  }
  return "unknown";
}

Replicator::Replicator(std::unique_ptr<Endpoint> source, std::unique_ptr<Endpoint> target,
                       ReplicationOptions options)
    : source_(std::move(source)), target_(std::move(target)), options_(std::move(options)) {
  if (options_.batch_size == 0) options_.batch_size = 1;
  id_ = ReplicationId(options_.server_uuid, source_->IdTerm(), target_->IdTerm(),
                      options_.doc_ids, options_.since_seq,
                      options_.filter ? &*options_.filter : nullptr, options_.filter_code);
  stats_.started_on = stats_.updated_on = NowSeconds();
}

Replicator::~Replicator() = default;

std::string Replicator::job_id() const {
  return JobId(id_, options_.continuous, options_.create_target);
}

ReplicationStats Replicator::Stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void Replicator::Cancel() {
  {
    std::lock_guard<std::mutex> lock(cancel_mu_);
    cancelled_ = true;
    if (reader_) reader_->Interrupt();
  }
  cancel_cv_.notify_all();
  source_->Interrupt();
  target_->Interrupt();
}

bool Replicator::SleepUnlessCancelled(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(cancel_mu_);
  return !cancel_cv_.wait_for(lock, d, [this] { return cancelled_.load(); });
}

void Replicator::SetState(ReplicationState state) {
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.state = state;
  stats_.updated_on = NowSeconds();
}

void Replicator::Emit(ReplicationEvent::Kind kind, std::vector<std::string> doc_ids,
                      Status error) {
  if (!listener_) return;
  ReplicationEvent event{kind, Stats(), std::move(doc_ids), {}, std::move(error)};
  if (kind == ReplicationEvent::Kind::kChange) event.docs_json = std::move(batch_docs_);
  listener_(event);
}

Status Replicator::Run() {
  start_time_ = Rfc1123Now();
  auto backoff = options_.initial_backoff;
  for (;;) {
    bool progressed = false;
    Status s = Attempt(&progressed);
    if (cancelled_) {
      SetState(ReplicationState::kCancelled);
      Emit(ReplicationEvent::Kind::kComplete);
      return Status::OK();
    }
    if (s.ok()) {
      SetState(ReplicationState::kCompleted);
      Emit(ReplicationEvent::Kind::kComplete);
      return s;
    }
    uint64_t retries;
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      stats_.error = s;
      if (progressed) stats_.retries = 0;
      retries = ++stats_.retries;
    }
    if (progressed) backoff = options_.initial_backoff;
    if (IsFatal(s, options_.continuous) || (!options_.continuous && retries > static_cast<uint64_t>(options_.retries))) {
      SetState(ReplicationState::kFailed);
      Emit(ReplicationEvent::Kind::kError, {}, s);
      return s;
    }
    SetState(ReplicationState::kRetrying);
    Emit(ReplicationEvent::Kind::kPaused, {}, s);
    if (!SleepUnlessCancelled(backoff)) continue;  // cancelled: reported above
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

Status Replicator::Attempt(bool* progressed) {
  SetState(ReplicationState::kInitializing);
  auto source_info = source_->Open(false);
  if (!source_info.ok()) return source_info.status();
  auto target_info = target_->Open(options_.create_target);
  if (!target_info.ok()) return target_info.status();

  std::string since;
  if (options_.since_seq) {
    since = *options_.since_seq;
  } else {
    const std::string doc_id = "_local/" + id_;
    std::optional<std::string> source_doc, target_doc;
    auto src = source_->GetLocal(doc_id);
    if (src.ok()) source_doc = std::move(*src);
    else if (!src.status().IsNotFound()) return src.status();
    auto tgt = target_->GetLocal(doc_id);
    if (tgt.ok()) target_doc = std::move(*tgt);
    else if (!tgt.status().IsNotFound()) return tgt.status();
    since = StartSeqFromCheckpoints(source_doc, target_doc, &history_);
  }
  attempt_start_seq_ = since;
  session_history_.emplace(history_);
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.start_seq = since;
    stats_.checkpointed_source_seq = since;
    stats_.source_seq = source_info->update_seq;
    stats_.checkpoint_history = history_;
  }
  SetState(ReplicationState::kRunning);
  Emit(ReplicationEvent::Kind::kActive);

  // The changes feed is read ahead on a second endpoint and thread.
  std::unique_ptr<Endpoint> feed_source = source_->Clone();
  auto feed_info = feed_source->Open(false);
  if (!feed_info.ok()) return feed_info.status();
  ChangesReaderOptions feed;
  feed.since = since;
  feed.batch_size = options_.batch_size;
  feed.limit = options_.batches_limit;
  if (options_.doc_ids) feed.doc_ids = &*options_.doc_ids;
  if (options_.filter) feed.filter = &*options_.filter;
  feed.continuous = options_.continuous;
  feed.wait = options_.feed_wait;
  // The reading thread also asks the target what it lacks (on an endpoint
  // of its own) and fetches that from the source, so that only the writes
  // and checkpoints are left to this thread.
  std::unique_ptr<Endpoint> diff_target = target_->Clone();
  auto diff_info = diff_target->Open(false);
  if (!diff_info.ok()) return diff_info.status();
  feed.prepare = [target = diff_target.get()](Endpoint& source, const ChangesBatch& batch,
                                              PreparedBatch* out) {
    return PrepareBatch(source, *target, batch, out);
  };
  ChangesReader reader(std::move(feed_source), feed);
  {
    std::lock_guard<std::mutex> lock(cancel_mu_);
    if (cancelled_) return Status::OK();
    reader_ = &reader;
  }
  struct Unregister {
    Replicator* r;
    ~Unregister() {
      std::lock_guard<std::mutex> lock(r->cancel_mu_);
      r->reader_ = nullptr;
    }
  } unregister{this};

  bool caught_up = false;
  while (!cancelled_) {
    ChangesBatch batch;
    PreparedBatch prepared;
    Status s = reader.Next(&batch, &prepared);
    if (cancelled_) break;
    if (!s.ok()) return s;
    if (!batch.rows.empty()) {
      if (caught_up) {
        caught_up = false;
        SetState(ReplicationState::kRunning);
        Emit(ReplicationEvent::Kind::kActive);
      }
      s = WriteBatch(prepared);
      if (!s.ok()) return s;
    }
    // A filtered feed may move past changes it did not show: record that.
    if (batch.last_seq != since && !batch.last_seq.empty()) {
      s = Checkpoint(batch.last_seq);
      if (!s.ok()) return s;
      since = batch.last_seq;
      *progressed = true;
      if (!batch.rows.empty()) {
        std::vector<std::string> ids;
        ids.reserve(batch.rows.size());
        for (const Change& c : batch.rows) ids.push_back(c.id);
        Emit(ReplicationEvent::Kind::kChange, std::move(ids));
      }
    }
    // Fewer rows than asked for: the source had no more (PouchDB's rule
    // too, so a one-shot job ends even while the source keeps changing).
    if (batch.rows.size() < options_.batch_size) {
      if (!options_.continuous) return Status::OK();
      if (!caught_up) {
        caught_up = true;
        SetState(ReplicationState::kPaused);
        Emit(ReplicationEvent::Kind::kPaused);
      }
    }
  }
  return Status::OK();
}

Status Replicator::PrepareBatch(Endpoint& source, Endpoint& target, const ChangesBatch& batch,
                                PreparedBatch* out) {
  std::vector<RevsDiffRequest> diff_request;
  diff_request.reserve(batch.rows.size());
  for (const Change& c : batch.rows) {
    diff_request.push_back(RevsDiffRequest{c.id, c.revs});
    out->revs_checked += c.revs.size();
  }
  std::vector<RevsDiffResult> missing;
  Status s = target.RevsDiff(diff_request, &missing);
  if (!s.ok()) return s;
  for (const RevsDiffResult& m : missing) out->revs_missing += m.missing.size();
  if (out->revs_missing == 0) return Status::OK();
  return source.FetchRevs(missing, &out->docs);
}

Status Replicator::WriteBatch(const PreparedBatch& batch) {
  const DocBatch& docs = batch.docs;
  std::vector<DocUpdateResult> failures;
  Status s = target_->WriteDocs(docs, &failures);
  if (!s.ok()) return s;
  if (listener_) batch_docs_ = docs.text();
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    stats_.missing_checked += batch.revs_checked;
    stats_.missing_found += batch.revs_missing;
    stats_.docs_read += docs.count();
    stats_.docs_written += docs.count() - failures.size();
    stats_.doc_write_failures += failures.size();
    stats_.updated_on = NowSeconds();
  }
  for (DocUpdateResult& f : failures) {
    Emit(ReplicationEvent::Kind::kDenied, {f.id}, f.status);
  }
  return Status::OK();
}

Status Replicator::Checkpoint(const std::string& seq) {
  CheckpointEntry entry;
  ReplicationStats stats = Stats();
  entry.session_id = RandomUuidHex();
  entry.start_time = start_time_;
  entry.end_time = Rfc1123Now();
  entry.start_last_seq = attempt_start_seq_;
  entry.recorded_seq = seq;
  entry.missing_checked = stats.missing_checked;
  entry.missing_found = stats.missing_found;
  entry.docs_read = stats.docs_read;
  entry.docs_written = stats.docs_written;
  entry.doc_write_failures = stats.doc_write_failures;
  std::string history = session_history_->Add(entry);
  std::string doc = BuildCheckpoint(entry, history);
  const std::string doc_id = "_local/" + id_;
  // The target first: a checkpoint on the source alone would make the
  // next run skip what the target never got.
  Status s = target_->PutLocal(doc_id, doc);
  if (!s.ok()) return s;
  if (source_checkpoints_) {
    s = source_->PutLocal(doc_id, doc);
    if (s.code() == Status::Code::kForbidden || s.code() == Status::Code::kUnauthorized) {
      // A read-only source (PouchDB does the same): resume from the
      // target's checkpoint history alone is then impossible, but the
      // replication itself goes on.
      source_checkpoints_ = false;
    } else if (!s.ok()) {
      return s;
    }
  }
  history_ = std::move(history);
  std::lock_guard<std::mutex> lock(stats_mu_);
  stats_.checkpointed_source_seq = seq;
  stats_.session_id = entry.session_id;
  stats_.checkpoint_history = history_;
  auto reached = SeqNumber(seq), top = SeqNumber(stats_.source_seq);
  if (reached && top && *reached > *top) stats_.source_seq = seq;
  stats_.changes_pending = reached && top && *top > *reached ? *top - *reached : 0;
  return Status::OK();
}

}  // namespace settee::replication
